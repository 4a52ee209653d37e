"""Without --sim-runner a cluster session runs real pods: the Kubernetes runner reconciles (when this process
holds the engine Lease), and the LogSource reads the run's rank-0 / launcher pod log, saying which pod,
container and node it comes from; a viewer reads logs the same way and writes nothing."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.podlogs import PodLogSource
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.outputs import kubelet_prefix
from nvcre_tui.engine.store.protocol import POD
from tests.kube.cluster import installed, store_on
from tests.scenarios.harness import catalog

RUN = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
       "metadata": {"name": "probe-run", "namespace": "default", "uid": "u-1"},
       "spec": {"framework": {"torch": {"script": "train.py"}}}, "status": {"phase": "Running"}}


async def _rank0(admin, server) -> None:
    await admin.create(POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "probe-run-workload-0", "namespace": "default",
        "labels": {"nvcre.nvidia.com/job": "probe-run", "nvcre.nvidia.com/role": "node", "batch.kubernetes.io/job-completion-index": "0"}},
        "spec": {"nodeName": "gpu-node-01", "containers": [{"name": "node", "image": "nccl"}]}})
    server.set_pod_log("default", "probe-run-workload-0", f"{kubelet_prefix(SIM_START)}hello from rank 0\n")


async def test_an_engine_session_without_the_sim_runner_uses_the_kubernetes_runner_and_pod_logs(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, server.clock, "nvcre-test")
        await _rank0(admin, server)
        session = await KubeSession.open(await load_target(str(kubeconfig)), catalog(), want_engine=True)
        try:
            assert isinstance(session.runner, KubernetesRunner) and isinstance(session.logs, PodLogSource)
            assert session.engine is not None and session.engine.runner is session.runner
            lines = await session.logs.lines(RUN)
            assert lines[0] == "==> pod probe-run-workload-0 · container node · node gpu-node-01"
            assert lines[1].endswith("hello from rank 0")
        finally:
            await session.close()
            await admin.close()


async def test_a_viewer_reads_pod_logs_and_writes_nothing(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, server.clock, "nvcre-test")
        await _rank0(admin, server)
        session = await KubeSession.open(await load_target(str(kubeconfig)), catalog(), want_engine=False)
        try:
            assert session.engine is None
            assert (await session.logs.lines(RUN))[1].endswith("hello from rank 0")
            writes = [r for r in server.requests if r.user_agent.startswith("nvcre-viewer") and r.verb not in ("get", "list", "watch")]
            assert writes == []
        finally:
            await session.close()
            await admin.close()
