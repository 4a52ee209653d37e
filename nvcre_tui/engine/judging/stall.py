"""A running training that stopped making progress: NVCRE's WorkloadStalled, judged from its log while it runs.

Stalled when (stallMultiplier set on the Job, as the catalog sets it for training):
- no training step is logged within startupStallTimeoutSeconds of the run's start (or of a restart of the application);
- or none for stallMultiplier x the average step time x the log interval since the last sign of progress (a step, a
  checkpoint event, a restart), but never less than FLOOR_SECONDS: kubelet's clock (the log's times) and the
  engine's may differ by a little, and a log is flushed in bursts.
Not judged: a checkpoint save in progress (a large model's save takes minutes) or a run past its last step (exiting),
both bounded by timeoutPerJob; a gap whose times are unknown (a log without kubelet timestamps). While only warm-up steps are logged, their average step time
stands in (slower: a longer limit). An NCCL hang inside a collective ends sooner, by the framework's
own distributed timeout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.api.vocabulary import WORKLOAD_STALLED
from nvcre_tui.engine.parsers import ParseError
from nvcre_tui.engine.parsers.training import TrainingResult, parse_training
from nvcre_tui.engine.units import format_duration

FLOOR_SECONDS = 180.0
LOOK_SECONDS = 60.0  # the least time between two looks at a running training's log
MOST_LOOK_SECONDS = 300.0  # and the most: steps that begin after a look are judged from their start


@dataclass(frozen=True)
class Standing:
    """Where a running training stands: why it counts as stalled (None: progressing) and when to look again."""

    stalled: str | None
    look_again: float


def standing(lines: Sequence[str], now: datetime, started: datetime, *, multiplier: int, startup_seconds: float) -> Standing:
    """Judge a running training's log at `now` (the engine's clock); `started`: when its run started running."""
    try:
        result = parse_training(lines)
    except ParseError:  # no step logged yet
        return _starting(now, started, startup_seconds, "since the run started")
    if result.resuming_since is not None and result.resuming_since.tzinfo is not None:
        return _starting(now, result.resuming_since, startup_seconds, "since the application restarted")
    if result.total_steps is not None and result.last_step >= result.total_steps:
        return Standing(None, MOST_LOOK_SECONDS)  # trained to its end: exiting (teardown, a last save)
    last = result.last_progress_time
    step_time = _step_time(result)
    if result.saving or step_time is None or last is None or last.tzinfo is None:
        return Standing(None, MOST_LOOK_SECONDS)
    limit = max(FLOOR_SECONDS, multiplier * step_time * result.log_interval)
    since = (now - last).total_seconds()
    if since <= limit:
        return Standing(None, _next_look(limit - since))
    return Standing(f"no training progress for {format_duration(since)} after step {result.last_step}"
                    f"{f'/{result.total_steps}' if result.total_steps else ''} (stall limit {format_duration(limit)}: "
                    f"stallMultiplier {multiplier} x average step time {step_time:.3g} s x log interval "
                    f"{result.log_interval})", LOOK_SECONDS)


def _step_time(result: TrainingResult) -> float | None:
    """The average step time past warm-up; while only warm-up steps are logged, theirs (slower: a longer limit)."""
    if result.avg_step_time_sec is not None:
        return result.avg_step_time_sec
    times = [step.step_time_sec for step in result.recent_steps if step.step_time_sec > 0]
    return sum(times) / len(times) if times else None


def _next_look(seconds: float) -> float:
    return min(MOST_LOOK_SECONDS, max(LOOK_SECONDS, seconds))


def _starting(now: datetime, since: datetime, startup_seconds: float, what: str) -> Standing:
    waited = (now - since).total_seconds()
    if waited < startup_seconds:
        return Standing(None, _next_look(startup_seconds - waited))
    return Standing(f"no training step logged in {format_duration(waited)} {what} (startupStallTimeoutSeconds "
                    f"{startup_seconds:g})", LOOK_SECONDS)


__all__ = ["WORKLOAD_STALLED", "Standing", "standing"]
