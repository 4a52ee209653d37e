"""A diagnosis's verdict on a node as the console marks it: where a category diagnosed, a node's rows (the drill-down's
group members, the node screen's Jobs) show its verdict, not the blame of one test the diagnosis did not uphold (a
screening group that missed the threshold blames every member; the diagnosis may clear them all)."""

from __future__ import annotations

import re

from nvcre_tui.engine.api.vocabulary import UNDER_SUSPICION, WORKLOAD_FAILED, NodeState
from nvcre_tui.engine.diagnose import VERDICT_PREFIX

VERDICT_MARKS: dict[str, tuple[NodeState, str]] = {  # verdict -> (the state whose glyph marks it, the word shown)
    "healthy": (NodeState.PASSED, "cleared"),
    "faulty": (NodeState.FAILED, "faulty"),
    "intermittent": (NodeState.FAILED, "intermittent"),
    "inconclusive": (NodeState.INCONCLUSIVE, "inconclusive"),
    # Held suspect while the diagnosis tests it: a node NCCL named in a failed test is no more convicted than a
    # member of a group that missed the threshold (it showed ✗ failed, then the diagnosis cleared it).
    # Said in the words of the dashboard and the wall: their `suspect` is a node blamed with its whole group.
    "suspect": (NodeState.SUSPECT, UNDER_SUSPICION),
}


def verdict_mark(verdict: str | None) -> tuple[NodeState, str] | None:
    """(state, word) of a diagnosis's verdict; None when it has none for the node (untested: the Job's own blame
    stands) or did not diagnose."""
    return VERDICT_MARKS.get(verdict or "")


# What a verdict on a member of a failed test says of that failure ({what}: "test" or "Job").
_VERDICT_NOTES = {
    NodeState.PASSED: " (healthy): this {what}'s failure is not held against it",
    NodeState.SUSPECT: ": under test; this {what}'s failure alone convicts it of nothing yet",
}


def verdict_said(shown: tuple[NodeState, str], what: str = "test") -> str:
    """"✓ cleared (healthy): this test's failure is not held against it", "! under suspicion: under test; ...", "✗ faulty"."""
    return f"{shown[0].glyph} {shown[1]}" + _VERDICT_NOTES.get(shown[0], "").format(what=what)


# A diagnosis's conviction as its message begins (diagnose.verdict_message): "diagnose: intermittent, failed 4 of 5 tests (...".
_CONVICTION = re.compile(rf"{re.escape(VERDICT_PREFIX)}(\w+), (failed \d+ of \d+ tests?)")


def conviction_said(message: str) -> str | None:
    """"intermittent, failed 4 of 5 tests" from a diagnosis's conviction message (a blamed node's); None from any other
    message. Where no measured value failed (a flaky node crashes its tests), the failures pane and the wall say this."""
    found = _CONVICTION.match(message)
    return f"{found.group(1)}, {found.group(2)}" if found else None


# A conviction and its record, as the engine writes it before the failed workload's own message: "diagnose: intermittent,
# failed 3 of 5 tests (r0-screen-5 WorkloadFailed, r1-inter-0 at 185.78 (link fault)); passed at 408.20, 402.59".
_VERDICT_WHOLE = re.compile(rf"{re.escape(VERDICT_PREFIX)}\w+, failed \d+ of \d+ tests?(?: \((?:[^()]|\([^()]*\))*\))?(?:; passed at [^;]*)?")
_ALSO = re.compile(r" \(also [^()]*\)$")  # the other categories that marked the node the same (nodestates.resolve)


def verdict_only(detail: str) -> str:
    """A node's detail cut after a diagnosis's verdict and record where it convicted the node for crashing its tests
    (WorkloadFailed): what follows is the failed workload's message, a tool's raw output (an NCCL WARN line, a peer's
    address, an exit code), which the node screen's log pane shows. Any other detail as it is (a threshold violation's
    message says the threshold)."""
    also = _ALSO.search(detail)
    body = detail[: also.start()] if also else detail
    found = _VERDICT_WHOLE.search(body)
    if found is None or found.end() == len(body) or not body[: found.start()].endswith(f"{WORKLOAD_FAILED}: "):
        return detail
    return body[: found.end()].rstrip() + (also.group(0) if also else "")
