"""iterationHistory is stored without node lists and read back with them (controllers/iterations.py)."""

from __future__ import annotations

import json
from typing import Any

from nvcre_tui.engine import diagnose
from nvcre_tui.engine.controllers.iterations import finished_iterations, history_record, nodes_by_group
from nvcre_tui.engine.report.readmodel import Joined
from tests.engine.test_engine_behaviour import run

Obj = dict[str, Any]


def workflow(orchestration: Obj, planned: list[Obj] | None = None) -> Obj:
    spec: Obj = {"orchestration": {"plannedGroups": planned} if planned else {}}
    return {"metadata": {"name": "wf"}, "spec": spec, "status": {"orchestration": orchestration}}


def test_a_history_record_leaves_the_nodes_out_and_keeps_the_outcome() -> None:
    group = {"name": "g0", "nodes": ["a", "b"], "domains": ["c1"], "phase": "Failed", "jobRef": "wf-g0-iter-1", "measurements": {"busBandwidthGBps": 1.5}}
    record = history_record(2, [group])
    assert record == {"iteration": 2, "groups": [{"name": "g0", "phase": "Failed", "jobRef": "wf-g0-iter-1", "measurements": {"busBandwidthGBps": 1.5}}]}
    assert group["nodes"] == ["a", "b"]  # the current group is not changed


def test_repeated_iterations_read_their_nodes_from_the_current_groups() -> None:
    groups = [{"name": "g0", "nodes": ["a", "b"], "phase": "Succeeded"}, {"name": "g1", "nodes": ["c", "d"], "phase": "Failed", "overflow": True}]
    wf = workflow({"groups": groups, "iterationHistory": [history_record(1, groups), history_record(2, groups)]})
    finished = finished_iterations(wf)
    assert [r["iteration"] for r in finished] == [1, 2]
    assert all([g["nodes"] for g in r["groups"]] == [["a", "b"], ["c", "d"]] for r in finished)
    assert [g["phase"] for g in finished[1]["groups"]] == ["Succeeded", "Failed"] and finished[0]["groups"][1]["overflow"] is True


def test_diagnose_rounds_read_their_nodes_from_the_test_log() -> None:
    state = diagnose.start({"c1": ["a", "b", "c", "d"], "c2": ["e", "f", "g", "h"]}, 2)
    first = diagnose.plan_round(state)
    recorded = [{"name": g.name, "nodes": list(g.nodes), "domains": list(g.domains), "phase": "Failed" if "a" in g.nodes else "Succeeded"} for g in first]
    state = diagnose.record_round(state, {g["name"]: g["phase"] == "Succeeded" for g in recorded})
    second = [{"name": g.name, "nodes": list(g.nodes), "phase": "Pending"} for g in diagnose.plan_round(state)]
    assert second and {g["name"] for g in second}.isdisjoint(g.name for g in first)
    wf = workflow({"diagnose": state.to_dict(), "groups": second, "iterationHistory": [history_record(1, recorded)]})
    [round_one] = finished_iterations(wf)
    assert round_one["groups"] == recorded and all(g["domains"] for g in recorded)


def test_records_that_kept_their_nodes_are_read_as_they_are() -> None:
    old = {"iteration": 1, "groups": [{"name": "g0", "nodes": ["x", "y"], "phase": "Succeeded"}]}
    wf = workflow({"groups": [{"name": "g0", "nodes": ["a", "b"], "phase": "Pending"}], "iterationHistory": [old]})
    assert finished_iterations(wf)[0]["groups"][0]["nodes"] == ["x", "y"]


def test_a_damaged_diagnose_state_costs_the_nodes_of_its_rounds_not_the_view() -> None:
    wf = workflow({"diagnose": {"round": "x"}, "groups": [], "iterationHistory": [history_record(1, [{"name": "r1-part-0", "nodes": ["a"], "phase": "Failed"}])]},
                  planned=[{"name": "r0-screen-0", "nodes": ["a", "b"]}])
    assert finished_iterations(wf)[0]["groups"][0]["nodes"] == []
    assert nodes_by_group(wf) == {"r0-screen-0": ["a", "b"]}


def test_an_engine_run_stores_no_node_list_in_its_history_and_reports_every_group_with_its_nodes() -> None:
    objects = run().objects
    repeated = [wf for wf in objects["Workflow"] if len(wf["status"]["orchestration"].get("iterationHistory") or []) > 1]
    assert repeated  # the all-reduce runs twice (repeatCount 2)
    for wf in objects["Workflow"]:
        stored = json.dumps(wf["status"]["orchestration"].get("iterationHistory") or [])
        assert '"nodes"' not in stored, wf["metadata"]["name"]
    [cert] = objects["Certification"]
    view = Joined(objects["Workflow"], objects["Job"]).view(cert)
    for category in view.categories:
        groups = category.workflow["status"]["orchestration"]["groups"] if category.workflow else []
        current = {g["name"]: g["nodes"] for g in groups}
        for record in category.iterations:
            assert all(g["nodes"] for g in record.groups)
            if category.workflow is not None and "diagnose" not in category.workflow["status"]["orchestration"]:
                assert {g["name"]: g["nodes"] for g in record.groups} == current
