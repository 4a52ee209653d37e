"""diagnose.clearance: why a diagnosis cleared a node, from its readable state alone (the console's cleared verdicts
showed no test). Each failed test says what kept it off the node, in the diagnosis's order."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.diagnose.clearance import clearance, link_words


def _state(**lists: list[str]) -> dict[str, Any]:
    """Two cliques of three; n1 failed four tests, each explained otherwise, and passed two."""
    return {
        "domains": {"c0": ["n1", "n2", "n3"], "c1": ["n4", "n5", "n6"]},
        "healthyNodes": lists.get("healthy", ["n1", "n2", "n4", "n5"]),
        "faultyNodes": ["n3"], "intermittentNodes": ["n6"], "suspectNodes": [], "inconclusiveNodes": [],
        "infrastructureFaults": [{"kind": "fabric", "cliques": ["c0", "c1"], "message": "degraded fabric between c0 and c1"}],
        "tests": [
            {"group": "r0-screen-0", "stage": "screening", "nodes": ["n1", "n3"], "passed": False, "value": 240.0},
            {"group": "r1-link-0", "stage": "link", "nodes": ["n1", "n4"], "passed": False, "value": 185.0},
            {"group": "r1-confirm-0", "stage": "confirmation", "nodes": ["n1", "n2"], "passed": True, "value": 404.7},
            {"group": "r2-split-0", "stage": "split", "nodes": ["n1", "n2"], "passed": False, "reason": "WorkloadFailed",
             "culprits": ["n2"]},
            {"group": "r2-confirm-1", "stage": "confirmation", "nodes": ["n1", "n5"], "passed": True, "value": 401.0},
            {"group": "r3-recheck-0", "stage": "recheck", "nodes": ["n1", "n2"], "passed": False, "value": 250.0},
            {"group": "r3-recheck-1", "stage": "recheck", "nodes": ["n4", "n6"], "passed": False, "value": 250.0},
            {"group": "r0-inter-0", "stage": "inter", "nodes": ["n3", "n5"], "passed": False, "value": 120.0},
        ],
    }


def test_each_failure_of_a_cleared_node_says_what_explained_it() -> None:
    cleared = clearance(_state(), "n1")
    assert cleared is not None
    assert [t["group"] for t in cleared.passes] == ["r1-confirm-0", "r2-confirm-1"]
    said = {f.test["group"]: f.said for f in cleared.failures}
    assert said == {
        "r0-screen-0": "explained by n3 (faulty)",
        "r1-link-0": "explained by the link fault c0 ↔ c1",  # across the named link
        "r2-split-0": "explained by n2 (named by its log)",  # its log's culprits come first: no link, no partner
        "r3-recheck-0": "not held: outweighed by 2 passes",  # nothing explains it
    }
    assert cleared.of_test("r1-link-0") is not None and cleared.of_test("r1-confirm-0") is None


def test_a_failure_a_convicted_partner_and_a_link_both_explain_names_both() -> None:
    four, five = clearance(_state(), "n4"), clearance(_state(), "n5")
    assert four is not None and five is not None
    assert [f.said for f in four.failures] == ["explained by the link fault c0 ↔ c1", "explained by n6 (intermittent)"]
    assert [f.said for f in five.failures] == ["explained by n3 (faulty) and the link fault c0 ↔ c1"]


def test_only_a_cleared_node_has_a_clearance() -> None:
    state = _state()
    assert clearance(state, "n3") is None and clearance(state, "n6") is None and clearance(state, "n9") is None
    assert clearance(_state(healthy=[]), "n1") is None  # not cleared yet: a diagnosis under way


def test_a_link_fault_is_named_as_the_failures_pane_names_it() -> None:
    assert link_words(["clique-0", "clique-1"]) == "clique-0 ↔ clique-1"
    assert link_words(["clique-3"]) == "uplink of clique-3"
    assert link_words(["a", "b", "c"]) == "links between 3 cliques"
