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
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.api.base import DNS_LABEL
from nvcre_tui.engine.api.bodies import GroupStatus
from nvcre_tui.engine.api.resources import DiagnoseStatus
from nvcre_tui.engine.diagnose import (
    DiagnoseError, DiagnoseState, evidence, follow_up, node_record, plan_round, planner, readable, record_round, round_cap, screening_groups, start,
)
from nvcre_tui.engine.planning.grouping import Group

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases" / "diagnose"
UPDATE_GOLDEN = os.environ.get("NVCRE_UPDATE_GOLDEN") == "1"
EIGHT_CLIQUES = {f"clique-{c}": [f"clique-{c}-n{i:02d}" for i in range(8)] for c in "abcdefgh"}


@dataclass
class Oracle:
    """The simulated fleet answering each group: the OR model plus flaky nodes, link faults and transient groups."""

    domain_of: Mapping[str, str]
    faulty: frozenset[str] = frozenset()
    flaky: Mapping[str, tuple[bool, ...]] = field(default_factory=dict)  # True = fails that test
    fabric_fault: bool = False  # every group spanning two domains fails
    links: tuple[tuple[str, ...], ...] = ()  # (A, B): a degraded pair; (A,): a bad uplink
    transient: frozenset[str] = frozenset()
    # (A, B): a pair failing part of the time, True = fails that crossing, over its successive crossings
    flaky_links: Mapping[tuple[str, str], tuple[bool, ...]] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)

    def answer(self, groups: Sequence[Group]) -> dict[str, bool]:
        outcomes = {}
        for group in groups:
            failed = bool(self.faulty & set(group.nodes)) or group.name in self.transient
            for node in group.nodes:
                if node in self.flaky:
                    failed |= self.flaky[node][self.seen[node] % len(self.flaky[node])]
                    self.seen[node] += 1
            spans = {self.domain_of[n] for n in group.nodes} - {""}
            failed |= self.fabric_fault and len(spans) > 1
            failed |= any(set(link) <= spans if len(link) == 2 else link[0] in spans and len(spans) > 1 for link in self.links)
            for link, pattern in self.flaky_links.items():
                if set(link) <= spans:
                    failed |= pattern[self.seen[":".join(link)] % len(pattern)]
                    self.seen[":".join(link)] += 1
            outcomes[group.name] = not failed
        return outcomes


def simulate(domains: Mapping[str, Sequence[str]], min_group_size: int, oracle: Oracle, max_concurrent: int = 0,
             first: DiagnoseState | None = None) -> DiagnoseState:
    """Run diagnose to completion (from `first`, else a new run), checking names, waves (one Job per node, at most
    maxConcurrent) and JSON round-trips."""
    state = first or start(domains, min_group_size, max_concurrent)
    names: set[str] = set()
    while not state.complete:
        assert state.round < planner.hard_stop(state), "diagnose did not finish"
        groups = plan_round(state)
        assert groups and all(re.fullmatch(DNS_LABEL, g.name) and len(g.name) <= 63 for g in groups)
        assert names.isdisjoint(g.name for g in groups) and len({g.name for g in groups}) == len(groups)
        members = [n for g in groups for n in g.nodes]
        assert len(members) == len(set(members)), "a node in two groups of one wave"
        assert not max_concurrent or len(groups) <= max_concurrent, "more groups than maxConcurrent"
        names |= {g.name for g in groups}
        state = record_round(state, oracle.answer(groups))
        assert DiagnoseState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    assert plan_round(state) == [] and state.stage == "complete"
    assert sorted(state.verdicts()) == sorted(n for names_ in domains.values() for n in names_)
    return state


def _oracle(domains: Mapping[str, Sequence[str]], **truth: Any) -> Oracle:
    return Oracle({n: d for d, names in domains.items() for n in names}, **truth)


def _trusted(state: DiagnoseState, node: str) -> bool:
    """A faulty or intermittent verdict rests on two failing tests whose partners ended healthy and share no node."""
    verdicts = state.verdicts()
    failing = [set(t.nodes) - {node} for t in state.tests if node in t.nodes and not t.passed
               and all(verdicts[p] == "healthy" for p in t.nodes if p != node)]
    return any(a.isdisjoint(b) for i, a in enumerate(failing) for b in failing[i + 1 :])


# -- golden cases -------------------------------------------------------------------------------------------------


def load_case(case: str) -> tuple[dict[str, list[str]], int, int, Oracle]:
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
        links=tuple(tuple(link) for link in data.get("links") or []),
        transient=frozenset(data.get("transient") or []),
    )
    return domains, int(data["minGroupSize"]), int(data.get("maxConcurrent") or 0), oracle


def summary(state: DiagnoseState) -> dict[str, Any]:
    verdicts = state.verdicts()
    return {
        "faulty": sorted(n for n, v in verdicts.items() if v == "faulty"),
        "intermittent": sorted(n for n, v in verdicts.items() if v == "intermittent"),
        "inconclusive": sorted(n for n, v in verdicts.items() if v == "inconclusive"),
        "healthyCount": sum(v == "healthy" for v in verdicts.values()),
        "rounds": state.round,
        "tests": len(state.tests),
        "nodeMinutes": state.node_minutes,
        "testsByStage": dict(Counter(t.stage for t in state.tests)),
        "infrastructureFaults": [f"{', '.join(f.cliques)}: {f.message}" for f in state.infrastructure_faults],
        "notes": [f"{n.kind}: {n.message}" for n in state.notes],
    }


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_case(case: str) -> None:
    domains, min_group_size, max_concurrent, oracle = load_case(case)
    state = simulate(domains, min_group_size, oracle, max_concurrent)
    actual = summary(state)
    innocent = set(oracle.domain_of) - oracle.faulty - set(oracle.flaky)
    assert not innocent & set(actual["faulty"] + actual["intermittent"]), "a node without a fault was blamed"
    assert all(_trusted(state, n) for n in actual["faulty"] + actual["intermittent"])
    expected_path = CASES / case / "expected.json"
    if UPDATE_GOLDEN:
        expected_path.write_text(json.dumps(actual, indent=2) + "\n")
    assert actual == json.loads(expected_path.read_text())


def test_golden_cases_cover_the_scenarios() -> None:
    expected = {d.name: json.loads((d / "expected.json").read_text()) for d in CASES.iterdir() if d.is_dir()}
    # cliques of eight screened in pairs: one node out for the inter test would leave a part of three, so it follows
    assert expected["all-healthy"]["rounds"] == 2 and expected["all-healthy"]["testsByStage"]["inter"] == 1
    assert expected["faulty-in-first-inter"]["testsByStage"]["inter"] == 2 and expected["faulty-in-first-inter"]["faulty"] == ["clique-b-n08"] and expected["faulty-in-first-inter"]["infrastructureFaults"] == []
    assert expected["flaky-passes-screening"]["intermittent"] == ["clique-b-n00"] and expected["flaky-passes-screening"]["infrastructureFaults"] == []
    assert expected["no-healthy-reference"]["faulty"] == [] and len(expected["no-healthy-reference"]["inconclusive"]) == 5
    assert expected["fabric-fault"]["faulty"] == [] and expected["fabric-fault"]["healthyCount"] == 64
    # every link failed its direct test: the whole fabric is named after one wave of them, not searched for waves
    assert expected["fabric-fault"]["infrastructureFaults"][0].startswith("clique-a, clique-b, clique-c, clique-d, clique-e, clique-f, clique-g, clique-h: degraded fabric between all 8")
    assert expected["fabric-fault"]["rounds"] == 3 and expected["fabric-fault"]["notes"] == []
    assert expected["flaky-isolated"]["faulty"] + expected["flaky-isolated"]["intermittent"] == ["clique-a-n03"]
    assert expected["flaky-alternating"]["intermittent"] == ["clique-g-n04"]
    # the rules before the posterior convicted c00-n11 here: failures beside flaky partners that had passed once or twice
    assert expected["flaky-partners-beside-healthy"]["faulty"] == [] and expected["flaky-partners-beside-healthy"]["intermittent"] == ["c00-n01", "c00-n10"]
    assert expected["transient"]["faulty"] == [] and expected["transient"]["healthyCount"] == 64
    assert expected["degraded-pair"]["infrastructureFaults"][0].startswith("clique-b, clique-f:")
    assert expected["degraded-pair-with-faulty"]["faulty"] == ["clique-b-n03"]
    assert expected["degraded-pair-with-faulty"]["infrastructureFaults"][0].startswith("clique-b, clique-f:")
    assert expected["degraded-uplink"]["infrastructureFaults"][0].startswith("clique-c: degraded uplink")
    assert expected["four-faulty-in-one-of-two-cliques"]["faulty"] == ["clique-a-n01", "clique-a-n03", "clique-a-n04", "clique-a-n06"]


# -- properties ---------------------------------------------------------------------------------------------------


@st.composite
def fleets(draw: st.DrawFn) -> tuple[dict[str, list[str]], int, int]:
    """Up to 8 domains and 64 nodes, labelled or not, minGroupSize 1..3, maxConcurrent unlimited or 1..6."""
    sizes = draw(st.lists(st.integers(1, 12), min_size=1, max_size=8).filter(lambda s: sum(s) <= 64))
    if draw(st.booleans()):
        domains = {f"d{c}": [f"d{c}-n{i:02d}" for i in range(size)] for c, size in enumerate(sizes)}
    else:
        domains = {"": [f"node-{i:02d}" for i in range(sum(sizes))]}
    return domains, draw(st.integers(1, 3)), draw(st.sampled_from([0, 0, 1, 2, 3, 6]))


def _round_bound(domains: Mapping[str, Sequence[str]], m: int, max_concurrent: int, faults: int) -> int:
    """The stated bound for persistent faults: the screening waves, then at most 6 + 4 per faulty node rounds, each
    spread over ceil(16 / maxConcurrent) waves under maxConcurrent."""
    screening = len(screening_groups(tuple((d, tuple(n)) for d, n in sorted(domains.items())), m, max_concurrent))
    waves = -(-screening // max_concurrent) if max_concurrent else 1
    return waves + (6 + 4 * faults) * (-(-16 // max_concurrent) if max_concurrent else 1)


@st.composite
def persistent_cases(draw: st.DrawFn) -> tuple[tuple[dict[str, list[str]], int, int], frozenset[str], tuple[str, ...]]:
    """A fleet, a set of persistent faulty nodes and, with two or more cliques, maybe a degraded pair or uplink."""
    fleet = draw(fleets())
    domains = fleet[0]
    nodes = sorted(n for names in domains.values() for n in names)
    faulty = frozenset(draw(st.sets(st.sampled_from(nodes), max_size=len(nodes))))
    cliques = sorted(d for d in domains if d)
    link: tuple[str, ...] = ()
    if len(cliques) >= 2 and draw(st.booleans()):
        link = tuple(sorted(draw(st.sets(st.sampled_from(cliques), min_size=1, max_size=2))))
    return fleet, faulty, link


def _unlabelled(count: int) -> dict[str, list[str]]:
    return {"": [f"node-{i:02d}" for i in range(count)]}


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(case=persistent_cases())
# Found by random runs (derandomize=False): one reference node and minGroupSize 3, so suspects were regrouped
# among themselves; CRC32 shuffles (linear: a salt only XORs the keys) kept making the same failing triples and no
# faulty node was named. And 7 faulty of 11 under maxConcurrent 1: the regrouping paired the least-tested (faulty)
# nodes and stopped after three waves' worth of groups before finding a pair that passes. And a clique with no
# healthy node behind a bad uplink: one wave of pairs inside it (maxConcurrent 2) was all it got before partners from
# the other clique, over the bad link, made every later test fail.
# And 5 faulty of 12 in groups of three: no group passed in three waves' worth of regroupings, and the run stopped
# as if no node could pass (it now gets twice as many when minGroupSize is 3 or more).
@example(case=((_unlabelled(12), 3, 3), frozenset({"node-00", "node-02", "node-03", "node-08", "node-09"}), ()))
# (A fleet mostly faulty with minGroupSize 3: test_a_mostly_faulty_fleet_is_still_diagnosed.)
@example(case=(({"d0": [f"d0-n{i:02d}" for i in range(6)], "d1": [f"d1-n{i:02d}" for i in range(4)]}, 2, 2), frozenset({"d0-n00", "d0-n01"}), ("d0",)))
@example(case=((_unlabelled(10), 3, 0), frozenset({"node-00", "node-01", "node-03", "node-06"}), ()))
# And behind a bad uplink with minGroupSize 1: d0-n02, confirmed beside a healthy node of d1, failed for the link,
# and regrouping counted that failure as its own, so no new pair held it: d0-n00 and d0-n01 were paired again and
# again, then confirmed across the link for 11 waves, and all three ended inconclusive.
@example(case=(({"d0": ["d0-n00", "d0-n01", "d0-n02"], "d1": ["d1-n00", "d1-n01"]}, 1, 0), frozenset({"d0-n00"}), ("d0",)))
# And beside it, with three nodes in d1: the two healthy nodes of d0, each blamed alone for a test across the link,
# were the most blamed, so every regrouping began with d0-n00 and held a failed pair again; other first members are
# now tried for a group that repeats no failure.
@example(case=(({"d0": ["d0-n00", "d0-n01", "d0-n02"], "d1": ["d1-n00", "d1-n01", "d1-n02"]}, 1, 0), frozenset({"d0-n00"}), ("d0",)))
# And 5 faulty of 12 behind a bad uplink in groups of three (16 % of them healthy): twelve regroupings all failed by
# chance, then 68 waves of confirmations across the link failed for it and the clique ended inconclusive. A clique whose
# every test across cliques failed gets three times the regroupings.
@example(case=(({"d0": [f"d0-n{i:02d}" for i in range(12)], "d1": [f"d1-n{i:02d}" for i in range(6)]}, 3, 3),
               frozenset({"d0-n00", "d0-n01", "d0-n04", "d0-n07", "d0-n10"}), ("d0",)))
@example(case=((_unlabelled(11), 2, 1), frozenset({"node-00", "node-01", "node-02", "node-03", "node-04", "node-05", "node-06"}), ()))
def test_persistent_and_link_faults_are_named_exactly(case: tuple[tuple[dict[str, list[str]], int, int], frozenset[str], tuple[str, ...]]) -> None:
    (domains, m, mc), faulty, link = case
    nodes = sorted(n for names in domains.values() for n in names)
    cliques = sorted(d for d in domains if d)
    oracle = _oracle(domains, faulty=faulty, links=(link,) if link else ())
    state = simulate(domains, m, oracle, mc)
    verdicts = state.verdicts()
    named = {n for n, v in verdicts.items() if v in ("faulty", "intermittent")}
    assert named <= faulty and not {n for n, v in verdicts.items() if v == "healthy"} & faulty
    assert all(_trusted(state, n) for n in named)
    # An uplink is named as a pair with its clique when no third clique has a healthy node to tell them apart.
    assert all(f.cliques == link or (len(link) == 1 and link[0] in f.cliques) for f in state.infrastructure_faults)
    healthy_per_domain = [len(set(names) - faulty) for names in domains.values()]
    # Known limits (never a wrong verdict: the assertions above hold for every fleet): with maxConcurrent 1 and
    # minGroupSize 3 a faulty node may run out of fresh partners and end inconclusive; and with minGroupSize 3 and
    # more faulty nodes than healthy ones, a group of three healthy nodes is found by luck only (for 13 faulty of 19
    # the exact posterior gives every suspect a 27-46 % chance of being healthy), so the search may stop first.
    luck = m >= 3 and 2 * len(faulty) > len(nodes)
    # Two failures with disjoint partners need 2(m-1) healthy partners; inside the clique when its link is bad.
    enough = 2 * m if link else max(m, 2)
    if min(healthy_per_domain) >= enough and len(nodes) - len(faulty) >= 2 * max(m, 2) and not (mc == 1 and m >= 3) and not luck:
        assert named == faulty, "enough healthy partners everywhere: every faulty node is named"
        assert state.round <= _round_bound(domains, m, mc, len(faulty)) + (12 if link else 0)
        if link and min(healthy_per_domain) < 4:
            pass  # link tests run in parallel on several representatives per clique; with fewer, the search may stop short
        elif link and (len(link) == 2 or len(cliques) >= 3):
            assert [f.cliques for f in state.infrastructure_faults] == [link], "the degraded link is named"
        elif link:  # an uplink in a two-clique fleet is the pair
            assert [f.cliques for f in state.infrastructure_faults] == [tuple(cliques)]
        else:
            assert state.infrastructure_faults == ()


@st.composite
def fabric_cases(draw: st.DrawFn) -> tuple[dict[str, list[str]], int, int, frozenset[str]]:
    """Three to six cliques of 4 to 12 nodes, minGroupSize 1..3, maxConcurrent unlimited or 2..6, up to 4 faulty nodes."""
    sizes = draw(st.lists(st.integers(4, 12), min_size=3, max_size=6))
    domains = {f"d{c}": [f"d{c}-n{i:02d}" for i in range(size)] for c, size in enumerate(sizes)}
    nodes = sorted(n for names in domains.values() for n in names)
    faulty = frozenset(draw(st.sets(st.sampled_from(nodes), max_size=4)))
    return domains, draw(st.integers(1, 3)), draw(st.sampled_from([0, 0, 2, 3, 6])), faulty


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(case=fabric_cases())
def test_a_fabric_failing_everywhere_is_named_once_beside_the_faulty_nodes(case: tuple[dict[str, list[str]], int, int, frozenset[str]]) -> None:
    """Every test across cliques fails (a threshold no link meets, NCCL on a slow path): one fault names the fabric
    between every clique, and the faulty nodes are named as such; with too few healthy partners in a clique its
    faulty nodes may end inconclusive, but no healthy node is ever blamed."""
    domains, m, mc, faulty = case
    state = simulate(domains, m, _oracle(domains, faulty=faulty, fabric_fault=True), mc)
    verdicts = state.verdicts()
    named = {n for n, v in verdicts.items() if v in ("faulty", "intermittent")}
    assert named <= faulty and all(_trusted(state, n) for n in named)
    assert all(f.message.startswith("degraded fabric between") for f in state.infrastructure_faults)
    if min(len(set(names) - faulty) for names in domains.values()) >= 2 * max(m, 2):
        assert named == faulty
        assert [f.cliques for f in state.infrastructure_faults] == [tuple(sorted(domains))]


def test_a_mostly_faulty_fleet_is_still_diagnosed() -> None:
    """13 faulty of 19 unlabelled nodes, minGroupSize 3, one healthy reference after screening: regroupings that
    counted as full confirmations ran out after 8 waves with nothing named (found by a random property run)."""
    domains = _unlabelled(19)
    faulty = frozenset(f"node-{i:02d}" for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 15))
    state = simulate(domains, 3, _oracle(domains, faulty=faulty))
    assert {n for n, v in state.verdicts().items() if v == "faulty"} == faulty
    assert all(_trusted(state, n) for n in faulty) and state.round <= _round_bound(domains, 3, 0, len(faulty))


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(fleet=fleets(), data=st.data())
def test_a_flaky_node_never_gets_a_healthy_node_blamed(fleet: tuple[dict[str, list[str]], int, int], data: st.DataObject) -> None:
    domains, m, mc = fleet
    nodes = sorted(n for names in domains.values() for n in names)
    # One flaky node: two flaky nodes failing in turn can look exactly like one faulty node between them (a known
    # limit; the bench measures how often, in fleets where a quarter to half of the nodes are flaky).
    flaky_nodes = data.draw(st.sets(st.sampled_from(nodes), min_size=1, max_size=1))
    patterns = {n: tuple(data.draw(st.lists(st.booleans(), min_size=1, max_size=4))) for n in flaky_nodes}
    faulty = frozenset(data.draw(st.sets(st.sampled_from(nodes), max_size=3))) - set(flaky_nodes)
    state = simulate(domains, m, _oracle(domains, faulty=faulty, flaky=patterns), mc)
    blamed = {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")}
    assert blamed <= faulty | set(flaky_nodes)
    assert not faulty & {n for n, v in state.verdicts().items() if v == "healthy"}


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(case=persistent_cases(), from_start=st.booleans())
def test_a_run_within_domains_never_crosses_them(case: tuple[tuple[dict[str, list[str]], int, int], frozenset[str], tuple[str, ...]],
                                                 from_start: bool) -> None:
    """On NVL domains with MNNVL on: testScale diagnose (`from_start`), or the onFailure narrowing of an intra-rack
    run whose groups (one per clique) are the screening. No test spans two cliques, though every test across them
    would fail (another path)."""
    (domains, m, mc), faulty, _ = case
    if "" in domains:
        domains = {"d0": domains[""]}
    groups: list[GroupStatus] = [{"name": f"group-{i}", "nodes": nodes, "domains": [d], "phase": "Failed" if faulty & set(nodes) else "Succeeded"}
                                 for i, (d, nodes) in enumerate(sorted(domains.items()))]
    first = start(domains, m, mc, within_domains=True) if from_start else follow_up(groups, m, mc, within_domains=True)
    if not faulty and not from_start:
        assert first is None
        return
    assert first is not None and first.within_domains
    state = simulate(domains, m, _oracle(domains, faulty=faulty, fabric_fault=True), mc, first=first)
    assert all(len({state.domain_of[n] for n in t.nodes}) == 1 for t in state.tests)
    assert state.infrastructure_faults == () and DiagnoseState.from_dict(state.to_dict()).within_domains
    verdicts = state.verdicts()
    named = {n for n, v in verdicts.items() if v in ("faulty", "intermittent")}
    assert named <= faulty and not {n for n, v in verdicts.items() if v == "healthy"} & faulty
    for nodes in domains.values():  # a clique with partners enough of its own names its faulty nodes
        healthy, bad = len(set(nodes) - faulty), set(nodes) & faulty
        if bad and healthy >= 2 * max(m, 2) and healthy > len(bad) and not (mc == 1 and m >= 3):
            assert bad <= named, "enough healthy partners inside the clique: its faulty nodes are named"


# -- unit rules ---------------------------------------------------------------------------------------------------


def test_screening_splits_each_clique_as_far_as_one_wave_of_jobs_goes_when_unlimited() -> None:
    two = tuple((f"c{c}", tuple(f"c{c}-n{i}" for i in range(8))) for c in range(2))
    assert [len(g) for g in screening_groups(two, 2, 0)] == [2] * 8  # unlimited: pairs
    assert [len(g) for g in screening_groups(two, 3, 0)] == [4] * 4  # never below minGroupSize
    assert [len(g) for g in screening_groups(two, 2, 8)] == [3, 3, 2] * 2  # maxConcurrent 8: seven Jobs beside the inter test,
    # a part fewer than four so that the inter test can take a node of each clique
    assert [len(g) for g in screening_groups(two[:1], 2, 8)] == [2] * 4  # one clique: no inter test
    four = tuple((f"c{c}", tuple(f"c{c}-n{i:02d}" for i in range(18 if c < 3 else 10))) for c in range(4))
    assert [len(g) for g in screening_groups(four, 2, 8)] == [9, 9, 9, 9, 9, 9, 10]  # seven Jobs: the first cliques take one more
    assert screening_groups((("c0", tuple("abcdefg")),), 2, 0) == [("a", "b", "c"), ("d", "e"), ("f", "g")]
    many = tuple((f"c{c:02d}", tuple(f"c{c:02d}-n{i}" for i in range(8))) for c in range(40))
    assert [len(g) for g in screening_groups(many, 2, 0)] == [8] * 40  # 40 cliques: one part each fits WAVE_CAP (64)
    assert [len(g) for g in screening_groups(many[:8], 2, 8)] == [8] * 8  # under maxConcurrent 8, eight cliques stay whole
    assert [len(g) for g in screening_groups(many[:16], 2, 0)] == [2] * 64  # 16: four parts each
    assert [len(g) for g in screening_groups(many[:16], 1, 0)] == [2] * 64  # minGroupSize 1: still pairs
    thirteen = tuple((f"c{c:02d}", tuple(f"c{c:02d}-n{i:02d}" for i in range(18))) for c in range(13))
    assert [len(g) for g in screening_groups(thirteen, 2, 0)] == [5, 5, 4, 4] * 13  # 64 // 13 = 4 parts, not 9 pairs
    mixed = (*many[:4], ("", tuple(f"u{i:03d}" for i in range(200))))
    groups = screening_groups(mixed, 2, 0)  # 50 unlabelled chunks of 4 leave 14 Jobs: three parts per clique
    assert len(groups) == 62 and [len(g) for g in groups[:12]] == [3, 3, 2] * 4


def test_screening_is_one_group_per_small_domain_or_chunks_that_fit_a_wave() -> None:
    labelled = plan_round(start({"rack-b": ["b2", "b1"], "rack-a": ["a1"]}, 2))
    assert labelled == [Group("r0-screen-0", ("a1",), ("rack-a",)), Group("r0-screen-1", ("b1", "b2"), ("rack-b",))]
    small = plan_round(start({"": [f"n{i:02d}" for i in range(20)]}, 2))
    assert [len(g.nodes) for g in small] == [2] * 10 and small[1].nodes[0] == "n02" and small[0].domains == ()
    large = plan_round(start({"": [f"n{i:04d}" for i in range(1000)]}, 2))
    assert len(large) <= 64 and sum(len(g.nodes) for g in large) == 1000
    capped = start({"": [f"n{i:03d}" for i in range(100)]}, 2, max_concurrent=4)
    assert len(plan_round(capped)) == 4 and len(screening_groups(capped.domains, 2, 4)) == 8  # two waves of 4


@pytest.mark.parametrize(
    ("domains", "m", "mc", "message"),
    [
        ({"a": ["n1"]}, 0, 0, "minGroupSize must be an integer >= 1"),
        ({"a": ["n1"]}, True, 0, "minGroupSize must be an integer >= 1"),
        ({"a": ["n1"]}, 2, -1, "maxConcurrent must be an integer >= 0"),
        ({"a": ["n1"], "b": ["n1"]}, 2, 0, "node 'n1' appears in domains 'a' and 'b'"),
        ({"a": ["n1", "n1"]}, 2, 0, "node 'n1' appears twice in domain 'a'"),
        ({"a": []}, 2, 0, "no nodes to diagnose"),
        ({"a": "n1"}, 2, 0, "domain 'a' must be a name with a list of non-empty node names"),
        ({"a": ["n1", ""]}, 2, 0, "domain 'a' must be a name with a list of non-empty node names"),
    ],
)
def test_start_rejects_bad_input_with_a_message(domains: dict[str, Any], m: Any, mc: Any, message: str) -> None:
    with pytest.raises(DiagnoseError, match=re.escape(message)):
        start(domains, m, mc)


def test_record_round_rejects_outcomes_it_did_not_plan() -> None:
    state = start({"a": ["n1", "n2"]}, 2)
    with pytest.raises(DiagnoseError, match="groups not in this round: r9-screen-0"):
        record_round(state, {"r0-screen-0": True, "r9-screen-0": True})
    with pytest.raises(DiagnoseError, match="true or false for: r0-screen-0"):
        record_round(state, {"r0-screen-0": "yes"})  # type: ignore[dict-item]
    done = record_round(state, {"r0-screen-0": True})
    with pytest.raises(DiagnoseError, match="complete"):
        record_round(done, {})


def test_a_failure_across_a_named_link_fault_is_marked_as_the_links_in_a_record() -> None:
    """A full-scale group over the degraded pair failed at 183.95: a node's record lists it as the link's, not as if it
    were held against the node (a review found "intermittent, failed 4 of 7 tests (group-0 at 183.95, ...)")."""
    from nvcre_tui.engine.diagnose.summary import link_faults_crossed, record_text

    domains = {"a": ["a1", "a2"], "b": ["b1", "b2"], "c": ["c1", "c2"]}
    tests = [{"group": "group-0", "nodes": ["a1", "a2", "b1", "b2", "c1", "c2"], "passed": False, "value": 183.95},
             {"group": "r1-part-0", "nodes": ["a1", "a2"], "passed": False, "value": 240.1},
             {"group": "r2-inter-0", "nodes": ["a1", "c1"], "passed": False, "value": 210.0}]
    pair = link_faults_crossed(domains, [["b", "c"]])
    assert record_text(tests, crossed=pair) == "failed 3 of 3 tests (group-0 at 183.95 (link fault), r1-part-0 at 240.1, r2-inter-0 at 210)"
    uplink, fabric = link_faults_crossed(domains, [["a"]]), link_faults_crossed(domains, [["a", "b", "c"]])
    assert [uplink(t) for t in tests] == [True, False, True] and [fabric(t) for t in tests] == [True, False, True]
    assert not any(link_faults_crossed(domains, [])(t) for t in tests)
    assert not pair({**tests[0], "culprits": ["a1"]})  # a crash its log put on a node is the node's, not the link's


def test_the_final_notes_carry_the_last_rounds_number() -> None:
    """A complete diagnosis's notes said round N+1 (the count of rounds recorded) where its last tests are rN-..."""
    state = start({"c": [f"n{i}" for i in range(6)]}, 2)
    for _ in range(60):
        if state.complete:
            break
        state = record_round(state, {g.name: False for g in plan_round(state)})  # nothing ever passes: all inconclusive
    assert state.complete and state.notes
    last = max(t.round for t in state.tests)
    assert {note.round for note in state.notes} == {last}, ([n.round for n in state.notes], last)


def test_a_diagnose_verdict_is_said_in_the_text_and_junit_beside_its_failed_check() -> None:
    """The text report and JUnit showed a threshold-convicted node's check only, dropping "diagnose: faulty, failed 3
    of 3 tests (...)" that JSON and HTML show."""
    from nvcre_tui.engine.report.text import node_line

    node = {"name": "gpu-node-10", "reason": "ThresholdViolation",
            "message": 'diagnose: faulty, failed 3 of 3 tests (r0-screen-4 at 239.33); Threshold "busBandwidthGBps" violated: measured 243.17',
            "evidence": [{"metric": "busBandwidthGBps", "expression": "value >= 300", "measured": 243.17, "passed": False}]}
    assert node_line(node).endswith('— diagnose: faulty, failed 3 of 3 tests (r0-screen-4 at 239.33); Threshold "busBandwidthGBps" violated: measured 243.17')
    assert "measured 243.17 GB/s, expected" in node_line({**node, "message": "a check failed"})  # elsewhere the check says it


def test_progress_of_a_damaged_state_is_said_not_raised() -> None:
    """A state whose round is no number (damaged: its readers say so) still gives a progress line, never a ValueError
    out of the drill-down or the report."""
    from nvcre_tui.engine.diagnose.summary import progress_text, rounds_weighed

    assert [rounds_weighed({"round": r}) for r in ("x", None, True, -1, 3)] == [0, 0, 0, 0, 3]
    assert progress_text({"stage": "confirmation", "round": "x", "tests": [{}]}) == "stage confirmation, round 0, 1 test"
    assert progress_text({"stage": "complete", "round": 4, "tests": [{}, {}]}) == "complete after round 3, 2 tests"


def test_a_test_that_failed_for_another_reason_than_its_value_says_that_reason_not_the_value() -> None:
    """A crashed test's measured bandwidth can be fine: "failed 4 of 6 tests (group-0 at 398.8, ...)" read as if the
    value convicted the node (a review found it). The reason is recorded, kept through the stored state, and said."""
    from nvcre_tui.engine.diagnose.summary import record_text

    state = start(EIGHT_CLIQUES, 2)
    wave = plan_round(state)
    crashed, slow = wave[0].name, wave[1].name
    outcomes = {g.name: g.name not in (crashed, slow) for g in wave}
    after = record_round(state, outcomes, {crashed: 398.8, slow: 210.5}, {crashed: "WorkloadFailed", wave[2].name: "ignored: it passed"})
    stored = DiagnoseState.from_dict(json.loads(json.dumps(after.to_dict())))
    [node] = wave[0].nodes[:1]
    tests = stored.evidence(node)
    assert [(t["group"], t.get("reason"), t.get("value")) for t in tests] == [(crashed, "WorkloadFailed", 398.8)]
    assert record_text(tests) == f"failed 1 of 1 tests ({crashed} WorkloadFailed)"
    assert record_text(stored.evidence(wave[1].nodes[0])) == f"failed 1 of 1 tests ({slow} at 210.5)"
    assert "reason" not in stored.evidence(wave[2].nodes[0])[0]  # a passed test has none


def _n1_confirmed_beside_a_reference() -> tuple[DiagnoseState, list[Group], Group, str]:
    """Eight unlabelled nodes, n1 failing its screening group: the state after screening, that wave, n1's confirmation
    (planned next) and the reference partner beside it in that confirmation."""
    state = start({"": [f"n{i}" for i in range(1, 9)]}, 2)
    wave = plan_round(state)
    state = record_round(state, {g.name: "n1" not in g.nodes for g in wave})
    confirm = next(g for g in plan_round(state) if "n1" in g.nodes)
    [partner] = [n for n in confirm.nodes if n != "n1"]
    return state, wave, confirm, partner


def test_a_node_a_hardware_check_flagged_is_faulty_at_once_whatever_it_passed_before() -> None:
    """A reference partner (it passed screening) whose GPU fell off the bus in a confirmation (the Job failed
    HardwareFailureDetected on it alone) read `intermittent` only after more tests failed on it again, each held
    against its partner too. The flag is direct evidence: faulty at once, kept through the stored state, and the
    suspect beside it is not held to that test."""
    from nvcre_tui.engine.diagnose.summary import record_text

    state, wave, confirm, partner = _n1_confirmed_beside_a_reference()
    flagged = {confirm.name: [partner]}
    state = record_round(state, {g.name: g.name != confirm.name for g in plan_round(state)}, reasons={confirm.name: "HardwareFailureDetected"},
                         culprits=flagged, hardware=flagged)
    stored = DiagnoseState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert stored.node_status[partner] == "faulty" and stored.node_status["n1"] != "faulty"
    assert [t.get("hardware") for t in stored.evidence("n1")] == [None, [partner]]
    assert record_text(stored.evidence(partner), node=partner) == f"failed 1 of 2 tests ({confirm.name} HardwareFailureDetected)"
    assert f"{confirm.name} HardwareFailureDetected on {partner}" in record_text(stored.evidence("n1"), node="n1")
    with pytest.raises(DiagnoseError, match="hardware-flagged"):
        DiagnoseState.from_dict({**stored.to_dict(), "tests": [{**t, "h": [0, 7]} for t in stored.to_dict()["tests"]]})


def test_a_test_that_ran_nothing_is_no_evidence_and_an_unavailable_node_is_in_no_later_test() -> None:
    """A confirmation whose reference partner was cordoned before its workload started (flagged at its Job's first
    look) was weighed as a hardware fault during a test: the partner convicted on a test that never ran on it. Recorded
    `untested`, it is no evidence either way (nor against the suspect beside it, nor in any record), and a node
    `unavailable` (left out: cordoned) is in no later test."""
    state, wave, confirm, partner = _n1_confirmed_beside_a_reference()
    flagged = {confirm.name: [partner]}
    state = record_round(state, {g.name: g.name != confirm.name for g in plan_round(state)}, reasons={confirm.name: "CordonedBeforeStart"},
                         culprits=flagged, hardware=flagged, untested={confirm.name}, unavailable={partner})
    stored = DiagnoseState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert stored.node_status[partner] == "healthy" and stored.node_status["n1"] == "suspect"  # its screening pass; n1 not yet convicted
    [recorded] = [t for t in stored.tests if t.group == confirm.name]
    assert recorded.passed is None and recorded.hardware == () and recorded.reason == "CordonedBeforeStart"
    assert [t["group"] for t in stored.evidence("n1")] == [wave[0].name if "n1" in wave[0].nodes else next(g.name for g in wave if "n1" in g.nodes)]
    while not state.complete:  # the partner is in no later test, whatever the rest of the run plans
        assert all(partner not in g.nodes for g in plan_round(state))
        state = record_round(state, {g.name: "n1" not in g.nodes for g in plan_round(state)}, unavailable={partner})
    assert state.node_status["n1"] == "faulty"


def test_a_missing_outcome_counts_as_a_failure() -> None:
    state = start(EIGHT_CLIQUES, 2)
    wave = plan_round(state)
    lost = next(g.name for g in wave if "clique-c-n00" in g.nodes)
    outcomes = {g.name: g.name != lost for g in wave}
    del outcomes[lost]
    assert record_round(state, outcomes) == record_round(state, {**outcomes, lost: False})
    assert record_round(state, outcomes).node_status["clique-c-n00"] == "suspect"


def _run_until(state: DiagnoseState, oracle: Oracle, stage: str) -> DiagnoseState:
    while stage not in {p.stage for p in state.plan}:
        state = record_round(state, oracle.answer(plan_round(state)))
    return state


@pytest.mark.parametrize("mc", [1, 2, 3, 8])
def test_every_wave_fits_max_concurrent_and_one_job_per_node(mc: int) -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05", "clique-f-n01"}), links=(("clique-a", "clique-e"),))
    state = simulate(EIGHT_CLIQUES, 2, oracle, mc)  # simulate checks each wave
    assert {n for n, v in state.verdicts().items() if v == "faulty"} == {"clique-c-n05", "clique-f-n01"}
    assert [f.cliques for f in state.infrastructure_faults] == [("clique-a", "clique-e")]


def test_a_fleet_whose_screening_takes_more_waves_than_the_hard_stop_is_screened_whole() -> None:
    """970 cliques under maxConcurrent 16: screening one clique a Job takes 61 waves, and the hard stop was 60 waves
    whatever the fleet (round_cap(16)): the last ten cliques were never tested, their faulty node inconclusive
    ("never tested (the run stopped first)"). 10,000 nodes in cliques of 8 under maxConcurrent 8 stopped so after
    120 of their 157 screening waves. The hard stop now comes after the screening's own waves."""
    domains = {f"c{c:04d}": [f"c{c:04d}-n0"] for c in range(970)}
    state = start(domains, 1, 16)
    while not state.complete:
        groups = plan_round(state)
        state = record_round(state, {g.name: "c0965-n0" not in g.nodes for g in groups})
    assert {n for t in state.tests for n in t.nodes} == set(state.domain_of), "every node tested"
    assert state.verdicts()["c0965-n0"] != "healthy" and not any("never tested" in n.message for n in state.notes)
    assert state.round <= planner.hard_stop(state)


def test_a_suspect_whose_partners_passes_would_leave_its_odds_short_is_confirmed_beside_them() -> None:
    # Each suspect failed its screening pair and a confirmation: passes of the unverified partners (tested together)
    # would not lift its odds to CONVICTION_ODDS, so its third confirmation runs in the same wave, not one later.
    faulty = frozenset({"clique-b-n02", "clique-e-n01"})
    state = simulate(EIGHT_CLIQUES, 2, _oracle(EIGHT_CLIQUES, faulty=faulty))
    assert {n for n, v in state.verdicts().items() if v == "faulty"} == faulty and state.round == 3
    ev = evidence.Evidence(_after_waves(EIGHT_CLIQUES, faulty, 2))
    assert [ev.unverified_partners(n) for n in sorted(faulty)] == [{"clique-b-n01"}, {"clique-e-n04"}]
    assert not any(ev.verification_convicts(n) for n in faulty)
    last = [(t.stage, t.nodes) for t in state.tests if t.round == 2]
    assert ("confirmation", ("clique-b-n01", "clique-e-n04")) in last  # the two unverified partners, together
    assert {n for stage, nodes in last for n in nodes if n in faulty and stage == "confirmation"} == faulty


def _after_waves(domains: Mapping[str, Sequence[str]], faulty: frozenset[str], waves: int) -> DiagnoseState:
    state, oracle = start(domains, 2), _oracle(domains, faulty=faulty)
    for _ in range(waves):
        state = record_round(state, oracle.answer(plan_round(state)))
    return state


def test_a_suspect_waits_for_its_partners_verification_when_their_passes_would_convict_it() -> None:
    faulty = frozenset({"clique-d-n04", "clique-d-n05", "clique-f-n04", "clique-h-n07"})
    state = _after_waves(EIGHT_CLIQUES, faulty, 2)
    ev = evidence.Evidence(state)
    assert not ev.noisy_share and ev.unverified_partners("clique-f-n04") == {"clique-f-n01"}
    assert ev.verification_convicts("clique-f-n04")
    wave = plan_round(state)
    assert any("clique-f-n01" in g.nodes for g in wave) and not any("clique-f-n04" in g.nodes for g in wave)
    after = record_round(state, _oracle(EIGHT_CLIQUES, faulty=faulty).answer(wave))
    assert after.verdicts()["clique-f-n04"] == "faulty"  # the partner's pass was all it took


def test_where_the_bad_share_is_high_a_suspect_waits_for_its_partners_verification_even_when_its_odds_stay_short() -> None:
    two = {c: EIGHT_CLIQUES[c] for c in ("clique-a", "clique-b")}  # 16 nodes, two failed pairs: a bad share of a half
    state = _after_waves(two, frozenset({"clique-a-n06", "clique-b-n01"}), 2)
    ev = evidence.Evidence(state)
    assert ev.noisy_share and not ev.verification_convicts("clique-a-n06")
    wave = plan_round(state)
    assert ev.unverified_partners("clique-a-n06") == {"clique-a-n00"}
    assert any("clique-a-n00" in g.nodes for g in wave) and not any("clique-a-n06" in g.nodes for g in wave)


def test_confirmations_use_reference_partners_from_the_same_clique() -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"}))
    state = _run_until(start(EIGHT_CLIQUES, 2), oracle, "confirmation")
    confirmations = [p for p in state.plan if p.stage == "confirmation"]
    assert confirmations and all(len(p.nodes) == 2 and p.subjects[0].startswith("clique-c-") for p in confirmations)
    assert all(p.padding[0].startswith("clique-c-") for p in confirmations)
    assert all(state.node_status[p.padding[0]] in ("healthy", "suspect") for p in confirmations)


def test_a_flaky_node_with_passes_and_failures_is_intermittent_with_its_record() -> None:
    oracle = _oracle(EIGHT_CLIQUES, flaky={"clique-d-n02": (True, False, True, True, False)})
    state = simulate(EIGHT_CLIQUES, 2, oracle)
    assert {n: v for n, v in state.verdicts().items() if v != "healthy"} == {"clique-d-n02": "intermittent"}
    record = node_record(state, "clique-d-n02")
    screening = next(t.group for t in state.tests if t.stage == "screening" and "clique-d-n02" in t.nodes)
    failed, tests, failed_tests = record["failed"], record["tests"], record["failedTests"]
    assert isinstance(failed, int) and isinstance(tests, int) and isinstance(failed_tests, list)
    assert 0 < failed < tests and failed_tests[0] == screening
    [note] = [n for n in state.notes if n.kind == "intermittent"]
    assert note.nodes == ("clique-d-n02",) and f"failed {record['failed']} of {record['tests']}" in note.message


def test_a_flaky_node_hidden_behind_an_intermittent_one_is_rechecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """clique-a-n05 fails only where clique-a-n00 fails too, until rechecks catch it; without them it ends healthy."""
    flaky = {"clique-a-n00": (True, True, False, True, True, True, True, False),
             "clique-a-n05": (True, False, False, True, True, False, True, False)}
    # Under maxConcurrent each clique is screened whole, so the two fail screening together.
    state = simulate(EIGHT_CLIQUES, 2, _oracle(EIGHT_CLIQUES, flaky=flaky), 8)
    assert {n: v for n, v in state.verdicts().items() if v != "healthy"} == dict.fromkeys(flaky, "intermittent")
    assert any(t.stage == "recheck" and "clique-a-n05" in t.nodes and not t.passed for t in state.tests)
    monkeypatch.setattr(evidence, "RECHECK_PASSES", 0)
    unchecked = simulate(EIGHT_CLIQUES, 2, _oracle(EIGHT_CLIQUES, flaky=flaky), 8)
    assert unchecked.verdicts()["clique-a-n05"] == "healthy" and not any(t.stage == "recheck" for t in unchecked.tests)


def test_under_max_concurrent_passes_that_outweigh_a_group_failure_are_earned_in_groups() -> None:
    """node-29 fails screening, then mostly passes: its chunk-mates earn their passes four to a recheck group (one
    Job each would not fit the waves), and after a failed recheck everyone in it is confirmed one by one."""
    domains = {"": [f"node-{i:02d}" for i in range(64)]}
    pattern = (True, False, False, False, False, False, False, True, False, False)
    state = simulate(domains, 2, _oracle(domains, flaky={"node-29": pattern}), max_concurrent=2)
    assert {n: v for n, v in state.verdicts().items() if v != "healthy"} == {"node-29": "intermittent"}
    grouped = [t for t in state.tests if t.stage == "recheck" and len(t.subjects) >= 3]
    assert grouped
    for k, test in enumerate(state.tests):
        if test.stage == "recheck" and not test.passed:
            later = [t for t in state.tests[k + 1 :] if set(t.nodes) & set(test.nodes)]
            assert all(len(set(t.subjects) & set(test.nodes)) <= 1 for t in later if t.stage == "recheck")
    assert state.round < round_cap(2) // 8  # regrouping the same four after their failed recheck ran to the hard stop


def test_rechecks_wait_for_passes_in_all_and_go_one_by_one_in_a_dense_fleet() -> None:
    """A node with a failure only an intermittent node explains is a reference after RECHECK_PASSES passes in all;
    where a third or more of the fleet looks bad, each is rechecked beside a reference, not in a group."""
    flaky = {"clique-a-n00": (True, True, False, True, True, True, True, False),
             "clique-a-n05": (True, False, False, True, True, False, True, False)}
    state = simulate(EIGHT_CLIQUES, 2, _oracle(EIGHT_CLIQUES, flaky=flaky))
    ev = evidence.Evidence(state)
    rechecked = sorted({n for t in state.tests if t.stage == "recheck" for n in t.subjects} - set(flaky))
    assert rechecked
    for node in rechecked:
        assert ev.passes[node] >= evidence.RECHECK_PASSES and ev.reference(node)
    dense = {"": [f"node-{i:02d}" for i in range(16)]}
    pattern = {n: (True, False, True) for n in dense[""][:6]}
    state = simulate(dense, 2, _oracle(dense, flaky=pattern))
    rechecks = [t for t in state.tests if t.stage == "recheck"]
    assert evidence.Evidence(state).noisy_share and rechecks
    assert all(len(t.subjects) == 1 and len(t.nodes) == 2 for t in rechecks)


def test_a_flaky_partner_never_convicts_a_healthy_node() -> None:
    """The flaky node passes screening (a "healthy" partner), then fails with others: they are never blamed."""
    domains = {"": [f"node-{i:02d}" for i in range(16)]}
    oracle = _oracle(domains, faulty=frozenset({"node-10"}), flaky={"node-01": (False, True, True, True, False, True)})
    state = simulate(domains, 2, oracle)
    blamed = {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")}
    assert "node-10" in blamed and blamed <= {"node-10", "node-01"}


def test_one_flaky_representative_never_makes_a_fabric_fault() -> None:
    oracle = _oracle(EIGHT_CLIQUES, flaky={"clique-b-n00": (False, True, False, False, False)})
    state = simulate(EIGHT_CLIQUES, 2, oracle)
    assert state.infrastructure_faults == () and not [n for n in state.notes if n.kind.startswith("fabric")]
    assert set(state.verdicts().values()) <= {"healthy", "intermittent"}


def test_one_flaky_representative_never_makes_an_uplink_of_a_degraded_pair() -> None:
    """Three cliques of two, c0 to c2 degraded, c1-n00 flaky (found by a random run mixing flaky nodes and link
    faults): direct tests of each pair failed c0-c2 and, on c1-n00's bad turn, c1-c2, and "degraded uplink of c2" was
    named on that one failure. An uplink needs, besides any one pair of its clique, two failures with no node in common."""
    three = {f"c{c}": [f"c{c}-n{i:02d}" for i in range(2)] for c in range(3)}
    pattern = tuple(step == "F" for step in "pFFpFFFpppFpppFpFpFF")
    state = simulate(three, 2, _oracle(three, flaky={"c1-n00": pattern}, links=(("c0", "c2"),)))
    assert [f.cliques for f in state.infrastructure_faults] == [("c0", "c2")]
    assert {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")} <= {"c1-n00"}
    # c0 to c1 degraded, c0-n00 faulty and c1-n00 flaky: the pair's tests can only ever hold c0-n01 and c1-n01 beside
    # each other, never two failures with no node in common, and "degraded uplink of c1" was named on c1-n00's failure
    # with c2. It ends unresolved now, naming the one link left ("1 candidate links left" said neither which).
    pattern = tuple(step == "F" for step in "pFFFpFpFpFFpFpppFFFF")
    state = simulate(three, 2, _oracle(three, faulty=frozenset({"c0-n00"}), flaky={"c1-n00": pattern}, links=(("c0", "c1"),)), 3)
    assert state.infrastructure_faults == () and state.verdicts()["c0-n00"] == "faulty"
    assert {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")} <= {"c0-n00", "c1-n00"}
    [unresolved] = [n.message for n in state.notes if n.kind == "fabric-unresolved"]
    assert unresolved.endswith("the degraded link could not be localised (1 candidate link left: c0 ↔ c1)"), unresolved


def test_a_failure_another_named_link_explains_is_no_support_for_a_second_one() -> None:
    """Eight cliques of eight, c4's uplink bad, c1-n03 flaky (found by a random run mixing them): the inter test over
    all eight failed (for c4), and c1-n03 failed its direct test of c1 with c3; the smallest explanation (c4's uplink
    and c1-c3) named "degraded fabric between c1 and c3" on those two failures with no node in common, the first
    of them the uplink's. A link of such an explanation is named on failures no other link of it accounts for."""
    eight = {f"c{c}": [f"c{c}-n{i:02d}" for i in range(8)] for c in range(8)}
    pattern = tuple(step == "F" for step in "pFFpFFpppFFFFFpppppppFpppFFppFpFpppppFpppFpppFFFppppFFpFFpFFpFpF")
    state = simulate(eight, 2, _oracle(eight, flaky={"c1-n03": pattern}, links=(("c4",),)))
    assert [f.cliques for f in state.infrastructure_faults] == [("c4",)]
    assert {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")} <= {"c1-n03"}


def test_one_flaky_representative_never_makes_a_degraded_pair_an_uplink_failing_part_of_the_time() -> None:
    """Four cliques of 18 under maxConcurrent 8, c2 to c3 degraded, c0-n03 flaky (a random run mixing them): every
    test of c2 with c3 failed, and c0-n03 failed its direct test of c0 with c2, a pair that passed with others. c2's
    uplink exercised every failure and had passed some test: it was named "failing part of the time". A link that
    never passed and explains every failure but one node's is left to the search, which names it."""
    four = {f"c{c}": [f"c{c}-n{i:02d}" for i in range(18)] for c in range(4)}
    pattern = tuple(step == "F" for step in "pFFppFFFFppppFFpFFFFFFFFFFpppFFpFFppFFFppFppppFpFpFFpFFFFpFFpFpp")
    state = simulate(four, 2, _oracle(four, flaky={"c0-n03": pattern}, links=(("c2", "c3"),)), 8)
    assert [f.cliques for f in state.infrastructure_faults] == [("c2", "c3")]
    assert {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")} <= {"c0-n03"}


NINE_CLIQUES = {f"clique-{c}": [f"clique-{c}-n{i:02d}" for i in range(9)] for c in "abcd"}


def test_the_inter_test_runs_beside_the_last_screening_wave_when_it_fits() -> None:
    """One node of each clique is tested across the fabric while the rest are screened, so a healthy fleet is done
    in one wave; under maxConcurrent the test rides in the last screening wave, with references of the cliques
    screened before; not when the wave is full, when a clique would be screened in fewer parts, nor with more than
    EARLY_UNPROVEN untested nodes in it."""
    state = simulate(NINE_CLIQUES, 2, _oracle(NINE_CLIQUES))
    inter = [t for t in state.tests if t.stage == "inter"]
    assert state.round == 1 and len(inter) == 1 and sorted(inter[0].nodes) == [names[-1] for names in NINE_CLIQUES.values()]
    assert sorted(n for t in state.tests for n in t.nodes) == sorted(n for names in NINE_CLIQUES.values() for n in names)
    assert [len(t.nodes) for t in state.tests if t.stage == "screening"] == [2] * 16  # the other eight in pairs, as before

    pairs = simulate(EIGHT_CLIQUES, 2, _oracle(EIGHT_CLIQUES))  # cliques of eight in pairs: one out would leave a part of three
    assert [t.round for t in pairs.tests if t.stage == "inter"] == [1] and pairs.round == 2

    full = simulate(NINE_CLIQUES, 2, _oracle(NINE_CLIQUES), 4)  # four cliques fill the wave: the inter test follows
    assert [t.round for t in full.tests if t.stage == "inter"] == [1] and full.round == 2

    six = {c: EIGHT_CLIQUES[c] for c in sorted(EIGHT_CLIQUES)[:6]}
    capped = simulate(six, 2, _oracle(six), 4)  # four cliques, then two beside the inter test
    [capped_inter] = [t for t in capped.tests if t.stage == "inter"]
    earlier = {n for t in capped.tests if t.round < capped_inter.round for n in t.nodes}
    assert capped.round == 2 and capped_inter.round == 1 and sum(1 for n in capped_inter.nodes if n not in earlier) == 2

    many = {f"c{i:02d}": [f"c{i:02d}-n{j}" for j in range(5)] for i in range(planner.EARLY_UNPROVEN + 1)}  # parts of 3 and 2
    late = simulate(many, 2, _oracle(many))
    assert [t.round for t in late.tests if t.stage == "inter"] == [1]
    fewer = {c: names for c, names in sorted(many.items())[: planner.EARLY_UNPROVEN]}
    assert [t.round for t in simulate(fewer, 2, _oracle(fewer)).tests if t.stage == "inter"] == [0]


def test_a_faulty_node_in_the_inter_test_beside_screening_names_no_link() -> None:
    """The inter test beside screening fails for a faulty member: the cliques are tested again with screened
    representatives (a pass proves every link), the members are confirmed inside their cliques, no fabric fault."""
    faulty = frozenset({"clique-b-n08"})
    state = simulate(NINE_CLIQUES, 2, _oracle(NINE_CLIQUES, faulty=faulty))
    first, again = [t for t in state.tests if t.stage == "inter"]
    assert first.round == 0 and not first.passed and again.round == 1 and again.passed and set(again.nodes).isdisjoint(first.nodes)
    assert state.infrastructure_faults == () and {n for n, v in state.verdicts().items() if v != "healthy"} == faulty
    assert state.round == 3


@pytest.mark.parametrize(("cliques", "rounds"), [(29, 1), (planner.EARLY_UNPROVEN + 1, 2)])
def test_a_healthy_fleet_of_up_to_early_unproven_cliques_is_done_in_its_screening_wave(cliques: int, rounds: int) -> None:
    """232 nodes in 29 cliques of eight: the inter test, one node of each clique, goes beside the screening pairs; one
    clique more than EARLY_UNPROVEN and it waits for a wave of its own (a failure would leave every member to confirm)."""
    fleet = {f"c{i:02d}": [f"c{i:02d}-n{j}" for j in range(8)] for i in range(cliques)}
    state = simulate(fleet, 2, _oracle(fleet))
    assert state.round == rounds and set(state.verdicts().values()) == {"healthy"}


def test_the_first_inter_test_takes_a_reference_before_the_confirmations_while_the_bad_share_is_low(monkeypatch: pytest.MonkeyPatch) -> None:
    """22 cliques of eight, screened in parts of four: the faulty node's clique has four suspects and four references.
    The inter test after screening (not beside it: 22 untested nodes are too many for it here) takes one of them
    ahead of the confirmations, where it used to wait a wave for them, and the link search after it (a degraded pair
    beside the faulty node) with it."""
    monkeypatch.setattr(planner, "EARLY_UNPROVEN", 16)
    fleet = {f"c{i:02d}": [f"c{i:02d}-n{j}" for j in range(8)] for i in range(22)}
    faulty = frozenset({"c03-n1"})
    state = simulate(fleet, 2, _oracle(fleet, faulty=faulty, links=(("c03", "c09"),)))
    inter = next(t for t in state.tests if t.stage == "inter")
    assert inter.round == 1 and {n.split("-")[0] for n in inter.nodes} == set(fleet)
    assert [f.cliques for f in state.infrastructure_faults] == [("c03", "c09")] and state.round == 4
    assert {n for n, v in state.verdicts().items() if v != "healthy"} == faulty
    alone = simulate(fleet, 2, _oracle(fleet, faulty=faulty))  # the confirmations it delays cost the fault no round
    assert alone.round == 3 and {n for n, v in alone.verdicts().items() if v != "healthy"} == faulty


def test_a_failed_inter_test_is_tried_again_and_its_members_are_split_across_cliques() -> None:
    """A flaky representative fails the inter test: the next wave tests every clique again with other
    representatives beside the link search (its pass clears every link), and the failed test's members, whose links
    are then proven, are split across cliques like a failed screening group."""
    fleet = {f"clique-{c}": [f"clique-{c}-n{i:02d}" for i in range(5)] for c in "abcdefgh"}  # too few nodes to test every pair at once
    domain_of = {n: c for c, names in fleet.items() for n in names}
    # maxConcurrent 8: the eight cliques fill the screening wave, so the inter test follows with screened representatives
    state = simulate(fleet, 2, _oracle(fleet, flaky={"clique-b-n00": (False, True, False, False, False)}), 8)
    inter = next(t for t in state.tests if t.stage == "inter")
    assert not inter.passed
    again = [t for t in state.tests if t.round == inter.round + 1 and t.stage == "link" and {domain_of[n] for n in t.nodes} == set(fleet)]
    assert again and again[0].passed and set(again[0].nodes).isdisjoint(inter.nodes)
    splits = [t for t in state.tests if t.stage == "split" and set(t.nodes) <= set(inter.nodes)]
    assert splits and all(len({domain_of[n] for n in t.nodes}) >= 2 for t in splits)
    assert {n: v for n, v in state.verdicts().items() if v != "healthy"} == {"clique-b-n00": "intermittent"}


def test_a_degraded_pair_is_named_in_one_wave_of_link_tests_when_every_pair_fits() -> None:
    """Eight cliques of eight: after the failed inter test, one wave tests every pair of cliques directly (seven
    representatives each), where a search over the bits of the clique index takes two waves."""
    state = simulate(EIGHT_CLIQUES, 2, _oracle(EIGHT_CLIQUES, links=(("clique-b", "clique-f"),)))
    assert [f.cliques for f in state.infrastructure_faults] == [("clique-b", "clique-f")]
    assert len({t.round for t in state.tests if t.stage == "link"}) == 1
    assert set(state.verdicts().values()) == {"healthy"}


def test_direct_link_tests_are_planned_only_when_they_fit_with_larger_groups() -> None:
    """With minGroupSize 3 a test of two cliques takes two representatives of each: eight cliques of eight cannot
    hold a test of every pair in one wave, so the bit search runs (planning them anyway placed half and took a wave
    more)."""
    state = simulate(EIGHT_CLIQUES, 3, _oracle(EIGHT_CLIQUES, links=(("clique-b", "clique-f"),)))
    assert [f.cliques for f in state.infrastructure_faults] == [("clique-b", "clique-f")]
    assert state.round <= 4


_HASH_SEED_RUNS = """
import hashlib, json
from tests.engine.test_diagnose import simulate, _oracle
runs = []
for size, m, bad in ((5, 3, 3), (6, 3, 4), (8, 2, 6), (7, 3, 5), (9, 2, 7)):
    fleet = {"c0": [f"c0-n{i:02d}" for i in range(size)]}
    runs.append(simulate(fleet, m, _oracle(fleet, faulty=frozenset(fleet["c0"][:bad]))).to_dict())
print(hashlib.sha256(json.dumps(runs, sort_keys=True).encode()).hexdigest())
"""


def test_plans_do_not_depend_on_the_hash_seed() -> None:
    """Two processes with different PYTHONHASHSEED plan the same runs (mostly faulty cliques, where regroupings
    break ties on a float weight): a set's order must never reach a float sum or a tie."""
    digests = {subprocess.run([sys.executable, "-c", _HASH_SEED_RUNS], env={**os.environ, "PYTHONHASHSEED": seed}, cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=True).stdout for seed in ("0", "1")}
    assert len(digests) == 1 and all(len(d.strip()) == 64 for d in digests)


def test_a_faulty_node_does_not_hide_its_cliques_link_fault() -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-b-n03"}), links=(("clique-b", "clique-f"),))
    state = simulate(EIGHT_CLIQUES, 2, oracle)
    assert {n for n, v in state.verdicts().items() if v != "healthy"} == {"clique-b-n03"}
    [fault] = state.infrastructure_faults
    assert fault.cliques == ("clique-b", "clique-f") and len(fault.tests) >= 2


def test_an_uplink_fault_names_one_clique() -> None:
    oracle = _oracle(EIGHT_CLIQUES, links=(("clique-g",),))
    state = simulate(EIGHT_CLIQUES, 2, oracle)
    assert [f.cliques for f in state.infrastructure_faults] == [("clique-g",)] and "uplink" in state.infrastructure_faults[0].message
    assert set(state.verdicts().values()) == {"healthy"}


def test_a_link_failing_part_of_the_time_is_not_taken_for_a_pair_never_tested() -> None:
    """A degraded-fabric fault with a probability between clique-0 and clique-3 (seen on the simulator, 32 nodes in 4
    cliques under maxConcurrent 2): two tests over all four cliques failed, then clique-0 with clique-3 passed, as did
    every other pair tested one by one, and "degraded fabric between clique-2 and clique-3" was named: the one pair
    never tested, which no test of its own ever failed. A pair named by elimination where a link a pass cleared
    crossed every failure as well is tested on its own first."""
    four = {f"clique-{c}": [f"clique-{c}-n{i:02d}" for i in range(8)] for c in range(4)}
    oracle = _oracle(four, flaky_links={("clique-0", "clique-3"): (True, True, False)})
    state = simulate(four, 2, oracle, 2)
    assert all(set(f.cliques) <= {"clique-0", "clique-3"} for f in state.infrastructure_faults), state.infrastructure_faults
    assert not {v for v in state.verdicts().values()} & {"faulty", "intermittent"}
    # A node left inconclusive by failures over three or four cliques is said to have crossed all their links alike,
    # not one of them picked first in order (it read "across one link (degraded fabric between clique-0 and clique-2)").
    said = [n.message for n in state.notes if n.kind == "inconclusive"]
    assert said and all("links (clique-0 ↔ clique-2, clique-0 ↔ clique-3, " in m and "one link" not in m for m in said), said
    # a pair that fails every test of it is named as before
    state = simulate(four, 2, _oracle(four, links=(("clique-2", "clique-3"),)), 2)
    assert [f.cliques for f in state.infrastructure_faults] == [("clique-2", "clique-3")]


def test_stages_verdicts_and_evidence_of_a_run() -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"}))
    state, stages = start(EIGHT_CLIQUES, 2, max_concurrent=8), []  # under maxConcurrent each clique is screened whole, then split
    while not state.complete:
        stages.append(state.stage)
        state = record_round(state, oracle.answer(plan_round(state)), {g.name: 400.0 for g in plan_round(state)})
    assert stages[0] == "screening" and "split" in stages and stages[-1] in ("confirmation", "inter")
    evidence = state.evidence("clique-c-n05")
    assert [e["passed"] for e in evidence] == [False] * len(evidence) and evidence[0]["stage"] == "screening"
    assert all(e["value"] == 400.0 for e in evidence)
    assert state.verdicts()["clique-c-n05"] == "faulty"
    with pytest.raises(DiagnoseError, match="unknown node 'nope'"):
        state.evidence("nope")


def test_state_is_stored_as_diagnose_status_and_stays_small() -> None:
    oracle = _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"}))
    state = _run_until(start(EIGHT_CLIQUES, 2), oracle, "confirmation")
    status = DiagnoseStatus.model_validate(state.to_dict())
    assert status.stage == "confirmation" and status.round == state.round
    assert DiagnoseState.from_dict(status.to_wire()) == state
    big = {f"clique-{c:04d}": [f"c{c:04d}-n{i}" for i in range(8)] for c in range(1250)}  # 10,000 nodes
    stored = json.dumps(start(big, 2).to_dict())
    assert len(stored) < 400_000  # screening of every node: ranges of indices, not 10,000 names per test
    cloud = {c: [f"ip-10-{i // 256}-{i % 256}-{n[-1]}.us-west-2.compute.internal" for i, n in enumerate(nodes, int(c[-4:]) * 8)] for c, nodes in big.items()}
    names = sum(len(json.dumps(n)) for nodes in cloud.values() for n in nodes)
    assert len(json.dumps(start(cloud, 2).to_dict())) < names * 1.5  # each name once (its status list); domains are indices


def test_state_stored_with_domains_by_name_is_still_read() -> None:
    state = _run_until(start(EIGHT_CLIQUES, 2), _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"})), "confirmation")
    data = state.to_dict()
    assert all(isinstance(i, int | list) for nodes in data["domains"].values() for i in nodes)
    assert DiagnoseState.from_dict({**data, "domains": {d: list(nodes) for d, nodes in EIGHT_CLIQUES.items()}}) == state
    assert readable(data)["domains"] == {d: list(nodes) for d, nodes in EIGHT_CLIQUES.items()}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("tests"), "missing field 'tests'"),
        (lambda d: d.update(healthyNodes="clique-a-n00"), "expected a list of node names"),
        (lambda d: d["suspectNodes"].append("clique-a-n00"), "do not cover each node"),
        (lambda d: d["plan"][0].update(s="guess"), "unknown stage 'guess'"),
        (lambda d: d["tests"][0].update(n=["x"]), "bad node index"),
        (lambda d: d["tests"][0].update(n=[-1]), "node index out of range"),
        (lambda d: d["domains"].update({"clique-a": [[0, 64]]}), "node index out of range"),
        (lambda d: d.update(round="two"), "malformed"),
        (lambda d: d.update(withinDomains="yes"), "'withinDomains' must be true or false"),
    ],
)
def test_unreadable_state_is_reported(change: Any, message: str) -> None:
    data = _run_until(start(EIGHT_CLIQUES, 2), _oracle(EIGHT_CLIQUES, faulty=frozenset({"clique-c-n05"})), "confirmation").to_dict()
    change(data)
    with pytest.raises(DiagnoseError, match=re.escape(message)):
        DiagnoseState.from_dict(data)


# -- cost against NVCRE's diagnose (bench/diagnose.py) -------------------------------------------------------------


@functools.cache
def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_diagnose", ROOT / "bench" / "diagnose.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("n", "clique", "mc", "k"), [(64, 8, 0, 1), (64, 8, 8, 2), (232, None, 8, 2), (64, 18, 0, 4)])
def test_exact_and_no_dearer_than_the_reference_on_persistent_faults(n: int, clique: int | None, mc: int, k: int) -> None:
    bench = _bench()
    mine, ref = bench.evaluate(bench.Scenario("persistent", n, clique, mc, k), seeds=3)
    assert mine.recall == mine.precision == 1.0 and mine.blamed_healthy == 0
    assert sum(mine.minutes) <= sum(ref.minutes) and sum(mine.rounds) < sum(ref.rounds)


def test_flaky_representatives_failing_link_tests_name_no_link() -> None:
    """232 nodes in cliques of 18 with 8 flaky nodes (bench seed 102): the inter test failed on a flaky member, then two
    link tests each on a flaky representative, and each of those links was named from that one failure. Where flaky
    behaviour has shown, a link needs two narrow failures with no node in common."""
    bench = _bench()
    scenario = bench.Scenario("flaky", 232, 18, 0, 8)
    domains = bench.fleet(scenario.n, scenario.clique)
    truth = bench.truth_for(scenario, domains, 102)
    result = bench.ours(domains, scenario.max_concurrent, truth)
    assert result.pairs == () and result.blamed <= truth.flaky


def test_the_flaky_floor_counts_the_waves_a_second_failure_and_its_verification_take() -> None:
    bench = _bench()
    one, eight = (bench.flaky_floor(bench.Scenario("flaky", 64, 8, 0, k), seeds=2000) for k in (1, 8))
    # Half the time the node fails screening and then needs 1 + 2 (a mean geometric wait) + 1 waves, else the
    # screening and inter waves alone (two cliques or more): 0.5 * 4 + 0.5 * 2.
    assert abs(one - 3.0) < 0.15
    assert eight > one + 1  # the slowest of several flaky nodes sets the run's length
    assert bench.flaky_floor(bench.Scenario("flaky", 64, 8, 0, 0)) == bench.lower_bound(bench.Scenario("flaky", 64, 8, 0, 0))


def test_reference_model_reproduces_nvcre_costs_and_quirks() -> None:
    bench = _bench()
    domains = bench.fleet(64, 8)
    one = bench.reference(domains, 0, bench.Truth({n: d for d, ns in domains.items() for n in ns}, faulty=frozenset({"c02-n21"})))
    assert (one.rounds, one.node_minutes) == (5, 64 + 7 + 8 + 4 + 4) and "c02-n21" in one.blamed
    assert len(one.blamed) == 8  # every node of the failed screening group lands in the failed-nodes ConfigMap
    assert bench.waves([["a", "b"], ["b", "c"], ["d", "e"]], 0) == 2 and bench.waves([["a"], ["b"], ["c"]], 2) == 2


# -- end to end on the simulator ------------------------------------------------------------------------------------


def _category(case: str) -> dict[str, Any]:
    from tests.scenarios.harness import run_case

    [category] = run_case(case).report["categories"]
    return category


@pytest.mark.parametrize("case", ["diagnose-flaky-and-fabric", "intra-rack-on-failure-diagnose"])
def test_a_flaky_node_and_a_degraded_pair_are_both_found_end_to_end(case: str) -> None:
    category = _category(case)
    state = category["diagnose"]
    assert state["stage"] == "complete" and state["intermittentNodes"] == ["gpu-node-06"] and state["faultyNodes"] == []
    assert [f["cliques"] for f in state["infrastructureFaults"]] == [["clique-1", "clique-2"]]
    assert [f["name"] for f in category["failedNodes"]] == ["gpu-node-06"]
    assert "intermittent, failed" in category["failedNodes"][0]["message"]
    assert category["failureReason"].startswith("Diagnosis complete: 1 intermittent node confirmed; infrastructure fault")  # not "faulty"
    if case.startswith("intra-rack"):  # onFailure: the category's own groups are the screening, in the same Workflow
        assert category["testScale"] == "intra-rack" and state["tests"][0]["group"] == "group-0"


@pytest.mark.parametrize(("case", "faulty"), [("gb200-intra-rack-on-failure-within-cliques", "gpu-node-03"),
                                               ("gb200-diagnose-within-cliques", "gpu-node-12")])
def test_diagnose_on_nvl_domains_with_mnnvl_stays_inside_its_cliques(case: str, faulty: str) -> None:
    """GB200 cliques with MNNVL on and an NVLink threshold (testScale diagnose, or the onFailure narrowing of an
    intra-rack run): the slow GPU is found with tests inside its clique only; the degraded pair between the cliques
    is not looked for (no inter or link test), and the report says the links were not tested."""
    category = _category(case)
    state = category["diagnose"]
    clique_of = {n: d for d, nodes in state["domains"].items() for n in nodes}
    assert state["withinDomains"] is True and state["stage"] == "complete"
    assert all(len({clique_of[n] for n in t["nodes"]}) == 1 for t in state["tests"])
    assert {t["stage"] for t in state["tests"]} <= {"screening", "split", "confirmation"}
    assert state["faultyNodes"] == [faulty] and state["infrastructureFaults"] == []
    assert [f["name"] for f in category["failedNodes"]] == [faulty]
    assert [n["kind"] for n in state["notes"] if n["kind"] == "within-domains"] == ["within-domains"]


def test_the_cli_runs_diagnose_and_says_when_a_threshold_is_out_of_reach(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nvcre_tui.cli import main

    folder = ROOT / "tests" / "cases" / "scenarios" / "diagnose-threshold-out-of-reach"
    code = main(["certification", "run", "--sim", "--scenario", str(folder / "scenario.yaml"), "--cert-file", str(folder / "cert.yaml"),
                 "--wait", "--state", str(tmp_path / "state.json")])
    out = capsys.readouterr().out
    assert code == 1 and "threshold value >= 900 is above anything measured on this fleet: best 4" in out
    assert "Failed Nodes:   none" in out  # every node inconclusive, none blamed


def test_a_threshold_out_of_reach_is_said_for_any_metric_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A training threshold no GPU reaches is said too (not only bus bandwidth), in the text and the HTML report; and
    `report --state` alone finds the store's own fleet (no --scenario again)."""
    from nvcre_tui.cli import main

    scenario, cert, state = tmp_path / "four.yaml", tmp_path / "cert.yaml", tmp_path / "state.db"
    scenario.write_text("name: four\nseed: 1\nnodes: [{count: 4}]\n")
    cert.write_text("""apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: tflops}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories: [{domain: training, variant: nemotron5-8b, options: {thresholds: {avgTFLOPsPerGPU: "value >= 800"}}}]
""")
    assert main(["certification", "run", "--sim", "--scenario", str(scenario), "--cert-file", str(cert), "--wait", "--state", str(state)]) == 1
    said = "threshold value >= 800 is above anything measured on this fleet: best "
    assert f"Out of reach:   {said}" in capsys.readouterr().out
    assert main(["certification", "report", "tflops", "--state", str(state), "-o", "html"]) == 1
    assert f'<p class="reach">Out of reach: {said.replace(">", "&gt;")}' in capsys.readouterr().out


def test_a_long_verdict_list_says_how_many_more_it_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """16 nodes left inconclusive by a threshold out of reach: the text report lists 12 verdicts and says 4 more."""
    from nvcre_tui.cli import main

    folder = ROOT / "tests" / "cases" / "scenarios" / "diagnose-threshold-out-of-reach"
    scenario = tmp_path / "sixteen.yaml"
    scenario.write_text("name: sixteen\nseed: 33\nnodes: [{count: 16, cliques: 2}]\n")
    assert main(["certification", "run", "--sim", "--scenario", str(scenario), "--cert-file", str(folder / "cert.yaml"),
                 "--wait", "--state", str(tmp_path / "state.db")]) == 1
    out = capsys.readouterr().out
    assert sum(1 for line in out.splitlines() if "  inconclusive, failed " in line) == 12
    assert "... and 4 more verdicts (the JSON report lists them all)" in out


@pytest.mark.parametrize(("expression", "values", "all_failed", "expected"), [
    ("value >= 900", [409.98, 380.0], True, "threshold value >= 900 is above anything measured on this fleet: best 409.98 GB/s"),
    ("value >= 420", [409.98], True, None),  # near the threshold: the nodes, not the threshold, are in question
    ("value >= 900", [409.98], False, None),
    ("value <= 5", [40.0], True, "threshold value <= 5 is below anything measured on this fleet: best 40.00 GB/s"),
    ("value >= 900 && value < 2000", [1.0], True, None),
    # A negative bound: "far" is a share of its size, not of its signed value (-5 * 0.9 is -4.5, above the bound, so
    # every value missing it read as far from it: best -5.01 was "out of reach").
    ("value >= -5", [-5.01], True, None),
    ("value >= -5", [-9.0], True, "threshold value >= -5 is above anything measured on this fleet: best -9.00 GB/s"),
    ("value <= -5", [-4.99], True, None),
    ("value <= -5", [-1.0], True, "threshold value <= -5 is below anything measured on this fleet: best -1.00 GB/s"),
    ("value >= 0", [-0.01], True, None),  # a bound of zero has no size to be far from
])
def test_threshold_out_of_reach(expression: str, values: list[float], all_failed: bool, expected: str | None) -> None:
    from nvcre_tui.engine.diagnose.summary import out_of_reach

    assert out_of_reach("busBandwidthGBps", expression, values, all_failed) == expected


def test_on_failure_diagnose_needs_a_multi_node_test_scale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nvcre_tui.cli import main

    cert = tmp_path / "cert.yaml"
    cert.write_text("""apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: wrong-scale}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, onFailure: diagnose}
""")
    code = main(["certification", "run", "--sim", "--cert-file", str(cert), "--wait", "--state", str(tmp_path / "state.json")])
    captured = capsys.readouterr()
    assert code == 2 and "options.onFailure: onFailure: diagnose needs testScale intra-rack or full-scale" in captured.out + captured.err
