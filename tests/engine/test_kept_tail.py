"""The tail a failed run's Job kept, as `certification logs` and the console's log pane head it (report.logtail.kept_tail)."""

from __future__ import annotations

from nvcre_tui.engine.report.logtail import kept_tail


def _job(node: str | None) -> dict[str, object]:
    return {"status": {"failureLog": {"podName": "g-run-launcher", "nodeName": node, "reason": "ThresholdViolated",
                                      "tail": "row 1\nrow 2", "exitCode": 0}}}


def test_a_tail_of_a_group_blamed_whole_names_no_node_rather_than_a_question_mark() -> None:
    """An on-call walkthrough read `==> ...: the last 10 lines the engine kept (Job failureLog, pod g-run-launcher on ?,
    exit 0)` of a 3-node group below its threshold: the `?` is no node. The report's `Log: pod ...` line leaves it out."""
    assert kept_tail(_job(None))[0] == "==> the run's pods are gone: the last 2 lines the engine kept (Job failureLog, pod g-run-launcher, exit 0)"
    assert kept_tail(_job("gpu-node-03"))[0].endswith("(Job failureLog, pod g-run-launcher on gpu-node-03, exit 0)")
