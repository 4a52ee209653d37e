"""Link hypotheses between topology domains (cliques), and which tests bear on them.

A link fault is either a degraded pair ("pair", A, B): a test fails when it spans both A and B; or a bad uplink
("uplink", A): a test fails when it spans A and any other clique. With only two cliques in the fleet the two kinds
cannot be told apart, and only pairs are considered. The fabric between three or more cliques ("fabric", A, B, C,
...) is named only when every link between them failed its tests (see fabric.fabric_wide): a test spanning two of
them fails.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from itertools import combinations

Hypothesis = tuple[str, ...]  # ("pair", A, B) with A < B, ("uplink", A), or ("fabric", A, B, C, ...)
MOST_FAULTS = 3  # link faults at once that the smallest explanation of the failures names (see minimal_covers)


def reps_each(min_group_size: int, cliques: int) -> int:
    """Representatives per clique in a test over this many cliques: one each, more up to minGroupSize."""
    return max(1, math.ceil(min_group_size / cliques))


def pair(a: str, b: str) -> Hypothesis:
    """The pair hypothesis of two cliques, in a canonical order."""
    return ("pair", *sorted((a, b)))


def fabric(cliques: Iterable[str]) -> Hypothesis:
    """The hypothesis that every link between these cliques is degraded."""
    return ("fabric", *sorted(cliques))


def in_test(h: Hypothesis, cliques: frozenset[str]) -> bool:
    """Whether a test spanning these cliques fails under this hypothesis."""
    if h[0] == "pair":
        return h[1] in cliques and h[2] in cliques
    if h[0] == "fabric":
        return len(cliques.intersection(h[1:])) >= 2
    return h[1] in cliques and len(cliques) >= 2


def within(cliques: Iterable[str], uplinks: bool) -> set[Hypothesis]:
    """Every hypothesis a test spanning these cliques exercises."""
    names = sorted(cliques)
    if len(names) < 2:
        return set()
    found: set[Hypothesis] = {("pair", a, b) for a, b in combinations(names, 2)}
    if uplinks:
        found |= {("uplink", a) for a in names}
    return found


def common(spans: Iterable[frozenset[str]], uplinks: bool) -> set[Hypothesis]:
    """The hypotheses every one of these tests (by the cliques each spans) exercises; empty for no tests."""
    found: set[Hypothesis] | None = None
    for cliques in spans:
        exercised = within(cliques, uplinks)
        found = exercised if found is None else found & exercised
    return found or set()


def minimal_covers(tests: Sequence[frozenset[Hypothesis]], limit: int, branch: int = 16) -> list[frozenset[Hypothesis]]:
    """Every smallest set of hypotheses that holds one of each test's open hypotheses (each failed test explained),
    when that size is at most `limit`; [] when none is that small, a test has none open, or a step before the last
    would branch over more than `branch` hypotheses (a failed test over dozens of cliques: the search narrows it
    first; the last pick is whatever every test left holds, however wide they are: an uplink and one failed test over
    seven cliques are two faults, not the fabric). Branching on the test with the fewest open hypotheses finds them
    all: every cover holds one of those."""
    if not tests or not all(tests):
        return []
    too_wide = False

    def extend(chosen: frozenset[Hypothesis], size: int, found: set[frozenset[Hypothesis]]) -> None:
        nonlocal too_wide
        left = [t for t in tests if t.isdisjoint(chosen)]
        if not left:
            found.add(chosen)
            return
        if len(chosen) == size or too_wide:
            return
        if len(chosen) == size - 1:  # the last pick needs no branching: whatever every test left holds
            found.update(chosen | {h} for h in frozenset.intersection(*left))
            return
        narrowest = min(left, key=len)
        if len(narrowest) > branch:
            too_wide = True
            return
        for h in sorted(narrowest):
            extend(chosen | {h}, size, found)

    for size in range(1, limit + 1):
        found: set[frozenset[Hypothesis]] = set()
        extend(frozenset(), size, found)
        if too_wide:
            return []
        if found:
            return sorted(found, key=sorted)
    return []


def cliques_of(h: Hypothesis) -> tuple[str, ...]:
    """The cliques a hypothesis names (two for a pair, one for an uplink)."""
    return h[1:]


def describe(h: Hypothesis, fleet: int = 0) -> str:
    """Words for the report (`fleet`: the cliques in the fleet, to say when a fabric fault spans them all)."""
    if h[0] == "pair":
        if fleet == 2:  # the fleet's only link: nothing to compare it with
            return (f"degraded fabric between {h[1]} and {h[2]}: tests across them fail and tests inside them pass (the "
                    "fleet's only link between cliques: or the threshold asks more than the path between cliques gives)")
        return f"degraded fabric between {h[1]} and {h[2]}"
    if h[0] == "fabric":
        count = len(h) - 1
        which = f"all {count} cliques" if count == fleet else f"{count} cliques ({', '.join(h[1:])})"
        return (f"degraded fabric between {which}: tests across them fail and tests inside them pass "
                "(or the threshold asks more than the path between cliques gives)")
    return f"degraded uplink of {h[1]}: tests leaving it fail, tests inside it pass"


def bit_sides(cliques: Sequence[str], salt: int) -> list[tuple[str, ...]]:
    """Tests that split candidate cliques by the bits of a (salted, shuffled) index: a pair fault fails exactly the
    sides where both of its cliques agree, an uplink fault every side holding its clique, so one wave narrows the
    candidates from all pairs to a few."""
    order = sorted(cliques, key=lambda c: (hashlib.blake2b(f"{salt}:{c}".encode(), digest_size=8).digest(), c))
    bits = max(1, (len(order) - 1).bit_length())
    sides = []
    for bit in range(bits):
        for value in (0, 1):
            side = tuple(sorted(c for i, c in enumerate(order) if (i >> bit) & 1 == value))
            if len(side) >= 2 and side not in sides:
                sides.append(side)
    return sides
