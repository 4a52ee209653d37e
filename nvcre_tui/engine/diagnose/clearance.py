"""Why a diagnosis cleared a node (readable state): the tests it passed, and what explained each test it failed.

A convicted node's record lists the tests that decided it; a cleared one had only a verdict, so a node a screening
group blamed read "healthy" with nothing to show for it. The diagnosis's rules (diagnose/__init__.py) say what keeps a
failure off a node: its log named other members, a convicted member explains it, a named link fault it spans explains
it, or the node's passes outweigh it. This module says which, from the recorded tests alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.diagnose.summary import link_faults_crossed

CONVICTED_KEYS = (("faultyNodes", "faulty"), ("intermittentNodes", "intermittent"))  # the verdicts that explain a failure
HEALTHY_KEY = "healthyNodes"


@dataclass(frozen=True)
class Explained:
    """One failed test of a cleared node and what kept it off the node: `said` reads "explained by gpu-node-03
    (faulty)", "explained by the link fault clique-0 ↔ clique-1" or "not held: outweighed by 5 passes"."""

    test: Mapping[str, Any]  # the readable state's test ({group, stage, nodes, passed, value?, reason?})
    by: tuple[str, ...]  # what explains it ("gpu-node-03 (faulty)", "the link fault ..."); () when passes outweighed it
    passes: int  # the node's passes, which outweigh a failure nothing explains

    @property
    def said(self) -> str:
        if self.by:
            return f"explained by {' and '.join(self.by)}"
        return f"not held: outweighed by {self.passes} pass{'' if self.passes == 1 else 'es'}"


@dataclass(frozen=True)
class Clearance:
    """A cleared node's record: the tests it passed and its failed tests, each explained."""

    node: str
    passes: tuple[Mapping[str, Any], ...]
    failures: tuple[Explained, ...]

    def of_test(self, group: str) -> Explained | None:
        """The explanation of one failed test (by its group name); None when the node did not fail it."""
        return next((f for f in self.failures if f.test.get("group") == group), None)


def link_words(cliques: Sequence[str]) -> str:
    """A named link fault as the failures pane names it: "clique-0 ↔ clique-1", "uplink of clique-3", "links between
    5 cliques"."""
    if len(cliques) == 1:
        return f"uplink of {cliques[0]}"
    if len(cliques) > 2:
        return f"links between {len(cliques)} cliques"
    return " ↔ ".join(cliques)


def clearance(state: Mapping[str, Any], node: str) -> Clearance | None:
    """Why the diagnosis (readable state) holds `node` healthy; None when it does not (yet)."""
    if node not in (state.get(HEALTHY_KEY) or ()):
        return None
    convicted = {str(n): verdict for key, verdict in CONVICTED_KEYS for n in state.get(key) or ()}
    domains = state.get("domains") or {}
    faults = [(tuple(str(c) for c in f.get("cliques") or ()), link_faults_crossed(domains, [f.get("cliques") or ()]))
              for f in state.get("infrastructureFaults") or () if isinstance(f, Mapping) and f.get("cliques")]
    tests = [t for t in state.get("tests") or () if isinstance(t, Mapping) and node in (t.get("nodes") or ())]
    passes = tuple(t for t in tests if t.get("passed") is True)
    failures = []
    for test in (t for t in tests if t.get("passed") is False):
        failures.append(Explained(test, _explained_by(test, node, convicted, faults), len(passes)))
    return Clearance(node, passes, tuple(failures))


def _explained_by(test: Mapping[str, Any], node: str, convicted: Mapping[str, str],
                  faults: Sequence[tuple[tuple[str, ...], Callable[[Mapping[str, Any]], bool]]]) -> tuple[str, ...]:
    """What explains one failed test of a cleared node, as the diagnosis weighs it: the other members its own log
    named; else its convicted members and the named link faults it spans (both, when both); () when nothing does
    (the node's passes outweighed it)."""
    flagged = [str(n) for n in test.get("hardware") or () if n != node]
    if flagged:
        return (f"{', '.join(flagged)} (flagged by the node health check: a hardware fault)",)
    culprits = [str(n) for n in test.get("culprits") or () if n != node]
    if culprits:
        return (f"{', '.join(culprits)} (named by its log)",)
    by = [f"{n} ({convicted[n]})" for n in test.get("nodes") or () if n != node and n in convicted]
    return (*by, *(f"the link fault {link_words(cliques)}" for cliques, crossed in faults if crossed(test)))
