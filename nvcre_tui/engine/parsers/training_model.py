"""What a training log yields: steps, throughput, checkpoints, goodput, and where a running log stands."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from nvcre_tui.engine.parsers.base import Failure, iso
from nvcre_tui.engine.parsers.measurements import GOODPUT, STEP_TIME, TFLOPS_PER_GPU


@dataclass(frozen=True)
class TrainingProfile:
    """How a framework logs: warmup steps after a (re)start, and the step interval of its log lines."""

    name: str
    warmup_steps: int
    log_interval: int


#: NVCRE LogProfiles `megatron-training` and `nemo-4-training`.
PROFILES: dict[str, TrainingProfile] = {
    "megatron": TrainingProfile("megatron", warmup_steps=10, log_interval=10),
    "nemo": TrainingProfile("nemo", warmup_steps=1, log_interval=1),
}


@dataclass(frozen=True)
class TrainingStep:
    """One logged step."""

    step: int
    step_time_sec: float
    tflops_per_gpu: float | None
    loss: float | None
    timestamp: datetime | None
    warmup: bool


@dataclass(frozen=True)
class SkippedStep:
    """A step line left out of every average: a printed cell is unreadable, or its step is past its total."""

    step: int | None  # None when the step number itself is unreadable
    cells: str  # what is wrong, as printed: "TFLOP/s -613.0 at step 30", "iteration 40/30 (past its total)"
    where: str  # "line 9"


#: How a training note begins, in notes() and so in a run's completion message.
NOTE_PREFIX = "training: "


def describe_skipped(count: int, named: tuple[SkippedStep, ...]) -> str:
    """'1 step skipped: TFLOP/s -613.0 at step 30 (line 9)'."""
    examples = "; ".join(f"{step.cells} ({step.where})" for step in named)
    more = f" and {count - len(named)} more" if count > len(named) else ""
    return f"{count} step{'s' if count != 1 else ''} skipped: {examples}{more}"


@dataclass(frozen=True)
class Goodput:
    """The NVCRE goodput terms (seconds) and ratio = (t_w - t_ch - t_rm - t_re - t_save) / (t_w - t_re), >= 0."""

    ratio: float
    training_time_sec: float  # t_w: first application start to last step
    lost_work_sec: float  # t_ch: last checkpoint to each interruption
    resume_sec: float  # t_rm: each restart to its first step
    reschedule_sec: float  # t_re: each interruption to the next start
    checkpoint_save_sec: float  # t_save


def goodput_ratio(t_w: float, t_ch: float, t_rm: float, t_re: float, t_save: float) -> float:
    """The reference formula, clamped at 0 when the numerator is negative or the denominator is not positive."""
    numerator, denominator = t_w - t_ch - t_rm - t_re - t_save, t_w - t_re
    if numerator < 0 or denominator <= 0:
        return 0.0
    return numerator / denominator


@dataclass(frozen=True)
class TrainingResult:
    """A Megatron-LM or NeMo training log reduced to certification metrics."""

    framework: str
    warmup_steps: int
    log_interval: int  # the smallest step gap seen (the profile's value when only one step was logged)
    step_count: int  # logged steps (every one, whatever the log interval)
    warmup_step_count: int
    first_step: int
    last_step: int
    total_steps: int | None  # the "/ TOTAL" of the step lines
    world_size: int | None
    application_start_time: datetime | None
    last_step_time: datetime | None
    recent_steps: tuple[TrainingStep, ...]  # the last 100
    avg_tflops_per_gpu: float | None  # non-warmup steps with TFLOP/s > 0 (NVCRE averages warm-up in: start-up is no GPU's speed)
    avg_step_time_sec: float | None  # non-warmup steps only
    final_loss: float | None
    checkpoints_saved: int
    last_checkpoint_step: int | None
    last_checkpoint_time: datetime | None
    interruptions: int
    restores: int
    goodput: Goodput | None  # None without a timestamped application start, or with no step past warm-up
    failure: Failure | None = None  # LossNaN: iterations with NaN loss
    skipped_count: int = 0  # step lines left out: an unreadable cell, or a step past its total
    skipped_steps: tuple[SkippedStep, ...] = ()  # the first few of them
    # Why the log does not show the run finishing (stopped short of its total, or an error after its last
    # step): never a pass for `nvcre parse`; `failure` stays what the steps themselves show.
    incomplete: str | None = None
    stopped_short: bool = False  # incomplete because the last step falls short of the total (not only an error after it)
    remarks: tuple[str, ...] = ()  # other qualifiers: a stop on Megatron's own limit, no total printed
    # Where a running log stands (stall detection, engine/judging/stall.py; not part of the parsed result's output):
    last_progress_time: datetime | None = None  # the last step, checkpoint event or (re)start of the application
    resuming_since: datetime | None = None  # a restart still waiting for its first step
    saving: bool = False  # a checkpoint save started and not yet done

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def warmup_only(self) -> bool:
        """Whether every logged step is a warm-up step: the log shows no speed past warm-up."""
        return self.step_count == self.warmup_step_count

    @property
    def unmeasured(self) -> str:
        """What a log of warm-up steps only leaves unmeasured, in one phrase (`nvcre parse`'s verdict)."""
        return f"no {GOODPUT}, {TFLOPS_PER_GPU} or {STEP_TIME} measured"

    def notes(self) -> tuple[str, ...]:
        """Qualifiers of the verdict: step lines left out, named, and how the run ended when that is not plain."""
        skipped = (describe_skipped(self.skipped_count, self.skipped_steps),) if self.skipped_count else ()
        steps = "the only logged step is" if self.step_count == 1 else f"all {self.step_count} logged steps are"
        first = f"the first {self.warmup_steps} steps" if self.warmup_steps != 1 else "the first step"
        warmup = (f"{steps} warm-up ({first} of a run): {self.unmeasured} (log steps past "
                  "warm-up: a larger maxSteps)",) if self.warmup_only else ()
        return tuple(f"{NOTE_PREFIX}{note}" for note in (*skipped, *warmup, *self.remarks))

    def measurements(self) -> dict[str, float]:
        """Threshold metrics this log yields (only those it could measure). TFLOP/s and the step time count no warm-up
        step (NVCRE averages warm-up into TFLOP/s, which fails a healthy node against a threshold at its real speed):
        a short run (maxSteps 10 to 19 logs step 10 alone) measures neither, nor goodput (warm-up's share of wall time
        is no training's), which fails such a threshold unblamed."""
        values: dict[str, float] = {}
        if self.goodput is not None:
            values[GOODPUT] = self.goodput.ratio
        if self.avg_tflops_per_gpu is not None:
            values[TFLOPS_PER_GPU] = self.avg_tflops_per_gpu
        if self.avg_step_time_sec is not None:
            values[STEP_TIME] = self.avg_step_time_sec
        return values

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("application_start_time", "last_step_time", "last_checkpoint_time"):
            data[key] = iso(getattr(self, key))
        data["recent_steps"] = [{**asdict(step), "timestamp": iso(step.timestamp)} for step in self.recent_steps]
        data["measurements"] = self.measurements()
        # Keys a clean, whole log does not need are left out: its output is what it always was.
        for key in ("skipped_count", "skipped_steps", "incomplete"):
            if not data[key]:
                del data[key]
        del data["remarks"]  # in the notes
        del data["stopped_short"]  # said by `incomplete`
        for key in ("last_progress_time", "resuming_since", "saving"):  # a running log's standing, not a result
            del data[key]
        if self.notes():
            data["notes"] = list(self.notes())
        return data
