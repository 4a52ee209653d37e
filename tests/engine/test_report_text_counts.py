"""The text report's `... and N more` lines under a category's lists capped at MAX_GROUP_ROWS (report/text.py)."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.report.text import MAX_GROUP_ROWS, _category_rows


def _failed(n: int) -> dict[str, Any]:
    """A category whose `n` groups each failed below its threshold."""
    groups = [f"r0-link-{i}" for i in range(n)]
    return {"status": "Failed", "thresholds": {"busBandwidthGBps": "value >= 300"},
            "failedGroups": [{"name": g, "nodeCount": 2, "nodes": ["a", "b"], "reason": "ThresholdViolated", "failedNodes": []}
                             for g in groups],
            "groupBandwidth": [{"groupName": g, "nodes": ["a", "b"], "busBW": 184.0, "belowMin": True, "failed": True,
                                "reason": "ThresholdViolated"} for g in groups]}


def test_one_more_is_said_in_the_singular() -> None:
    """An on-call walkthrough's report of 13 failed tests ended its lists `... and 1 more failed groups` and `... and 1
    more groups (the JSON report lists them all)`."""
    rows = _category_rows(_failed(MAX_GROUP_ROWS + 1))
    assert "  ... and 1 more failed group" in rows, rows
    assert "  ... and 1 more group (the JSON report lists them all)" in rows, rows
    rows = _category_rows(_failed(MAX_GROUP_ROWS + 2))
    assert "  ... and 2 more failed groups" in rows and "  ... and 2 more groups (the JSON report lists them all)" in rows, rows
