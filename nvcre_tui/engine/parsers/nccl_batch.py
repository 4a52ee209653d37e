"""Folding many split nccl-tests rows into the aggregator at once: the fast path of the table reader.

Rows are grouped by their size cell; each group's columns are checked and converted in bulk (C loops
over whole columns instead of Python work per cell), and only the cells the averages keep are
converted. A group whose bulk check fails is handed back row by row to the strict reader, so the
fast path never accepts a row the strict one would refuse.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from operator import itemgetter

from nvcre_tui.engine.parsers.base import signed_int, unsigned_int, unsigned_magnitude
from nvcre_tui.engine.parsers.nccl_layout import WORD, Columns
from nvcre_tui.engine.parsers.nccl_model import NcclAggregator

_CLOCKS = re.compile(r"\d\d:\d\d:\d\d(?: \d\d:\d\d:\d\d)*", re.ASCII)
_DATES = re.compile(r"\d{4}-\d\d-\d\d(?: \d{4}-\d\d-\d\d)*", re.ASCII)


def _plain_numbers(text: str) -> bool:
    """Whether float() of these cells can only have read what nccl-tests prints.

    float() also takes non-ASCII digits, "1_000", signs, "nan" and "inf": the first three are
    excluded here (a sign only inside an exponent), the last two by the finite sums that follow.
    """
    if not text.isascii() or "_" in text:
        return False
    if "-" in text and text.count("-") != text.count("e-") + text.count("E-"):
        return False
    return "+" not in text or text.count("+") == text.count("e+") + text.count("E+")


def _sum(cells: tuple[str, ...]) -> float | None:
    """The sum of a column of unsigned decimals, None when a cell is not one (or it overflows)."""
    try:
        total = sum(map(float, cells))
    except ValueError:
        return None
    return total if math.isfinite(total) else None


class KnownCells:
    """Cells already found valid, per kind of column: most groups then need one set comparison each."""

    LIMIT = 4096  # a hostile log of ever-new cells must not grow memory

    def __init__(self) -> None:
        self.valid: dict[str, set[str]] = {"count": set(), "word": set(), "root": set()}

    def check(self, kind: str, cells: tuple[str, ...], check: Callable[[str], object]) -> bool:
        known = self.valid[kind]
        if cells[0] in known and cells.count(cells[0]) == len(cells):
            return True  # the usual column of one size: one value, seen before (compared, not hashed)
        if known.issuperset(cells):
            return True
        fresh = set(cells) - known
        if any(check(cell) is None for cell in fresh):
            return False
        if len(known) < self.LIMIT:
            known |= fresh
        return True


def _count(cell: str) -> int | None:
    return unsigned_int(cell) if len(cell) <= 20 else None


def _root(cell: str) -> int | None:
    return signed_int(cell) if len(cell) <= 11 else None


_NO_WRONG = frozenset({"0", "N/A", "0e+00"})


def _wrong_cells(cells: tuple[str, ...]) -> list[float] | None:
    """The values of #wrong/error cells other than 0 and N/A; None when one is not a number."""
    if _NO_WRONG.issuperset(cells):
        return []
    values = []
    for cell in set(cells) - _NO_WRONG:
        value = unsigned_magnitude(cell)  # as the strict reader: inf (or too large for a float) is a value
        if value is None:
            return None
        values.append(value)
    return values


def prefix_token(token: str) -> bool:
    """Whether a token before a row's cells can be a launcher prefix: not a cell, not a comment."""
    return not token.isdigit() and token[:1] != "#"


def _fold_group(cells: list[tuple[str, ...]], columns: Columns, aggregator: NcclAggregator, known: KnownCells) -> bool:
    """Fold the columns of rows of one size cell; False (nothing folded) when any cell fails the bulk check."""
    if columns.size and ("#" in "".join(cells[0]) or any(map(str.isdigit, cells[0]))):
        return False  # the prefix column must hold prefixes (a timestamp, a tag), never a cell or a comment
    size_cell = cells[columns.size][0]
    size = unsigned_int(size_cell) if len(size_cell) <= 20 else None
    if size is None or cells[columns.type].count(cells[columns.type][0]) != len(cells[columns.type]):
        return False
    if not (known.check("count", cells[columns.count], _count) and known.check("word", cells[columns.type], WORD.fullmatch)):
        return False
    if columns.redop is not None and not known.check("word", cells[columns.redop], WORD.fullmatch):
        return False
    if columns.root is not None and not known.check("root", cells[columns.root], _root):
        return False
    if columns.timestamp is not None and not (_DATES.fullmatch(" ".join(cells[columns.timestamp]))
                                              and _CLOCKS.fullmatch(" ".join(cells[columns.timestamp + 1]))):
        return False
    kept = [first + offset for first in columns.halves for offset in (0, columns.algbw, columns.busbw)]
    if not _plain_numbers(" ".join(itertools.chain.from_iterable(cells[index] for index in kept))):
        return False
    try:
        busbw = list(map(float, cells[kept[2]]))
    except ValueError:
        return False
    sums = [_sum(cells[index]) for index in kept[:2]] + [sum(busbw)] + [_sum(cells[index]) for index in kept[3:]]
    totals = [total for total in sums if total is not None and math.isfinite(total)]
    if len(totals) < len(sums):  # a column of non-numbers, or a total that is not finite
        return False
    wrong, max_error = 0.0, None
    if columns.wrong is not None:
        values = _wrong_cells(cells[columns.halves[0] + columns.wrong] + cells[columns.halves[1] + columns.wrong])
        if values is None:
            return False
        if columns.error_kind:
            max_error = max(values, default=0.0)
        else:
            # Distinct values were checked; the total needs every cell.
            both = cells[columns.halves[0] + columns.wrong] + cells[columns.halves[1] + columns.wrong]
            wrong = sum(float(cell) for cell in both if cell != "N/A") if values else 0.0
    redop = cells[columns.redop][0] if columns.redop is not None else "none"
    aggregator.add_group(size, int(cells[columns.count][0]), cells[columns.type][0], redop, len(busbw),
                         totals, min(busbw), max(busbw), wrong, max_error)
    return True


def _period(sizes: tuple[str, ...]) -> int:
    """The cycle length of the size column (each cycle of a run prints the same sizes), 0 when there is none."""
    period = sizes.index(sizes[0], 1) if sizes[0] in sizes[1:] else len(sizes)
    return period if sizes[period:] == sizes[:-period] else 0


def fold_batch(batch: list[list[str]], lines: list[int], columns: Columns, aggregator: NcclAggregator,
               strict: Callable[[list[str], int], None], known: KnownCells) -> None:
    """Fold `batch` (split rows of one layout, in log order, from the lines numbered in `lines`) into
    `aggregator`; `strict` reads the rows of rejected groups, each with its line number.

    Rows of one size are every `period`-th row when the batch holds whole cycles (the usual case: a
    strided slice of each column, no sorting); otherwise they are grouped by sorting on the size cell.
    """
    cells = list(zip(*batch))
    period = _period(cells[columns.size])
    if period:
        for start in range(period):  # sizes come in first-seen order, as the aggregator keeps them
            if not _fold_group([column[start::period] for column in cells], columns, aggregator, known):
                for row, line in zip(batch[start::period], lines[start::period]):
                    strict(row, line)
        return
    key = itemgetter(columns.size)
    order = dict.fromkeys(map(key, batch))
    ordered = sorted(batch, key=key)  # stable: within a size, log order is kept
    groups = {size: list(group) for size, group in itertools.groupby(ordered, key)}
    line_of: dict[int, int] | None = None  # row identity -> line number, built only if a group is rejected
    for size in order:
        rows = groups[size]
        if not _fold_group(list(zip(*rows)), columns, aggregator, known):
            if line_of is None:
                line_of = {id(row): line for row, line in zip(batch, lines)}
            for row in rows:
                strict(row, line_of[id(row)])
