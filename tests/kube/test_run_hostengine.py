"""`certification run` of a DCGM category on a cluster that does not serve the hostengine its `dcgmi --host` names:
said as it is created, over real HTTP against the API-server emulator (an API server alone, as a bare cluster is)."""

from __future__ import annotations

from nvcre_tui.engine.store import NAMESPACE, NODE
from nvcre_tui.engine.store.protocol import SERVICE
from tests.kube.test_setup import _gpu_node, admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures

SAID = ("nvcre: diagnostics/dcgm-level4 connects to the DCGM hostengine nvidia-dcgm.gpu-operator.svc:5555, which this cluster does "
        "not serve (no Service gpu-operator/nvidia-dcgm on port 5555): each node's run will fail ServiceUnavailable, blaming none; "
        "install the GPU Operator with dcgm.enabled=true (`nvcre setup status` checks it)")


async def test_a_dcgm_run_without_the_hostengine_service_says_each_node_will_fail(server, kubeconfig, admin, capsys) -> None:
    """Its pods were made, and (on a cluster that starts them) each failed in turn to connect, ServiceUnavailable: `setup
    status` knew beforehand (its dcgm hostengine row), `run` said nothing. It says so, once, and creates it all the same."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    for name in ("gpu-a", "gpu-b"):
        await admin.create(NODE, _gpu_node(name))
    code, _, err = await nvcre(capsys, "certification", "run", "--category", "diagnostics/dcgm-level4", "--name", "d1",
                               "--kubeconfig", kubeconfig)
    assert code == 0 and err.splitlines().count(SAID) == 1, err
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator"}})
    await admin.create(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nvidia-dcgm", "namespace": "gpu-operator"},
                                 "spec": {"ports": [{"name": "dcgm", "port": 5555}], "internalTrafficPolicy": "Local"}})
    code, _, err = await nvcre(capsys, "certification", "run", "--category", "diagnostics/dcgm-level4", "--name", "d2",
                               "--kubeconfig", kubeconfig)
    assert code == 0 and "DCGM hostengine" not in err, err
    code, _, err = await nvcre(capsys, "certification", "run", "--category", "communication/nccl-all-reduce", "--name", "n1",
                               "--kubeconfig", kubeconfig)
    assert code == 0 and "DCGM hostengine" not in err, err  # a category that asks no hostengine
