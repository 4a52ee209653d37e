"""A fabric-wide fault said plainly (judging.fabric_fault): the tests across its cliques that failed, the best value
against the threshold, what to check; a pair or an uplink keeps the diagnosis's own words."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.judging.fabric_fault import CHECK, fabric_fault_said, fault_message

DOMAIN_OF = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "c1": "c", "d1": "d"}
TESTS = [{"group": "r0-screen-0", "nodes": ["a1", "a2"], "passed": True, "value": 401.0},
         {"group": "r0-inter-0", "nodes": ["a1", "b1"], "passed": False, "value": 185.004},
         {"group": "r1-link-0", "nodes": ["a2", "b2"], "passed": False, "value": 299.996},
         {"group": "r1-link-1", "nodes": ["b1", "c1"], "passed": True, "value": 380.0}]


def test_the_only_link_of_a_two_clique_fleet_says_its_tests_best_value_and_what_to_check() -> None:
    said = fabric_fault_said(["a", "b"], ["a", "b"], ["r0-inter-0", "r1-link-0"], TESTS, DOMAIN_OF, "value >= 300")
    assert said == ("degraded fabric between a and b (the fleet's only link between cliques): 2 of 2 tests across them failed "
                    "(r0-inter-0, r1-link-0), best 299.996 GB/s against value >= 300, while their nodes pass inside their own "
                    "cliques; check the network between the cliques (NICs, switches, NCCL's network settings), and that a path "
                    "between cliques can carry value >= 300")  # 299.996, never 300.00: on its side of the threshold


def test_some_cliques_are_named_and_a_pass_across_them_is_counted() -> None:
    said = fabric_fault_said(["a", "b", "c"], ["a", "b", "c", "d"], ["r0-inter-0"], TESTS, DOMAIN_OF, None)
    assert said is not None and said.startswith("degraded fabric between 3 cliques (a, b, c): 2 of 3 tests across them failed (r0-inter-0), best 300.00 GB/s,")
    assert said.endswith("NCCL's network settings)")  # no threshold: nothing to compare it with


def test_a_pair_or_an_uplink_keeps_the_diagnosis_words() -> None:
    state = {"domains": {"a": ["a1", "a2"], "b": ["b1", "b2"], "c": ["c1"], "d": ["d1"]}, "tests": TESTS}
    assert fabric_fault_said(["a", "b"], ["a", "b", "c", "d"], [], TESTS, DOMAIN_OF, None) is None
    assert fault_message({"cliques": ["a"], "message": "degraded uplink of a", "tests": []}, state, {}) == "degraded uplink of a"
    wide = fault_message({"cliques": ["a", "b", "c", "d"], "message": "hedge", "tests": ["r0-inter-0"]}, state, {"busBandwidthGBps": "value >= 300"})
    assert wide.startswith("degraded fabric between all 4 cliques: 2 of 3 tests across them failed (r0-inter-0), best 299.996 GB/s")


def test_the_best_value_is_a_measured_failures_never_a_crashed_tests() -> None:
    """A test across the cliques that crashed (its reason, not its value, why it failed) may hold a value its sweep
    measured before it stopped, above the threshold: 'best 412.00 GB/s against value >= 300' read as a pass among the
    failures. Only failures whose value is why they failed say one, as a node's record says them (record_text)."""
    crashed = {"group": "r1-link-2", "nodes": ["a1", "c1"], "passed": False, "value": 412.0, "reason": "WorkloadFailed"}
    said = fabric_fault_said(["a", "b", "c"], ["a", "b", "c"], ["r0-inter-0", "r1-link-2"], [*TESTS, crashed], DOMAIN_OF, "value >= 300")
    assert said is not None and ", best 299.996 GB/s against value >= 300," in said, said
    only = fabric_fault_said(["a", "b", "c"], ["a", "b", "c"], ["r1-link-2"], [crashed], DOMAIN_OF, "value >= 300")
    assert only is not None and "best" not in only, only


def test_the_reports_fault_line_says_the_best_value_once() -> None:
    """The report's `Infra fault:` line put the measured span after a fabric-wide message that already says the best
    value (`..., best 299.996 GB/s against value >= 300, ...; busBandwidthGBps 185.00-299.996 GB/s in 2 tests`): the span
    goes where the message carries that best, and stays beside a message that does not (a pair's own words)."""
    from nvcre_tui.engine.report.model import fault_evidence, fault_said

    wide: dict[str, Any] = {"cliques": ["a", "b"], "tests": ["r0-inter-0", "r1-link-0"]}
    wide["message"] = fabric_fault_said(["a", "b"], ["a", "b"], wide["tests"], TESTS, DOMAIN_OF, "value >= 300")
    wide["evidence"] = fault_evidence(wide, TESTS, "value >= 300")
    assert fault_said(wide) == wide["message"] and wide["message"].count("299.996") == 1
    pair = {**wide, "message": "degraded link between a and b"}
    assert fault_said(pair) == "degraded link between a and b; busBandwidthGBps 185.00-299.996 GB/s in 2 tests (value >= 300)"


def test_failures_no_link_was_named_for_say_what_they_measured_and_what_to_check() -> None:
    """The diagnosis's note for failures across cliques whose every link passed some test said "one of them may fail
    part of the time": no value, no check. It says the tests, their best value, what to check; no link convicted."""
    from nvcre_tui.engine.diagnose.summary import unnamed_links_said

    said = unnamed_links_said(["clique-a", "clique-c"], ["r1-inter-0", "r2-link-1", "r3-link-0"], [185.004, 241.1])
    assert said == ("3 tests across clique-a, clique-c failed (r1-inter-0, r2-link-1, r3-link-0), best 241.1 GB/s, although their "
                    "nodes are healthy; every link between those cliques passed another test, so none is named: check the network "
                    "between the cliques (NICs, switches, NCCL's network settings) for a link that degrades only part of the time")
    assert ", best" not in unnamed_links_said(["a", "b"], ["r0-inter-0"], [])  # a crash measured nothing
    assert CHECK in said  # what to check, in the fabric-wide fault's words
