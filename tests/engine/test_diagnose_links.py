"""Several link faults at once: diagnose names the smallest set of links that explains the failures, never a link
whose tests would pass, and never the whole fabric while links between some of its cliques pass."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.diagnose import links
from tests.engine.test_diagnose import _bench, _oracle, simulate

Link = tuple[str, ...]  # (A, B): a degraded pair; (A,): a bad uplink


def _fleet(cliques: int, size: int = 8) -> dict[str, list[str]]:
    return {f"clique-{c}": [f"clique-{c}-n{i:02d}" for i in range(size)] for c in "abcdefgh"[:cliques]}


def _fails(truth: tuple[Link, ...], cliques: set[str]) -> bool:
    """Whether a test spanning these cliques fails under these link faults."""
    return any(set(link) <= cliques if len(link) == 2 else link[0] in cliques and len(cliques) > 1 for link in truth)


def _named(fleet: dict[str, list[str]], truth: tuple[Link, ...], max_concurrent: int = 0,
           faulty: frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    state = simulate(fleet, 2, _oracle(fleet, links=truth, faulty=faulty), max_concurrent)
    assert {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")} <= faulty
    return sorted(f.cliques for f in state.infrastructure_faults)


def test_two_pairs_of_one_clique_are_named_as_those_pairs_not_its_uplink() -> None:
    """b-c and b-d fail, a-b passes: b's uplink passed a test, so these are two pairs (b's uplink "failing part of
    the time" before: 5 of 7 tests across it failed, but every pair did the same thing every time)."""
    assert _named(_fleet(4), (("clique-b", "clique-c"), ("clique-b", "clique-d"))) == [
        ("clique-b", "clique-c"), ("clique-b", "clique-d")]


def test_two_bad_uplinks_are_named_not_the_whole_fabric() -> None:
    """Every test leaving clique-c or clique-d fails, a-b passes twice: 23 of 25 failed, enough for a fabric fault
    once, which blamed the link between clique-a and clique-b too."""
    assert _named(_fleet(4), (("clique-c",), ("clique-d",))) == [("clique-c",), ("clique-d",)]


def test_two_failed_pairs_of_a_clique_name_its_uplink_only_after_a_third_clique_fails_with_it() -> None:
    """a-b and a-d fail under maxConcurrent 4 before a-c was tested: clique-a's uplink was named from those two."""
    assert _named(_fleet(4, 4), (("clique-a", "clique-b"), ("clique-a", "clique-d")), max_concurrent=4) == [
        ("clique-a", "clique-b"), ("clique-a", "clique-d")]
    assert _named(_fleet(8, 4), (("clique-a", "clique-d"), ("clique-b", "clique-d"), ("clique-c", "clique-h"))) == [
        ("clique-a", "clique-d"), ("clique-b", "clique-d"), ("clique-c", "clique-h")]


def test_two_bad_uplinks_are_told_from_the_fabric_by_a_test_between_two_other_cliques() -> None:
    """Five cliques of 4 under maxConcurrent 4, uplinks of clique-a and clique-b bad: the first six tests across
    cliques all held one of them and failed, and the whole fabric was named before any test between the other three
    ran (with three cliques in all, two bad uplinks and the fabric look the same: the fabric stays)."""
    assert _named(_fleet(5, 4), (("clique-a",), ("clique-b",)), max_concurrent=4) == [("clique-a",), ("clique-b",)]
    assert _named(_fleet(3), (("clique-a",), ("clique-b",))) == [("clique-a", "clique-b", "clique-c")]


def test_an_uplink_counts_no_partner_whose_own_link_explains_the_failure() -> None:
    """Pairs a-c and b-c and clique-d's uplink: c's failed tests with a, b and d made three partners, and c's
    uplink was named beside d's, though c's test with clique-e would have passed."""
    fleet = _fleet(5, 4)
    truth = (("clique-a", "clique-c"), ("clique-b", "clique-c"), ("clique-d",))
    assert _named(fleet, truth, 4, frozenset({"clique-e-n01"})) == [("clique-a", "clique-c"), ("clique-b", "clique-c"), ("clique-d",)]


def test_the_smallest_explanation_waits_for_a_test_of_each_pair_it_names() -> None:
    """Seven cliques of 4, pairs b-c, b-g and c-d degraded: b-c and d-g explained every failure, and d-g was named
    though no test had tried it alone (found by a random run of the property below)."""
    truth = (("clique-b", "clique-c"), ("clique-b", "clique-g"), ("clique-c", "clique-d"))
    assert _named(_fleet(7, 4), truth) == sorted(truth)


def test_an_uplink_is_tried_first_against_cliques_in_none_of_its_failures() -> None:
    """Seven cliques of 4, pairs a-c, b-c and c-d degraded: clique-c's uplink was tried against a, b and d (the
    cliques beside it in its failures, and first by name) and named; a test with clique-f clears it."""
    truth = (("clique-a", "clique-c"), ("clique-b", "clique-c"), ("clique-c", "clique-d"))
    assert _named(_fleet(7, 4), truth) == sorted(truth)


def test_a_bad_uplink_beside_a_degraded_pair_is_named_with_it() -> None:
    assert _named(_fleet(8), (("clique-a", "clique-c"), ("clique-f",))) == [("clique-a", "clique-c"), ("clique-f",)]


def test_an_uplink_beside_a_pair_under_a_wide_failure_is_not_the_whole_fabric() -> None:
    """Eight cliques of 8 under maxConcurrent 4, clique-a's uplink and the pair b-d degraded: once a's uplink was
    named, the one failure left was a test over the other seven cliques, too wide to branch over, so no small
    explanation was found and the whole fabric was named, though a test between clique-b and clique-c had passed."""
    fleet = _fleet(8)
    assert _named(fleet, (("clique-a",), ("clique-b", "clique-d")), max_concurrent=4) == [("clique-a",), ("clique-b", "clique-d")]
    assert _named(fleet, (("clique-d",), ("clique-a", "clique-e")), max_concurrent=4) == [("clique-a", "clique-e"), ("clique-d",)]


def test_three_degraded_pairs_of_one_clique_are_not_its_uplink() -> None:
    """Six cliques of 8 under maxConcurrent 4, pairs a-f, b-f and c-f degraded: clique-f's tests with a, b and c
    failed one by one and its uplink was named, though its tests with d and e pass. Its uplink now needs a fourth."""
    truth = (("clique-a", "clique-f"), ("clique-b", "clique-f"), ("clique-c", "clique-f"))
    assert _named(_fleet(6), truth, max_concurrent=4) == sorted(truth)
    assert _named(_fleet(6), (("clique-f",),), max_concurrent=4) == [("clique-f",)]


def test_minimal_covers_are_the_smallest_explanations() -> None:
    ab, bc, bd, up_b = ("pair", "a", "b"), ("pair", "b", "c"), ("pair", "b", "d"), ("uplink", "b")
    assert links.minimal_covers([frozenset({bc, up_b}), frozenset({bd, up_b})], 3) == [frozenset({up_b})]
    assert links.minimal_covers([frozenset({bc}), frozenset({bd})], 3) == [frozenset({bc, bd})]
    assert links.minimal_covers([frozenset({ab, bc}), frozenset({bd, ab})], 1) == [frozenset({ab})]
    assert links.minimal_covers([frozenset({ab}), frozenset({bc}), frozenset({bd})], 2) == []  # three needed
    assert links.minimal_covers([frozenset({ab}), frozenset()], 3) == []  # a failure no open link explains
    wide = frozenset(("pair", "a", f"x{i}") for i in range(20))
    other = frozenset(("pair", "b", f"y{i}") for i in range(20))
    assert links.minimal_covers([wide, other], 3, branch=16) == []  # too many to branch over: the search narrows it first
    up_c = ("uplink", "c")  # the last pick branches over nothing: an uplink and a wide failure are two faults
    assert links.minimal_covers([frozenset({up_c}), wide], 3, branch=16) == sorted((frozenset({up_c, h}) for h in wide), key=sorted)
    assert links.minimal_covers([wide], 3, branch=16) == sorted((frozenset({h}) for h in wide), key=sorted)


@st.composite
def several_link_faults(draw: st.DrawFn) -> tuple[int, int, int, tuple[Link, ...], frozenset[str]]:
    """Three to eight cliques of 4 or 8, two or three link faults (pairs or uplinks), up to two faulty nodes."""
    count, size = draw(st.integers(3, 8)), draw(st.sampled_from([4, 8]))
    names = sorted(_fleet(count, size))
    candidates = [pair for pair in combinations(names, 2)] + [(c,) for c in names]
    truth = tuple(draw(st.lists(st.sampled_from(candidates), min_size=2, max_size=3, unique=True)))
    nodes = sorted(n for members in _fleet(count, size).values() for n in members)
    faulty = frozenset(draw(st.sets(st.sampled_from(nodes), max_size=2)))
    return count, size, draw(st.sampled_from([0, 0, 4])), truth, faulty


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(case=several_link_faults())
def test_several_link_faults_never_name_a_link_that_passes(case: tuple[int, int, int, tuple[Link, ...], frozenset[str]]) -> None:
    """A named pair fails every test across it; a named uplink fails its tests with at least four other cliques
    one by one (all of them in a smaller fleet: three degraded pairs of one clique are not its uplink); no healthy
    node is blamed. (Three cliques failing every test
    between them are the fabric: two uplinks look the same.)"""
    count, size, mc, truth, faulty = case
    fleet = _fleet(count, size)
    for cliques in _named(fleet, truth, mc, faulty):
        if len(cliques) == 2:
            assert _fails(truth, set(cliques)), (cliques, truth)
        elif len(cliques) == 1:
            failing = sum(_fails(truth, {cliques[0], other}) for other in fleet if other != cliques[0])
            assert failing >= min(4, count - 1), (cliques, truth)


def test_the_bench_names_several_link_faults_exactly() -> None:
    """bench/diagnose.py's line for several faults at once (4 to 8 cliques of 8, maxConcurrent unlimited or 8): before
    the smallest-explanation rule 77 of 120 runs were exact, 10 named a link whose tests pass, 33 the whole fabric."""
    found = _bench().several_links(runs=40)
    assert found["wrong"] == found["fabric"] == found["blamed"] == 0 and found["exact"] == 40


def test_the_only_link_of_two_cliques_is_not_called_degraded_without_saying_the_threshold_may_ask_too_much() -> None:
    """Two cliques have one link between them: a threshold above what any path between cliques gives fails it exactly
    as a degraded link would, so the words say both; among more cliques the others' passing links tell them apart."""
    pair = ("pair", "clique-0", "clique-1")
    assert "the threshold asks more than the path between cliques gives" in links.describe(pair, 2)
    assert links.describe(pair, 4) == "degraded fabric between clique-0 and clique-1"
