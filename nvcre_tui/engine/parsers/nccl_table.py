"""nccl-tests stdout tables, every generation people still run, read one line at a time.

Column positions come from the last table header seen (with or without its leading `#`); a log whose
headers were lost is read by recognising the row shape instead. A row must match its layout's
pattern exactly, or it is skipped, never guessed at: that is how cut-off and interleaved lines stay
out of the numbers. One compiled pattern per layout checks and splits a row in a single pass.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from nvcre_tui.engine.parsers.base import signed_int, strip_kubelet_prefix, unsigned_number
from nvcre_tui.engine.parsers.nccl_model import NcclAggregator, RankDevice, RowValues

_TIME_NAMES = frozenset({"time", "cputime"})
_WRONG_NAMES = frozenset({"#wrong", "wrong", "error", "errors"})
_PREFIX_NAMES = ("size", "count", "type", "redop", "root")
# Cell patterns. Sizes are bounded so int() never meets its 4300-digit limit; numbers are plain
# decimals or exponents (never nan, inf or 1_000, which float() would take).
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PREFIX_CELLS = {"size": r"(\d{1,20})", "count": r"(\d{1,20})", "type": r"([A-Za-z_]\S*)",
                 "redop": r"([A-Za-z_]\S*)", "root": r"(-?\d{1,10})"}
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_CLOCK = re.compile(r"\d\d:\d\d:\d\d", re.ASCII)
# "#  Rank  0 Group  0 Pid   4101 on    gpu-n01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3";
# older builds print no Group and a short bus id such as [0x18].
_RANK = re.compile(
    r"Rank\s+(\d{1,9})\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d{1,9})\s+\[([^\]]*)\]\s*(.*?)\s*$",
    re.ASCII,
)
_STARTING = re.compile(r"Collective test starting:\s*(\S+)", re.ASCII)
_OUT_OF_BOUNDS = re.compile(r"Out of bounds values\s*:\s*(\d{1,18})", re.ASCII)
_AVG_BUS = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)", re.ASCII)
# mpirun --tag-output prefixes each line with "[jobid,rank]<stdout>:".
_MPI_TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err)>:", re.ASCII)
_INF = math.inf


@dataclass(frozen=True)
class Layout:
    """Where the cells of a data row are: prefix columns, cells per half, optional trailing timestamp."""

    prefix: tuple[str, ...]  # subset of size, count, type, redop, root, in printed order
    half_width: int  # 4 normally; 8 with -I per-iteration statistics
    algbw_at: int
    busbw_at: int
    wrong_at: int | None  # None when the table has no wrong/error column
    timestamp: bool  # -S prints "YYYY-mm-dd HH:MM:SS" after the in-place half


def layout_from_header(tokens: list[str]) -> Layout | None:
    """The layout a column-name header describes, or None when it is not a well-formed header."""
    times = [i for i, name in enumerate(tokens) if name in _TIME_NAMES]
    if len(times) < 2:
        return None
    prefix = tuple(tokens[: times[0]])
    half = tokens[times[0] : times[1]]
    tail = tokens[times[1] + len(half) :]
    if prefix[:3] != ("size", "count", "type") or any(name not in _PREFIX_NAMES for name in prefix):
        return None
    if "algbw" not in half or "busbw" not in half or tokens[times[1] : times[1] + len(half)] != half:
        return None
    wrong = [i for i, name in enumerate(half) if name in _WRONG_NAMES]
    if half.index("algbw") != 1 or half.index("busbw") != 2 or wrong[:1] not in ([], [3]):
        return None  # every generation prints time, algbw, busbw, wrong: anything else is not a header
    return Layout(
        prefix=prefix,
        half_width=len(half),
        algbw_at=half.index("algbw"),
        busbw_at=half.index("busbw"),
        wrong_at=wrong[0] if wrong else None,
        timestamp=tail == ["timestamp"],
    )


def infer_layout(tokens: list[str]) -> Layout | None:
    """The layout of a row read without a header: size count type [redop] [root], two halves, [timestamp]."""
    if len(tokens) < 11:
        return None
    has_redop = unsigned_number(tokens[3]) is None and signed_int(tokens[3]) is None
    start = 4 if has_redop else 3
    timestamp = _DATE.fullmatch(tokens[-2]) is not None and _CLOCK.fullmatch(tokens[-1]) is not None
    cells = len(tokens) - start - (2 if timestamp else 0)
    has_root = cells % 2 == 1 and signed_int(tokens[start]) is not None
    half_width = (cells - 1 if has_root else cells) // 2
    if half_width not in (4, 8) or (cells % 2 == 1 and not has_root):
        return None
    prefix = ("size", "count", "type") + (("redop",) if has_redop else ()) + (("root",) if has_root else ())
    return Layout(prefix, half_width, 1, 2, 3, timestamp)


@dataclass(frozen=True)
class RowReader:
    """A layout compiled for the hot path: one pattern for the whole row, and where each field lands."""

    pattern: re.Pattern[str]
    prefix_at: tuple[int, int, int, int | None, int | None]  # size, count, type, redop, root group indices
    halves_at: tuple[int, int]  # first group of the out-of-place and in-place halves
    with_wrong: bool

    def parse(self, text: str) -> RowValues | None:
        """(size, count, type, redop, root, out-of-place, in-place) of a stripped row, or None if it does not fit."""
        match = self.pattern.fullmatch(text)
        if match is None:
            return None
        groups = match.groups()
        size, count, kind, redop, root = self.prefix_at
        first, second = self.halves_at
        if self.with_wrong:
            wrong_out, wrong_in = groups[first + 3], groups[second + 3]
            out_wrong = None if wrong_out == "N/A" else float(wrong_out)
            in_wrong = None if wrong_in == "N/A" else float(wrong_in)
        else:
            out_wrong = in_wrong = None
        out_of_place = (float(groups[first]), float(groups[first + 1]), float(groups[first + 2]), out_wrong)
        in_place = (float(groups[second]), float(groups[second + 1]), float(groups[second + 2]), in_wrong)
        if _INF in out_of_place or _INF in in_place:
            return None  # 1e999 overflows to inf: no tool printed that
        return (int(groups[size]), int(groups[count]), groups[kind], "none" if redop is None else groups[redop],
                None if root is None else int(groups[root]), out_of_place, in_place)


@functools.lru_cache(maxsize=64)
def row_reader(layout: Layout) -> RowReader:
    """Compile `layout`: each half captures time, algbw, busbw and (when printed) wrong."""
    half = []
    for index in range(layout.half_width):
        if index in (0, layout.algbw_at, layout.busbw_at):
            half.append(f"({_NUMBER})")
        elif index == layout.wrong_at:
            half.append(f"({_NUMBER}|N/A)")
        else:
            half.append(r"\S+")  # per-iteration statistics: printed, not needed
    cells = [_PREFIX_CELLS[name] for name in layout.prefix] + half + half
    if layout.timestamp:
        cells.append(r"\d{4}-\d\d-\d\d\s+\d\d:\d\d:\d\d")
    at = {name: index for index, name in enumerate(layout.prefix)}
    per_half = 3 if layout.wrong_at is None else 4
    return RowReader(
        pattern=re.compile(r"\s+".join(cells), re.ASCII),
        prefix_at=(at["size"], at["count"], at["type"], at.get("redop"), at.get("root")),
        halves_at=(len(layout.prefix), len(layout.prefix) + per_half),
        with_wrong=layout.wrong_at is not None,
    )


class TableReader:
    """Feeds stdout lines into an NcclAggregator; call `feed` per line and `finish` at the end."""

    def __init__(self, aggregator: NcclAggregator) -> None:
        self.aggregator = aggregator
        self.reader: RowReader | None = None  # from the last header; None: recognise rows by shape
        self.saw_newline = False
        # A row from a line without newline is kept only if more input follows (else it was cut off).
        self.held: RowValues | None = None

    def feed(self, raw: str) -> None:
        if self.held is not None:
            self.aggregator.add(*self.held)
            self.held = None
        terminated = raw.endswith("\n")
        self.saw_newline = self.saw_newline or terminated
        line = strip_kubelet_prefix(raw)
        if line[:1] == "[" and _MPI_TAG.match(line):
            line = line[line.index(">:") + 2 :]
        text = line.strip()
        if not text:
            return
        if text[0].isdigit():
            row = self._row(text)
            if row is not None:
                if terminated or not self.saw_newline:
                    self.aggregator.add(*row)
                else:
                    self.held = row
            return
        if text[0] == "#":
            text = text.lstrip("#").lstrip()
            if not text:
                return
        self._marker(text)

    def finish(self) -> None:
        """End of input: a held row came from a line cut off before its newline, so it is dropped."""
        self.held = None

    def _row(self, text: str) -> RowValues | None:
        if self.reader is not None:
            return self.reader.parse(text)
        layout = infer_layout(text.split())
        return None if layout is None else row_reader(layout).parse(text)

    def _marker(self, text: str) -> None:
        """Header, rank line, run start/end or footer; anything else (NCCL INFO, ssh noise) is ignored."""
        if text.startswith("size"):
            layout = layout_from_header(text.split())
            if layout is not None:
                self.reader = row_reader(layout)
        elif text.startswith("Rank"):
            match = _RANK.match(text)
            if match:
                rank, host, device, bus, name = match.groups()
                self.aggregator.ranks[int(rank)] = RankDevice(host, int(device), bus, name)
        elif text.startswith("Collective test "):
            self._run_marker(text)
        elif text.startswith("Out of bounds"):
            match = _OUT_OF_BOUNDS.match(text)
            if match:
                self.aggregator.add_out_of_bounds(int(match.group(1)))
        elif text.startswith("Avg bus"):
            match = _AVG_BUS.match(text)
            value = unsigned_number(match.group(1)) if match else None
            if value is not None:
                self.aggregator.avg_bus_bandwidth = value

    def _run_marker(self, text: str) -> None:
        match = _STARTING.match(text)
        if match:
            # A new run may come from another build: forget the previous run's header.
            self.reader = None
            self.aggregator.start_run(match.group(1))
        elif text.startswith("Collective test concluded"):
            self.aggregator.runs_concluded += 1


def read_table(lines: Iterable[str], aggregator: NcclAggregator) -> None:
    """Stream `lines` through a TableReader into `aggregator`."""
    reader = TableReader(aggregator)
    feed = reader.feed
    for line in lines:
        feed(line)
    reader.finish()
