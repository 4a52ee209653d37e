"""`kubectl get` shows the first True condition as an object's Status: conditions are kept with the phase first."""

from __future__ import annotations

from nvcre_tui.engine.api.crd import STATUS_COLUMN
from nvcre_tui.engine.controllers import conditions as cond

NOW = "2026-01-01T00:00:00Z"


def shown_status(conditions: list[dict[str, str]]) -> str:
    """What the Status column's JSONPath (the first True condition's type) picks."""
    assert STATUS_COLUMN["jsonPath"] == '.status.conditions[?(@.status=="True")].type'
    return next(c["type"] for c in conditions if c["status"] == "True")


def test_a_failed_batch_fallback_run_shows_failed_not_batch_fallback() -> None:
    conditions = cond.with_condition(cond.with_phase([], "Failed", "WorkloadNotStarted", "m", NOW), "BatchFallback", True, "TrainerNotServed", "m", NOW)
    assert shown_status(conditions) == "Failed"
    running = cond.with_phase(conditions, "InProgress", "Running", "m", NOW)
    assert shown_status(running) == "InProgress"


def test_a_job_that_missed_its_threshold_shows_validation_failed() -> None:
    conditions = cond.with_condition(cond.with_phase([], "Succeeded", "Completed", "m", NOW), "ValidationFailed", True, "ThresholdViolated", "m", NOW)
    assert shown_status(conditions) == "ValidationFailed"
