"""A diagnosis's verdict on a node as the console marks it: where a category diagnosed, a node's rows (the drill-down's
group members, the node screen's Jobs) show its verdict, not the blame of one test the diagnosis did not uphold (a
screening group that missed the threshold blames every member; the diagnosis may clear them all)."""

from __future__ import annotations

from nvcre_tui.engine.api.vocabulary import NodeState

VERDICT_MARKS: dict[str, tuple[NodeState, str]] = {  # verdict -> (the state whose glyph marks it, the word shown)
    "healthy": (NodeState.PASSED, "cleared"),
    "faulty": (NodeState.FAILED, "faulty"),
    "intermittent": (NodeState.FAILED, "intermittent"),
    "inconclusive": (NodeState.INCONCLUSIVE, "inconclusive"),
}


def verdict_mark(verdict: str | None) -> tuple[NodeState, str] | None:
    """(state, word) of a diagnosis's verdict; None when it has none for the node yet (suspect, untested: the Job's
    own blame stands) or did not diagnose."""
    return VERDICT_MARKS.get(verdict or "")
