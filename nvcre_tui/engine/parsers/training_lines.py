"""Recognising the lines of Megatron-LM and NeMo 2 training logs (the NVCRE LogProfile patterns, rewritten).

Each recogniser turns one line (kubelet prefix already removed) into an event, or None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.parsers.base import parse_timestamp, unsigned_int, unsigned_number
from nvcre_tui.engine.parsers.prefixes import split_line_prefixes

# "[2026-03-02 11:42:07.513201] iteration       40/      50 | ... |"
_MEGATRON_STEP = re.compile(r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]\s*)?"
                            r"iteration\s+(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*\|(?P<fields>.*)", re.ASCII)
# NeMo 1.x progress bars: "Epoch 0: : 10%|#  | 5/50 [00:12<01:48, reduced_train_loss=10.8, global_step=4.000,
# consumed_samples=640.0, train_step_timing in s=2.19]" (rewritten in place with carriage returns).
_NEMO1_STEP = re.compile(r"global_step=(?P<step>\d{1,12})(?:\.0*)?\b", re.ASCII)
_NEMO1_FIELD = re.compile(r"([A-Za-z_][\w ]*?)=([0-9.eE+-]+)", re.ASCII)
# "Training epoch 0, iteration 39/49 | ... | global_step: 39 | ..."
_NEMO_STEP = re.compile(r"Training epoch\s+\d+,\s*iteration\s+(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*\|(?P<fields>.*)",
                        re.ASCII)
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


@dataclass(frozen=True)
class Step:
    framework: str
    step: int
    total: int | None
    step_time_sec: float
    tflops: float | None
    loss: float | None
    timestamp: datetime | None  # the line's own time, when it prints one


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


Event = Step | Start | CheckpointSave | CheckpointDone | Restore


def _fields(text: str) -> dict[str, str]:
    """`key: value | key: value` cells (keys never hold ':', values never do either)."""
    pairs = {}
    for cell in text.split("|"):
        key, separator, value = cell.rpartition(":")
        if separator:
            pairs[" ".join(key.split())] = value.strip()
    return pairs


def _number(fields: dict[str, str], key: str) -> float | None:
    return unsigned_number(fields[key]) if key in fields else None


# Megatron-LM and Megatron-DeepSpeed name the same cells differently: (key, scale to seconds).
_ELAPSED = (("elapsed time per iteration (ms)", 1e-3), ("elapsed time per iteration (s)", 1.0))
_TFLOPS = ("throughput per GPU (TFLOP/s/GPU)", "TFLOPs", "TFLOPs per GPU")


def _megatron_step(line: str) -> Step | None:
    match = _MEGATRON_STEP.search(line)
    if match is None:
        return None
    fields = _fields(match.group("fields"))
    elapsed = next(((value, scale) for key, scale in _ELAPSED if (value := _number(fields, key)) is not None), None)
    step, total = unsigned_int(match.group("step")), unsigned_int(match.group("total"))
    if elapsed is None or step is None or total is None:
        return None
    tflops = next((value for key in _TFLOPS if (value := _number(fields, key)) is not None), None)
    timestamp = parse_timestamp(match.group("ts")) if match.group("ts") else None
    return Step("megatron", step, total, elapsed[0] * elapsed[1], tflops, _number(fields, "lm loss"), timestamp)


def _nemo1_step(line: str) -> Step | None:
    """A NeMo 1.x progress-bar record; None unless it carries both the global step and the step time."""
    match = _NEMO1_STEP.search(line)
    if match is None:
        return None
    fields = {" ".join(key.split()): value for key, value in _NEMO1_FIELD.findall(line)}
    timing = _number(fields, "train_step_timing in s")
    step = unsigned_int(match.group("step"))
    if timing is None or step is None:
        return None
    loss = _number(fields, "reduced_train_loss")
    return Step("nemo", step, None, timing, _number(fields, "TFLOPS_per_GPU"),
                loss if loss is not None else _number(fields, "loss"), None)


def _nemo_step(line: str) -> Step | None:
    match = _NEMO_STEP.search(line)
    if match is None:
        return None
    fields = _fields(match.group("fields"))
    timing = _number(fields, "train_step_timing in s")
    global_step = unsigned_int(fields["global_step"]) if "global_step" in fields else None
    step = global_step if global_step is not None else unsigned_int(match.group("step"))
    total = unsigned_int(match.group("total"))
    if timing is None or step is None or total is None:
        return None
    return Step("nemo", step, total, timing, _number(fields, "TFLOPS_per_GPU"),
                _number(fields, "reduced_train_loss"), None)


# A line that starts a record of its own: never the tail of a wrapped step line.
_RECORD_START = re.compile(r"\[|Training epoch|Epoch \d|(?:saving|loading|successfully|using world|Restoring|Global)\b"
                           r"|.*iteration\s+\d+\s*/\s*\d+\s*\|", re.IGNORECASE | re.ASCII)
_MAX_WRAPS = 8


def joined_records(lines: Iterable[str]) -> Iterator[tuple[datetime | None, str]]:
    """(kubelet time, text) of each record, launcher prefixes removed, terminal-wrapped step lines rejoined.

    A Megatron step line ends with "|"; one that does not continues on the following lines (each with
    its own prefixes) until it does, or until a line that starts a record of its own.
    """
    pending: tuple[datetime | None, str] | None = None
    pieces = 0
    for raw in lines:
        when, text = split_line_prefixes(raw)
        text = text.rstrip("\n")
        if pending is not None:
            if not text.strip() or pieces >= _MAX_WRAPS or _RECORD_START.match(text.lstrip()):
                yield pending
                pending = None
            else:
                pending, pieces = (pending[0], pending[1] + text.rstrip("\r")), pieces + 1
                if pending[1].rstrip().endswith("|"):
                    yield pending
                    pending = None
                continue
        if ("iteration" in text and not text.rstrip().endswith("|") and "Training epoch" not in text
                and _MEGATRON_STEP.search(text)):  # NeMo step lines end without "|": they never wrap-join
            pending, pieces = (when, text.rstrip("\r")), 0
            continue
        yield when, text
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
