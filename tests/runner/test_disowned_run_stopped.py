"""A Job whose metadata.ownerReferences were edited away mid-run fails its group (`JobDisowned`), and a Workflow so
disowned its category (`WorkflowDisowned`), their results not taken. What they still ran was left: the disowned Job's
WorkloadRun went on, its workload's pods holding the group's GPUs until the run ended (the garbage collector no longer
reaches a Job that names no owner), and a disowned Workflow went on launching groups nobody would read. Now the
disowned Job, and each Job of a disowned Workflow, fails so (no node blamed) and its run is stopped through the runner,
its workload deleted; a disowned Workflow ends too."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.protocol import BATCH_JOB, JOB, WORKFLOW, WORKLOADRUN, ResourceKind
from tests.kube.cluster import certification_over
from tests.runner.harness import denied, job_pods_running, kubelet_driven_engine
from tests.scenarios.harness import NAMESPACE

Obj = dict[str, Any]
CASE = "threshold-pass-two-metrics"  # one full-scale group of 4 nodes; passes when nobody interferes


async def _disowned_mid_run(folder: Path, kind: ResourceKind) -> dict[str, Any]:
    """The case run by the Kubernetes runner (the test kubelet playing pods) as the engine's ServiceAccount; once its
    pods run, the one object of `kind` has its ownerReferences edited away (kubectl edit); the engine runs until the
    Certification ends. What is left then."""
    clock = ManualClock(SIM_START)
    async with kubelet_driven_engine(folder, clock, CASE, service_account=True) as (server, admin, engine, name):
        assert await engine.run_until_settled(until=functools.partial(job_pods_running, admin), max_seconds=600)
        [child] = (await admin.list(kind, NAMESPACE)).items
        child["metadata"]["ownerReferences"] = []  # kubectl edit
        await admin.update(kind, child)
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, name, NAMESPACE), max_seconds=600)
        left = {"workloads": [j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, NAMESPACE)).items],
                "runs": (await admin.list(WORKLOADRUN, NAMESPACE)).items, "jobs": (await admin.list(JOB, NAMESPACE)).items,
                "workflows": (await admin.list(WORKFLOW, NAMESPACE)).items,
                "certification": await admin.get(CERTIFICATION, name, NAMESPACE)}
        await engine.stop()
        left["denied"] = denied(server.requests)
        return left


@pytest.mark.parametrize(("kind", "reason"), [(JOB, "JobDisowned"), (WORKFLOW, "WorkflowDisowned")])
def test_a_disowned_jobs_run_is_stopped_and_its_workload_deleted(tmp_path: Path, kind: ResourceKind, reason: str) -> None:
    left = asyncio.run(_disowned_mid_run(tmp_path, kind))
    summary = left["certification"]["status"]["summary"]
    assert (summary["result"], summary["failedNodes"]) == ("FAILED", 0), summary
    [run] = left["runs"]
    assert (run["status"]["phase"], run["status"].get("reason")) == ("Failed", "Stopped"), run["status"]
    assert left["workloads"] == [], f"the disowned run's batch Job stays: its pods hold the group's GPUs ({left['workloads']})"
    [job] = left["jobs"]
    failed = cond.find(job["status"].get("conditions"), "Failed")
    assert failed is not None and (failed["status"], failed["reason"]) == ("True", reason), job["status"].get("conditions")
    assert "no node blamed" in failed["message"] and not job["status"].get("failedNodes"), job["status"]  # its stop convicts nobody
    [wf] = left["workflows"]
    assert cond.is_terminal(wf), "the Workflow goes on launching groups"
    if kind is WORKFLOW:
        assert cond.find(wf["status"].get("conditions"), "Failed")["reason"] == reason  # type: ignore[index]
    assert left["denied"] == []
