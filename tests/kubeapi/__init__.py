"""An emulated kube-apiserver (+ etcd) over real HTTP, for testing Kubernetes code without a cluster.

    server = ApiServer(clock=None, history_limit=1000, garbage_collector=False)
    await server.start(); server.write_kubeconfig(tmp_path / "kubeconfig")
    server.faults.add(Fault(method="PATCH", path=r"/status$", status=409, times=1))
    ... server.requests ... await server.stop()

The conventions it follows (and the ones it does not) are listed in README.md beside this file.
"""

from .faults import Fault
from .server import ApiServer, RecordedRequest

__all__ = ["ApiServer", "Fault", "RecordedRequest"]
