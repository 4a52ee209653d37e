"""The Workflow records its plan at creation and the controller runs exactly that plan, or says why not."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.cli.certification import target_nodes
from nvcre_tui.engine.planning.grouping import Group
from nvcre_tui.engine.planning.partition import plan_problem
from tests.foundation.partition_harness import partitioned

CASES = Path(__file__).resolve().parents[1] / "cases" / "render"


def rendered(case: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert main(["certification", "render", str(CASES / case / "cert.yaml"), "-o", "json"]) == 0, capsys.readouterr().err
    return [{k: v for k, v in wf.items() if k != "status"} for wf in json.loads(capsys.readouterr().out)["items"]]


def planned(wf: dict[str, Any]) -> list[dict[str, Any]]:
    return wf["spec"]["orchestration"]["plannedGroups"]


def test_the_controller_runs_the_recorded_plan_even_where_it_would_cut_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    [wf] = rendered("full-scale-overflow", capsys)
    assert len(planned(wf)) >= 2
    edited = copy.deepcopy(wf)
    first, second = planned(edited)[0], planned(edited)[1]
    first["nodes"][0], second["nodes"][0] = second["nodes"][0], first["nodes"][0]  # a plan no partition would make
    result = asyncio.run(partitioned([edited], target_nodes(None, None)))[wf["metadata"]["name"]]
    assert result.groups == {g["name"]: g["nodes"] for g in planned(edited)}
    assert "PlanChanged" not in result.events
    assert result.events["GroupsPartitioned"].startswith("Discovered")


def test_a_node_cordoned_since_the_plan_makes_the_controller_partition_again_and_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    [wf] = rendered("intra-node-all-reduce", capsys)
    victim = planned(wf)[0]["nodes"][0]
    nodes = target_nodes(None, None)
    for node in nodes:
        if node["metadata"]["name"] == victim:
            node.setdefault("spec", {})["unschedulable"] = True
    result = asyncio.run(partitioned([wf], nodes))[wf["metadata"]["name"]]
    assert victim in result.events["PlanChanged"] and "no longer eligible" in result.events["PlanChanged"]
    assert victim not in {n for group in result.groups.values() for n in group}
    assert len(result.groups) == len(planned(wf)) - 1


def test_a_diagnose_plan_is_kept_when_its_state_gives_the_same_first_wave(capsys: pytest.CaptureFixture[str]) -> None:
    [wf] = [w for w in rendered("diagnose-example", capsys) if w["spec"]["orchestration"]["testScale"] == "diagnose"]
    nodes = target_nodes(None, None)
    kept = asyncio.run(partitioned([wf], nodes))[wf["metadata"]["name"]]
    assert kept.groups == {g["name"]: g["nodes"] for g in planned(wf)} and "PlanChanged" not in kept.events
    edited = copy.deepcopy(wf)
    planned(edited)[0]["name"] = "hand-made"
    changed = asyncio.run(partitioned([edited], nodes))[wf["metadata"]["name"]]
    assert "diagnose state" in changed.events["PlanChanged"]
    assert changed.groups == kept.groups  # the state's own wave, which is what its verdicts will read


@pytest.mark.parametrize(("plan", "eligible", "problem"), [
    ([Group("a", ("n1", "n2")), Group("b", ("n3", "n4"))], {"n1", "n2", "n3", "n4"}, None),
    ([Group("a", ("n1", "n2")), Group("b", ("n2", "n3"), overflow=True)], {"n1", "n2", "n3"}, None),
    ([Group("a", ("n1", "n2")), Group("a", ("n3", "n4"))], {"n1", "n2", "n3", "n4"}, "group a is planned twice"),
    ([Group("a", ("n1", "n2")), Group("b", ("n2", "n3"))], {"n1", "n2", "n3"}, "group b shares n2 with another group"),
    ([Group("a", ("n1", "n2"))], {"n1"}, "n2 no longer eligible"),
    ([Group("a", ("n1",))], {"n1", "n9"}, "n9 eligible but not in the plan"),
    ([Group("a", ())], set(), "group a has no nodes"),
])
def test_plan_problem(plan: list[Group], eligible: set[str], problem: str | None) -> None:
    assert plan_problem(plan, eligible) == problem


@pytest.mark.parametrize(("scale", "size"), [("intra-rack", 4), ("full-scale", 8), ("diagnose", 2)])
def test_the_status_nodes_per_job_is_the_size_the_jobs_have(scale: str, size: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Eight nodes in two cliques of four: intra-rack Jobs hold a clique each, diagnose's first wave pairs (NVCRE's
    status says all nodes for intra-rack), full-scale all eight."""
    scenario = CASES.parent / "scenarios" / "gb200-intra-rack-mnnvl" / "scenario.yaml"
    body = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "sizes"},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": scale}}]}}
    cert = tmp_path / "cert.yaml"
    cert.write_text(json.dumps(body))
    assert main(["certification", "render", str(cert), "--scenario", str(scenario), "-o", "json"]) == 0, capsys.readouterr().err
    [wf] = json.loads(capsys.readouterr().out)["items"]
    groups = wf["status"]["orchestration"]["groups"]
    assert wf["status"]["orchestration"]["nodesPerJob"] == size == max(len(g["nodes"]) for g in groups)
