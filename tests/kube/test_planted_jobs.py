"""A Job created before the engine under the name its Workflow gives a group's Job, owned by the Workflow's uid (copied
by hand), was taken for the engine's own with whatever spec and node list it held: looser thresholds passed a node the
certification fails, and a node list of the hand's choosing had its group blame a node the group never ran. Now a Job
(or WorkloadRun) whose spec managedFields say someone other than nvcre wrote is refused: failed SpecWrittenByAnother
naming its fields and writer, never run, no node blamed, and its group read as refused (untested, never passed)."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.api.bodies import run_name
from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES, FOREIGN_SPEC, LABEL_GROUP, RESULT_PASSED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.store.kube import KubeStore
from tests.kube.cluster import a_job_in_progress, case_certification, certification_over, simulated_on_cluster
from tests.kubeapi import Fault
from tests.scenarios.harness import CASES

from .test_engine_rbac import cluster  # noqa: F401 - cluster is a fixture
from .test_foreign_status import _StopsSaid

CASE = CASES / "max-concurrent-one-loopback"  # one node at a time; gpu-node-03 measures about 160 GB/s against "value >= 300"
NAMESPACE = "default"
Obj = dict[str, Any]


async def _plant(admin: KubeStore, hand: KubeStore, group: str, nodes: str, loosen: bool) -> Obj:
    """A Job the hand creates for `group` of the running Workflow (not launched yet: one group at a time), under the
    name the engine would give it, owned by the Workflow's uid, on `nodes` (its group-nodes annotation); its thresholds
    loosened if `loosen`. Modelled on the Job the engine runs now."""
    [wf] = (await admin.list(WORKFLOW, NAMESPACE)).items
    [running] = (await admin.list(JOB, NAMESPACE)).items
    first = running["metadata"]["labels"][LABEL_GROUP]
    spec = running["spec"]
    if loosen:
        spec = json.loads(json.dumps(spec).replace("value >= 300", "value >= 100"))
        assert spec != running["spec"]
    return await hand.create(JOB, {"apiVersion": running["apiVersion"], "kind": "Job", "spec": spec, "metadata": {
        "name": running["metadata"]["name"].replace(f"-{first}-", f"-{group}-"), "namespace": NAMESPACE,
        "labels": {**running["metadata"]["labels"], LABEL_GROUP: group}, "annotations": {ANNOTATION_GROUP_NODES: nodes},
        "ownerReferences": [{"apiVersion": wf["apiVersion"], "kind": "Workflow", "name": wf["metadata"]["name"],
                             "uid": wf["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]}})


async def _ran(admin: KubeStore, engine: Any) -> tuple[Obj, Obj]:
    """The certification once over, and its Workflow."""
    assert await engine.run_until_settled(until=functools.partial(certification_over, admin, CASE.name, NAMESPACE), max_seconds=6 * 3600)
    await engine.stop()
    [wf] = (await admin.list(WORKFLOW, NAMESPACE)).items
    return await admin.get(CERTIFICATION, CASE.name, NAMESPACE), wf


def _recorded(wf: Obj, group: str) -> Obj:
    [found] = [g for g in wf["status"]["orchestration"]["iterationHistory"][-1]["groups"] if g["name"] == group]
    return dict(found)


def _refusal(job: Obj) -> Obj:
    return cond.find(job["status"]["conditions"], "Failed") or {}


async def test_a_job_planted_with_looser_thresholds_does_not_pass_its_group(cluster, tmp_path: Path,  # noqa: F811
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    async with simulated_on_cluster(cluster, CASE, hand="kubectl-create") as (admin, hand, engine, _):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        planted = await _plant(admin, hand, "group-2", "gpu-node-03", loosen=True)
        done, wf = await _ran(admin, engine)

        assert done["status"]["summary"]["result"] != RESULT_PASSED, (done["status"], wf["status"])
        group = _recorded(wf, "group-2")
        assert (group["phase"], group["reason"]) == ("Failed", FOREIGN_SPEC) and "blamedFor" not in group, group
        refused = await admin.get(JOB, planted["metadata"]["name"], NAMESPACE)
        assert (_refusal(refused).get("status"), _refusal(refused).get("reason")) == ("True", FOREIGN_SPEC)
        assert _refusal(refused)["message"].startswith(f"Job {NAMESPACE}/{planted['metadata']['name']}: its spec was written by kubectl-create, not rendered by nvcre (spec.")
        assert not refused["status"].get("failedNodes") and not refused["status"].get("measurements")
        assert not [run for run in (await admin.list(WORKLOADRUN, NAMESPACE)).items
                    if run["metadata"]["name"].startswith(planted["metadata"]["name"])]  # never run

        # the report leaves the Job out (damaged) and says why its group failed, from the group: the refusal, its writer
        capsys.readouterr()
        code = await asyncio.to_thread(main, ["certification", "report", CASE.name, "-o", "json", "--kubeconfig", cluster[1],
                                               "--history", str(tmp_path / "h.db")])
        out, err = capsys.readouterr()
        report = json.loads(out)
        [failed] = report["categories"][0]["failedGroups"]
        assert (code, report["result"], report["failedNodes"], report["inconclusiveNodes"]) == (1, "FAILED", [], []), report
        assert (failed["name"], failed["reason"], failed["failedNodes"]) == ("group-2", FOREIGN_SPEC, [])
        assert failed["message"] == _refusal(refused)["message"] and "written by kubectl-create" in err
        # the category's reason says what happened to it: refused, not "1 group failed ...; 0 nodes blamed"
        assert report["categories"][0]["failureReason"] == (
            f"1 group refused (group-2: {FOREIGN_SPEC}: {failed['message']}): nothing it ran is taken, no node blamed"), report["categories"][0]


async def test_a_job_planted_on_another_node_list_blames_nobody(cluster) -> None:  # noqa: F811
    """group-1 is gpu-node-02; the hand's Job names gpu-node-03 (which misses the threshold) in its place."""
    async with simulated_on_cluster(cluster, CASE, hand="kubectl-create") as (admin, hand, engine, _):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        planted = await _plant(admin, hand, "group-1", "gpu-node-03", loosen=False)
        done, wf = await _ran(admin, engine)

        group = _recorded(wf, "group-1")
        assert (group["phase"], group["reason"]) == ("Failed", FOREIGN_SPEC) and "blamedFor" not in group, group
        refused = await admin.get(JOB, planted["metadata"]["name"], NAMESPACE)
        assert _refusal(refused).get("reason") == FOREIGN_SPEC and not refused["status"].get("failedNodes"), refused["status"]
        assert done["status"]["summary"]["failedNodes"] == 1  # gpu-node-03, by its own group-2
        # the Workflow's reason counts the refused group apart from the one that blamed gpu-node-03
        said = (cond.find(wf["status"]["conditions"], "Failed") or {}).get("message")
        assert said == (f"2 groups failed across 1 iteration; 1 node blamed; 1 group refused (group-1: {FOREIGN_SPEC}: "
                        f"{_refusal(refused)['message']}): nothing it ran is taken"), said


async def _job_of(admin: KubeStore, group: str, phase: str | None = None) -> Obj | None:
    """The engine's Job of `group` (in `phase`, if given), or None."""
    found = [job for job in (await admin.list(JOB, NAMESPACE)).items if job["metadata"]["labels"].get(LABEL_GROUP) == group]
    return found[0] if found and (phase is None or cond.phase(found[0]) == phase) else None


async def _has_job(admin: KubeStore, group: str, phase: str | None = None) -> bool:
    return await _job_of(admin, group, phase) is not None


async def test_a_workloadrun_planted_for_a_job_blames_nobody(cluster) -> None:  # noqa: F811
    """The hand creates group-2's run (gpu-node-03) before its Job does, under the name the Job gives it, owned by the
    Job's uid: it ran as the Job's own, and its Job blamed gpu-node-03 on it. The run is refused now (and stopped),
    and its Job fails blaming nobody."""
    server = cluster[0]
    async with simulated_on_cluster(cluster, CASE, hand="kubectl-create") as (admin, hand, engine, _):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(_has_job, admin, "group-1", "InProgress"), max_seconds=600)
        [model] = [run for run in (await admin.list(WORKLOADRUN, NAMESPACE)).items if not run.get("status", {}).get("completionTime")]
        # group-2's Job loses a race creating its run (409 AlreadyExists, the run not there): looked at again shortly
        server.faults.add(Fault(method="POST", path=r"/workloadruns$", status=409, reason="AlreadyExists", times=1))
        assert await engine.run_until_settled(until=functools.partial(_has_job, admin, "group-2"), max_seconds=3600)
        job = await _job_of(admin, "group-2")
        assert job is not None and not (await admin.list(WORKLOADRUN, NAMESPACE, label_selector=f"{LABEL_GROUP}=group-2")).items
        spec = {**model["spec"], "target": {**model["spec"]["target"], "nodeNames": ["gpu-node-03"]}}
        planted = await hand.create(WORKLOADRUN, {"apiVersion": model["apiVersion"], "kind": "WorkloadRun", "spec": spec, "metadata": {
            "name": run_name(job["metadata"]["name"]), "namespace": NAMESPACE, "labels": job["metadata"]["labels"],
            "ownerReferences": [{"apiVersion": job["apiVersion"], "kind": "Job", "name": job["metadata"]["name"],
                                 "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]}})
        done, wf = await _ran(admin, engine)

        refused = await admin.get(WORKLOADRUN, planted["metadata"]["name"], NAMESPACE)
        assert (refused["status"]["phase"], refused["status"]["reason"]) == ("Failed", FOREIGN_SPEC), refused["status"]
        assert "its spec was written by kubectl-create, not rendered by nvcre" in refused["status"]["message"]
        failed = await admin.get(JOB, job["metadata"]["name"], NAMESPACE)
        assert _refusal(failed).get("reason") == FOREIGN_SPEC and not failed["status"].get("failedNodes"), failed["status"]
        group = _recorded(wf, "group-2")
        assert group["reason"] == FOREIGN_SPEC and "blamedFor" not in group, group
        assert done["status"]["summary"]["result"] != RESULT_PASSED and done["status"]["summary"]["failedNodes"] == 0


async def test_a_job_whose_spec_another_hand_applied_mid_run_is_refused_and_its_run_stopped(cluster) -> None:  # noqa: F811
    """A hand's server-side apply of a running Job's thresholds (kubectl apply: the spec is immutable, so only as they
    are) makes it a co-writer of the spec, which nvcre no longer writes alone: the Job is refused, the run nvcre started
    for it stopped through the runner, and no node blamed."""
    async with simulated_on_cluster(cluster, CASE, hand="kubectl", runner=_StopsSaid) as (admin, hand, engine, runner):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        [job] = (await admin.list(JOB, NAMESPACE)).items
        [run] = (await admin.list(WORKLOADRUN, NAMESPACE)).items
        await hand.apply(JOB, {"apiVersion": job["apiVersion"], "kind": "Job", "metadata": {"name": job["metadata"]["name"], "namespace": NAMESPACE},
                               "spec": {"thresholds": job["spec"]["thresholds"]}}, field_manager="kubectl", force=False)
        await engine.run_until_settled(max_seconds=60)
        await engine.stop()

        assert getattr(runner, "stopped", []) == [run["metadata"]["name"]]
        refused = await admin.get(JOB, job["metadata"]["name"], NAMESPACE)
        assert _refusal(refused).get("reason") == FOREIGN_SPEC and not refused["status"].get("failedNodes"), refused["status"]
        assert _refusal(refused)["message"].startswith(f"Job {NAMESPACE}/{job['metadata']['name']}: its spec was written by kubectl, not rendered by nvcre (spec.thresholds)")

