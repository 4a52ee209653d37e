"""Which lines of a log source's answer are new: the logs screen's and `certification logs --follow`'s cursor while
they follow a running log; and the tail a failed run's Job kept, read where its pods are gone (`kept_tail`), or where
no pod ever held it: a run the simulated fleet played, read by a process that does not play it (`played_elsewhere`,
`simulated_tail`: the pane's and `certification logs`' one test and heading).

A LogSource answers with the log *as it keeps it*, and keeping is bounded: the pod log reader keeps a fixed
head and a sliding tail (kube/podlogs.py: 2,000 + 20,000 lines), so once a log is longer than that the
answer stops growing although new lines keep coming. Counting lines ("skip what I had") then stalls the
pane for good. The cursor remembers the last lines it handed out (the anchor) and finds them again in the
next answer: what follows them is new, wherever they moved to. When they are gone (more new lines arrived
between two reads than the source keeps), the lines after the source's unchanging head are new and the
gap is reported; an answer that shares neither the anchor nor the head is another log (start over).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nvcre_tui.engine.api.bodies import job_status
from nvcre_tui.engine.api.vocabulary import SIMULATED_OUTPUT
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.parsers import ParseError
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, with_unit
from nvcre_tui.engine.parsers.nccl import parse_nccl

__all__ = ["Fresh", "LogCursor", "ANCHOR_LINES", "HEAD_LINES", "GAP_LINE", "kept_tail", "nccl_average_note", "played_elsewhere",
           "simulated_tail"]

GAP_LINE = "[… lines missed here: more arrived between two reads than the log source keeps]"  # where Fresh.gap says so


def nccl_average_note(tail: str | None) -> str | None:
    """What the measured value is, beside a kept nccl-tests tail that ends with its `# Avg bus bandwidth` line (the one
    wording, for the report and the console): nccl-tests averages every message size there, small ones included, while
    busBandwidthGBps is read at the best size, so the two numbers differ without contradicting. None for a tail
    without that line."""
    if not tail or "Avg bus bandwidth" not in tail:
        return None
    try:
        average = parse_nccl(tail).avg_bus_bandwidth
    except ParseError:
        return None
    if average is None:
        return None
    return f"{BUS_BANDWIDTH} is the bus bandwidth at the best message size; the log's Avg bus bandwidth, {with_unit(BUS_BANDWIDTH, f'{average:g}')}, averages all sizes"


PODS_GONE = "the run's pods are gone"


def kept_tail(job: dict[str, Any] | None, why: str = PODS_GONE) -> list[str]:
    """The last lines the engine kept of a failed run's log (its Job's failureLog), under a line saying so and `why`
    they are what is shown: on a cluster the failed run's pods are deleted to free the GPUs, and their log with them
    (or this user may not read them)."""
    log = job_status(job or {}).get("failureLog") or {}
    if not log.get("tail"):
        return []
    tail = str(log["tail"]).splitlines()
    code = f", exit {log['exitCode']}" if log.get("exitCode") is not None else ""
    # A group blamed whole (a value below threshold) names no node, as the report's `Log: pod ...` line leaves it out
    where = f" on {log['nodeName']}" if log.get("nodeName") else ""
    return [f"==> {why}: the last {len(tail)} lines the engine kept (Job failureLog, pod {log.get('podName')}{where}{code})", *tail]


def played_elsewhere(run: dict[str, Any], *, fleet_here: bool) -> bool:
    """The simulated fleet played `run` and this process does not (`fleet_here`: session.plays_the_fleet): no pod ever
    held its output, so none is asked for (a user who may not read pods was refused, and told a role to bind, for a
    log no grant gives)."""
    return not fleet_here and cond.is_true(run, cond.SIMULATED)


def simulated_tail(job: dict[str, Any] | None) -> list[str]:
    """`kept_tail` of a run `played_elsewhere`, headed as the fleet's: "the run's pods are gone" told of pods it never had."""
    return kept_tail(job, why=SIMULATED_OUTPUT)

ANCHOR_LINES = 32   # consecutive lines that must match: a repeated line alone never places the cursor
HEAD_LINES = 4_096  # first lines remembered, to recognise the same log after a gap


@dataclass(frozen=True)
class Fresh:
    """What to append; `restart`: it is another log (clear first); `gap`: lines were missed before these."""

    lines: list[str] = field(default_factory=list)
    restart: bool = False
    gap: bool = False


class LogCursor:
    """Where the pane is in a log source's successive answers (memory: ANCHOR + HEAD lines)."""

    def __init__(self) -> None:
        self._anchor: deque[str] = deque(maxlen=ANCHOR_LINES)
        self._head: list[str] = []
        self._count = 0  # length of the last answer

    def reset(self) -> None:
        """Forget the log: the next answer is all new."""
        self._anchor.clear()
        self._head = []
        self._count = 0

    def advance(self, lines: Sequence[str]) -> Fresh:
        """The new part of `lines` (the source's whole answer now)."""
        if not self._anchor:
            return self._take(lines, 0, restart=False)
        anchor = list(self._anchor)
        end = self._count
        if len(lines) >= end >= len(anchor) and list(lines[end - len(anchor):end]) == anchor:
            return self._take(lines, end)  # the answer grew: everything past the last one is new
        found = _find(lines, anchor)
        if found is not None:
            return self._take(lines, found)
        shared = _common_prefix(lines, self._head)
        if shared == 0 and lines:
            self.reset()
            return self._take(lines, 0, restart=True)
        return self._take(lines, shared, gap=bool(lines[shared:]))

    def _take(self, lines: Sequence[str], start: int, *, restart: bool = False, gap: bool = False) -> Fresh:
        fresh = list(lines[start:])
        if not self._head:
            self._head = list(lines[:HEAD_LINES])
        if lines:
            self._anchor.clear()
            self._anchor.extend(lines[-ANCHOR_LINES:])
        self._count = len(lines)
        return Fresh(fresh, restart=restart, gap=gap)


def _find(lines: Sequence[str], anchor: list[str]) -> int | None:
    """The index just past the last place `anchor` occurs whole in `lines`, else None."""
    size, last = len(anchor), anchor[-1]
    for index in range(len(lines) - 1, size - 2, -1):
        if lines[index] == last and list(lines[index - size + 1:index + 1]) == anchor:
            return index + 1
    return None


def _common_prefix(lines: Sequence[str], head: list[str]) -> int:
    count = 0
    for mine, theirs in zip(lines, head):
        if mine != theirs:
            break
        count += 1
    return count
