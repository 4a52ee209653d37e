"""iterationHistory, and a diagnosing Workflow's current groups, are stored without node lists and read back with
them (controllers/iterations.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from nvcre_tui.engine import diagnose
from nvcre_tui.engine.api.bodies import group_nodes, orchestration_of
from nvcre_tui.engine.api.vocabulary import LABEL_GROUP
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import current_groups, finished_iterations, history_record, nodes_by_group, stored_orchestration
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import JOB, WORKFLOW
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
    groups: list[Obj] = [{"name": "g0", "nodes": ["a", "b"], "phase": "Succeeded"}, {"name": "g1", "nodes": ["c", "d"], "phase": "Failed", "overflow": True}]
    wf = workflow({"groups": groups, "iterationHistory": [history_record(1, groups), history_record(2, groups)]})
    finished = finished_iterations(wf)
    assert [r["iteration"] for r in finished] == [1, 2]
    assert all([g["nodes"] for g in r["groups"]] == [["a", "b"], ["c", "d"]] for r in finished)
    assert [g["phase"] for g in finished[1]["groups"]] == ["Succeeded", "Failed"] and finished[0]["groups"][1]["overflow"] is True


def test_diagnose_rounds_read_their_nodes_from_the_test_log() -> None:
    state = diagnose.start({"c1": ["a", "b", "c", "d"], "c2": ["e", "f", "g", "h"]}, 2)
    first = diagnose.plan_round(state)
    recorded: list[Obj] = [{"name": g.name, "nodes": list(g.nodes), "domains": list(g.domains), "phase": "Failed" if "a" in g.nodes else "Succeeded"} for g in first]
    state = diagnose.record_round(state, {g["name"]: g["phase"] == "Succeeded" for g in recorded})
    second = [{"name": g.name, "nodes": list(g.nodes), "phase": "Pending"} for g in diagnose.plan_round(state)]
    assert second and {g["name"] for g in second}.isdisjoint(g.name for g in first)
    wf = workflow({"diagnose": state.to_dict(), "groups": second, "iterationHistory": [history_record(1, recorded)]})
    [round_one] = finished_iterations(wf)
    assert round_one["groups"] == recorded and all(g["domains"] for g in recorded)


def test_an_on_failure_diagnosis_of_repeated_iterations_restores_their_groups_without_a_recorded_plan() -> None:
    """onFailure names each iteration's group `<group>-iter-<n>` in its test log; the iterations' records name `<group>`
    and keep no nodes. Without a recorded plan (none over 2,048 nodes) their nodes come from the test log all the same."""
    groups: list[Obj] = [{"name": "group-0", "nodes": ["a", "b"], "domains": ["c1"], "phase": "Failed", "measurements": {"busBandwidthGBps": 200.0}},
                         {"name": "group-1", "nodes": ["c", "d"], "domains": ["c2"], "phase": "Succeeded", "measurements": {"busBandwidthGBps": 400.0}}]
    imported = [{**g, "name": f"{g['name']}-iter-{n}"} for n in (1, 2) for g in groups]
    state = diagnose.follow_up(imported, 2)  # type: ignore[arg-type]
    assert state is not None
    wf = workflow({"diagnose": state.to_dict(), "groups": [], "iterationHistory": [history_record(1, groups), history_record(2, groups)]})
    assert [[g["nodes"] for g in record["groups"]] for record in finished_iterations(wf)] == [[["a", "b"], ["c", "d"]]] * 2


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


# -- a diagnosing Workflow's current groups --------------------------------------------------------------------------


def _diagnosing() -> tuple[Obj, list[Obj]]:
    """A diagnose Workflow in its first round, as the controller holds it (groups with their nodes)."""
    state = diagnose.start({"c1": ["a", "b", "c", "d"], "c2": ["e", "f", "g", "h"]}, 2)
    groups = [{"name": g.name, "nodes": list(g.nodes), "domains": list(g.domains), "overflow": False, "phase": "Pending", "retries": 0}
              for g in diagnose.plan_round(state)]
    return {"diagnose": state.to_dict(), "groups": groups}, groups


def test_a_diagnosing_workflow_stores_its_groups_without_nodes_and_reads_them_back_from_its_plan() -> None:
    orch, groups = _diagnosing()
    stored = stored_orchestration(orch)
    assert stored["groups"] == [{"name": g["name"], "overflow": False, "phase": "Pending", "retries": 0} for g in groups]
    assert orch["groups"] == groups  # the controller's copy is not changed
    assert current_groups(workflow(stored)) == groups


def test_other_workflows_store_their_groups_as_they_are() -> None:
    orch = {"groups": [{"name": "g0", "nodes": ["a"], "phase": "Pending", "overflow": True}]}
    assert stored_orchestration(orch) == orch
    assert current_groups(workflow(orch)) == orch["groups"]


def test_a_group_its_diagnose_state_does_not_name_gets_no_nodes() -> None:
    orch, _ = _diagnosing()
    stored = stored_orchestration(orch)
    stored["groups"].append({"name": "r9-part-0", "phase": "Pending"})
    assert current_groups(workflow(stored))[-1]["nodes"] == []
    damaged = {**stored, "diagnose": {"round": "x"}}
    assert all(g["nodes"] == [] for g in current_groups(workflow(damaged)))


def test_a_diagnose_run_stores_no_node_list_in_its_groups_and_runs_each_group_on_its_planned_nodes() -> None:
    from tests.scenarios.harness import run_case

    case = run_case("diagnose-flaky-and-fabric")
    [wf] = case.objects["Workflow"]
    orch = wf["status"]["orchestration"]
    assert orch["groups"] and all("nodes" not in g for g in orch["groups"])
    [cert] = case.objects["Certification"]
    [category] = Joined(case.objects["Workflow"], case.objects["Job"]).view(cert).categories
    state = diagnose.DiagnoseState.from_dict(orch["diagnose"])
    tested = {p.group: list(p.nodes) for p in state.tests}
    assert {g["name"]: g["nodes"] for g in category.groups} == {g["name"]: tested[g["name"]] for g in orch["groups"]}
    # every Job ran on the nodes its round planned: the controller read them back from the plan
    assert len(case.objects["Job"]) == len(tested)
    for job in case.objects["Job"]:
        assert group_nodes(job) == tested[job["metadata"]["labels"][LABEL_GROUP]]


def test_a_diagnosing_workflow_whose_group_is_not_in_its_plan_fails_with_the_reason_and_runs_nothing() -> None:
    failed = asyncio.run(_damaged_mid_run())
    assert cond.phase(failed) == "Failed"
    condition = cond.find(failed["status"]["conditions"], "Failed") or {}
    assert condition.get("reason") == "ReconcileError"
    assert "group r7-part-9 is not in its plan" in condition.get("message", "")


async def _damaged_mid_run() -> Obj:
    """diagnose-slow-gpu up to its first Running group, then a group renamed to one its diagnose state never planned
    (a hand edit)."""
    from tests.scenarios.harness import CASES, NAMESPACE, start_certification

    folder = CASES / "diagnose-slow-gpu"
    session = await SimSession.open(load_scenario(folder / "scenario.yaml"), None, default_catalog())
    await start_certification(session.store, folder / "cert.yaml")
    assert session.engine is not None

    async def running() -> bool:
        return any(g.get("phase") == "Running" for wf in (await session.store.list(WORKFLOW, NAMESPACE)).items
                   for g in orchestration_of(wf).get("groups") or [])

    assert await session.engine.run_until_settled(until=running, max_seconds=3600)
    [wf] = (await session.store.list(WORKFLOW, NAMESPACE)).items
    orch = orchestration_of(wf)
    jobs_before = len((await session.store.list(JOB, NAMESPACE)).items)
    renamed = [{**g, "name": "r7-part-9"} if i == 0 else g for i, g in enumerate(orch["groups"])]
    await session.store.patch_status(WORKFLOW, wf["metadata"]["name"], NAMESPACE, {"orchestration": {"groups": renamed}})

    async def failed() -> bool:
        return cond.is_terminal(await session.store.get(WORKFLOW, wf["metadata"]["name"], NAMESPACE))

    assert await session.engine.run_until_settled(until=failed, max_seconds=3600)
    assert len((await session.store.list(JOB, NAMESPACE)).items) == jobs_before  # no Job on no nodes
    return await session.store.get(WORKFLOW, wf["metadata"]["name"], NAMESPACE)


def test_a_finished_workflows_groups_keep_what_they_are_and_how_they_ended_and_the_report_reads_the_rest_from_history() -> None:
    from nvcre_tui.engine.controllers.iterations import SETTLED
    from tests.scenarios.harness import run_case

    case = run_case("intra-rack-per-clique")
    [wf] = case.objects["Workflow"]
    orch = wf["status"]["orchestration"]
    assert orch["groups"] and all(set(g) <= SETTLED and g["phase"] == "Succeeded" for g in orch["groups"])
    [last] = orch["iterationHistory"]
    assert all(g["measurements"]["busBandwidthGBps"] > 0 and g["jobRef"] for g in last["groups"])
    [category] = case.report["categories"]
    assert [c["name"] for c in category["cliques"]] == ["clique-0", "clique-1", "clique-2"]
    assert all(c["passed"] and c["busBW"] == g["measurements"]["busBandwidthGBps"] for c, g in zip(category["cliques"], last["groups"], strict=True))


def test_a_diagnose_plan_partitioned_again_names_its_groups_nodes_not_the_plan_recorded_at_creation() -> None:
    """Render recorded r0-screen-* on n1..n5; by the time the Workflow partitioned, n1 was gone and n6 had come:
    the same group names hold other nodes, and the diagnose state's are the ones its Jobs must run on."""
    recorded = diagnose.plan_round(diagnose.start({"": ["n1", "n2", "n3", "n4", "n5"]}, 2))
    state = diagnose.start({"": ["n2", "n3", "n4", "n5", "n6"]}, 2)
    now = diagnose.plan_round(state)
    assert [g.name for g in now] == [g.name for g in recorded] and [g.nodes for g in now] != [g.nodes for g in recorded]
    orch = stored_orchestration({"diagnose": state.to_dict(), "groups": [{"name": g.name, "nodes": list(g.nodes), "phase": "Pending"} for g in now]})
    wf = workflow(orch, planned=[{"name": g.name, "nodes": list(g.nodes)} for g in recorded])
    assert [g["nodes"] for g in current_groups(wf)] == [list(g.nodes) for g in now]
    assert nodes_by_group(wf) == {g.name: list(g.nodes) for g in now}


def test_the_cliques_of_a_workflow_stopped_before_its_first_record_come_from_its_current_groups() -> None:
    from nvcre_tui.engine.report.model import _cliques
    from nvcre_tui.engine.report.readmodel import CategoryView

    groups = [{"name": "group-0", "nodes": ["a", "b"], "domains": ["clique-0"], "phase": "Succeeded", "measurements": {"busBandwidthGBps": 470.5}},
              {"name": "group-1", "nodes": ["c", "d"], "domains": ["clique-1"], "phase": "Running"}]
    stopped = workflow({"groups": groups})  # failed by the engine (ReconcileError) mid-run: terminal, no history
    stopped["status"]["conditions"] = [{"type": "Failed", "status": "True", "reason": "ReconcileError"}]
    cliques = _cliques(CategoryView({"domain": "communication", "variant": "nccl-all-reduce"}, stopped))
    assert [(c["name"], c["passed"], c["busBW"]) for c in cliques] == [("clique-0", True, 470.5), ("clique-1", False, None)]


def test_records_are_labelled_rounds_as_their_tests_are_numbered() -> None:
    """testScale diagnose: record k is round k-1 (round 0 the screening), with or without a `diagnose` options block;
    onFailure after n iterations: records past them are rounds 1, 2, ...; plain iterations stay iterations."""
    from nvcre_tui.engine.report.readmodel import CategoryView

    def labels(orchestration_spec: Obj, diagnosing: bool, records: int) -> list[str]:
        group = {"name": "g", "nodes": ["a"], "phase": "Succeeded"}
        status = {"groups": [group], "iterationHistory": [history_record(n, [group]) for n in range(1, records + 1)],
                  **({"diagnose": {}} if diagnosing else {})}
        wf = {"metadata": {"name": "wf"}, "spec": {"orchestration": orchestration_spec},
              "status": {"orchestration": status, "conditions": [{"type": "Succeeded", "status": "True"}]}}
        return [record.label for record in CategoryView({"domain": "d", "variant": "v"}, wf).timeline]

    assert labels({"testScale": "diagnose"}, True, 2) == ["round 0", "round 1"]
    assert labels({"testScale": "diagnose", "diagnose": {"minGroupSize": 2}}, True, 2) == ["round 0", "round 1"]
    assert labels({"testScale": "intra-rack", "iterations": 2, "onFailure": {"diagnose": {}}}, True, 3) == ["iteration 1", "iteration 2", "round 1"]
    assert labels({"testScale": "intra-rack", "iterations": 2}, False, 2) == ["iteration 1", "iteration 2"]
