"""Where the cells of an nccl-tests result row are, from a header or from a row, and the strict row check.

Every generation people still run: with or without the root column, `#wrong` counts or the older
`error` column (a maximum deviation), per-iteration statistics (-I), a trailing timestamp (-S).
A row must fit its layout exactly, or it is skipped, never guessed at; a row that fits but for time or
bandwidth cells printed as inf, nan or a negative number is told apart (`invalid_cells`), and any other
line that looks like a row is given its reason (`refusal`), so that every skipped row can be reported.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from nvcre_tui.engine.parsers.base import signed_int, unsigned_int, unsigned_magnitude, unsigned_number
from nvcre_tui.engine.parsers.nccl_model import HalfValues, RowValues

_TIME_NAMES = frozenset({"time", "cputime"})
_WRONG_NAMES = {"#wrong": "count", "wrong": "count", "error": "error", "errors": "error"}
_PREFIX_NAMES = ("size", "count", "type", "redop", "root")
WORD = re.compile(r"[A-Za-z_]\S*", re.ASCII)
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_CLOCK = re.compile(r"\d\d:\d\d:\d\d", re.ASCII)
# "%5.0e" (the `error` column) prints one digit and an exponent; "%6g" counts never look like that
# below a million, and from there both readings convict.
_ERROR_CELL = re.compile(r"\de[-+]\d\d", re.ASCII)
# What printf makes of a double ("-nan", "inf", "-1.00"; a sign only when negative): a cell of this shape
# that is not a finite non-negative value is a measurement gone wrong, not noise.
_PRINTED_NUMBER = re.compile(r"-?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf(?:inity)?|nan)",
                             re.ASCII | re.IGNORECASE)
_HALF_NAMES = ("", "in-place ")
# A line "looks like a data row" when its first cell is a size (ASCII digits, however many: nccl-tests prints a
# size_t of at most 20, and a longer or negative one is a row gone wrong, not noise), it has 9 to 25 cells (every
# layout's 11 to 23, give or take two) and at least half of its cells hold a digit. Headers, '#' comments, banners, NCCL INFO/WARN lines and footers never start with a bare
# number; prose that does ("2 ranks failed ...") is mostly words.
_ROW_CELLS = range(9, 26)
#: The type cell of a row: nccl-tests' type names (ncclDataType_t), float8 ones included.
DATA_TYPES = frozenset({"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
                        "f8e4m3", "f8e5m2"})
_SHOWN_CELL = 24  # a refused cell is named with at most this many characters


@dataclass(frozen=True)
class Layout:
    """Where the cells of a data row are: prefix columns, cells per half, optional trailing timestamp."""

    prefix: tuple[str, ...]  # subset of size, count, type, redop, root, in printed order
    half_width: int  # 4 normally; 8 with -I per-iteration statistics
    algbw_at: int
    busbw_at: int
    wrong_at: int | None  # None when the table has no wrong/error column
    timestamp: bool  # -S prints "YYYY-mm-dd HH:MM:SS" after the in-place half
    wrong_kind: str = "count"  # "count" (#wrong) or "error" (older builds: max deviation)

    @property
    def width(self) -> int:
        """Whitespace-separated cells in a row of this layout."""
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
    if half.index("algbw") != 1 or half.index("busbw") != 2 or wrong[:1] not in ([], [3]):
        return None  # every generation prints time, algbw, busbw, wrong: anything else is not a header
    return Layout(
        prefix=prefix,
        half_width=len(half),
        algbw_at=half.index("algbw"),
        busbw_at=half.index("busbw"),
        wrong_at=wrong[0] if wrong else None,
        timestamp=tail == ["timestamp"],
        wrong_kind=_WRONG_NAMES[half[wrong[0]]] if wrong else "count",
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
    wrong_cell = tokens[len(prefix) + 3]
    kind = "error" if _ERROR_CELL.fullmatch(wrong_cell) else "count"
    return Layout(prefix, half_width, 1, 2, 3, timestamp, kind)


@dataclass(frozen=True)
class Columns:
    """Token indices of a layout's cells, for readers working on split rows."""

    size: int
    count: int
    type: int
    redop: int | None
    root: int | None
    halves: tuple[int, int]  # first cell of the out-of-place and in-place halves
    algbw: int  # offsets inside a half
    busbw: int
    wrong: int | None
    error_kind: bool
    timestamp: int | None  # index of the date cell

    @staticmethod
    def of(layout: Layout, offset: int = 0) -> Columns:
        """The (shared) Columns of `layout` for rows behind `offset` prefix tokens: one object per
        (layout, offset), so readers can compare them by identity."""
        return _columns(layout, offset)


@functools.lru_cache(maxsize=64)
def _columns(layout: Layout, offset: int) -> Columns:
    at = {name: index + offset for index, name in enumerate(layout.prefix)}
    first = len(layout.prefix) + offset
    return Columns(at["size"], at["count"], at["type"], at.get("redop"), at.get("root"),
                   (first, first + layout.half_width), layout.algbw_at, layout.busbw_at, layout.wrong_at,
                   layout.wrong_kind == "error", first + 2 * layout.half_width if layout.timestamp else None)


def _half(tokens: list[str], start: int, columns: Columns) -> HalfValues | None:
    time_us = unsigned_number(tokens[start])
    algbw = unsigned_number(tokens[start + columns.algbw])
    busbw = unsigned_number(tokens[start + columns.busbw])
    if time_us is None or algbw is None or busbw is None:
        return None
    wrong: float | None = None
    if columns.wrong is not None:
        cell = tokens[start + columns.wrong]
        if cell != "N/A":
            wrong = unsigned_magnitude(cell)  # inf wrong elements, or an error of inf, convicts: never a skipped row
            if wrong is None:
                return None
    if columns.error_kind:
        return time_us, algbw, busbw, None, wrong
    return time_us, algbw, busbw, wrong, None


def read_row(tokens: list[str], columns: Columns) -> RowValues | None:
    """(size, count, type, redop, root, out-of-place, in-place) of a split row, or None if a cell is not valid."""
    size, count = tokens[columns.size], tokens[columns.count]
    if len(size) > 20 or len(count) > 20:
        return None
    size_value, count_value = unsigned_int(size), unsigned_int(count)
    kind = tokens[columns.type]
    redop = tokens[columns.redop] if columns.redop is not None else "none"
    if size_value is None or count_value is None or WORD.fullmatch(kind) is None or WORD.fullmatch(redop) is None:
        return None
    root = None
    if columns.root is not None:
        cell = tokens[columns.root]
        root = signed_int(cell) if len(cell) <= 11 else None
        if root is None:
            return None
    if columns.timestamp is not None and not (_DATE.fullmatch(tokens[columns.timestamp])
                                              and _CLOCK.fullmatch(tokens[columns.timestamp + 1])):
        return None
    out_of_place = _half(tokens, columns.halves[0], columns)
    in_place = _half(tokens, columns.halves[1], columns)
    if out_of_place is None or in_place is None:
        return None
    return size_value, count_value, kind, redop, root, out_of_place, in_place


def _invalid_number(cell: str) -> bool:
    """Whether `cell` is a printed number that is inf, nan or negative (-0.00 included)."""
    if len(cell) > 40 or _PRINTED_NUMBER.fullmatch(cell) is None:
        return False
    value = float(cell)
    return not math.isfinite(value) or cell[0] == "-"


def invalid_cells(tokens: list[str], columns: Columns) -> tuple[int, str] | None:
    """(size, "busbw inf") of a row `read_row` refused only because time or bandwidth cells are inf, nan
    or negative; None for anything else (noise, a row of another shape, a row with other bad cells)."""
    named: list[str] = []
    repaired = list(tokens)
    for half, start in zip(_HALF_NAMES, columns.halves):
        for name, offset in (("time", 0), ("algbw", columns.algbw), ("busbw", columns.busbw)):
            cell = tokens[start + offset]
            if _invalid_number(cell):
                named.append(f"{half}{name} {cell}")
                repaired[start + offset] = "0"
    if not named:
        return None
    row = read_row(repaired, columns)  # with those cells as 0 the row must be whole, or it is no row at all
    return None if row is None else (row[0], ", ".join(named))


def _shown(cell: str) -> str:
    return cell if len(cell) <= _SHOWN_CELL else f"{cell[:_SHOWN_CELL - 3]}..."


def row_size(cell: str) -> int | None:
    """The size a row's first cell names, None when it names none (negative, past a size_t's 20 digits)."""
    return unsigned_int(cell) if len(cell) <= 20 else None


def sized(cell: str) -> bool:
    """Whether a first cell is printed as a size is, readable or not: ASCII digits, a minus sign allowed."""
    digits = cell[1:] if cell[:1] == "-" else cell
    return digits.isascii() and digits.isdigit()


def looks_like_row(tokens: list[str]) -> bool:
    """Whether a split line has the shape of an nccl-tests data row (see _ROW_CELLS), valid or not; or starts as
    one does (size, count, data type) whatever follows: another rank's output printed into the row's middle."""
    if not tokens or not sized(tokens[0]):
        return False
    if len(tokens) >= 3 and tokens[1].isascii() and tokens[1].isdigit() and tokens[2] in DATA_TYPES:
        return True
    if len(tokens) not in _ROW_CELLS:
        return False
    return 2 * sum(1 for token in tokens if any(map(str.isdigit, token))) >= len(tokens)


def _unreadable(tokens: list[str], columns: Columns) -> str | None:
    """'count 1_000': the first cell of a row of its layout's width that `read_row` cannot read."""
    def whole(cell: str) -> object:
        return unsigned_int(cell) if len(cell) <= 20 else None

    def root(cell: str) -> object:
        return signed_int(cell) if len(cell) <= 11 else None

    def wrong(cell: str) -> object:
        return True if cell == "N/A" else unsigned_magnitude(cell)

    checks: list[tuple[str, int, Callable[[str], object]]] = [
        ("size", columns.size, whole), ("count", columns.count, whole), ("type", columns.type, WORD.fullmatch)]
    if columns.redop is not None:
        checks.append(("redop", columns.redop, WORD.fullmatch))
    if columns.root is not None:
        checks.append(("root", columns.root, root))
    if columns.timestamp is not None:
        checks += [("date", columns.timestamp, _DATE.fullmatch), ("clock", columns.timestamp + 1, _CLOCK.fullmatch)]
    for half, start in zip(_HALF_NAMES, columns.halves):
        checks += [(f"{half}time", start, unsigned_number), (f"{half}algbw", start + columns.algbw, unsigned_number),
                   (f"{half}busbw", start + columns.busbw, unsigned_number)]
        if columns.wrong is not None:
            checks.append((f"{half}{'error' if columns.error_kind else '#wrong'}", start + columns.wrong, wrong))
    return next((f"{name} {_shown(tokens[index])}" for name, index, check in checks if check(tokens[index]) is None),
                None)


def refused_wrong(tokens: list[str], layout: Layout | None) -> float | None:
    """The wrong elements a refused line of `layout`'s width counts in its readable `#wrong` cells (None: none)."""
    if layout is None or len(tokens) != layout.width or layout.wrong_at is None or layout.wrong_kind != "count":
        return None
    columns = Columns.of(layout)
    counts = [unsigned_magnitude(tokens[start + layout.wrong_at]) for start in columns.halves]
    return sum(count for count in counts if count is not None) or None


def refusal(tokens: list[str], layout: Layout | None) -> str | None:
    """Why a line that looks like a data row is not one of the table being read ('busbw +4', '14 cells (the
    table has 13)'); None for a line that does not look like a row (noise is no refused row)."""
    if not looks_like_row(tokens):
        return None
    if layout is None:
        return f"{len(tokens)} cells (no nccl-tests layout)"
    if len(tokens) != layout.width:
        return f"{len(tokens)} cells (the table has {layout.width})"
    return _unreadable(tokens, Columns.of(layout)) or "unreadable"
