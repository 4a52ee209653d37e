"""A diagnosis's fault across the whole fabric said plainly: what its tests across cliques measured against the
threshold, and what to check. One wording for the Workflow's message, every report format and the console.

The diagnosis names the fabric between three or more cliques (or the only link of a two-clique fleet) when the
tests across them fail and the tests inside them pass; its own words hedged ("or the threshold asks more than the
path between cliques gives") and gave no value. This says the tests and the best value instead, and what an on-call
engineer checks: the network between the cliques, and whether the threshold is one that path can carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.judging.thresholds import shown_judged
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, METRICS, with_unit
from nvcre_tui.engine.units import listed

TESTS_SHOWN = 6  # failed tests named (a fault's `tests` hold them all)
CHECK = "check the network between the cliques (NICs, switches, NCCL's network settings)"


def fabric_wide(cliques: Sequence[str], fleet: Sequence[str]) -> bool:
    """A fault naming the fabric: three or more cliques, or both of a two-clique fleet (its only link, which no other
    link can be compared with)."""
    return len(cliques) >= 3 or (len(cliques) == 2 and set(fleet) == set(cliques))


def fabric_fault_said(cliques: Sequence[str], fleet: Sequence[str], evidence: Sequence[str], tests: Sequence[Mapping[str, Any]],
                      domain_of: Mapping[str, str], threshold: str | None) -> str | None:
    """The plain words of a fabric-wide fault (`cliques`; `fleet`: every clique of the diagnosis; `evidence`: its failed
    tests by name; `tests`: the diagnosis's tests as the report reads them, {group, nodes, passed, value?};
    `domain_of`: node -> clique; `threshold`: the category's busBandwidthGBps expression): "degraded fabric between
    all 4 cliques: 8 of 8 tests across them failed (r0-inter-0, ... and 2 more), best 186.63 GB/s against value >=
    300, while their nodes pass inside their own cliques; check the network between the cliques (...) and that a path between
    cliques can carry value >= 300". None for a pair or an uplink (their own words name the link)."""
    if not fabric_wide(cliques, fleet):
        return None
    named = set(cliques)
    across = [t for t in tests if t.get("passed") is not None
              and len({domain_of.get(str(n)) for n in t.get("nodes") or ()} & named) >= 2]
    failed = [t for t in across if t.get("passed") is False]
    which = (f"all {len(cliques)} cliques" if set(cliques) == set(fleet) and len(cliques) >= 3
             else f"{len(cliques)} cliques ({', '.join(cliques)})" if len(cliques) >= 3
             else f"{cliques[0]} and {cliques[1]} (the fleet's only link between cliques)")
    names = [str(name) for name in evidence]
    said = f"degraded fabric between {which}: {len(failed)} of {len(across)} tests across them failed"
    said += f" ({listed(names, TESTS_SHOWN)})" if names else ""
    # a failure's value where it is why it failed: a test that crashed says its reason (record_text), its value measured
    # part of a sweep (above the threshold, it read as the best of the failures)
    best = best_said([float(v) for t in failed if not t.get("reason") and isinstance(v := t.get("value"), int | float) and not isinstance(v, bool)],
                     threshold)
    said += f", {best}" if best else ""
    said += ", while their nodes pass inside their own cliques; " + CHECK
    return said + (f", and that a path between cliques can carry {threshold}" if threshold else "")


def best_said(values: Sequence[float], threshold: str | None) -> str | None:
    """The failed tests' best value with its unit, on its side of the threshold, against it: "best 186.63 GB/s against
    value >= 300"; None when none measured. A reader of a fault's message looks for it there (report.model.fault_said:
    a message saying it needs no span of the same values after it)."""
    if not values:
        return None
    best = max(values) if METRICS[BUS_BANDWIDTH].higher_is_better else min(values)
    if not threshold:
        return f"best {with_unit(BUS_BANDWIDTH, f'{best:.2f}')}"
    return f"best {with_unit(BUS_BANDWIDTH, shown_judged(BUS_BANDWIDTH, threshold, best))} against {threshold}"


def fault_message(fault: Mapping[str, Any], state: Mapping[str, Any], thresholds: Mapping[str, str] | None) -> str:
    """A named fault's message as every reader says it (`fault`: an infrastructureFaults entry {cliques, tests,
    message}; `state`: the readable diagnose state, domains and tests by node name; `thresholds`: the category's):
    fabric_fault_said for a fabric-wide one, else the diagnosis's own words (a pair's, an uplink's)."""
    threshold = (thresholds or {}).get(BUS_BANDWIDTH)
    found = state.get("domains")
    domains: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    domain_of = {str(n): str(d) for d, nodes in domains.items() if d for n in nodes or ()}
    tests = [t for t in state.get("tests") or () if isinstance(t, Mapping)]
    cliques = [str(c) for c in fault.get("cliques") or ()]
    said = fabric_fault_said(cliques, [str(d) for d in domains if d], [str(t) for t in fault.get("tests") or ()], tests, domain_of, threshold)
    return said or str(fault.get("message") or "")
