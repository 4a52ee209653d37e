"""A Job whose verdict its run's log does not decide (a timeout, a pod Kubernetes took, a node gone) reads that log
only as evidence, after the verdict: a read the server fails keeps what was kept. It read it as a log to judge by
(required: retried for READ_PATIENCE_SECONDS of failing reads), so a hung node whose kubelet no longer answers (the API
server's 500 on pods/log) timed out five minutes past its timeoutPerJob, the group's GPUs held meanwhile."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.kube.podlogs import READ_PATIENCE_SECONDS
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import BATCH_JOB, JOB, NODE, POD, WORKLOADRUN
from nvcre_tui.engine.units import parse_duration
from tests.kube.cluster import certification_over
from tests.kubeapi.faults import Fault
from tests.kubeapi.kubelet import PodFault
from tests.runner.harness import batch_runner_on_gpu_nodes, emulator_report, job_pods_running, kubelet_driven_engine, pods_caught_up
from tests.runner.test_log_pod import RUNNING, _pods_running, _spec_run_started
from tests.scenarios.harness import NAMESPACE

Obj = dict[str, Any]

# the kubelets behind the logs no longer answer: every pods/log read is the API server's 500 (dial tcp ...:10250)
UNREAD = Fault(method="GET", path=r"/pods/[^/]+/log$", status=500)


@pytest.mark.parametrize(("case", "faults", "reason"), [
    ("timeout-shorter-than-run", (), "JobTimedOut"),  # timeoutPerJob 3m, shorter than the run
    ("threshold-pass-two-metrics", (PodFault("taint-evicted", "gpu-node-01", at=60),), "PodDisrupted"),
])
def test_a_verdict_the_log_does_not_decide_is_not_held_by_a_log_the_server_fails(
        tmp_path: Path, case: str, faults: tuple[PodFault, ...], reason: str) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, case, trainer=False, faults=faults, server_faults=(UNREAD,)))
    [job] = objects["Job"]
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == reason, failed
    assert report["failedNodes"] == [], report["failedNodes"]  # a timeout or a disruption convicts no node
    assert UNREAD.hits > 0, "the log was never read: nothing tested"
    started = parse_time(job["status"].get("workloadStartTime") or job["metadata"]["creationTimestamp"])
    ended = parse_time(job["status"]["completionTime"])
    bound = parse_duration(job["spec"].get("timeout") or "0s") if reason == "JobTimedOut" else 60.0
    late = (ended - started).total_seconds() - bound
    assert late < READ_PATIENCE_SECONDS / 2, f"the verdict came {late:.0f}s late: held by a log read the server failed"
    # what was kept of the log is the Job's evidence all the same (nothing was: the failure log has an empty tail)
    assert job["status"]["failureLog"]["reason"] == reason


async def test_a_disrupted_runs_end_does_not_wait_on_its_log_whatever_its_kept_lines_name(tmp_path: Path) -> None:
    """The runner's end of a PodDisrupted run reads its log as evidence (the Job blames no node whatever it says); a kept
    line naming a node (a NCCL WARN) made it read the result pod's log once more, required, and raise for
    READ_PATIENCE_SECONDS while the server failed it: the run stayed Running, its workload and the GPUs held."""
    async with batch_runner_on_gpu_nodes(tmp_path) as (server, store, runner):
        pods = await _pods_running(store, await _spec_run_started(store, runner, "taken-run"))
        server.set_pod_log("default", pods[0]["metadata"]["name"],
                           "2026-01-01T00:00:30.000000000Z gpu-node-02:4102:4109 [0] NCCL WARN NET/IB : Got completion from peer with status=12\n")
        await pods_caught_up(runner, store)
        await runner.reconcile_run(await store.get(WORKLOADRUN, "taken-run", "default"))  # Running
        # a read that answered (a viewer's, a stall check's): its lines are kept
        assert any("NCCL WARN" in line for line in await runner.logs(await store.get(WORKLOADRUN, "taken-run", "default"), required=False))
        server.faults.add(UNREAD)
        # the taint manager takes gpu-node-02's pod (a NoExecute taint on a Ready node): DisruptionTarget, then a graceful delete
        taken = {"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                                 "message": "Taint manager: deleting due to NoExecute taint"}]}
        await store.patch_status(POD, pods[1]["metadata"]["name"], "default", {**RUNNING, **taken})
        await store.delete(POD, pods[1]["metadata"]["name"], "default")
        await pods_caught_up(runner, store)
        await runner.reconcile_run(await store.get(WORKLOADRUN, "taken-run", "default"))
        state = (await store.get(WORKLOADRUN, "taken-run", "default"))["status"]
        assert (state["phase"], state.get("reason")) == ("Failed", "PodDisrupted"), state
        assert (await store.list(BATCH_JOB, "default")).items == [], "the disrupted run's batch Job stays: its pods hold the GPUs"


async def _node_deleted_mid_run(folder: Path) -> tuple[Obj, float]:
    """The case's run by the Kubernetes runner (the test kubelet playing pods); once its pods run, every log read fails
    and a group node's Node is deleted. The Job at the Certification's end, and how long after the deletion it ended."""
    clock = ManualClock(SIM_START)
    async with kubelet_driven_engine(folder, clock, "threshold-pass-two-metrics", service_account=False) as (server, admin, engine, name):
        assert await engine.run_until_settled(until=functools.partial(job_pods_running, admin), max_seconds=600)
        server.faults.add(UNREAD)
        deleted = clock.now()
        await admin.delete(NODE, "gpu-node-03", None)
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, name, NAMESPACE), max_seconds=3600)
        [job] = (await admin.list(JOB, NAMESPACE)).items
        await engine.stop()
        return job, (parse_time(job["status"]["completionTime"]) - deleted).total_seconds()


def test_a_node_deleted_mid_run_fails_its_job_at_once_whatever_its_log_read_meets(tmp_path: Path) -> None:
    job, after = asyncio.run(_node_deleted_mid_run(tmp_path))
    failed = cond.find(job["status"].get("conditions"), "Failed")
    assert failed is not None and failed["reason"] == "NodeNotFound", job["status"].get("conditions")
    assert [f["name"] for f in job["status"].get("failedNodes") or []] == ["gpu-node-03"], job["status"].get("failedNodes")
    assert after < READ_PATIENCE_SECONDS / 2, f"the Job failed {after:.0f}s after its node was deleted: held by a log read the server failed"
