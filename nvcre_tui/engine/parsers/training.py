"""Megatron-LM and NeMo 2 training logs -> step time, TFLOP/s per GPU, goodput (NVCRE GoodputMeasurement).

Streaming: running sums plus the last 100 steps, so memory does not grow with the log. Every logged
step is kept, whatever the log interval. Warmup follows NVCRE by step count: after an application
start or a checkpoint restore (or from the first step, when the log begins with training), steps
below the first logged step + warmupSteps are warmup; a window cut from a running log has none.
Times without a zone stay naive (the cluster's local time); an interval between a naive and an aware
time is unknown, never guessed. How the log ends (training_ending) makes the result `incomplete` when it
stops short of its total or shows an error after its last step; NaN loss is a failure (LossNaN); a step
line with an unreadable cell or step number, or past its total, is left out and named in `notes()`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from datetime import datetime

from nvcre_tui.engine.parsers.base import NO_DATA, PAST_FLOAT, WRONG_FORMAT, ParseError, as_lines, reading
from nvcre_tui.engine.parsers.training_ending import Ending
from nvcre_tui.engine.parsers.training_lines import (CheckpointDone, CheckpointSave, ErrorLine, Event, Exit, LogInterval, Restore,
                                                    Start, Step, UnreadableStep, UntimedStep, joined_records, recognise)
from nvcre_tui.engine.parsers.training_model import (
    PROFILES,
    Goodput,
    TrainingProfile,
    TrainingResult,
    TrainingStep,
    goodput_ratio,
)

__all__ = ["NO_VALID_STEPS", "PROFILES", "Goodput", "TrainingProfile", "TrainingResult", "TrainingStep", "parse_training"]

RECENT_STEPS = 100
NO_VALID_STEPS = "no valid training step lines"  # how a log whose every step line was refused begins its ParseError
# What lets a run stopped on its framework's own limit log steps: the category option, or NeMo's own setting.
LIMIT_OPTION = {"Megatron": "exitDurationMins", "NeMo": "max_time"}


def _seconds(later: datetime | None, earlier: datetime | None) -> float:
    """Non-negative seconds between two times; 0 when either is unknown or one has a zone and the other not."""
    if later is None or earlier is None or (later.tzinfo is None) != (earlier.tzinfo is None):
        return 0.0
    return max(0.0, (later - earlier).total_seconds())


def _latest(first: datetime | None, second: datetime | None) -> datetime | None:
    if first is None or second is None or (first.tzinfo is None) != (second.tzinfo is None):
        return first or second
    return max(first, second)


def _earliest(first: datetime | None, second: datetime) -> datetime:
    if first is None or (first.tzinfo is None) != (second.tzinfo is None):
        return first or second
    return min(first, second)


class _Tracker:
    """Folds events into running totals; one instance per parse."""

    def __init__(self, profile: TrainingProfile | None) -> None:
        self.profile = profile
        self.recent: deque[TrainingStep] = deque(maxlen=RECENT_STEPS)
        self.steps = self.warmups = 0
        self.first_step: int | None = None
        self.last_step = 0
        self.total: int | None = None
        self.tflops_sum = self.step_time_sum = 0.0
        self.tflops_n = self.step_time_n = 0
        self.final_loss: float | None = None
        self.world_size: int | None = None
        self.first_start: datetime | None = None
        self.explicit_start = False
        self.warmup_anchor: int | None = None  # set by the first step after a (re)start or restore
        self.anchor_pending = True  # the next step anchors warmup (log start, a start or a restore seen)
        self.interval: int | None = None  # the smallest step gap seen: the run's log interval
        self.segment_steps = 0
        self.segment_first_step: datetime | None = None
        self.segment_last: datetime | None = None  # last step/checkpoint time of the running process
        self.restart_at: datetime | None = None  # a restart still waiting for its first step
        self.last_step_time: datetime | None = None
        self.pending_save: tuple[int, datetime | None] | None = None
        self.checkpoints = 0
        self.last_checkpoint_step: int | None = None
        self.last_checkpoint_time: datetime | None = None
        self.t_save = self.t_lost = self.t_resume = self.t_reschedule = 0.0
        self.interruptions = self.restores = 0
        self.ending = Ending()
        self.untimed: tuple[int, int] | None = None  # (line, step) of the first NeMo step line without a step time
        self.untimed_last = 0  # the highest step such a line reached

    def handle(self, event: Event, line_time: datetime | None, number: int) -> None:
        if isinstance(event, ErrorLine):
            self.ending.error(event, number)
            return
        if isinstance(event, Exit):
            self.ending.exit = event
            return
        if isinstance(event, LogInterval):
            self.ending.log_interval = event.steps
            return
        if isinstance(event, UnreadableStep):
            self.ending.unreadable(event, number)
            return
        if isinstance(event, UntimedStep):
            self.untimed = self.untimed or (number, event.step)
            self.untimed_last = max(self.untimed_last, event.step)
            return
        # The kubelet time (aware) when there is one, so that every interval compares like with like;
        # else the line's own time (naive when the framework prints no zone).
        when = line_time or event.timestamp
        if isinstance(event, Step):
            if self.ending.step(event, number) is None:
                self._step(event, when, event.timestamp or line_time)
        elif isinstance(event, Start):
            self._start(event, when)
        elif isinstance(event, Restore):
            self.restores += 1
            self.warmup_anchor, self.anchor_pending = None, True
        elif isinstance(event, CheckpointSave):
            self._save(event, when)
        else:
            self._done(event, when)

    def _start(self, event: Start, when: datetime | None) -> None:
        if not event.explicit:
            # A NeMo log line before any step stands in for the start when no explicit one is printed.
            if self.steps == 0 and self.first_start is None:
                self.first_start = when
            return
        self.ending.restart()
        if self.segment_steps > 0:
            self.interruptions += 1
            anchor = _latest(self.last_checkpoint_time, self.segment_first_step)
            self.t_lost += _seconds(self.segment_last, anchor)
            self.t_reschedule += _seconds(when, self.segment_last)
            self.restart_at = when
        if self.steps == 0 and when is not None:
            self.first_start = _earliest(self.first_start, when)
        self.explicit_start = True
        self.world_size = event.world_size or self.world_size
        self.segment_steps, self.segment_first_step, self.warmup_anchor, self.pending_save = 0, None, None, None
        self.anchor_pending = True

    def _step(self, event: Step, when: datetime | None, shown: datetime | None) -> None:
        if self.profile is None:
            self.profile = PROFILES[event.framework]
        if self.recent and event.step == self.recent[-1].step and not self.anchor_pending:
            return  # a progress bar redrawn with the same step
        if self.steps and event.step > self.last_step:
            gap = event.step - self.last_step
            self.interval = gap if self.interval is None else min(self.interval, gap)
        if self.anchor_pending:
            self.anchor_pending = False
            # At the log's start only when it begins with training; a window of a running log has no warmup.
            if self.steps or self.explicit_start or self.restores or event.step <= self.profile.warmup_steps:
                self.warmup_anchor = event.step
        warmup = self.warmup_anchor is not None and event.step < self.warmup_anchor + self.profile.warmup_steps
        self.steps += 1
        self.warmups += warmup
        if event.tflops and not warmup:  # a warm-up step's TFLOP/s counts start-up (compilation, allocation)
            self.tflops_sum += event.tflops
            self.tflops_n += 1
        if not warmup:
            self.step_time_sum += event.step_time_sec
            self.step_time_n += 1
        if self.restart_at is not None and when is not None:
            self.t_resume += _seconds(when, self.restart_at)
            self.restart_at = None
        self.segment_steps += 1
        self.segment_first_step = self.segment_first_step or when
        self.segment_last = when or self.segment_last
        self.last_step_time = when or self.last_step_time
        self.first_step = event.step if self.first_step is None else self.first_step
        self.last_step = event.step
        self.total = event.total if event.total is not None else self.total
        self.final_loss = event.loss if event.loss is not None else self.final_loss
        self.recent.append(TrainingStep(event.step, event.step_time_sec, event.tflops, event.loss, shown, warmup))

    def _save(self, event: CheckpointSave, when: datetime | None) -> None:
        self.segment_last = when or self.segment_last
        if event.duration_sec is None:
            self.pending_save = (event.step, when)
            return
        self.t_save += event.duration_sec
        self._checkpointed(event.step, when)

    def _done(self, event: CheckpointDone, when: datetime | None) -> None:
        self.segment_last = when or self.segment_last
        if self.pending_save is not None and self.pending_save[0] == event.step:
            self.t_save += _seconds(when, self.pending_save[1])
            self.pending_save = None
        elif self.last_checkpoint_step == event.step:
            # An async save finishing later: the checkpoint is durable now, it is not a second one.
            self.last_checkpoint_time = when or self.last_checkpoint_time
            return
        self._checkpointed(event.step, when)

    def _checkpointed(self, step: int, when: datetime | None) -> None:
        self.checkpoints += 1
        self.last_checkpoint_step = step
        self.last_checkpoint_time = when or self.last_checkpoint_time

    def result(self) -> TrainingResult:
        if self.steps == 0 or self.profile is None or self.first_step is None:
            skipped, error = self.ending.skipped_note(), self.ending.in_segment
            stop = self.ending.exit
            shows = f"; the log shows: {error[1]} (line {error[0]})" if error else \
                f"; {stop.framework} stopped on its own limit first ({stop.text}): a longer {LIMIT_OPTION[stop.framework]} lets it " \
                "log steps" if stop else ""
            if skipped:  # every step line was refused: no measurement, never a pass
                raise ParseError(NO_DATA, f"{NO_VALID_STEPS}: {skipped}{shows}")
            if self.untimed is not None:
                line, first = self.untimed
                steps = f"global step {first}" if first == self.untimed_last else f"global steps {first} to {self.untimed_last}"
                raise ParseError(NO_DATA, f"NeMo step lines ({steps}, from line {line}) print no step time (no "
                                          f"'train_step_timing in s', which NeMo prints when its step timing is on): "
                                          f"nothing was measured{shows}")
            raise ParseError(NO_DATA, f"no Megatron-LM or NeMo training step lines found{shows}")
        for what, total in (("TFLOP/s", self.tflops_sum), ("step times", self.step_time_sum)):
            if not math.isfinite(total):
                raise ParseError(NO_DATA, f"{NO_VALID_STEPS}: the steps' {what} {PAST_FLOAT}")
        goodput = None
        start, end = self.first_start, self.last_step_time
        # Warm-up steps alone time start-up, not training: their share of wall time would read 1.00 for a run that
        # measured nothing (no measurement is never a perfect number); notes() says why it is absent.
        measured = self.warmups < self.steps
        if measured and start is not None and end is not None and (start.tzinfo is None) == (end.tzinfo is None):
            t_w = _seconds(self.last_step_time, self.first_start)
            ratio = goodput_ratio(t_w, self.t_lost, self.t_resume, self.t_reschedule, self.t_save)
            goodput = Goodput(ratio, t_w, self.t_lost, self.t_resume, self.t_reschedule, self.t_save)
        return TrainingResult(
            framework=self.profile.name,
            warmup_steps=self.profile.warmup_steps,
            log_interval=self.interval or self.profile.log_interval,
            step_count=self.steps,
            warmup_step_count=self.warmups,
            first_step=self.first_step,
            last_step=self.last_step,
            total_steps=self.total,
            world_size=self.world_size,
            application_start_time=self.first_start,
            last_step_time=self.last_step_time,
            recent_steps=tuple(self.recent),
            avg_tflops_per_gpu=self.tflops_sum / self.tflops_n if self.tflops_n else None,
            avg_step_time_sec=self.step_time_sum / self.step_time_n if self.step_time_n else None,
            final_loss=self.final_loss,
            checkpoints_saved=self.checkpoints,
            last_checkpoint_step=self.last_checkpoint_step,
            last_checkpoint_time=self.last_checkpoint_time,
            interruptions=self.interruptions,
            restores=self.restores,
            goodput=goodput,
            failure=self.ending.failure(),
            skipped_count=self.ending.skipped,
            skipped_steps=tuple(self.ending.skipped_steps),
            incomplete=self.ending.incomplete(self.interval or self.profile.log_interval),
            stopped_short=self.ending.short(self.interval or self.profile.log_interval),
            remarks=self.ending.remarks(),
            last_progress_time=_latest(self.segment_last, self.restart_at),
            resuming_since=self.restart_at,
            saving=self.pending_save is not None,
        )


def parse_training(source: Iterable[str] | str, *, profile: str | None = None) -> TrainingResult:
    """Parse a training pod log from lines (or one text).

    `profile` ("megatron" or "nemo") fixes warmup and log interval; by default the first step line
    decides. Raises ParseError(NoDataCollected) when no step line is found.
    """
    if profile is not None and profile not in PROFILES:
        raise ParseError(WRONG_FORMAT, f"unknown training profile {profile!r} (known: {', '.join(PROFILES)})")
    tracker = _Tracker(PROFILES[profile] if profile else None)
    with reading():
        for number, line_time, record in joined_records(as_lines(source)):
            for piece in record.split("\r"):  # Lightning progress bars rewrite one line with carriage returns
                event = recognise(piece)
                if event is not None:
                    tracker.handle(event, line_time, number)
    return tracker.result()
