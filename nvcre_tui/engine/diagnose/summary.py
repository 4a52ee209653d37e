"""What the report and the console say about a diagnose run: per-node verdict lines and thresholds out of reach."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from nvcre_tui.engine.diagnose import links
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, shown_unit, with_unit, with_unit_once
from nvcre_tui.engine.units import listed

# What an on-call engineer checks when tests across cliques fail and no link was named for them (unnamed_links_said):
# what judging.fabric_fault's CHECK says for a fault of the whole fabric (diagnose may not import judging; a test holds
# the two to one wording).
NETWORK_CHECK = "check the network between the cliques (NICs, switches, NCCL's network settings)"
TESTS_SHOWN = 6  # failed tests named in the message (its note's `tests` hold them all)

# A lower bound ("value >= 900", "value > 900") or an upper bound ("value <= 5"); other expressions are not judged.
_BOUND = re.compile(r"^\s*value\s*(>=|>|<=|<)\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$")
FAR = 0.10  # "far": the best measured value misses the threshold by more than this share of it


def out_of_reach(metric: str, expression: str | None, values: Sequence[float], every_test_failed: bool) -> str | None:
    """When every test failed and even the best measured value is far from the threshold, say so: the threshold is
    wrong for this fleet, not the nodes."""
    shown = (expression or "").strip()
    match = _BOUND.match(shown)
    if not match or not values or not every_test_failed:
        return None
    op, limit = match.group(1), float(match.group(2))
    unit = shown_unit(metric)
    margin = FAR * abs(limit)  # a share of the bound's size: of a negative bound too; a bound of zero has none
    if not margin:
        return None
    if op.startswith(">"):
        best = max(values)
        if best < limit - margin:
            return f"threshold {shown} is above anything measured on this fleet: best {best:.2f} {unit}".rstrip()
    else:
        best = min(values)
        if best > limit + margin:
            return f"threshold {shown} is below anything measured on this fleet: best {best:.2f} {unit}".rstrip()
    return None


# How a test's value is printed beside its verdict: (value, passed) -> text. Callers that know the category's threshold
# pass judging.thresholds.value_shower (two decimals, more only where two would land on the threshold's other side);
# without one, six significant digits (a value just under a threshold must not round onto it).
ValueShown = Callable[[float, bool], str]


def significant(value: float, passed: bool) -> str:
    """Six significant digits: safe on either side of any threshold a value of its size sits near."""
    return f"{value:g}"


def _value(test: Mapping[str, Any]) -> float | None:
    value = test.get("value")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def record_text(tests: Sequence[Mapping[str, Any]], limit: int | None = None, crossed: Callable[[Mapping[str, Any]], bool] | None = None,
                shown: ValueShown = significant, node: str | None = None) -> str:
    """A node's record from its tests ({group, passed, value?, reason?, hardware?}): "failed 3 of 5 tests (r0-screen-1,
    r2-confirm-0 at 241.1, r3-confirm-1 WorkloadFailed); passed at 399.9 and 404.6" (the passes' unit said once, at
    the end: parsers.measurements.with_unit_once). Each failed test carries its own
    value, or the reason it failed where that was not its value: a passing test's value beside the failed ones, or a
    crashed test's fine one, would read as the evidence against the node. A failed test that `crossed` a named link
    fault says so: that failure is the link's, not held against the node; one a hardware check failed on other members
    than `node` (the record's) names them ("r1-confirm-1 HardwareFailureDetected on gpu-node-05"): the fault is theirs."""
    tests = [t for t in tests if t.get("passed") is not None]  # a test that ran nothing (recorded untested) is no record
    failed = [t for t in tests if t.get("passed") is False]
    names = [(f"{t['group']} {t['reason']}" if t.get("reason") else f"{t['group']} at {shown(value, False)}" if (value := _value(t)) is not None
              else str(t["group"])) + flagged_others(t, node) + (" (link fault)" if crossed is not None and crossed(t) else "") for t in failed]
    kept = names if limit is None else names[:limit]
    listed = f" ({', '.join(kept)}{' ...' if len(kept) < len(names) else ''})" if names else ""
    passed = [value for t in tests if t.get("passed") is True and (value := _value(t)) is not None]
    return f"failed {len(failed)} of {len(tests)} tests{listed}" + (f"; passed at {with_unit_once([shown(v, True) for v in passed])}" if passed else "")


def unnamed_links_said(cliques: Sequence[str], groups: Sequence[str], values: Sequence[float]) -> str:
    """Failures across `cliques` that no link was named for, every link between them having passed some test, their
    nodes healthy: what they measured (`groups`, the failed tests; `values`, those that measured one) and what to check,
    no link convicted: "3 tests across clique-a, clique-c failed (r1-inter-0, ...), best 241.1 GB/s, although their nodes
    are healthy; every link between those cliques passed another test, so none is named: check the network between the
    cliques (...) for a link that degrades only part of the time". Six significant digits: the diagnosis has no threshold
    to show them against."""
    best = f", best {with_unit(BUS_BANDWIDTH, f'{max(values):g}')}" if values else ""
    count = f"{len(groups)} test" if len(groups) == 1 else f"{len(groups)} tests"
    return (f"{count} across {', '.join(cliques)} failed ({listed(list(groups), TESTS_SHOWN)}){best}, although their nodes are healthy; "
            f"every link between those cliques passed another test, so none is named: {NETWORK_CHECK} for a link that degrades only part of the time")


def flagged_others(test: Mapping[str, Any], node: str | None) -> str:
    """" on gpu-node-05": the members a hardware check flagged in a failed test, where `node` (whose record or line
    says the test) is not one: the failure is theirs, not its."""
    flagged = [str(n) for n in test.get("hardware") or ()]
    return f" on {', '.join(flagged)}" if flagged and node is not None and node not in flagged else ""


def link_faults_crossed(domains: Mapping[str, Sequence[str]], faults: Iterable[Sequence[str]]) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a test ({nodes, culprits?}) failed for a named link fault (its cliques: an uplink's one, a pair's two, a
    fabric's more), as the diagnosis weighs it (links.in_test); a failure its log put on members is theirs."""
    domain_of = {node: domain for domain, nodes in domains.items() if domain for node in nodes}
    named = [_hypothesis(tuple(sorted(cliques))) for cliques in faults if cliques]

    def crossed(test: Mapping[str, Any]) -> bool:
        if test.get("culprits"):
            return False
        span = frozenset(domain_of[n] for n in test.get("nodes") or () if n in domain_of)
        return any(links.in_test(h, span) for h in named)

    return crossed


def _hypothesis(cliques: tuple[str, ...]) -> links.Hypothesis:
    """A named fault's cliques as the hypothesis it is (links.describe names them so)."""
    kind = "uplink" if len(cliques) == 1 else "pair" if len(cliques) == 2 else "fabric"
    return (kind, *cliques)


def crossing(state: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """link_faults_crossed for a readable state (domains by name, infrastructureFaults with their cliques)."""
    return link_faults_crossed(state.get("domains") or {}, [f.get("cliques") or () for f in state.get("infrastructureFaults") or []])


# The readable state's verdict lists, most serious first.
VERDICT_KEYS = (("faultyNodes", "faulty"), ("intermittentNodes", "intermittent"), ("suspectNodes", "suspect"), ("inconclusiveNodes", "inconclusive"))


def rounds_weighed(state: Mapping[str, Any]) -> int:
    """The rounds a (readable) state has recorded, which is the current round's number; 0 where a damaged state's is
    no number (its readers say it is damaged)."""
    done = state.get("round")
    return done if isinstance(done, int) and not isinstance(done, bool) and done >= 0 else 0


def progress_text(state: Mapping[str, Any]) -> str:
    """Where a diagnosis stands (readable state), its rounds numbered as their tests (r2-...): "stage confirm, round 2,
    14 tests" or "complete after round 3, 18 tests" (round 0: the screening, or the iterations onFailure starts from)."""
    tests = len(state.get("tests") or [])
    done = rounds_weighed(state)  # rounds recorded: the current round's number
    where = f"complete after round {max(done - 1, 0)}" if state.get("stage") == "complete" else f"stage {state.get('stage')}, round {done}"
    return f"{where}, {tests} test{'' if tests == 1 else 's'}"


def progress_line(state: Mapping[str, Any]) -> str:
    """progress_text for one tree line, what a cut line must keep first: "2 suspects · round 1 (confirmation), 16
    tests" (the suspect count came last and a 120-column drill-down cut it off); "round 0 (screening), 16 tests" without
    suspects; "complete after round 3, 18 tests"."""
    if state.get("stage") == "complete":
        return progress_text(state)
    suspects = len(state.get("suspectNodes") or [])
    tests = len(state.get("tests") or [])
    said = f"round {rounds_weighed(state)} ({state.get('stage')}), {tests} test{'' if tests == 1 else 's'}"
    return (f"{suspects} suspect{'' if suspects == 1 else 's'} · " if suspects else "") + said


def test_sizes(state: Mapping[str, Any]) -> str | None:
    """How many nodes a diagnosis's tests ran on (readable state; the current round's too): "2 to 7" (its nodesPerJob
    is only the largest screening group's), or None before any test."""
    sizes = {len(t.get("nodes") or ()) for t in [*(state.get("tests") or []), *(state.get("plan") or [])]}
    if not sizes:
        return None
    return str(min(sizes)) if len(sizes) == 1 else f"{min(sizes)} to {max(sizes)}"


def tests_said(state: Mapping[str, Any]) -> str | None:
    """A diagnosis's tests, recorded and under way, and their sizes: "19 tests of 2 to 7 nodes"; None before any."""
    sizes = test_sizes(state)
    if sizes is None:
        return None
    tests = len(state.get("tests") or []) + len(state.get("plan") or [])
    return f"{tests} test{'' if tests == 1 else 's'} of {sizes} node{'' if sizes == '1' else 's'}"


def verdict_rows(state: Mapping[str, Any], shown: ValueShown = significant) -> list[dict[str, Any]]:
    """Every node that is not plainly healthy, with its verdict and the tests that decided it (readable state): the
    convicted first (a list cut short keeps them), then by node."""
    verdict_of = {n: v for key, v in VERDICT_KEYS for n in state.get(key) or []}
    rank = {verdict: k for k, (_, verdict) in enumerate(VERDICT_KEYS)}
    rows = []
    crossed = crossing(state)
    for node, verdict in sorted(verdict_of.items(), key=lambda item: (rank[item[1]], item[0])):
        tests = [t for t in state.get("tests") or [] if node in t.get("nodes", []) and t.get("passed") is not None]
        failed = [t for t in tests if t.get("passed") is False]
        rows.append({"node": node, "verdict": verdict, "failed": len(failed), "tests": len(tests),
                     "failedTests": [t["group"] for t in failed], "record": record_text(tests, limit=6, crossed=crossed, shown=shown, node=node)})
    return rows


def verdict_line(row: Mapping[str, Any]) -> str:
    """One line: node, verdict, its record."""
    return f"{row['node']}  {row['verdict']}, {row['record']}"
