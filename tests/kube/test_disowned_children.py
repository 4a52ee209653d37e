"""A child whose metadata.ownerReferences someone edited away mid-run (`kubectl edit`, `kubectl patch`) stands, but no
longer names its owner as controller: its Certification (its Workflow disowned) or Workflow (its Job disowned) stood
RUNNING for ever, nothing queued it again and it waited for a child it no longer had. Now the owner before the change is
queued too, and a live read tells a disowned child from a cache miss: the category or group fails naming the field and
the object, its result not taken, no node blamed."""

from __future__ import annotations

import functools

import pytest

from nvcre_tui.engine.api.vocabulary import RESULT_FAILED
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, ResourceKind
from tests.kube.cluster import a_job_in_progress, case_certification, certification_over, simulated_on_cluster
from tests.scenarios.harness import CASES

from .test_engine_rbac import cluster  # noqa: F401 - cluster is a fixture

CASE = CASES / "all-pass-full-scale"  # a healthy fleet: PASSED when nobody interferes
NAME = "all-pass-full-scale"
NAMESPACE = "default"
WORKFLOW_NAME = f"{NAME}-communication-nccl-all-reduce"
JOB_NAME = f"{WORKFLOW_NAME}-job"


@pytest.mark.parametrize(("kind", "name", "expected"), [
    (WORKFLOW, WORKFLOW_NAME, ("WorkflowDisowned", f"Workflow {WORKFLOW_NAME}'s metadata.ownerReferences no longer name "
                                                   f"Certification {NAME} as its controller (edited): its runs are stopped, its result not taken")),
    (JOB, JOB_NAME, ("JobDisowned", f"Job {JOB_NAME}'s metadata.ownerReferences no longer name Workflow {WORKFLOW_NAME} as its "
                                    "controller (edited): its run is stopped, its result not taken; no node blamed")),
])
async def test_a_child_disowned_mid_run_fails_its_part_instead_of_leaving_it_running(
        cluster, kind: ResourceKind, name: str, expected: tuple[str, str]) -> None:  # noqa: F811
    async with simulated_on_cluster(cluster, CASE) as (admin, _, engine, _):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        child = await admin.get(kind, name, NAMESPACE)
        child["metadata"]["ownerReferences"] = []  # kubectl edit
        await admin.update(kind, child)

        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, NAME, NAMESPACE), max_seconds=6 * 3600)
        await engine.stop()
        done = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert done["status"]["summary"]["result"] == RESULT_FAILED and done["status"]["summary"]["failedNodes"] == 0
        if kind is WORKFLOW:
            [category] = done["status"]["categoryStatuses"]
            assert (category["status"], category["reason"], category["message"]) == ("Failed", *expected)
        else:
            wf = await admin.get(WORKFLOW, WORKFLOW_NAME, NAMESPACE)
            [group] = wf["status"]["orchestration"]["iterationHistory"][-1]["groups"]  # how it ended: its record
            assert (group["phase"], group["reason"], group["message"]) == ("Failed", *expected)
