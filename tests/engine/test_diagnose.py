"""Diagnose: golden fleets, properties over random fleets, unit rules, and the cost claim against plain halving.

Golden cases: tests/cases/diagnose/<case>/input.yaml holds the fleet (`domains`: name -> node list, or a count that
names nodes `<domain>-nNN`; "" = unlabelled `node-NN`), `minGroupSize`, and the truth the simulated oracle answers
from: `faulty` nodes, `flaky` nodes with a pass/fail pattern over their successive tests, `fabricFault` (a group
spanning two domains fails) and `transient` group names that fail once. expected.json pins verdicts, rounds, test
count and cost. To rewrite every expected.json from the current code, run
`NVCRE_UPDATE_GOLDEN=1 python -m pytest tests/engine/test_diagnose.py` and review the diff.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.api import DiagnoseStatus
from nvcre_tui.engine.apibase import DNS_LABEL
from nvcre_tui.engine.diagnose import DiagnoseError, DiagnoseState, plan_round, record_round, start
from nvcre_tui.engine.grouping import Group

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases" / "diagnose"
UPDATE_GOLDEN = os.environ.get("NVCRE_UPDATE_GOLDEN") == "1"
EIGHT_CLIQUES = {f"clique-{c}": [f"clique-{c}-n{i:02d}" for i in range(8)] for c in "abcdefgh"}


@dataclass
class Oracle:
    """The simulated fleet answering each group with the OR model (plus flaky, fabric and transient faults)."""

    domain_of: Mapping[str, str]
    faulty: frozenset[str] = frozenset()
    flaky: Mapping[str, tuple[bool, ...]] = field(default_factory=dict)  # True = fails that test
    fabric_fault: bool = False
    transient: frozenset[str] = frozenset()
    seen: Counter[str] = field(default_factory=Counter)

    def answer(self, groups: Sequence[Group]) -> dict[str, bool]:
        outcomes = {}
        for group in groups:
            failed = bool(self.faulty & set(group.nodes)) or group.name in self.transient
            for node in group.nodes:
                if node in self.flaky:
                    failed |= self.flaky[node][self.seen[node] % len(self.flaky[node])]
                    self.seen[node] += 1
            failed |= self.fabric_fault and len({self.domain_of[n] for n in group.nodes}) > 1
            outcomes[group.name] = not failed
        return outcomes


def simulate(domains: Mapping[str, Sequence[str]], min_group_size: int, oracle: Oracle, max_rounds: int = 12) -> DiagnoseState:
    """Run diagnose to completion, checking names, JSON round-trips and that no decided verdict ever changes."""
    state = start(domains, min_group_size)
    names: set[str] = set()
    decided: dict[str, str] = {}
    while not state.complete:
        assert state.round < max_rounds, "diagnose did not finish"
        groups = plan_round(state)
        assert groups and all(re.fullmatch(DNS_LABEL, g.name) and len(g.name) <= 63 for g in groups)
        assert names.isdisjoint(g.name for g in groups) and len({g.name for g in groups}) == len(groups)
        names |= {g.name for g in groups}
        state = record_round(state, oracle.answer(groups))
        assert DiagnoseState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
        assert all(state.verdicts()[node] == verdict for node, verdict in decided.items())
        decided = dict(state.verdicts())
    assert plan_round(state) == [] and state.stage == "complete"
    assert sorted(state.verdicts()) == sorted(n for names_ in domains.values() for n in names_)
    return state


def _oracle(domains: Mapping[str, Sequence[str]], **truth: Any) -> Oracle:
    return Oracle({n: d for d, names in domains.items() for n in names}, **truth)


def _trusted(state: DiagnoseState, node: str) -> bool:
    """A faulty verdict rests on a failing solo test whose partners all ended healthy."""
    verdicts = state.verdicts()
    return any(
        t.stage in ("confirmation", "reconfirmation") and t.subjects == (node,) and not t.passed
        and all(verdicts[p] == "healthy" for p in t.padding)
        for t in state.tests
    )


# -- golden cases -------------------------------------------------------------------------------------------------


def load_case(case: str) -> tuple[dict[str, list[str]], int, Oracle]:
    data = yaml.safe_load((CASES / case / "input.yaml").read_text())
    domains = {
        d: [f"{d}-n{i:02d}" if d else f"node-{i:02d}" for i in range(spec)] if isinstance(spec, int) else list(spec)
        for d, spec in data["domains"].items()
    }
    flaky = {n: tuple(step == "fail" for step in pattern) for n, pattern in (data.get("flaky") or {}).items()}
    oracle = _oracle(
        domains,
        faulty=frozenset(data.get("faulty") or []),
        flaky=flaky,
        fabric_fault=bool(data.get("fabricFault")),
        transient=frozenset(data.get("transient") or []),
    )
    return domains, int(data["minGroupSize"]), oracle


def summary(state: DiagnoseState) -> dict[str, Any]:
    verdicts = state.verdicts()
    return {
        "faulty": sorted(n for n, v in verdicts.items() if v == "faulty"),
        "inconclusive": sorted(n for n, v in verdicts.items() if v == "inconclusive"),
        "healthyCount": sum(v == "healthy" for v in verdicts.values()),
        "rounds": state.round,
        "tests": len(state.tests),
        "nodeMinutes": state.node_minutes,
        "testsByStage": dict(Counter(t.stage for t in state.tests)),
        "infrastructureFaults": [f"{f.group}: {', '.join(f.nodes)}" for f in state.infrastructure_faults],
        "notes": [f"{n.kind} {n.group}: {', '.join(n.nodes)}" for n in state.notes],
    }


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_case(case: str) -> None:
    domains, min_group_size, oracle = load_case(case)
    state = simulate(domains, min_group_size, oracle)
    actual = summary(state)
    innocent = set(oracle.domain_of) - oracle.faulty - set(oracle.flaky)
    assert not innocent & set(actual["faulty"]), "a node without a fault was blamed"
    assert all(_trusted(state, n) for n in actual["faulty"])
    expected_path = CASES / case / "expected.json"
    if UPDATE_GOLDEN:
        expected_path.write_text(json.dumps(actual, indent=2) + "\n")
    assert actual == json.loads(expected_path.read_text())


def test_golden_cases_cover_the_scenarios() -> None:
    expected = {d.name: json.loads((d / "expected.json").read_text()) for d in CASES.iterdir() if d.is_dir()}
    assert expected["all-healthy"]["rounds"] == 2 and expected["all-healthy"]["testsByStage"]["inter-screening"] == 1
    assert expected["no-healthy-reference"]["faulty"] == [] and len(expected["no-healthy-reference"]["inconclusive"]) == 5
    assert expected["fabric-fault"]["infrastructureFaults"] and expected["fabric-fault"]["faulty"] == []
    assert expected["flaky-isolated"]["faulty"] == ["clique-a-n03"]
    assert "clique-g-n04" in expected["flaky-alternating"]["inconclusive"]
    assert any(note.startswith("transient") for note in expected["transient"]["notes"])


# -- properties ---------------------------------------------------------------------------------------------------


@st.composite
def fleets(draw: st.DrawFn) -> tuple[dict[str, list[str]], int]:
    """Up to 8 domains and 64 nodes, labelled or not, with minGroupSize 1..4."""
    sizes = draw(st.lists(st.integers(1, 12), min_size=1, max_size=8).filter(lambda s: sum(s) <= 64))
    if draw(st.booleans()):
        domains = {f"d{c}": [f"d{c}-n{i:02d}" for i in range(size)] for c, size in enumerate(sizes)}
    else:
        domains = {"": [f"node-{i:02d}" for i in range(sum(sizes))]}
    return domains, draw(st.integers(1, 4))


@settings(max_examples=200, deadline=None)
@given(fleet=fleets(), data=st.data())
def test_or_model_isolates_exactly_the_faulty_nodes(fleet: tuple[dict[str, list[str]], int], data: st.DataObject) -> None:
    domains, m = fleet
    nodes = sorted(n for names in domains.values() for n in names)
    faulty = frozenset(data.draw(st.sets(st.sampled_from(nodes), max_size=len(nodes))))
    state = simulate(domains, m, _oracle(domains, faulty=faulty), max_rounds=4)
    verdicts = state.verdicts()
    assert {n for n, v in verdicts.items() if v == "faulty"} <= faulty
    assert not {n for n, v in verdicts.items() if v == "healthy"} & faulty
    assert all(_trusted(state, n) for n in faulty if verdicts[n] == "faulty")
    noted = {n for note in state.notes for n in note.nodes}
    assert {n for n, v in verdicts.items() if v == "inconclusive"} <= noted
    clean = [t for t in state.tests if t.stage == "intra-screening" and not faulty & set(t.nodes)]
    references = sum(len(t.nodes) for t in clean) >= 2 * (m - 1) and (len(clean) >= 2 or list(domains) == [""])
    if m == 1 or references:  # enough healthy partners for independent confirmations: no node left undecided
        assert {n for n, v in verdicts.items() if v == "faulty"} == faulty
    for test in state.tests:
        assert len(test.nodes) >= m if test.stage == "split" else True
        assert len(test.nodes) <= m if test.stage in ("confirmation", "reconfirmation") else True


@settings(max_examples=150, deadline=None)
@given(fleet=fleets(), data=st.data())
def test_one_flaky_node_or_a_broken_fabric_never_blames_a_healthy_node(
    fleet: tuple[dict[str, list[str]], int], data: st.DataObject
) -> None:
    domains, m = fleet
    nodes = sorted(n for names in domains.values() for n in names)
    flaky_node = data.draw(st.sampled_from(nodes))
    pattern = tuple(data.draw(st.lists(st.booleans(), min_size=1, max_size=4)))
    faulty = frozenset(data.draw(st.sets(st.sampled_from(nodes), max_size=3))) - {flaky_node}
    oracle = _oracle(domains, faulty=faulty, flaky={flaky_node: pattern}, fabric_fault=data.draw(st.booleans()))
    state = simulate(domains, m, oracle, max_rounds=6)
    blamed = {n for n, v in state.verdicts().items() if v == "faulty"}
    assert blamed <= faulty | {flaky_node}
    assert not faulty & {n for n, v in state.verdicts().items() if v == "healthy"}


# -- unit rules ---------------------------------------------------------------------------------------------------


def test_screening_is_one_group_per_domain_or_sqrt_chunks() -> None:
    labelled = plan_round(start({"rack-b": ["b2", "b1"], "rack-a": ["a1"]}, 2))
    assert labelled == [Group("r0-screen-0", ("a1",), ("rack-a",)), Group("r0-screen-1", ("b1", "b2"), ("rack-b",))]
    chunks = plan_round(start({"": [f"n{i:02d}" for i in range(20)]}, 2))
    assert [len(g.nodes) for g in chunks] == [5, 5, 5, 5] and chunks[1].nodes[0] == "n05" and chunks[0].domains == ()
    assert [len(g.nodes) for g in plan_round(start({"": ["x", "y", "z"]}, 2))] == [2, 1]


@pytest.mark.parametrize(
    ("domains", "m", "message"),
    [
        ({"a": ["n1"]}, 0, "minGroupSize must be an integer >= 1"),
        ({"a": ["n1"]}, True, "minGroupSize must be an integer >= 1"),
        ({"a": ["n1"], "b": ["n1"]}, 2, "node 'n1' appears in domains 'a' and 'b'"),
        ({"a": ["n1", "n1"]}, 2, "node 'n1' appears twice in domain 'a'"),
        ({"a": []}, 2, "no nodes to diagnose"),
        ({"a": "n1"}, 2, "domain 'a' must be a name with a list of non-empty node names"),
        ({"a": ["n1", ""]}, 2, "domain 'a' must be a name with a list of non-empty node names"),
    ],
)
def test_start_rejects_bad_input_with_a_message(domains: dict[str, Any], m: Any, message: str) -> None:
    with pytest.raises(DiagnoseError, match=re.escape(message)):
        start(domains, m)


def test_record_round_rejects_outcomes_it_did_not_plan() -> None:
    state = start({"a": ["n1", "n2"]}, 2)
    with pytest.raises(DiagnoseError, match="groups not in this round: r9-screen-0"):
        record_round(state, {"r0-screen-0": True, "r9-screen-0": True})
    with pytest.raises(DiagnoseError, match="true or false for: r0-screen-0"):
        record_round(state, {"r0-screen-0": "yes"})  # type: ignore[dict-item]
    done = record_round(state, {"r0-screen-0": True})
    with pytest.raises(DiagnoseError, match="complete"):
        record_round(done, {})


def test_a_missing_outcome_counts_as_a_failure() -> None:
    state = start(EIGHT_CLIQUES, 2)
    outcomes = {g.name: g.name != "r0-screen-2" for g in plan_round(state)}
    del outcomes["r0-screen-2"]
    assert record_round(state, outcomes) == record_round(state, {**outcomes, "r0-screen-2": False})
    assert record_round(state, outcomes).node_status["clique-c-n00"] == "suspect"


def _run_until(state: DiagnoseState, oracle: Oracle, stage: str) -> DiagnoseState:
    while state.stage != stage:
        state = record_round(state, oracle.answer(plan_round(state)))
    return state


@pytest.mark.parametrize("m", [2, 4])
def test_confirmations_are_padded_with_disjoint_same_domain_partners(m: int) -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"}))
    state = _run_until(start(EIGHT_CLIQUES, m), oracle, "confirmation")
    confirmations = [g for g in plan_round(state) if "-confirm-" in g.name]
    assert len(confirmations) == m and all(len(g.nodes) == m for g in confirmations)
    partners = [n for g in confirmations for n in g.nodes[1:]]
    assert len(partners) == len(set(partners)) and all(state.node_status[p] == "healthy" for p in partners)
    home = [p for p in partners if p.startswith("clique-c-")]  # the clique's 8 - m healthy nodes are used first
    assert len(home) == min(8 - m, len(partners)) and confirmations[0].domains == ("clique-c",)


def test_inter_domain_representatives_are_not_reused_as_partners_in_the_same_round() -> None:
    domains = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3"], "c": ["c1", "c2", "c3"]}
    state = record_round(start(domains, 2), {"r0-screen-0": False, "r0-screen-1": True, "r0-screen-2": True})
    groups = plan_round(state)
    assert [g.nodes for g in groups] == [("b1", "c1"), ("a1", "b2"), ("a2", "b3"), ("a3", "c2")]
    assert [g.name for g in groups] == ["r1-inter-0", "r1-confirm-0", "r1-confirm-1", "r1-confirm-2"]


@pytest.mark.parametrize(("size", "stage"), [(3, "confirmation"), (4, "confirmation"), (5, "confirmation"), (6, "split")])
def test_small_pools_go_straight_to_confirmation(size: int, stage: str) -> None:
    domains = {"a": [f"a{i}" for i in range(size)], "b": [f"b{i}" for i in range(8)]}
    state = record_round(start(domains, 2), {"r0-screen-0": False, "r0-screen-1": True})
    assert state.stage == stage


def _after_split_all_passed(retest_passes: bool) -> DiagnoseState:
    state = record_round(start({"a": [f"a{i}" for i in range(8)]}, 2), {"r0-screen-0": False})
    parts = plan_round(state)
    assert [len(g.nodes) for g in parts] == [2, 2, 2, 2]
    state = record_round(state, {g.name: True for g in parts})
    assert [g.name for g in plan_round(state)] == ["r2-retest-0"] and state.stage == "retest"
    return record_round(state, {"r2-retest-0": retest_passes})


def test_a_pool_whose_parts_pass_is_retested_once() -> None:
    cleared = _after_split_all_passed(True)
    assert cleared.complete and set(cleared.verdicts().values()) == {"healthy"}
    assert [n.kind for n in cleared.notes] == ["transient"]
    undecided = _after_split_all_passed(False)
    assert undecided.complete and set(undecided.verdicts().values()) == {"inconclusive"}
    assert [n.kind for n in undecided.notes] == ["inconsistent"] and len(undecided.notes[0].nodes) == 8


def test_stages_verdicts_and_evidence_of_a_run() -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"}))
    state, stages = start(EIGHT_CLIQUES, 2), []
    while not state.complete:
        stages.append(state.stage)
        state = record_round(state, oracle.answer(plan_round(state)))
        if not state.complete:
            assert "clique-c-n05" not in state.verdicts() and len(state.verdicts()) >= 56
    assert stages == ["intra-screening", "split", "confirmation"]
    evidence = state.evidence("clique-c-n05")
    steps = [(e["stage"], e["passed"]) for e in evidence]
    assert steps == [("intra-screening", False), ("split", False), ("confirmation", False)]
    assert evidence[-1]["group"] == "r2-confirm-1" and len(evidence[-1]["nodes"]) == 2
    assert [e["stage"] for e in state.evidence("clique-a-n00")] == ["intra-screening"]
    with pytest.raises(DiagnoseError, match="unknown node 'nope'"):
        state.evidence("nope")


def test_state_is_stored_as_diagnose_status() -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"}))
    state = _run_until(start(EIGHT_CLIQUES, 2), oracle, "confirmation")
    status = DiagnoseStatus.model_validate(state.to_dict())
    assert status.stage == "confirmation" and status.round == 2
    assert status.suspect_nodes == ["clique-c-n04", "clique-c-n05"] and len(status.healthy_nodes or []) == 62
    assert DiagnoseState.from_dict(status.to_wire()) == state


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("tests"), "missing field 'tests'"),
        (lambda d: d.update(healthyNodes="clique-a-n00"), "expected a list of node names"),
        (lambda d: d["suspectNodes"].append("clique-a-n00"), "do not cover each node"),
        (lambda d: d["plan"][0].update(stage="guess"), "unknown stage 'guess'"),
        (lambda d: d.update(round="two"), "malformed"),
    ],
)
def test_unreadable_state_is_reported(change: Any, message: str) -> None:
    data = _run_until(start(EIGHT_CLIQUES, 2), _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"})), "split").to_dict()
    change(data)
    with pytest.raises(DiagnoseError, match=re.escape(message)):
        DiagnoseState.from_dict(data)


# -- cost against NVCRE's halving (bench/diagnose.py) --------------------------------------------------------------


@functools.cache
def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_diagnose", ROOT / "bench" / "diagnose.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("m", "faults"), [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3)])
def test_cheaper_than_halving_on_typical_fleets(m: int, faults: int) -> None:
    bench = _bench()
    for domains in (bench.cliques(8, 8), bench.cliques(4, 18), bench.unlabelled(100)):
        row = bench.compare(domains, m, faults, trials=12)
        assert row.ours_minutes < row.base_minutes and row.worst_round_excess <= -1


def test_halving_baseline_matches_the_reference_costs() -> None:
    bench = _bench()
    one = bench.halving(bench.cliques(8, 8), 2, {"c02-n05"})
    assert (one.rounds, one.node_minutes, one.faulty) == (5, 64 + 7 + 8 + 4 + 4, frozenset({"c02-n05"}))
    healthy = bench.halving(bench.unlabelled(232), 2, ())
    assert (healthy.rounds, healthy.node_minutes) == (2, 232 + 15)
