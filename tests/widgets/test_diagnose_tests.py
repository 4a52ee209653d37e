"""The tests that cleared a node are listed indented under their heading, as the tests that decided a verdict are:
they started at the pane's left edge (the text was stripped after its indent was added), and read as lines of their own
beside the labels above them."""

from __future__ import annotations

from rich.text import Text

from nvcre_tui.engine.diagnose.clearance import Clearance, Explained
from nvcre_tui.widgets.diagnose_tests import clearance_text


def test_the_tests_that_cleared_a_node_are_indented_under_their_heading() -> None:
    passed = {"group": "r0-screen-0", "stage": "screening", "nodes": ["gpu-node-01", "gpu-node-02"], "passed": True, "value": 401.99}
    failed = {"group": "r2-link-0", "stage": "link", "nodes": ["gpu-node-01", "gpu-node-14"], "passed": False, "value": 185.22}
    cleared = Clearance("gpu-node-01", (passed,), (Explained(failed, ("the link fault clique-0 ↔ clique-1",), 1),))
    text = Text()
    clearance_text(text, cleared, "value >= 300")
    lines = text.plain.splitlines()
    assert lines[0] == "Tests that cleared it:"
    assert lines[1] == "  ✓ r0-screen-0 (screening) with gpu-node-02  401.99 GB/s", lines
    assert lines[2] == "  ✗ r2-link-0 (link) with gpu-node-14  185.22 GB/s: explained by the link fault clique-0 ↔ clique-1", lines


def test_a_test_a_hardware_check_failed_on_a_partner_says_whose_it_was() -> None:
    """`✗ r1-confirm-1 (confirmation) with gpu-node-05  HardwareFailureDetected` under gpu-node-02's verdict read as
    gpu-node-02's hardware fault: the node health check had flagged gpu-node-05."""
    from nvcre_tui.widgets.diagnose_tests import tested_line

    test = {"group": "r1-confirm-1", "stage": "confirmation", "nodes": ["gpu-node-02", "gpu-node-05"], "passed": False,
            "reason": "HardwareFailureDetected", "hardware": ["gpu-node-05"]}
    assert tested_line(test, "gpu-node-02") == "✗ r1-confirm-1 (confirmation) with gpu-node-05  HardwareFailureDetected on gpu-node-05"
    assert tested_line(test, "gpu-node-05") == "✗ r1-confirm-1 (confirmation) with gpu-node-02  HardwareFailureDetected"


def test_a_test_that_ran_nothing_is_not_shown_as_a_failure() -> None:
    """A test recorded untested (its partner cordoned before its workload started: passed null) read
    `✗ r2-inter-0 (inter) with gpu-node-05` under gpu-node-01's verdict, a failure with no reason."""
    from nvcre_tui.widgets.diagnose_tests import tested_line

    test = {"group": "r2-inter-0", "stage": "inter", "nodes": ["gpu-node-01", "gpu-node-05"], "passed": None, "reason": "CordonedBeforeStart"}
    assert tested_line(test, "gpu-node-01") == "– r2-inter-0 (inter) with gpu-node-05  CordonedBeforeStart: ran nothing, no evidence"
