"""A run the engine stops (its Job ended: a timeout, a node's hardware failure, a foreign status) is stopped whatever
its log read meets. The log is read then for viewers only (the Job's verdict is made), but it was read as the engine
reads a log it judges by: a kubelet that no longer answers (the hung node's own, often) made every stop raise for five
minutes of failing reads, and the run's workload, whose pods hold the group's GPUs, stayed that long."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, JOB, WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.kubeapi import Fault
from tests.runner.harness import batch_runner_on_gpu_nodes, job_and_its_run, pods_caught_up, register_gpu_nodes
from tests.runner.test_log_pod import SPEC, _pods_running, _spec_run_started
from tests.scenarios.harness import CASES

NODES = ["gpu-node-01", "gpu-node-02"]  # SPEC's target


async def test_a_stop_whose_log_read_the_server_fails_still_deletes_the_workload(tmp_path: Path) -> None:
    async with batch_runner_on_gpu_nodes(tmp_path) as (server, store, runner):
        await _pods_running(store, await _spec_run_started(store, runner, "hung-run"))
        await pods_caught_up(runner, store)
        # the kubelet behind every log read is away: the API server answers 500 (`dial tcp ...:10250: i/o timeout`)
        server.faults.add(Fault(method="GET", path=r"/log$", status=500))
        await runner.stop(await store.get(WORKLOADRUN, "hung-run", "default"))
        state = (await store.get(WORKLOADRUN, "hung-run", "default"))["status"]
        assert state["phase"] == "Failed", state
        assert (await store.list(BATCH_JOB, "default")).items == [], "the stopped run's batch Job stays: its pods hold the GPUs"


async def test_a_resumed_release_of_a_run_whose_job_has_its_verdict_does_not_wait_on_its_log(tmp_path: Path) -> None:
    """An engine died between a failed run's end and its release; its Job has its verdict (failureLog kept). The next
    engine releases the run: its log is read for viewers then, not as one still to judge by (required), so the
    kubelet that no longer answers does not hold the workload, and the group's GPUs, for five more minutes."""
    async with installed(tmp_path, garbage_collector=True) as (server, kubeconfig):
        store = await store_on(kubeconfig, server.clock, "nvcre-engine")
        runner = KubernetesRunner(store, server.clock, store, trainer=False)
        try:
            await register_gpu_nodes(store, server.clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
            job, run = await job_and_its_run(store, SPEC, NODES)
            await runner.reconcile_run(run)
            workload = (await store.list(BATCH_JOB, "default")).items[0]
            await _pods_running(store, workload)
            # the run's end and its Job's verdict written by an engine that died before the release
            await store.patch_status(WORKLOADRUN, "cert-job-run", "default", {"phase": "Failed", "reason": "WorkloadFailed"})
            failed = [{"type": "Failed", "status": "True", "reason": "JobTimedOut", "message": "no result",
                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]
            await store.patch_status(JOB, job["metadata"]["name"], "default", {"conditions": failed})
        finally:
            await runner.close()
        resumed = KubernetesRunner(store, server.clock, store, trainer=False)
        try:
            server.faults.add(Fault(method="GET", path=r"/log$", status=500))
            await pods_caught_up(resumed, store)
            await resumed.release_ended(await store.get(WORKLOADRUN, "cert-job-run", "default"))
            assert (await store.list(BATCH_JOB, "default")).items == [], "the failed run's batch Job stays: its pods hold the GPUs"
        finally:
            await resumed.close()
            await store.close()
