"""A running training that stopped making progress: NVCRE's WorkloadStalled, judged from its log while it runs.

Stalled when (stallMultiplier set on the Job, as the catalog sets it for training):
- no training step is logged within startupStallTimeoutSeconds of the engine's first look at the running run (or
  of the restart of its application);
- or its progress (the last step, checkpoint event or restart the log shows) has not changed for stallMultiplier x
  the average step time x the log interval, and never less than FLOOR_SECONDS (a log is flushed in bursts).
Time is the engine's own: when it first saw the progress it sees now (`Progress`), never the log's kubelet times
against the engine's clock (the two machines' clocks may differ by minutes). So a stall is seen one look late at
most. The Job's status keeps what was seen and when (`trainingProgress`): an engine that restarts, or takes the Lease
over, goes on from there rather than starting the clock again (engines' clocks agree as closely as the Lease needs).
Not judged (timeoutPerJob bounds them): a log that could not be read or holds nothing yet, step lines the parser
cannot read (a format it does not know convicts no hardware), a checkpoint save in progress (a large model's save
takes minutes), a run past its last step (exiting). While only warm-up steps are logged, their average step time
stands in (slower: a longer limit). An NCCL hang inside a collective ends sooner, by the framework's own
distributed timeout. Only the last TAIL_LINES of the log are read at each look.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.parsers import ParseError
from nvcre_tui.engine.parsers.training import NO_VALID_STEPS, TrainingResult, parse_training
from nvcre_tui.engine.units import format_duration

FLOOR_SECONDS = 180.0
LOOK_SECONDS = 60.0  # the least time between two looks at a running training's log
MOST_LOOK_SECONDS = 300.0  # and the most
TAIL_LINES = 5_000  # what a look parses: the progress is at the log's end, and a look costs the same all run long


@dataclass
class Progress:
    """What the engine last saw of a run's progress, and when (its own clock) it first saw it."""

    mark: str | None  # what the log shows of its progress (`progress_mark`); None: no step logged yet
    since: datetime


@dataclass(frozen=True)
class Standing:
    """Where a running training stands: why it counts as stalled (None: progressing) and when to look again."""

    stalled: str | None
    look_again: float


def standing(lines: Sequence[str], now: datetime, seen: Progress, *, multiplier: int, startup_seconds: float) -> Standing:
    """Judge a running training's log at `now` (the engine's clock) against what was `seen` before, which this
    updates; `seen` starts as Progress(None, first look)."""
    if not lines:
        return Standing(None, MOST_LOOK_SECONDS)  # unreadable, or nothing printed yet: nothing to judge
    try:
        result = parse_training(lines[-TAIL_LINES:])
    except ParseError as error:
        if error.message.startswith(NO_VALID_STEPS):
            return Standing(None, MOST_LOOK_SECONDS)  # steps this parser cannot read: not the hardware's doing
        return _starting(now, seen, startup_seconds, "since the run started")  # no step logged yet
    mark = progress_mark(result)
    if mark != seen.mark:
        seen.mark, seen.since = mark, now
    if result.resuming_since is not None:
        return _starting(now, seen, startup_seconds, "since the application restarted")
    if result.saving or (result.total_steps is not None and result.last_step >= result.total_steps):
        return Standing(None, MOST_LOOK_SECONDS)  # saving a checkpoint, or trained to its end and exiting
    step_time = _step_time(result)
    if step_time is None:
        return Standing(None, MOST_LOOK_SECONDS)
    limit = max(FLOOR_SECONDS, multiplier * step_time * result.log_interval)
    since = (now - seen.since).total_seconds()
    if since <= limit:
        return Standing(None, _next_look(limit - since))
    product = multiplier * step_time * result.log_interval
    # The limit as it came about: the product, or the floor where the product is below it ("3 x 2.9 s x 10 = 87 s"
    # beside a 3-minute limit read as wrong arithmetic).
    why = (f"stallMultiplier {multiplier} x average step time {step_time:.3g} s x log interval {result.log_interval}"
           + (f" = {format_duration(product)}, below the {format_duration(FLOOR_SECONDS)} floor" if product < FLOOR_SECONDS else ""))
    return Standing(f"no training progress for {format_duration(since)} after step {result.last_step}"
                    f"{f'/{result.total_steps}' if result.total_steps else ''} (stall limit {format_duration(limit)}: {why})",
                    LOOK_SECONDS)


def progress_mark(result: TrainingResult) -> str:
    """The progress a log shows, as text the Job's status keeps: its last step, when it last moved (a step, a
    checkpoint event, a restart), a restart still waiting for its first step, a save under way."""
    moved = result.last_progress_time.isoformat() if result.last_progress_time else "-"
    resuming = f" resuming since {result.resuming_since.isoformat()}" if result.resuming_since else ""
    return f"step {result.last_step} at {moved}{resuming}{' saving' if result.saving else ''}"


def _step_time(result: TrainingResult) -> float | None:
    """The average step time past warm-up, or the latest steps' when slower (a slowing run is not a stalled one);
    while only warm-up steps are logged, theirs (slower still: a longer limit)."""
    timed = [step for step in result.recent_steps if step.step_time_sec > 0]
    if result.avg_step_time_sec is None:
        return sum(step.step_time_sec for step in timed) / len(timed) if timed else None
    recent = [step.step_time_sec for step in timed if not step.warmup][-3:]
    return max(result.avg_step_time_sec, sum(recent) / len(recent) if recent else 0.0)


def _starting(now: datetime, seen: Progress, startup_seconds: float, what: str) -> Standing:
    waited = (now - seen.since).total_seconds()
    if waited < startup_seconds:
        return Standing(None, _next_look(startup_seconds - waited))
    return Standing(f"no training step logged in {format_duration(waited)} {what} (startupStallTimeoutSeconds "
                    f"{startup_seconds:g})", LOOK_SECONDS)


def _next_look(seconds: float) -> float:
    return min(MOST_LOOK_SECONDS, max(LOOK_SECONDS, seconds))


__all__ = ["FLOOR_SECONDS", "Progress", "Standing", "progress_mark", "standing"]
