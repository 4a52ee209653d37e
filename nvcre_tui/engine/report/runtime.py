"""A run's runtime, one rule for every view: the drill-down's Job detail, the logs pane's header, the node screen,
and the time a running certification has left (views.eta).

A Job's run ran from its workload's start (status.workloadStartTime: its pods started) to the Job's completionTime, or
until now while it runs. Now is the reader's clock; a start ahead of it was stamped on another clock (a --sim-runner
engine's simulated time, read without --sim-runner): such a run has run the API server's time since its Job was
created (`stamped_now`, session.store_now), as the dashboard counts a certification's runtime then
(model.waited_and_ran_so_far). The drill-down said `0s (running)` of a run the dashboard counted minutes of."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nvcre_tui.engine.api.bodies import job_status
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.units import format_duration

RUNNING = "running"


def run_seconds(job: Mapping[str, Any], now: datetime | None, stamped_now: datetime | None = None) -> float | None:
    """How long the Job's run ran (or has run, to `now`), in seconds; None before its workload started, or while it
    runs when no `now` is given, or when its times are unreadable."""
    status = job_status(dict(job))
    try:
        start = parse_time(status.get("workloadStartTime"))
    except (TypeError, ValueError):
        return None
    try:
        return max((parse_time(status.get("completionTime")) - start).total_seconds(), 0.0)
    except (TypeError, ValueError):
        pass  # running
    if now is None:
        return None
    if start <= now:
        return (now - start).total_seconds()
    try:  # stamped on a clock ahead of this reader's: the server's time since the Job was made
        made = parse_time((job.get("metadata") or {}).get("creationTimestamp"))
    except (TypeError, ValueError):
        return 0.0
    return max(((stamped_now or now) - made).total_seconds(), 0.0)


def run_runtime(job: Mapping[str, Any], now: datetime | None, stamped_now: datetime | None = None) -> str:
    """The Job's run's runtime as every view says it: `6m14s`, `2m00s (running)`, `-` before its workload started."""
    seconds = run_seconds(job, now, stamped_now)
    if seconds is None:
        return "-" if not job_status(dict(job)).get("workloadStartTime") else f"{format_duration(0)}+ ({RUNNING})"
    return format_duration(seconds) + ("" if job_status(dict(job)).get("completionTime") else f" ({RUNNING})")
