"""A run the engine stops (its Job ended: a timeout, a node's hardware failure, a foreign status) is stopped whatever
its log read meets. The log is read then for viewers only (the Job's verdict is made), but it was read as the engine
reads a log it judges by: a kubelet that no longer answers (the hung node's own, often) made every stop raise for five
minutes of failing reads, and the run's workload, whose pods hold the group's GPUs, stayed that long."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, POD, WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.kubeapi import Fault
from tests.runner.harness import pods_caught_up, register_gpu_nodes
from tests.runner.test_log_pod import SPEC, _pod
from tests.scenarios.harness import CASES


async def test_a_stop_whose_log_read_the_server_fails_still_deletes_the_workload(tmp_path: Path) -> None:
    async with installed(tmp_path, garbage_collector=True) as (server, kubeconfig):
        store = await store_on(kubeconfig, server.clock, "nvcre-engine")
        runner = KubernetesRunner(store, server.clock, store, trainer=False)
        try:
            await register_gpu_nodes(store, server.clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
            run = await store.create(WORKLOADRUN, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
                                                   "metadata": {"name": "hung-run", "namespace": "default"}, "spec": SPEC})
            await runner.reconcile_run(run)
            job = (await store.list(BATCH_JOB, "default")).items[0]
            running = {"phase": "Running", "containerStatuses": [{"name": "node", "image": SPEC["image"], "ready": True,
                                                                   "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}
            for index, node in ((0, "gpu-node-01"), (1, "gpu-node-02")):
                created = await store.create(POD, _pod(job, index, running, node))
                await store.patch_status(POD, created["metadata"]["name"], "default", running)
            await pods_caught_up(runner, store)
            # the kubelet behind every log read is away: the API server answers 500 (`dial tcp ...:10250: i/o timeout`)
            server.faults.add(Fault(method="GET", path=r"/log$", status=500))
            await runner.stop(await store.get(WORKLOADRUN, "hung-run", "default"))
            state = (await store.get(WORKLOADRUN, "hung-run", "default"))["status"]
            assert state["phase"] == "Failed", state
            assert (await store.list(BATCH_JOB, "default")).items == [], "the stopped run's batch Job stays: its pods hold the GPUs"
        finally:
            await runner.close()
            await store.close()
