"""A status someone other than nvcre wrote (`kubectl edit --subresource=status`, `kubectl patch`: the API server's
managedFields name the writer) is no result nvcre measured. A Certification set to PASSED by hand read PASSED in the
report (exit 0), `certification list` and the history, and the engine took it for finished; a Workflow set to Succeeded
by hand passed its category. Now the engine fails such an object with a condition and a Warning event naming the fields
and the writer, reads such a child as failed meanwhile, and the report and the list refuse to take the hand's word."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.api.vocabulary import CERTIFICATION_REFUSED, FOREIGN_STATUS, RESULT_FAILED, WORKFLOW_REFUSED
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.store import CERTIFICATION, EVENT, JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.store.kube import KubeStore
from tests.kube.cluster import a_job_in_progress, case_certification, certification_over, installed_in_thread, simulated_on_cluster, store_on
from tests.scenarios.harness import CASES

from .test_engine_rbac import cluster  # noqa: F401 - cluster is a fixture

CASE = CASES / "all-pass-full-scale"
NAME = "all-pass-full-scale"
NAMESPACE = "default"
PASSED_BY_HAND = {
    "conditions": [{"type": "Succeeded", "status": "True", "reason": "Passed", "message": "looks fine",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    "summary": {"result": "PASSED", "passedCategories": "1/1", "failedNodes": 0},
    "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:00:00Z",
    "categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Succeeded"}],
}
SUCCEEDED_BY_HAND = {"conditions": [{"type": "Succeeded", "status": "True", "reason": "Done", "message": "by hand",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]}


async def _warnings(admin: KubeStore, name: str) -> list[str]:
    events = (await admin.list(EVENT, NAMESPACE)).items
    return [e["message"] for e in events if e.get("reason") == FOREIGN_STATUS and e["involvedObject"]["name"] == name]


async def test_the_engine_fails_a_certification_passed_by_hand_and_a_workflow_succeeded_by_hand(cluster) -> None:  # noqa: F811
    async with simulated_on_cluster(cluster, CASE) as (admin, hand, engine, _):
        # A Certification whose status a hand set to PASSED before any engine looked: failed, never run
        await admin.create(CERTIFICATION, {**case_certification(CASE, NAMESPACE), "metadata": {"name": "by-hand", "namespace": NAMESPACE}})
        await hand.patch_status(CERTIFICATION, "by-hand", NAMESPACE, PASSED_BY_HAND)
        # One the engine runs, whose Workflow a hand sets to Succeeded while it runs
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))

        async def running() -> bool:
            return any(cond.phase(wf) == "InProgress" for wf in (await admin.list(WORKFLOW, NAMESPACE)).items)

        assert await engine.run_until_settled(until=running, max_seconds=600)
        [wf] = (await admin.list(WORKFLOW, NAMESPACE)).items
        await hand.patch_status(WORKFLOW, wf["metadata"]["name"], NAMESPACE, SUCCEEDED_BY_HAND)
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, NAME, NAMESPACE), max_seconds=6 * 3600)
        await engine.run_until_settled(max_seconds=60)
        await engine.stop()

        forged = await admin.get(CERTIFICATION, "by-hand", NAMESPACE)
        failed = cond.find(forged["status"]["conditions"], "Failed")
        assert failed is not None and failed["status"] == "True" and failed["reason"] == FOREIGN_STATUS
        assert failed["message"].startswith(f"Certification {NAMESPACE}/by-hand: status.categoryStatuses, status.completionTime, "
                                            "status.conditions, status.startTime and 1 more written by kubectl-patch, not by nvcre")
        assert forged["status"]["summary"]["result"] == RESULT_FAILED
        assert await _warnings(admin, "by-hand") == [failed["message"]]
        assert not [w for w in (await admin.list(WORKFLOW, NAMESPACE)).items if w["metadata"]["name"].startswith("by-hand")]

        ran = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert ran["status"]["summary"]["result"] == RESULT_FAILED, ran["status"]
        workflow = await admin.get(WORKFLOW, wf["metadata"]["name"], NAMESPACE)
        assert (cond.find(workflow["status"]["conditions"], "Failed") or {}).get("reason") == FOREIGN_STATUS
        assert [m.split(":")[0] for m in await _warnings(admin, wf["metadata"]["name"])] == [f"Workflow {NAMESPACE}/{wf['metadata']['name']}"]


async def _pass_by_hand(kubeconfig: Path) -> None:
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    hand = await store_on(kubeconfig, SystemClock(), "kubectl-edit")
    try:
        await admin.create(CERTIFICATION, {**case_certification(CASE, NAMESPACE), "metadata": {"name": "by-hand", "namespace": NAMESPACE}})
        await hand.patch_status(CERTIFICATION, "by-hand", NAMESPACE, PASSED_BY_HAND)
    finally:
        await admin.close()
        await hand.close()


def test_report_and_list_do_not_take_a_status_passed_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_pass_by_hand(kubeconfig))
        flags = ["--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
        assert main(["certification", "report", "by-hand", *flags]) == 2
        out, err = capsys.readouterr()
        assert "PASSED" not in out and "Traceback" not in err
        assert "certification default/by-hand is damaged: status.categoryStatuses" in err and "written by kubectl-edit, not by nvcre" in err
        assert err.rstrip().endswith("; delete it and run it again"), err  # a cluster has no store file to delete it from
        assert main(["certification", "list", *flags]) == 2
        out, err = capsys.readouterr()
        [row] = out.splitlines()[1:]
        # none of the hand's figures (its summary said 1/1 passed, 0 failed nodes; its start and completion an hour apart)
        assert row.split()[:4] == ["by-hand", RESULT_FAILED, "-", "-"] and row.split()[5:8] == ["-", "-", "-"], row
        assert err.startswith("Certification default/by-hand: status.categoryStatuses") and "written by kubectl-edit, not by nvcre" in err


async def test_a_job_failed_by_hand_blaming_a_node_blames_nobody(cluster) -> None:  # noqa: F811
    """The engine's refusal merges into the status, and the hand's failedNodes stayed beside it: the Workflow recorded
    whom that Job "blamed", and the certification counted gpu-node-01 failed on no evidence. A child whose status
    someone else wrote now reads as its failure alone."""
    async with simulated_on_cluster(cluster, CASE, hand="kubectl-edit") as (admin, hand, engine, _):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        [job] = (await admin.list(JOB, NAMESPACE)).items
        await hand.patch_status(JOB, job["metadata"]["name"], NAMESPACE, {
            "conditions": [{"type": "Failed", "status": "True", "reason": "WorkloadFailed", "message": "by hand",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "failedNodes": [{"name": "gpu-node-01", "reason": "WorkloadFailed", "message": "by hand"}]})
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, NAME, NAMESPACE), max_seconds=6 * 3600)
        await engine.stop()
        done = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert done["status"]["summary"]["result"] == RESULT_FAILED and done["status"]["summary"]["failedNodes"] == 0
        wf = await admin.get(WORKFLOW, job["metadata"]["labels"]["nvcre.nvidia.com/workflow"], NAMESPACE)
        [group] = wf["status"]["orchestration"]["iterationHistory"][-1]["groups"]
        assert group["reason"] == FOREIGN_STATUS and "gpu-node-01" not in str(group)


async def test_a_read_only_console_leaves_a_certification_passed_by_hand_out_and_names_it(tmp_path: Path) -> None:
    """The console's dashboard listed it PASSED; it is left out as damaged now, named once, and nothing fails."""
    from nvcre_tui.app import NvcreApp
    from tests.kube.cluster import installed
    from tests.kube.test_console_on_cluster import args_for, opened, opener

    async with installed(tmp_path) as (_, kubeconfig):
        await _pass_by_hand(kubeconfig)
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), read_only=True, live=True)
        async with app.run_test(size=(160, 50), notifications=True) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert app.return_code is None and app.session is not None
            said = [str(n.message) for n in app._notifications]
            assert [line for line in said if "by-hand" in line] == [
                "Certification default/by-hand is damaged and left out of the console: status.categoryStatuses, "
                "status.completionTime, status.conditions, status.startTime and 1 more written by kubectl-edit, not by nvcre: "
                "not a result nvcre measured"], said


class _StopsSaid(SimulatedRunner):
    """The simulated runner, noting which runs the engine stopped (its stop is the runner's, as ever)."""

    stopped: list[str]

    async def stop(self, run: dict) -> None:
        self.stopped = [*getattr(self, "stopped", []), run["metadata"]["name"]]
        await super().stop(run)


async def test_a_run_succeeded_by_hand_is_failed_and_its_workload_stopped(cluster) -> None:  # noqa: F811
    """A WorkloadRun set to Succeeded by hand looked finished to its reconciler, which never stopped its workload (its
    pods held their GPUs); it is failed now and stopped, and its Job fails blaming nobody."""
    async with simulated_on_cluster(cluster, CASE, runner=_StopsSaid) as (admin, hand, engine, runner):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        [run] = (await admin.list(WORKLOADRUN, NAMESPACE)).items
        await hand.patch_status(WORKLOADRUN, run["metadata"]["name"], NAMESPACE, {"phase": "Succeeded", "exitCode": 0})
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, NAME, NAMESPACE), max_seconds=6 * 3600)
        await engine.stop()
        assert run["metadata"]["name"] in getattr(runner, "stopped", [])
        refused = await admin.get(WORKLOADRUN, run["metadata"]["name"], NAMESPACE)
        assert (refused["status"]["phase"], refused["status"]["reason"]) == ("Failed", FOREIGN_STATUS)
        done = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert done["status"]["summary"]["result"] == RESULT_FAILED and done["status"]["summary"]["failedNodes"] == 0


async def test_a_certification_refused_mid_run_stops_its_workflows_jobs_and_runs(cluster) -> None:  # noqa: F811
    """A Certification whose status a hand wrote while it ran was refused, but its Workflows and Jobs went on: pods held
    GPUs for a certification that can no longer yield a result. Now they are stopped (the runs through the runner),
    failed CertificationRefused, and the Certification's condition names them."""
    async with simulated_on_cluster(cluster, CASE, runner=_StopsSaid) as (admin, hand, engine, runner):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        [run] = (await admin.list(WORKLOADRUN, NAMESPACE)).items
        await hand.patch_status(CERTIFICATION, NAME, NAMESPACE, {"summary": {"result": "PASSED"}})
        await engine.run_until_settled(max_seconds=60)
        await engine.stop()

        assert getattr(runner, "stopped", []) == [run["metadata"]["name"]]
        [wf] = (await admin.list(WORKFLOW, NAMESPACE)).items
        for child in (wf, *(await admin.list(JOB, NAMESPACE)).items):
            failed = cond.find(child["status"]["conditions"], "Failed") or {}
            assert (failed.get("status"), failed.get("reason")) == ("True", CERTIFICATION_REFUSED), child["metadata"]["name"]
        done = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        refusal = cond.find(done["status"]["conditions"], "Failed") or {}
        assert refusal.get("reason") == FOREIGN_STATUS
        assert f"; stopped its Workflow {wf['metadata']['name']} (their pods deleted, no node blamed); delete it" in refusal["message"]


async def _a_job_blaming(admin: KubeStore, namespace: str) -> bool:
    """Whether an nvcre Job in `namespace` finished blaming a node while its Workflow still runs."""
    return (any((job.get("status") or {}).get("failedNodes") for job in (await admin.list(JOB, namespace)).items)
            and all(not cond.is_terminal(wf) for wf in (await admin.list(WORKFLOW, namespace)).items))


async def test_a_hand_edit_of_a_job_nvcre_failed_keeps_its_blame(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """A hand's edit of a Job nvcre had finished blaming gpu-node-03 (set Succeeded, its completionTime changed) was
    refused, and the Job read as that failure alone: its failedNodes dropped, the certification counted no failed node.
    failedNodes nvcre wrote and no hand changed stay its blame."""
    case = CASES / "max-concurrent-one-loopback"  # one node at a time: the Workflow runs on after gpu-node-03's Job
    async with simulated_on_cluster(cluster, case, hand="kubectl-edit") as (admin, hand, engine, _):
        await admin.create(CERTIFICATION, case_certification(case, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(_a_job_blaming, admin, NAMESPACE), max_seconds=6 * 3600)
        [job] = [j for j in (await admin.list(JOB, NAMESPACE)).items if j["status"].get("failedNodes")]
        # its conditions the refusal writes over; its completionTime stays the hand's, and the Job foreign
        await hand.patch_status(JOB, job["metadata"]["name"], NAMESPACE, {**SUCCEEDED_BY_HAND, "completionTime": "2026-01-01T00:00:00Z"})
        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, case.name, NAMESPACE), max_seconds=6 * 3600)
        await engine.stop()
        refused = await admin.get(JOB, job["metadata"]["name"], NAMESPACE)
        assert (cond.find(refused["status"]["conditions"], "Failed") or {}).get("reason") == FOREIGN_STATUS
        done = await admin.get(CERTIFICATION, case.name, NAMESPACE)
        assert done["status"]["summary"]["result"] == RESULT_FAILED and done["status"]["summary"]["failedNodes"] == 1, done["status"]["summary"]
        code = await asyncio.to_thread(main, ["certification", "report", case.name, "-o", "json", "--kubeconfig", cluster[1],
                                               "--history", str(tmp_path / "h.db")])
        report = json.loads(capsys.readouterr().out)
        assert (code, report["failedNodes"], report["inconclusiveNodes"]) == (1, ["gpu-node-03"], [])


async def test_a_workflow_refused_mid_run_stops_its_jobs_and_runs(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """A Workflow whose status a hand wrote while it ran was refused and ran no further groups, but its Jobs' runs went
    on holding GPUs until they ended. Now they are stopped through the runner, each Job failed WorkflowRefused (no node
    blamed), and the Workflow's refusal names them."""
    async with simulated_on_cluster(cluster, CASE, runner=_StopsSaid) as (admin, hand, engine, runner):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        [run] = (await admin.list(WORKLOADRUN, NAMESPACE)).items
        [wf] = (await admin.list(WORKFLOW, NAMESPACE)).items
        await hand.patch_status(WORKFLOW, wf["metadata"]["name"], NAMESPACE, SUCCEEDED_BY_HAND)
        await engine.run_until_settled(max_seconds=60)
        await engine.stop()

        assert getattr(runner, "stopped", []) == [run["metadata"]["name"]]
        [job] = (await admin.list(JOB, NAMESPACE)).items
        failed = cond.find(job["status"]["conditions"], "Failed") or {}
        assert (failed.get("status"), failed.get("reason")) == ("True", WORKFLOW_REFUSED), job["status"]
        assert not job["status"].get("failedNodes")
        refused = await admin.get(WORKFLOW, wf["metadata"]["name"], NAMESPACE)
        refusal = cond.find(refused["status"]["conditions"], "Failed") or {}
        assert refusal.get("reason") == FOREIGN_STATUS
        assert f"; stopped its Job {job['metadata']['name']} (their pods deleted, no node blamed); delete it" in refusal["message"]
        done = await admin.get(CERTIFICATION, NAME, NAMESPACE)
        assert done["status"]["summary"]["failedNodes"] == 0
        # Its nodes as the map and the history read them: untested (the Job's result not taken), not running for ever
        # (the refused Workflow still records the group Running, its Job stopped)
        from nvcre_tui.engine.views.nodes import node_states
        from nvcre_tui.engine.views.snapshot import Snapshot

        states = node_states(await Snapshot.read(admin, NAMESPACE))
        assert states and {state for state, _ in states.values()} == {"untested"}, states
        assert all(detail.endswith(f"stopped unfinished, its result not taken: {WORKFLOW_REFUSED}") for _, detail in states.values()), states
        # the report: its iteration failed, not Running, and the group failed as its Job, no node blamed
        await asyncio.to_thread(main, ["certification", "report", NAME, "-o", "json", "--kubeconfig", cluster[1], "--history", str(tmp_path / "h.db")])
        [category] = json.loads(capsys.readouterr().out)["categories"]
        assert [i["status"] for i in category["iterations"]] == ["Failed"], category["iterations"]
        assert [(g["reason"], g["failedNodes"]) for g in category["failedGroups"]] == [(WORKFLOW_REFUSED, [])], category["failedGroups"]
