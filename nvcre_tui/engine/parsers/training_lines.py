"""Recognising the lines of Megatron-LM and NeMo 2 training logs (the NVCRE LogProfile patterns, rewritten).

Each recogniser turns one line (kubelet prefix already removed) into an event, or None. A step line
whose step time, TFLOP/s or loss cell is printed but unreadable (negative, inf) is still a Step, with
`problem` naming the cell: the parser leaves it out and says so; one whose step or total is no number
(`iteration -30/50`, full-width digits) is an UnreadableStep, said the same way. NaN loss is counted, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.parsers.base import overflows, parse_timestamp, signed_number, unsigned_int, unsigned_number
from nvcre_tui.engine.parsers.prefixes import split_line_prefixes
from nvcre_tui.engine.parsers.terminal import ESCAPE, without_terminal_control

# "[2026-03-02 11:42:07.513201] iteration       40/      50 | ... |"
_MEGATRON_STEP = re.compile(r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]\s*)?"
                            r"iteration\s+(?P<step>[^\s/|]+)\s*/\s*(?P<total>[^\s/|]+)\s*\|(?P<fields>.*)", re.ASCII)
# NeMo 1.x progress bars: "Epoch 0: : 10%|#  | 5/50 [00:12<01:48, reduced_train_loss=10.8, global_step=4.000,
# consumed_samples=640.0, train_step_timing in s=2.19]" (rewritten in place with carriage returns).
_NEMO1_STEP = re.compile(r"global_step=(?P<step>\d{1,12})(?:\.0*)?\b", re.ASCII)
_NEMO1_FIELD = re.compile(r"([A-Za-z_][\w ]*?)=([0-9.eE+-]+|[-+]?(?:nan|inf)\b)", re.ASCII | re.IGNORECASE)
# "Training epoch 0, iteration 39/49 | ... | global_step: 39 | ..."
_NEMO_STEP = re.compile(r"Training epoch\s+\d+,\s*iteration\s+(?P<step>[^\s/|]+)\s*/\s*(?P<total>[^\s/|]+)\s*\|"
                        r"(?P<fields>.*)", re.ASCII)
_BRACKET_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]", re.ASCII)
_NEMO_PREFIX = re.compile(r"\[NeMo [A-Z] (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[^\]]*\]", re.ASCII)
_WORLD = re.compile(r"using world size:\s*(\d+)", re.ASCII)
_SAVE_START = re.compile(r"saving checkpoint at iteration\s+(\d+)\s+to\s+(\S+)", re.IGNORECASE | re.ASCII)
_SAVE_DONE = re.compile(r"(?:scheduled an async checkpoint save at|successfully saved checkpoint from) "
                        r"iteration\s+(\d+)\s+to\s+(\S+)", re.IGNORECASE | re.ASCII)
_SAVE_ONE_LINE = re.compile(r"Global Checkpoint Save\s*:.*?Iteration:\s*(\d+)\s*:.*?Save duration:\s*([0-9.]+)\s*s",
                            re.ASCII)
_RESTORE = re.compile(r"(?:loading (?:distributed )?checkpoint from|Restoring model weights from)\s+(\S+)",
                      re.IGNORECASE | re.ASCII)
_NEMO_START = "Experiments will be logged at"
# What a failing process prints: a Python exception or traceback (torchrun prefixes each rank's lines with
# "[rankN]: "), torchrun's ChildFailedError and "failed (exitcode: N)", a segfault. Warnings never match.
_RANK_PREFIX = re.compile(r"\[rank\d+\]:\s*", re.ASCII)
_ERROR_START = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)(?::|$)", re.ASCII)
_ERROR_ANYWHERE = re.compile(r"ChildFailedError|\] failed \(exitcode: -?\d+\)|Segmentation fault", re.ASCII)
# Megatron's own stops: --exit-duration-in-mins and --exit-interval (not a signal: that is a kill).
_EXIT = re.compile(r"exiting program (?:after [0-9.]+ minutes|at iteration \d+)", re.ASCII)
# NeMo's (PyTorch Lightning's Timer callback: trainer max_time, exp_manager max_time_per_run) own stop, printed
# with timedelta's text: "Time limit reached. Elapsed time is 1 day, 0:00:03. Signaling Trainer to stop."
_TIME_LIMIT = re.compile(r"Time limit reached\. Elapsed time is ((?:\d+ days?, )?\d+:\d\d:\d\d)", re.ASCII)
# Megatron's argument dump: "  log_interval .................................... 10".
_LOG_INTERVAL = re.compile(r"\s*log_interval \.+ (\d{1,9})\s*$", re.ASCII)


@dataclass(frozen=True)
class Step:
    framework: str
    step: int
    total: int | None
    step_time_sec: float
    tflops: float | None
    loss: float | None
    timestamp: datetime | None  # the line's own time, when it prints one
    problem: str | None = None  # a printed cell that is unreadable ("TFLOP/s -613.0"): the step is left out
    nan: int = 0  # iterations with NaN loss this line reports


@dataclass(frozen=True)
class UnreadableStep:
    """A step line whose step or total is no number (`iteration -30/50`): no step to place, but never passed over."""

    text: str  # the iteration cell as printed, cut short


@dataclass(frozen=True)
class UntimedStep:
    """A NeMo step line that prints no step time (no `train_step_timing in s`: NeMo's step timing off): training
    ran to `step`, but measured nothing; said when no step line is timed."""

    step: int


@dataclass(frozen=True)
class ErrorLine:
    """A line a failing process prints (exception, traceback, torchrun's failure report); `kind` "ignored"
    is Python's "Exception ignored in" report (a destructor at shutdown), whose traceback is no failure."""

    text: str
    kind: str = "error"  # error | traceback | ignored
    source: str = ""  # the rank prefix ("[rank3]: "): ranks' reports interleave in one pod's log


@dataclass(frozen=True)
class Exit:
    """The framework stopping on its own limit: Megatron's --exit-duration-in-mins and --exit-interval, NeMo's
    (Lightning's) max_time."""

    text: str
    framework: str = "Megatron"


@dataclass(frozen=True)
class LogInterval:
    steps: int


@dataclass(frozen=True)
class Start:
    timestamp: datetime | None
    world_size: int | None
    explicit: bool  # False: only the first NeMo log line before any step, standing in for a start


@dataclass(frozen=True)
class CheckpointSave:
    step: int
    duration_sec: float | None  # one-line style; None when a done line will close it
    timestamp: datetime | None


@dataclass(frozen=True)
class CheckpointDone:
    step: int
    timestamp: datetime | None


@dataclass(frozen=True)
class Restore:
    timestamp: datetime | None


Event = Step | UnreadableStep | UntimedStep | Start | CheckpointSave | CheckpointDone | Restore | ErrorLine | Exit | LogInterval


def _fields(text: str) -> dict[str, str]:
    """`key: value | key: value` cells (keys never hold ':', values never do either)."""
    pairs = {}
    for cell in text.split("|"):
        key, separator, value = cell.rpartition(":")
        if separator:
            pairs[" ".join(key.split())] = value.strip()
    return pairs


class _Cells:
    """Reads a step line's cells, noting the first printed one that is unreadable and any NaN loss."""

    def __init__(self, fields: dict[str, str]) -> None:
        self.fields, self.nan = fields, 0
        self.problem: str | None = None

    def number(self, keys: tuple[str, ...], label: str) -> float | None:
        """The first of `keys` printed, as a non-negative number; None when none is printed or it is unreadable."""
        key = next((key for key in keys if key in self.fields), None)
        if key is None:
            return None
        value = unsigned_number(self.fields[key])
        if value is None:
            self.problem = self.problem or f"{label} {self.fields[key][:40]}"
        return value

    def loss(self, keys: tuple[str, ...]) -> float | None:
        key = next((key for key in keys if key in self.fields), None)
        if key is None:
            return None
        text = self.fields[key]
        # inf, and a number too large for a float (1e400: inf once read), is a loss gone to infinity like nan.
        if text.lower().lstrip("+-") in ("nan", "inf", "infinity") or overflows(text):
            self.nan = max(self.nan, 1)
            return None
        value = signed_number(text)
        if value is None:
            self.problem = self.problem or f"loss {text[:40]}"
        return value

    def nan_iterations(self, key: str) -> None:
        count = unsigned_int(self.fields.get(key, ""))
        self.nan = max(self.nan, count or 0)


# Megatron-LM and Megatron-DeepSpeed name the same cells differently: (key, scale to seconds).
_ELAPSED = (("elapsed time per iteration (ms)", 1e-3), ("elapsed time per iteration (s)", 1.0))
_TFLOPS = ("throughput per GPU (TFLOP/s/GPU)", "TFLOPs", "TFLOPs per GPU")
_NEMO_TIMING = ("train_step_timing in s",)


def _unreadable(match: re.Match[str]) -> UnreadableStep:
    return UnreadableStep(f"iteration {match.group('step')[:24]}/{match.group('total')[:24]}")


def _megatron_step(line: str) -> Step | UnreadableStep | None:
    match = _MEGATRON_STEP.search(line)
    if match is None:
        return None
    cells = _Cells(_fields(match.group("fields")))
    scale = next((scale for key, scale in _ELAPSED if key in cells.fields), None)
    step, total = unsigned_int(match.group("step")), unsigned_int(match.group("total"))
    if scale is None:
        return None
    if step is None or total is None:
        return _unreadable(match)
    elapsed = cells.number(tuple(key for key, _ in _ELAPSED), "step time")
    tflops = cells.number(_TFLOPS, "TFLOP/s")
    loss = cells.loss(("lm loss",))
    cells.nan_iterations("number of nan iterations")
    timestamp = parse_timestamp(match.group("ts")) if match.group("ts") else None
    return Step("megatron", step, total, (elapsed or 0.0) * scale, tflops, loss, timestamp, cells.problem, cells.nan)


def _nemo1_step(line: str) -> Step | UntimedStep | None:
    """A NeMo 1.x progress-bar record: a Step when it carries both the global step and the step time, an
    UntimedStep when it carries no step time."""
    match = _NEMO1_STEP.search(line)
    if match is None:
        return None
    cells = _Cells({" ".join(key.split()): value for key, value in _NEMO1_FIELD.findall(line)})
    step = unsigned_int(match.group("step"))
    if step is None:
        return None
    if "train_step_timing in s" not in cells.fields:
        return UntimedStep(step)
    timing = cells.number(_NEMO_TIMING, "step time")
    tflops = cells.number(("TFLOPS_per_GPU",), "TFLOP/s")
    loss = cells.loss(("reduced_train_loss", "loss"))
    return Step("nemo", step, None, timing or 0.0, tflops, loss, None, cells.problem, cells.nan)


def _nemo_step(line: str) -> Step | UnreadableStep | UntimedStep | None:
    match = _NEMO_STEP.search(line)
    if match is None:
        return None
    cells = _Cells(_fields(match.group("fields")))
    global_step = unsigned_int(cells.fields["global_step"]) if "global_step" in cells.fields else None
    step = global_step if global_step is not None else unsigned_int(match.group("step"))
    total = unsigned_int(match.group("total"))
    if "train_step_timing in s" not in cells.fields:
        return None if step is None else UntimedStep(step)
    if step is None or total is None:
        return _unreadable(match)
    timing = cells.number(_NEMO_TIMING, "step time")
    tflops = cells.number(("TFLOPS_per_GPU",), "TFLOP/s")
    loss = cells.loss(("reduced_train_loss",))
    return Step("nemo", step, total, timing or 0.0, tflops, loss, None, cells.problem, cells.nan)


# A line that starts a record of its own: never the tail of a wrapped step line.
_RECORD_START = re.compile(r"\[|Training epoch|Epoch \d|(?:saving|loading|successfully|using world|Restoring|Global)\b"
                           r"|.*iteration\s+\d+\s*/\s*\d+\s*\|", re.IGNORECASE | re.ASCII)
_MAX_WRAPS = 8


def joined_records(lines: Iterable[str]) -> Iterator[tuple[int, datetime | None, str]]:
    """(line number, kubelet time, text) of each record, launcher prefixes removed, terminal-wrapped step
    lines rejoined (numbered by their first line).

    A Megatron step line ends with "|"; one that does not continues on the following lines (each with
    its own prefixes) until it does, or until a line that starts a record of its own.
    """
    pending: tuple[int, datetime | None, str] | None = None
    pieces = 0
    for number, raw in enumerate(lines, 1):
        when, text = split_line_prefixes(raw)
        text = text.rstrip("\n")
        if ESCAPE in text:  # a coloured log (rich, colorama): what a record says is its text without the colours
            text = without_terminal_control(text)
        if pending is not None:
            if not text.strip() or pieces >= _MAX_WRAPS or _RECORD_START.match(text.lstrip()):
                yield pending
                pending = None
            else:
                pending, pieces = (pending[0], pending[1], pending[2] + text.rstrip("\r")), pieces + 1
                if pending[2].rstrip().endswith("|"):
                    yield pending
                    pending = None
                continue
        if ("iteration" in text and not text.rstrip().endswith("|") and "Training epoch" not in text
                and _MEGATRON_STEP.search(text)):  # NeMo step lines end without "|": they never wrap-join
            pending, pieces = (number, when, text.rstrip("\r")), 0
            continue
        yield number, when, text
    if pending is not None:
        yield pending


def recognise(line: str) -> Event | None:
    """The event `line` reports, or None for everything else (NCCL INFO, warnings, progress noise)."""
    if "iteration" in line:
        step = _nemo_step(line) if "Training epoch" in line else _megatron_step(line)
        if step is not None:
            return step
    if "global_step=" in line:
        step = _nemo1_step(line)
        if step is not None:
            return step
    if "Error" in line or "Exception" in line or "Traceback" in line or "exitcode" in line or "Segmentation" in line:
        error = _error(line)
        if error is not None:
            return error
    if "exiting program" in line and (stop := _EXIT.search(line)):
        return Exit(stop.group())
    if "Time limit reached" in line and (limit := _TIME_LIMIT.search(line)):
        return Exit(f"time limit reached after {limit.group(1)}", "NeMo")
    if "log_interval" in line and (interval := _LOG_INTERVAL.match(line)):
        return LogInterval(int(interval.group(1)))
    own = _BRACKET_TS.match(line)
    nemo = _NEMO_PREFIX.search(line) if "[NeMo" in line else None
    stamp_text = own.group(1) if own else nemo.group(1) if nemo else None
    timestamp = parse_timestamp(stamp_text) if stamp_text else None
    lowered = line.lower()
    if "checkpoint" in lowered or "restoring model weights" in lowered:
        return _checkpoint(line, timestamp)
    if "using world size" in line:
        world = _WORLD.search(line)
        return Start(timestamp, int(world.group(1)) if world and len(world.group(1)) < 9 else None, True)
    if nemo is not None:
        return Start(timestamp, None, _NEMO_START in line)
    return None


def _error(line: str) -> ErrorLine | None:
    text = " ".join(line.split())[:200]
    rank = _RANK_PREFIX.match(text)
    bare = text[rank.end():] if rank else text
    source = rank.group().strip() if rank else ""
    if bare.startswith("Exception ignored in"):
        return ErrorLine(text, "ignored", source)
    if bare.startswith("Traceback (most recent call last)"):
        return ErrorLine(text, "traceback", source)
    if _ERROR_START.match(bare) or _ERROR_ANYWHERE.search(text):
        return ErrorLine(text, "error", source)
    return None


def _checkpoint(line: str, timestamp: datetime | None) -> Event | None:
    one_line = _SAVE_ONE_LINE.search(line)
    if one_line:
        step, duration = unsigned_int(one_line.group(1)), unsigned_number(one_line.group(2))
        return None if step is None else CheckpointSave(step, duration, timestamp)
    for pattern, kind in ((_SAVE_DONE, CheckpointDone), (_SAVE_START, CheckpointSave)):
        match = pattern.search(line)
        if match:
            step = unsigned_int(match.group(1))
            if step is None:
                return None
            return CheckpointDone(step, timestamp) if kind is CheckpointDone else CheckpointSave(step, None, timestamp)
    if _RESTORE.search(line):
        return Restore(timestamp)
    return None
