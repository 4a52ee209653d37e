"""A Workflow's blamed nodes (controllers.iterations.blamed_nodes): what the Jobs its groups ran blamed, merged in
iteration order, never a copy in the Workflow's own status, except a diagnosis's verdicts (its screening groups
convict nobody). A Job deleted since is read from its group's record; a Job no group ran blames nobody."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.controllers.iterations import blamed_names
from nvcre_tui.engine.controllers.iterations import blamed_nodes as _blamed_nodes
from nvcre_tui.engine.judging.results import job_failures, merge_failed

Obj = dict[str, Any]


def blamed_nodes(wf: Obj, jobs: list[Obj]) -> list[dict[str, Any]]:
    """blamed_nodes, with blamed_names (what a certification's summary counts) checked against it in every case here."""
    found = _blamed_nodes(wf, jobs)
    assert blamed_names(wf, jobs) == {f["name"] for f in found}
    return found
NODES = {"group-0": ["a"], "group-1": ["b", "x"], "group-2": ["c"]}


def job(name: str, iteration: int, *failed: tuple[str, str, str]) -> Obj:
    entries = [{"name": node, "reason": reason, "message": message} for node, reason, message in failed]
    return {"metadata": {"name": name, "labels": {"nvcre.nvidia.com/iteration": str(iteration)}}, "status": {"failedNodes": entries or None}}


def ran(group: str, iteration: int, **record: Any) -> Obj:
    return {"name": group, "phase": "Failed" if record else "Succeeded", "jobRef": f"wf-{group}-iter-{iteration}", **record}


def workflow(orchestration: Obj | None = None, failed: list[Obj] | None = None, iterations: int = 2) -> Obj:
    """A finished Workflow whose groups each ran a Job per iteration (settled groups name their nodes)."""
    history = [{"iteration": i, "groups": [ran(g, i) for g in NODES]} for i in range(1, iterations + 1)]
    orch = {"iterationHistory": history, "groups": [{"name": g, "nodes": n, "phase": "Succeeded"} for g, n in NODES.items()], **(orchestration or {})}
    return {"metadata": {"name": "wf"}, "status": {"orchestration": orch, "failedNodes": failed}}


def test_jobs_lists_are_merged_one_entry_per_node_and_reason_the_earliest_iteration_first() -> None:
    jobs = [job("wf-group-1-iter-2", 2, ("b", "ThresholdViolation", "second")),  # listed first, ran later
            job("wf-group-1-iter-1", 1, ("b", "ThresholdViolation", "first"), ("b", "HardwareFailureDetected", "xid 79")),
            job("wf-group-0-iter-1", 1, ("a", "WorkloadFailed", "exit 1")), job("wf-group-2-iter-1", 1)]
    assert blamed_nodes(workflow(), jobs) == [
        {"name": "a", "reason": "WorkloadFailed", "message": "exit 1"},
        {"name": "b", "reason": "HardwareFailureDetected", "message": "xid 79"},
        {"name": "b", "reason": "ThresholdViolation", "message": "first"},
    ]


def test_a_job_no_group_ran_blames_nobody() -> None:
    """A Job of another run left behind with this Workflow's label (no garbage collector), or of a round never recorded."""
    stray = [job("wf-group-0-iter-9", 9, ("a", "WorkloadFailed", "old run")), job("wf-job", 1, ("c", "Timeout", "m"))]
    assert blamed_nodes(workflow(), stray) == []


def test_a_job_deleted_after_it_failed_keeps_its_blame_from_the_group_record() -> None:
    wf = workflow()
    first = wf["status"]["orchestration"]["iterationHistory"][0]["groups"]
    first[1] = ran("group-1", 1, reason="ThresholdViolated", blamedFor="ThresholdViolation")  # every node of the group
    first[2] = ran("group-2", 1, reason="WorkloadFailed", blamedFor="WorkloadFailed", blamedMembers=[0])
    first[0] = ran("group-0", 1, reason="ServiceUnavailable")  # blamed nobody
    blamed = blamed_nodes(wf, [])
    assert [(f["name"], f["reason"]) for f in blamed] == [("b", "ThresholdViolation"), ("c", "WorkloadFailed"), ("x", "ThresholdViolation")]
    assert "wf-group-1-iter-1, deleted since" in blamed[0]["message"]
    # the Job, where it is still there, says it better
    still = job("wf-group-2-iter-1", 1, ("c", "WorkloadFailed", "NCCL WARN on c"))
    assert [f["message"] for f in blamed_nodes(wf, [still]) if f["name"] == "c"] == ["NCCL WARN on c"]


def test_a_culprit_is_blamed_alone_when_its_job_is_gone() -> None:
    wf = workflow(iterations=1)
    wf["status"]["orchestration"]["iterationHistory"][0]["groups"][1] = ran("group-1", 1, reason="WorkloadFailed", blamedFor="WorkloadFailed", blamedMembers=[1])
    assert [f["name"] for f in blamed_nodes(wf, [])] == ["x"]


def test_a_running_workflows_current_groups_count_before_their_record() -> None:
    orch = {"iterationHistory": [], "currentIteration": 1, "groups": [{"name": "group-0", "nodes": ["a"], "phase": "Running", "jobRef": "wf-group-0-iter-1"}]}
    wf = {"metadata": {"name": "wf"}, "status": {"orchestration": orch}}
    assert [f["name"] for f in blamed_nodes(wf, [job("wf-group-0-iter-1", 1, ("a", "Timeout", "m"))])] == ["a"]


def test_a_diagnosis_is_its_stored_verdicts_not_its_screening_jobs() -> None:
    verdict = {"name": "c", "reason": "WorkloadFailed", "message": "faulty, failed 3 of 3 tests"}
    screening = [job("wf-group-0-iter-1", 1, ("c", "ThresholdViolation", "m"), ("d", "ThresholdViolation", "m"))]
    assert blamed_nodes(workflow({"diagnose": {"round": 1}}, [verdict]), screening) == [verdict]
    assert blamed_nodes(workflow({"diagnose": {"round": 0}}), screening) == []  # before its verdicts: nobody


def test_a_list_an_older_engine_stored_is_merged_in() -> None:
    older = [{"name": "e", "reason": "WorkloadFailed", "message": "stored"}]
    assert [f["name"] for f in blamed_nodes(workflow(failed=older), [job("wf-group-0-iter-1", 1, ("a", "WorkloadFailed", "m"))])] == ["a", "e"]


def test_a_records_entry_gives_way_to_a_later_jobs_message_and_evidence_together() -> None:
    """A message never sits beside another Job's measurements."""
    wf = workflow()
    wf["status"]["orchestration"]["iterationHistory"][0]["groups"][2] = ran("group-2", 1, reason="ThresholdViolated", blamedFor="ThresholdViolation")
    later = job("wf-group-2-iter-2", 2, ("c", "ThresholdViolation", "busBandwidthGBps 120 < 300"))
    later["status"]["evidence"] = [{"metric": "busBandwidthGBps", "value": 120.0, "passed": False}]  # the Job's, once
    [entry] = blamed_nodes(wf, [later])
    assert entry["message"] == "busBandwidthGBps 120 < 300" and entry["evidence"][0]["value"] == 120.0


def test_a_later_entrys_evidence_comes_with_its_own_message_even_an_empty_one() -> None:
    missed = [{"metric": "busBandwidthGBps", "measured": 120.0, "passed": False}]
    record = {"name": "a", "reason": "ThresholdViolation", "message": "Job wf-1 deleted since"}
    assert merge_failed([record], [{"name": "a", "reason": "ThresholdViolation", "evidence": missed}]) == [
        {"name": "a", "reason": "ThresholdViolation", "message": "", "evidence": missed}]


def threshold_job(name: str, evidence: Any, *nodes: str, copies: bool = False) -> Obj:
    missed = [{"metric": "busBandwidthGBps", "measured": 120.0, "passed": False}]
    entries = [{"name": n, "reason": "ThresholdViolation", "message": "m", **({"evidence": missed} if copies else {})} for n in nodes]
    return {"metadata": {"name": name}, "status": {"failedNodes": entries, "evidence": evidence}}


def test_a_jobs_entries_take_the_thresholds_it_missed_from_its_evidence_stored_once() -> None:
    checked = [{"metric": "busBandwidthGBps", "measured": 120.0, "passed": False}, {"metric": "algBandwidthGBps", "measured": 80.0, "passed": True}]
    failures = job_failures(threshold_job("j", checked, "a", "b"))
    assert [f["evidence"] for f in failures] == [[checked[0]], [checked[0]]]
    assert failures[0]["evidence"] is not failures[1]["evidence"]  # each entry its own


def test_an_older_engines_entries_keep_their_own_evidence_once() -> None:
    checked = [{"metric": "busBandwidthGBps", "measured": 120.0, "passed": False}]
    [failure] = job_failures(threshold_job("j", checked, "a", copies=True))
    assert failure["evidence"] == checked


def test_damaged_evidence_joins_nothing() -> None:
    for damaged in ("a string", {"metric": "x"}, ["not an object"], None):
        [failure] = job_failures(threshold_job("j", damaged, "a"))
        assert "evidence" not in failure and failure["name"] == "a"


def test_blamed_names_of_a_damaged_entry_fail_as_blamed_nodes_does() -> None:
    damaged = job("wf-group-0-iter-1", 1)
    damaged["status"]["failedNodes"] = [{"name": "a", "message": "no reason"}]
    with pytest.raises(KeyError):
        _blamed_nodes(workflow(), [damaged])
    with pytest.raises(KeyError):
        blamed_names(workflow(), [damaged])
