"""The posterior behind diagnose convictions: the fleet's bad share, a partner's chance to fail on its own, one test's weight."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvcre_tui.engine.diagnose import posterior
from nvcre_tui.engine.diagnose.state import Probe


def _screening(groups: int, size: int, failed: int) -> tuple[list[Probe], dict[str, list[int]]]:
    tests = [Probe(0, "screening", f"g{g}", tuple(f"g{g}-n{i}" for i in range(size)), tuple(f"g{g}-n{i}" for i in range(size)), g >= failed)
             for g in range(groups)]
    by_node: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(tests):
        for n in t.nodes:
            by_node[n].append(i)
    return tests, by_node


def test_bad_share_is_small_when_everything_passes_and_half_when_everything_fails() -> None:
    assert posterior.least_share(512) <= posterior.bad_share(*_screening(64, 8, 0)) < 0.01
    assert posterior.bad_share(*_screening(8, 8, 8)) == 0.5
    assert posterior.bad_share([], {}) == 0.5  # nothing tested yet: assume the worst


def test_a_small_fleet_is_assumed_to_hold_more_bad_nodes_than_a_large_one_with_the_same_failure_rate() -> None:
    small, large = posterior.bad_share(*_screening(8, 8, 1)), posterior.bad_share(*_screening(64, 8, 8))
    assert small > large > posterior.least_share(512)


def test_the_flaky_share_is_at_least_one_node_of_those_tested() -> None:
    assert posterior.flaky_share(0.01, 0, 50, 100) == posterior.least_share(100) == 0.01  # fifty stubborn, none mixed
    assert posterior.flaky_share(0.2, 3, 3, 100) > 0.1  # half the bad-looking nodes also passed: most bad ones are flaky


def test_split_parts_count_beyond_the_one_failure_the_split_forces() -> None:
    tests, by_node = _screening(1, 8, 1)
    parts = [Probe(1, "split", f"p{k}", (f"g0-n{2 * k}", f"g0-n{2 * k + 1}"), (f"g0-n{2 * k}", f"g0-n{2 * k + 1}"), k != 0) for k in range(4)]
    for i, t in enumerate(parts, start=len(tests)):
        for n in t.nodes:
            by_node[n].append(i)
    one_failed = posterior.bad_share(tests + parts, by_node)
    parts[1] = Probe(1, "split", "p1", parts[1].nodes, parts[1].subjects, False)
    assert posterior.bad_share(tests + parts, by_node) > one_failed  # a second failed part is evidence of more bad nodes


@given(st.integers(0, 20), st.floats(0.01, 0.5))
def test_each_pass_makes_a_partner_less_likely_to_fail_on_its_own(passes: int, share: float) -> None:
    now, then = posterior.partner_fails(passes, share), posterior.partner_fails(passes + 1, share)
    assert 0 < then < now
    assert now <= posterior.FLAKE * share * (1 + 1e-12)  # at most: flaky with the prior share, flaking (float rounding aside)
    assert then == pytest.approx(now / 2, rel=0.5)


def test_a_test_weighs_its_outcome_against_the_partners_chance_to_explain_it() -> None:
    assert posterior.weigh(False, False, 0.9) == 1 - posterior.FLAKE  # a flaky node passes half its tests
    assert posterior.weigh(True, True, 0.99) == pytest.approx(100)  # beside partners that fail on their own 1 % of the time
    assert posterior.weigh(True, True, 0.0) == 1.0  # beside a node that always fails: no evidence
    assert posterior.weigh(True, False, 0.99) < posterior.weigh(True, True, 0.99)  # a flaky node explains a failure half as well
