"""Link faults the search does not localise: the fabric between many cliques failing (a threshold no link meets,
NCCL on a slow path), and one link failing part of the time (flaky, or just under the threshold). Both read the
tests across cliques whose members are sound inside their own cliques; the rules are in the package docstring."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from nvcre_tui.engine.diagnose import links
from nvcre_tui.engine.diagnose.links import Hypothesis
from nvcre_tui.engine.diagnose.state import DiagnoseState, Probe


class Evidence(Protocol):
    """What these rules read of evidence.Evidence (which calls them: a protocol, not an import circle)."""

    @property
    def state(self) -> DiagnoseState: ...
    @property
    def tests(self) -> Sequence[Probe]: ...
    @property
    def uplinks(self) -> bool: ...
    @property
    def spans(self) -> Sequence[frozenset[str]]: ...
    @property
    def members(self) -> Sequence[frozenset[str]]: ...
    @property
    def by_node(self) -> Mapping[str, list[int]]: ...
    @property
    def convicted(self) -> Mapping[str, str]: ...
    @property
    def eliminated(self) -> set[Hypothesis]: ...
    @property
    def open_hypotheses(self) -> Mapping[int, frozenset[Hypothesis]]: ...
    @property
    def stubborn(self) -> frozenset[str]: ...

    def explained(self, i: int, node: str | None = None, culprit: str | None = None) -> bool: ...

    def disjoint_pair(self, tests: Sequence[int]) -> bool: ...


FABRIC_WIDE_TESTS = 4  # failed tests across cliques, at least FABRIC_WIDE_SHARE of them, that name the whole fabric
FABRIC_WIDE_SHARE = 0.9
FLAKY_LINK_FAILURES = 3  # failed tests with no node in common that name a link failing part of the time
FABRIC_NOISY_SHARE = 0.5  # ... or this share, FABRIC_WIDE_TESTS of them over links that passing tests had proven
INSIDE_PASSES_PER_FAILURE = 2  # passes inside its clique per failure across cliques that clear a node of flakiness


def fabric_wide(ev: Evidence) -> list[int]:
    """The failed tests across cliques that name the fabric between the cliques they span, or []: among the tests
    across cliques whose members are sound inside their cliques, at least FABRIC_WIDE_TESTS failed and
    FABRIC_WIDE_SHARE of them did (a share: where the threshold sits just above what the path between cliques
    gives, a test passes now and then, and each pass would clear its links for good), no one link is exercised
    by all the failed ones (else the search narrows it down), no few links explain them (several faults at once:
    the search names those), and two of them share no node (one flaky node never makes a fabric fault). With three
    or more cliques only: with two, the pair is the fabric. A clique left out (its links untested yet) is covered by
    the inter tests; their failures widen the fault."""
    if not ev.uplinks or ev.state.within_domains:
        return []
    across, failed = sound_across(ev)
    if len(failed) < FABRIC_WIDE_TESTS or len(failed) < FABRIC_NOISY_SHARE * len(across):
        return []
    if len(failed) < len(across) and links.minimal_covers([ev.open_hypotheses.get(i, frozenset()) for i in failed], links.MOST_FAULTS):
        return []  # a few links that never passed explain every failure (two bad uplinks): the search names them
    if len(failed) == len(across) and apart_from_two_uplinks(ev, failed):
        return []  # every failed test left one of two cliques: a test between two others tells them from the fabric
    if len(failed) < FABRIC_WIDE_SHARE * len(across):
        # Noisy: links fail and pass in turn. Failures over links that had passed are what a link failing part
        # of the time leaves, and a flaky node too: FABRIC_WIDE_TESTS of them, two with no node in common.
        proven = [i for i in failed if not ev.open_hypotheses.get(i)]
        if len(proven) < FABRIC_WIDE_TESTS or not ev.disjoint_pair(proven):
            return []
    if links.common((ev.spans[i] for i in failed), True) or not ev.disjoint_pair(failed):
        return []
    return failed


def apart_from_two_uplinks(ev: Evidence, failed: list[int] | None = None) -> tuple[str, ...]:
    """The cliques apart from two whose uplinks explain every failed test across cliques of sound nodes, when none
    passed and at least two are apart (the planner tests two of them together: a pass says two uplinks, a failure
    the fabric; with three cliques the two look the same): else ()."""
    if failed is None:
        across, failed = sound_across(ev)
        if len(failed) < FABRIC_WIDE_TESTS or len(failed) < len(across):
            return ()
    sound = set().union(*(ev.spans[i] for i in failed))
    for cover in links.minimal_covers([frozenset(("uplink", c) for c in ev.spans[i]) for i in failed], 2):
        apart = sorted(sound - {c for h in cover for c in links.cliques_of(h)})
        if len(apart) >= 2:
            return tuple(apart)
    return ()


def flaky_link(ev: Evidence) -> tuple[Hypothesis, list[int]] | None:
    """A link failing part of the time (flaky, or just under the threshold), with the failed tests that name it:
    among the tests across cliques of nodes sound inside their cliques, every failed one exercises it,
    FLAKY_LINK_FAILURES of them span two cliques, share no node and hold no node that failed another without
    passing INSIDE_PASSES_PER_FAILURE tests inside its clique per failure (flaky nodes failing beside others across
    one link look like it failing), and it passed some test too; of such links, the one that failed the largest
    share of its tests. None while a link that never passed explains them (the search localises that one)."""
    if ev.state.within_domains:
        return None
    across, failed = sound_across(ev)
    # Failed tests over two cliques with no node in common, greedily, leaving out any test of a node that failed
    # two and is not steady: a flaky node fails tests across every link it crosses, and is confirmed across the
    # same few; a test over many cliques (with as many chances of a flaky member) says little of any one link.
    counts = Counter(n for i in failed for n in ev.members[i])

    def steady(node: str) -> bool:
        # Failed once, or passed inside its clique often enough that a flaky node would have failed there too (a
        # flaky uplink fails the same few nodes again and again, when they are all its clique has).
        inside = sum(1 for i in ev.by_node[node] if len(ev.spans[i]) <= 1 and ev.tests[i].passed)
        return counts[node] == 1 or inside >= INSIDE_PASSES_PER_FAILURE * counts[node]

    kept: list[frozenset[str]] = []
    for i in failed:
        if (len(ev.spans[i]) == 2 and all(steady(n) for n in ev.members[i])
                and all(ev.members[i].isdisjoint(k) for k in kept)):
            kept.append(ev.members[i])
    if len(kept) < FLAKY_LINK_FAILURES:
        return None
    common = links.common((ev.spans[i] for i in failed), ev.uplinks)
    if not common or common - ev.eliminated:
        return None
    if all(ev.open_hypotheses.get(i) for i in failed):
        # Links that never passed explain every failure: persistent faults, maybe several (clique-b to clique-c and
        # to clique-d, clique-a to clique-b passing, is two pairs, not clique-b's uplink failing part of the time).
        return None
    for g in sorted({g for i in failed for g in ev.open_hypotheses.get(i, ())}):
        if not ev.disjoint_pair([i for i in failed if not links.in_test(g, ev.spans[i])]):
            # One link that never passed explains every failure but one node's: a flaky representative's failure
            # beside a third clique made c2's uplink "failing part of the time" of the degraded pair c2-c3.
            return None

    def share(h: Hypothesis) -> float:
        return len(failed) / sum(1 for i in across if links.in_test(h, ev.spans[i]))

    return max(sorted(common), key=lambda h: (share(h), h[0] == "pair")), failed


def sound_across(ev: Evidence) -> tuple[list[int], list[int]]:
    """Tests across cliques whose members are all sound inside their cliques, and those of them that failed (a
    failure its log put on members is theirs, no test of the links)."""
    sound = frozenset(n for n in ev.by_node if sound_inside(ev, n))
    across = [i for i, spans in enumerate(ev.spans) if len(spans) >= 2 and ev.members[i] <= sound and not ev.tests[i].culprits]
    return across, [i for i in across if not ev.tests[i].passed]


def sound_inside(ev: Evidence, node: str) -> bool:
    """Not convicted, passed a test inside one clique, and every failed test of its own inside one is explained or
    held a node that never passed (a fault whose conviction may wait on partners the link tests keep busy)."""
    inside = [i for i in ev.by_node[node] if len(ev.spans[i]) <= 1]
    return (node not in ev.convicted and any(ev.tests[i].passed for i in inside)
            and all(ev.tests[i].passed or ev.explained(i, node) or any(s != node and s in ev.members[i] for s in ev.stubborn)
                    for i in inside))
