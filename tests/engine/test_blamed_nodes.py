"""A Workflow's blamed nodes (judging.results.blamed_nodes): its Jobs' lists merged in iteration order, never a copy
in the Workflow's own status, except a diagnosis's verdicts (its screening groups convict nobody)."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.judging.results import blamed_nodes

Obj = dict[str, Any]


def job(name: str, iteration: int, *failed: tuple[str, str, str]) -> Obj:
    entries = [{"name": node, "reason": reason, "message": message} for node, reason, message in failed]
    return {"metadata": {"name": name, "labels": {"nvcre.nvidia.com/iteration": str(iteration)}}, "status": {"failedNodes": entries or None}}


def workflow(orchestration: Obj | None = None, failed: list[Obj] | None = None) -> Obj:
    return {"metadata": {"name": "wf"}, "status": {"orchestration": orchestration or {}, "failedNodes": failed}}


def test_jobs_lists_are_merged_one_entry_per_node_and_reason_the_earliest_iteration_first() -> None:
    jobs = [job("wf-group-1-iter-2", 2, ("b", "ThresholdViolation", "second")),  # listed first, ran later
            job("wf-group-1-iter-1", 1, ("b", "ThresholdViolation", "first"), ("b", "HardwareFailureDetected", "xid 79")),
            job("wf-group-0-iter-1", 1, ("a", "WorkloadFailed", "exit 1")), job("wf-group-2-iter-1", 1)]
    assert blamed_nodes(workflow(), jobs) == [
        {"name": "a", "reason": "WorkloadFailed", "message": "exit 1"},
        {"name": "b", "reason": "HardwareFailureDetected", "message": "xid 79"},
        {"name": "b", "reason": "ThresholdViolation", "message": "first"},
    ]


def test_a_diagnosis_is_its_stored_verdicts_not_its_screening_jobs() -> None:
    verdict = {"name": "c", "reason": "WorkloadFailed", "message": "faulty, failed 3 of 3 tests"}
    screening = [job("wf-r0-screen-0-iter-1", 1, ("c", "ThresholdViolation", "m"), ("d", "ThresholdViolation", "m"))]
    assert blamed_nodes(workflow({"diagnose": {"round": 1}}, [verdict]), screening) == [verdict]
    assert blamed_nodes(workflow({"diagnose": {"round": 0}}), screening) == []  # before its verdicts: nobody


def test_a_list_an_older_engine_stored_is_merged_in() -> None:
    older = [{"name": "e", "reason": "WorkloadFailed", "message": "stored"}]
    assert [f["name"] for f in blamed_nodes(workflow(failed=older), [job("wf-group-0-iter-1", 1, ("a", "WorkloadFailed", "m"))])] == ["a", "e"]
