"""nccl-tests results (`all_reduce_perf`, `all_gather_perf`, `alltoall_perf`, `sendrecv_perf`, `*_mpi`, loopback `-g`).

`parse_nccl` reads either the stdout table (streamed, memory bounded by the number of message sizes)
or the `-J` JSON document, and returns an NcclResult whose `bus_bandwidth_gbps` follows NVCRE: the
maximum over sizes of the per-size average out-of-place busbw. Its verdict is DataCorruption when a
`#wrong` cell counts wrong elements, when an older build's `error` cell exceeds nccl-tests' own
tolerance in a table without footer (or reads inf: a data-check cell of inf, or of a number too large for
a float, is never skipped), or when an out-of-bounds footer says so; BandwidthCheckFailed when nccl-tests' own check
of its average bus bandwidth (NCCL_TESTS_MIN_BW) says FAILED. Result rows that no summary footer
follows (output cut off, or a run that died), and a run that printed its header but neither rows nor a
summary (named with the first NCCL failure line it printed), make it `incomplete`. A row whose time or
bandwidth is inf, nan or negative, and a line that looks like a row but is refused (an unreadable cell,
the wrong number of cells), is in no average but is counted and named in `notes()`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from nvcre_tui.engine.parsers.base import as_lines, reading
from nvcre_tui.engine.parsers.nccl_json import read_json
from nvcre_tui.engine.parsers.nccl_model import (BANDWIDTH_CHECK_FAILED, DATA_CORRUPTION, DEFAULT_MAX_ROWS, Half, HalfAverage,
                                                 NcclAggregator, NcclResult, RankDevice, Row, SizeAverage, SkippedRow)
from nvcre_tui.engine.parsers.nccl_table import read_table
from nvcre_tui.engine.parsers.prefixes import strip_line_prefixes

__all__ = [
    "BANDWIDTH_CHECK_FAILED",
    "DATA_CORRUPTION",
    "Half",
    "HalfAverage",
    "NcclResult",
    "RankDevice",
    "Row",
    "SizeAverage",
    "SkippedRow",
    "parse_nccl",
]


def parse_nccl(source: Iterable[str] | str, *, max_rows: int = DEFAULT_MAX_ROWS) -> NcclResult:
    """Parse nccl-tests output from lines (or one text).

    Raises ParseError(NoDataCollected) when no valid result row is found, ParseError(WrongFormat) for a
    JSON document that is not -J output. Rows beyond `max_rows` still count in every average.
    """
    with reading():
        return _parse(as_lines(source), max_rows)


def _parse(lines: Iterator[str], max_rows: int) -> NcclResult:
    aggregator = NcclAggregator(max_rows)
    head: list[str] = []
    for line in lines:
        head.append(line)
        text = strip_line_prefixes(line).strip()
        if text:
            if text.startswith("{"):
                document = "".join(strip_line_prefixes(part) for part in itertools.chain(head, lines))
                read_json(document, aggregator)
                return aggregator.result()
            break
    read_table(itertools.chain(head, lines), aggregator)
    return aggregator.result()
