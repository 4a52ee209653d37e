"""Recognising the lines of Megatron-LM and NeMo 2 training logs (the NVCRE LogProfile patterns, rewritten).

Each recogniser turns one line (kubelet prefix already removed) into an event, or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.parsers.base import parse_timestamp, unsigned_int, unsigned_number

# "[2026-03-02 11:42:07.513201] iteration       40/      50 | ... |"
_MEGATRON_STEP = re.compile(r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]\s*)?"
                            r"iteration\s+(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*\|(?P<fields>.*)", re.ASCII)
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
    total: int
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


def _megatron_step(line: str) -> Step | None:
    match = _MEGATRON_STEP.search(line)
    if match is None:
        return None
    fields = _fields(match.group("fields"))
    elapsed_ms = _number(fields, "elapsed time per iteration (ms)")
    step, total = unsigned_int(match.group("step")), unsigned_int(match.group("total"))
    if elapsed_ms is None or step is None or total is None:
        return None
    timestamp = parse_timestamp(match.group("ts")) if match.group("ts") else None
    return Step("megatron", step, total, elapsed_ms / 1000.0,
                _number(fields, "throughput per GPU (TFLOP/s/GPU)"), _number(fields, "lm loss"), timestamp)


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


def recognise(line: str) -> Event | None:
    """The event `line` reports, or None for everything else (NCCL INFO, warnings, progress noise)."""
    if "iteration" in line:
        step = _nemo_step(line) if "Training epoch" in line else _megatron_step(line)
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
