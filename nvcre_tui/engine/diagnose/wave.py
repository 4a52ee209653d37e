"""One wave being packed: tests that can really run at once (no node in two of them, at most maxConcurrent)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from nvcre_tui.engine.diagnose.state import TOKENS, DiagnoseState, Probe


class Wave:
    """A wave being packed."""

    def __init__(self, state: DiagnoseState) -> None:
        self.round, self.limit = state.round, state.max_concurrent or math.inf
        self.probes: list[Probe] = []
        self.busy: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.domain_of = state.domain_of if state.within_domains else None  # then no test may span two domains

    @property
    def full(self) -> bool:
        """No Job left under maxConcurrent."""
        return len(self.probes) >= self.limit

    def add(self, stage: str, nodes: Iterable[str], subjects: Iterable[str] | None = None) -> bool:
        """Add a test (its subjects: the nodes it is about, by default all) unless the wave is full or a node is
        busy; True when added. Names are unique over the run: round, stage token, count."""
        nodes = tuple(sorted(nodes))
        if self.full or not nodes or self.busy.intersection(nodes):
            return False
        if self.domain_of is not None and len({self.domain_of[n] for n in nodes}) > 1:
            return False
        name = f"r{self.round}-{TOKENS[stage]}-{self.counts[stage]}"
        self.counts[stage] += 1
        self.probes.append(Probe(self.round, stage, name, nodes, tuple(sorted(subjects)) if subjects is not None else nodes))
        self.busy.update(nodes)
        return True
