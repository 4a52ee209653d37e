"""nccl-tests stdout tables, every generation people still run, read one line at a time.

Column positions come from the last table header seen (with or without its leading `#`); a log whose
headers were lost is read by recognising the row shape instead. A row that does not fit exactly is
skipped, never guessed at: that is how cut-off and interleaved lines stay out of the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from nvcre_tui.engine.parsers.base import signed_int, strip_kubelet_prefix, unsigned_int, unsigned_number
from nvcre_tui.engine.parsers.nccl_model import Half, NcclAggregator, RankDevice, Row

_TIME_NAMES = frozenset({"time", "cputime"})
_WRONG_NAMES = frozenset({"#wrong", "wrong", "error", "errors"})
_PREFIX_NAMES = ("size", "count", "type", "redop", "root")
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_CLOCK = re.compile(r"\d\d:\d\d:\d\d", re.ASCII)
# "#  Rank  0 Group  0 Pid   4101 on    gpu-n01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3";
# older builds print no Group and a short bus id such as [0x18].
_RANK = re.compile(
    r"Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$"
, re.ASCII)
_STARTING = re.compile(r"Collective test starting:\s*(\S+)", re.ASCII)
_OUT_OF_BOUNDS = re.compile(r"Out of bounds values\s*:\s*(\d+)", re.ASCII)
_AVG_BUS = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)", re.ASCII)
# mpirun --tag-output prefixes each line with "[jobid,rank]<stdout>:".
_MPI_TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err)>:", re.ASCII)


@dataclass(frozen=True)
class Layout:
    """Where the cells of a data row are: prefix columns, cells per half, optional trailing timestamp."""

    prefix: tuple[str, ...]  # subset of size, count, type, redop, root, in printed order
    half_width: int  # 4 normally; 8 with -I per-iteration statistics
    algbw_at: int
    busbw_at: int
    wrong_at: int | None  # None when the table has no wrong/error column
    timestamp: bool  # -S prints "YYYY-mm-dd HH:MM:SS" after the in-place half

    @property
    def tokens(self) -> int:
        return len(self.prefix) + 2 * self.half_width + (2 if self.timestamp else 0)


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
    return Layout(
        prefix=prefix,
        half_width=len(half),
        algbw_at=half.index("algbw"),
        busbw_at=half.index("busbw"),
        wrong_at=wrong[0] if wrong else None,
        timestamp=tail == ["timestamp"],
    )


_INFERRED: dict[tuple[bool, bool, int, bool], Layout] = {}


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
    key = (has_redop, has_root, half_width, timestamp)
    if key not in _INFERRED:
        prefix = ("size", "count", "type") + (("redop",) if has_redop else ()) + (("root",) if has_root else ())
        _INFERRED[key] = Layout(prefix, half_width, 1, 2, 3, timestamp)
    return _INFERRED[key]


def _half(cells: list[str], layout: Layout) -> Half | None:
    time_us = unsigned_number(cells[0])
    algbw = unsigned_number(cells[layout.algbw_at])
    busbw = unsigned_number(cells[layout.busbw_at])
    if time_us is None or algbw is None or busbw is None:
        return None
    wrong: float | None = None
    if layout.wrong_at is not None:
        text = cells[layout.wrong_at]
        if text != "N/A":
            wrong = unsigned_number(text)
            if wrong is None:
                return None
    return Half(time_us, algbw, busbw, wrong)


def parse_row(tokens: list[str], layout: Layout) -> Row | None:
    """The row these tokens form under `layout`, or None if any cell does not fit."""
    if len(tokens) != layout.tokens:
        return None
    fields = dict(zip(layout.prefix, tokens))
    size = unsigned_int(fields["size"])
    count = unsigned_int(fields["count"])
    if size is None or count is None:
        return None
    root: int | None = None
    if "root" in fields:
        root = signed_int(fields["root"])
        if root is None:
            return None
    redop = fields.get("redop", "none")
    if unsigned_number(fields["type"]) is not None or unsigned_number(redop) is not None:
        return None
    start, width = len(layout.prefix), layout.half_width
    out_of_place = _half(tokens[start : start + width], layout)
    in_place = _half(tokens[start + width : start + 2 * width], layout)
    if out_of_place is None or in_place is None:
        return None
    return Row(size, count, fields["type"], redop, root, out_of_place, in_place)


class TableReader:
    """Feeds stdout lines into an NcclAggregator; call `feed` per line and `finish` at the end."""

    def __init__(self, aggregator: NcclAggregator) -> None:
        self.aggregator = aggregator
        self.layout: Layout | None = None
        self.saw_newline = False
        self.held: Row | None = None  # a row from a line without newline: kept only if more input follows

    def feed(self, raw: str) -> None:
        if self.held is not None:
            self.aggregator.add_row(self.held)
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
            row = self._row(text.split())
            if row is not None:
                if terminated or not self.saw_newline:
                    self.aggregator.add_row(row)
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

    def _row(self, tokens: list[str]) -> Row | None:
        if self.layout is not None:
            return parse_row(tokens, self.layout)
        layout = infer_layout(tokens)
        return None if layout is None else parse_row(tokens, layout)

    def _marker(self, text: str) -> None:
        """Header, rank line, run start/end or footer; anything else (NCCL INFO, ssh noise) is ignored."""
        if text.startswith("size"):
            layout = layout_from_header(text.split())
            if layout is not None:
                self.layout = layout
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
            self.layout = None
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
