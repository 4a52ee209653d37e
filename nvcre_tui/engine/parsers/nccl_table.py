"""nccl-tests stdout tables, read split-based: one `str.split` per line, rows folded in batches.

Column positions come from the last table header seen (with or without its leading `#`); a log whose
headers were lost, or whose header does not fit its rows (a blank redop cell), is read by recognising
the row shape instead. Launcher prefixes (kubelet timestamps, mpirun tags, srun labels, rank tags) are skipped
as tokens; terminal colour sequences (SGR) are removed. Rows go through the strict per-row reader until the
layout has proven itself and the first `max_rows` rows are kept; after that they are batched (nccl_batch),
which is what makes a 200 MB log cost little more than splitting its lines. A line that looks like a row but is
not one of the table (nccl_layout.refusal) is named in the notes with its line, never dropped silently.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterable

from nvcre_tui.engine.parsers.base import unsigned_number
from nvcre_tui.engine.parsers.nccl_batch import KnownCells, fold_batch, prefix_token
from nvcre_tui.engine.parsers.nccl_layout import (Columns, Layout, infer_layout, invalid_cells, layout_from_header, read_row,
                                                  refusal, refused_wrong, row_size, sized)
from nvcre_tui.engine.parsers.nccl_model import NcclAggregator, RankDevice, RowValues, read_count
from nvcre_tui.engine.parsers.prefixes import prefix_tokens
from nvcre_tui.engine.parsers.terminal import ESCAPE, without_colours, without_terminal_control

# "#  Rank  0 Group  0 Pid   4101 on    gpu-n01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3";
# older builds print no Group and a short bus id such as [0x18].
_RANK = re.compile(
    r"Rank\s+(\d{1,9})\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d{1,9})\s+\[([^\]]*)\]\s*(.*?)\s*$",
    re.ASCII,
)
_STARTING = re.compile(r"Collective test starting:\s*(\S+)", re.ASCII)
_OUT_OF_BOUNDS = re.compile(r"Out of bounds values\s*:\s*(\d+)", re.ASCII)
# nccl-tests (every version) judges its average itself when NCCL_TESTS_MIN_BW is set: "... : 52.9753 FAILED" (or OK).
_AVG_BUS = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)(?:\s+(?:OK|(?P<failed>FAILED))\b)?", re.ASCII)
# Lines saying why a run printed no table (NCCL's own WARN lines, nccl-tests' failure lines).
_NCCL_FAILED = re.compile(r"NCCL WARN|unhandled (?:system|cuda) error|Test (?:NCCL|CUDA) failure|Cuda failure"
                          r"|NCCL error|nccl(?:System|Internal|Remote|UnhandledCuda)Error|ncclInvalidUsage")
# NCCL's init line naming its network transport: "host:pid:tid [0] NCCL INFO Using network Socket".
_NETWORK = re.compile(r"NCCL INFO Using network (\S(?:.*\S)?)\s*$", re.ASCII)
# Its connection lines: "... NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0".
_CONNECTION = re.compile(r"NCCL INFO Channel .* via NET/([^/\s]+(?: [^/\s]+)*)/", re.ASCII)
_MARKER_WORDS = frozenset({"size", "Rank", "Collective", "Out", "Avg"})
_BATCH = 2048  # rows per fold: each size's group then holds enough rows to amortise its checks


class TableReader:
    """Feeds stdout lines into an NcclAggregator; `read` consumes them all."""

    def __init__(self, aggregator: NcclAggregator) -> None:
        self.aggregator = aggregator
        self.layout: Layout | None = None  # the current layout; None: recognise rows by shape
        self.columns: Columns | None = None
        self.width = -1  # cells of a row of the current layout
        self.from_header = False
        self.proven_layouts: set[Layout] = set()  # layouts a row has fitted (a repeated header needs no proof)
        self.proven = False
        self.fitted = False  # a row fitted the current layout since its header (a proven layout may still fit no row)
        self.fast = False  # rows are batched (layout proven, enough raw rows kept)
        self.batch: list[list[str]] = []  # split rows, bare
        self.prefixed: list[list[str]] = []  # split rows behind one prefix token (a kubelet timestamp)
        self.batch_lines: list[int] = []  # the line number of each row in `batch`, to name a skipped one
        self.prefixed_lines: list[int] = []
        self.batch_layout: Layout | None = None  # the layout of the rows in both batches
        self.known = KnownCells()
        self.held: RowValues | None = None  # a row from a line without newline, kept only if input follows

    def read(self, lines: Iterable[str]) -> None:
        iterator = iter(lines)
        line = next(iterator, "")
        saw_newline = line.endswith("\n")  # else the caller split the text itself: no line is cut off
        batch, prefixed = self.batch, self.prefixed
        append, append_prefixed = batch.append, prefixed.append
        append_line, append_prefixed_line = self.batch_lines.append, self.prefixed_lines.append
        tokens: list[str] = []
        width, fast, watch = self.width, self.fast, True
        prefixed_width = width + 1
        room = _BATCH  # rows the batches take before they are folded
        held_line: str | None = None  # the line `self.held` came from
        split, isdigit = str.split, str.isdigit  # bound once: no attribute lookup per line
        # The hot path: locals only (refreshed after every call that may change them), and the common
        # shapes (a bare row, a kubelet timestamp, noise) tested inline before any call.
        for number, line in enumerate(itertools.chain((line,), iterator), 1):
            if fast and " NCCL INFO " in line and not watch:
                continue  # "host:pid:tid [dev] NCCL INFO ...": the bulk of the noise, dropped before any split
            if ESCAPE in line:  # a coloured row is the row: read without its colours, never passed over as noise
                line = without_colours(line)
            tokens = split(line)
            count = len(tokens)
            if fast:  # a proven layout: a bare row, or a row behind one prefix token, joins a batch
                if count == width and isdigit(tokens[0]):
                    append(tokens)
                    append_line(number)
                    watch = False  # the run has a row: lines before it said why it might print none
                    room -= 1
                    if not room:
                        self._fold()
                        room = _BATCH
                    continue
                if count == prefixed_width and isdigit(tokens[1]):
                    append_prefixed(tokens)  # the prefix token is checked in bulk (nccl_batch)
                    append_prefixed_line(number)
                    watch = False
                    room -= 1
                    if not room:
                        self._fold()
                        room = _BATCH
                    continue
            if not count:
                continue
            first = tokens[0]
            if not first.isdigit():
                if first[-1] == "Z" and len(first) > 20 and first[10] == "T":
                    del tokens[0]
                    if not tokens:
                        continue
                    first = tokens[0]
                if (first[-1] == ":" or first[0] == "[" or first[10:11] == "T") and not first.isdigit():
                    del tokens[: prefix_tokens(tokens)]
                    if not tokens:
                        continue
                    first = tokens[0]
                if first[0] == ESCAPE:  # a control sequence before the first cell (erase line, cursor move) is no cell
                    tokens = split(without_terminal_control(" ".join(tokens)))
                    if not tokens:
                        continue
                    first = tokens[0]
                if first[0] == "-" and sized(first):  # a negative size: a row gone wrong, named if it looks like one
                    self._reject(tokens, self.layout, number, saw_newline and not line.endswith("\n"))
                    continue
                if not first.isdigit():
                    if first[0] == "#" or first in _MARKER_WORDS or watch:
                        self._other(tokens, line)
                        width, fast = self._sync()
                        prefixed_width = width + 1
                        watch = self._watching()
                    elif " NCCL INFO " not in line and self.aggregator.late_failure is None and _NCCL_FAILED.search(line):
                        self.aggregator.note_late_failure(" ".join(tokens)[:200])  # a rank died mid-table: why
                    continue
            if len(tokens) != width:
                self._misfit(tokens, number, saw_newline and not line.endswith("\n"))
            elif fast:
                append(tokens)
                append_line(number)
                watch = False
                room -= 1
                if not room:
                    self._fold()
                    room = _BATCH
                continue
            else:
                self._row(tokens, number, saw_newline and not line.endswith("\n"))
                if self.held is not None:
                    held_line = line
            width, fast = self._sync()
            prefixed_width = width + 1
            watch = self._watching()
        if saw_newline and not line.endswith("\n"):
            for rows, numbers in ((batch, self.batch_lines), (prefixed, self.prefixed_lines)):
                if rows and rows[-1] is tokens:
                    rows.pop()  # the last line was cut off mid-row: its digits may be incomplete
                    numbers.pop()
        if held_line is not line:
            self._commit_held()  # more input followed the line without newline: it was whole
        self.held = None
        self._fold()

    def _watching(self) -> bool:
        """Whether lines are searched for NCCL failures: until the current run prints a row (or says it failed)."""
        aggregator = self.aggregator
        return (aggregator.run_failure is None and aggregator.row_count == aggregator.run_first_row
                and not self.batch and not self.prefixed)

    def _sync(self) -> tuple[int, bool]:
        """(width, fast) for the loop; a batch of another layout is folded before rows of this one join."""
        if self.fast and self.batch_layout != self.layout:
            self._fold()
            self.batch_layout = self.layout
        return self.width, self.fast

    def _fold(self) -> None:
        layout = self.batch_layout
        if layout is None:
            return
        for rows, numbers, offset in ((self.batch, self.batch_lines, 0), (self.prefixed, self.prefixed_lines, 1)):
            if rows:
                columns = Columns.of(layout, offset)
                fold_batch(rows, numbers, columns, self.aggregator, functools.partial(self._strict, offset), self.known)
                rows.clear()
                numbers.clear()

    def _use(self, layout: Layout | None, from_header: bool) -> None:
        self.layout, self.from_header = layout, from_header
        self.columns = None if layout is None else Columns.of(layout)
        self.width = -1 if layout is None else layout.width
        self.proven, self.fitted = layout in self.proven_layouts, False
        self.fast = self.proven and len(self.aggregator.rows) >= self.aggregator.max_rows

    def _accept(self, row: RowValues, cut_off: bool) -> None:
        self._fold()  # raw rows and batched rows keep their log order
        self._commit_held()
        if cut_off:
            self.held = row  # committed if any line follows
        else:
            self.aggregator.add(*row)
        assert self.layout is not None
        self.proven_layouts.add(self.layout)
        self.proven = self.fitted = True
        self.fast = len(self.aggregator.rows) >= self.aggregator.max_rows

    def _commit_held(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            self.aggregator.add(*held)

    def _row(self, tokens: list[str], number: int, cut_off: bool = False) -> None:
        """A row with the current layout's width, read strictly."""
        assert self.columns is not None
        row = read_row(tokens, self.columns)
        if row is not None:
            self._accept(row, cut_off)
        elif self._skipped(tokens, self.columns, number):
            return
        elif self.fitted and self.from_header:
            self._reject(tokens, self.layout, number, cut_off)
        else:
            self._misfit(tokens, number, cut_off)

    def _strict(self, offset: int, tokens: list[str], number: int) -> None:
        """A batched row whose group failed the bulk check: read on its own (without its prefix token)."""
        assert self.batch_layout is not None
        if offset and not prefix_token(tokens[0]):
            self._reject(tokens, self.batch_layout, number)  # a row one cell too wide, not a prefixed row
            return
        if offset:
            prefix_tokens(tokens)  # a rank tag's copies glued to the cells of the row are cut out in place
        tokens = tokens[offset:]
        columns = Columns.of(self.batch_layout)
        row = read_row(tokens, columns)
        if row is None and not self._skipped(tokens, columns, number):
            layout = None if self.from_header else infer_layout(tokens)  # headerless: each row has its own shape
            if layout is None:
                self._reject(tokens, self.batch_layout, number)
            else:
                row = read_row(tokens, Columns.of(layout))
                if row is None and not self._skipped(tokens, Columns.of(layout), number):
                    self._reject(tokens, layout, number)
        if row is not None:
            self.aggregator.add(*row)

    def _skipped(self, tokens: list[str], columns: Columns, number: int) -> bool:
        """Whether a refused row is whole but for inf, nan or negative time/bandwidth cells; if so it is
        reported as skipped (never a silent drop: the log measured something and it went wrong)."""
        invalid = invalid_cells(tokens, columns)
        if invalid is not None:
            self.aggregator.skip(invalid[0], invalid[1], f"line {number}")
        return invalid is not None

    def _reject(self, tokens: list[str], layout: Layout | None, number: int, cut_off: bool = False) -> None:
        """A line refused as a row of `layout`: named as a skipped row when it looks like one. The input's
        last line, cut off before its newline, is not: it is an incomplete row, dropped by rule."""
        reason = None if cut_off else refusal(tokens, layout)
        if reason is not None:
            self.aggregator.skip(row_size(tokens[0]), reason, f"line {number}", refused_wrong(tokens, layout))

    def _misfit(self, tokens: list[str], number: int, cut_off: bool = False) -> None:
        """A row the current layout does not fit: infer its layout, unless a header has proven its own."""
        if self.from_header and self.fitted:
            self._reject(tokens, self.layout, number, cut_off)
            return
        layout = infer_layout(tokens)
        columns = None if layout is None else Columns.of(layout)
        row = None if columns is None else read_row(tokens, columns)
        if row is None:
            if columns is None or not self._skipped(tokens, columns, number):
                self._reject(tokens, layout or self.layout, number, cut_off)
            return
        # A header whose pattern fits no row (a blank redop cell) yields to the rows' own shape.
        self._use(layout, from_header=False)
        self._accept(row, cut_off)

    def _other(self, tokens: list[str], line: str) -> None:
        """Header, rank line, run start/end or footer; anything else (NCCL INFO, ssh noise) is noise."""
        first = tokens[0]
        if first[:1] == "#":
            tokens = tokens[1:] if first == "#" else [first.lstrip("#"), *tokens[1:]]
            if not tokens:
                return
            first = tokens[0]
        elif first not in _MARKER_WORDS:
            if self._watching():
                if _NCCL_FAILED.search(line):
                    self.aggregator.note_failure(" ".join(tokens)[:200])
                elif network := _NETWORK.search(line):
                    self.aggregator.note_network(network.group(1))
                elif connection := _CONNECTION.search(line):
                    self.aggregator.note_network_connection(connection.group(1))
            return
        if first not in _MARKER_WORDS:
            return
        self._commit_held()
        # Footers, rank counts and new tables judge `error` cells in log order; counts of wrong
        # elements are plain sums, so a batch of them rides on across markers.
        if self.batch_layout is not None and self.batch_layout.wrong_kind == "error":
            self._fold()
        text = " ".join(tokens)
        if first == "size":
            layout = layout_from_header(tokens)
            if layout is not None:
                self.aggregator.end_table()
                self._use(layout, from_header=True)
        elif first == "Rank":
            match = _RANK.match(text)
            if match:
                rank, host, device, bus, name = match.groups()
                self.aggregator.add_rank(int(rank), RankDevice(host, int(device), bus, name))
        elif first == "Collective":
            self._run_marker(text)
        elif text.startswith("Out of bounds"):
            match = _OUT_OF_BOUNDS.match(text)
            if match:
                self._footer()
                self.aggregator.add_out_of_bounds(read_count(match.group(1)))
        elif text.startswith("Avg bus"):
            match = _AVG_BUS.match(text)
            if match:
                self._footer()
            value = unsigned_number(match.group(1)) if match else None
            if value is not None:
                self.aggregator.avg_bus_bandwidth = value
            if match and match.group("failed") and self.aggregator.bandwidth_check is None:
                self.aggregator.bandwidth_check = value if value is not None else math.nan

    def _footer(self) -> None:
        """The run's summary: every row read so far (batched ones folded first) is a concluded run's."""
        self._fold()
        self.aggregator.footer()

    def _run_marker(self, text: str) -> None:
        match = _STARTING.match(text)
        if match:
            self._fold()  # the previous run's batched rows are its own: counted before it is closed
            # A new run may come from another build: forget the previous run's header.
            self._use(None, from_header=False)
            self.aggregator.start_run(match.group(1))
        elif text.startswith("Collective test concluded"):
            self.aggregator.runs_concluded += 1


def read_table(lines: Iterable[str], aggregator: NcclAggregator) -> None:
    """Stream `lines` through a TableReader into `aggregator`."""
    TableReader(aggregator).read(lines)
