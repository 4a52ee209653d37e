"""A DataTable fitted to its width: it never scrolls sideways while its words fit. When the rows do not fit on one
line each, columns that say little are left out first (what they say is reachable elsewhere: the detail pane, a
key); then cells wrap at words (`cut_at_word`'s, so a catalog key breaks after its "/") into rows of up to
MAX_LINES lines; then the columns left out last go. Widths are fitted again whenever the width or the rows change.

A table on 80 columns cut its last columns (a failure's measured value) until the user scrolled sideways."""

from __future__ import annotations

import bisect
import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import DataTable

from nvcre_tui.engine.printable import printable
from nvcre_tui.widgets.fitted_list import NO_BREAK, cut_at_word, longest_word, wrapped
from nvcre_tui.widgets.keyed_rows import selected_key, update_rows

MAX_LINES = 3  # a row's most lines: more and a table of a few rows shows one


class Drop(enum.Enum):
    """When a column is left out of a table too narrow for it."""

    NEVER = "never"
    FIRST = "first"  # before any row wraps: rows of one line say more than this column
    LAST = "last"  # only when the rows, wrapped, still do not fit


@dataclass(frozen=True)
class Column:
    """A column: its label (never cut: keep it short), when it may be left out, and whether its cells may wrap (a
    node's name on two lines, "✗" over "gpu-node-0001", doubled every row's height). `glyph`: its cells start with a
    glyph that stays on the line of the word after it ("✗ gpu-node-03" is one word), the rest wraps at words (a
    failures pane's "✗ fabric clique-0 ↔ clique-1 degraded", kept on one line, cut the measured value's threshold
    on 80 columns)."""

    label: str
    drop: Drop = Drop.NEVER
    wrap: bool = True
    glyph: bool = False


@dataclass(frozen=True)
class Layout:
    """The columns shown (indexes into the table's columns), each one's width (without the cells' padding), and the
    most lines a row takes."""

    shown: tuple[int, ...]
    widths: tuple[int, ...]
    lines: int


Narrowest = dict[tuple[str, int], int]  # (text, lines) -> narrowest(text, lines): a table's memo of them


def narrowest(text: str, lines: int, memo: Narrowest | None = None) -> int:
    """The narrowest width at which `text` wraps in `lines` lines without breaking a word (lines 0: its longest word's
    width); kept in `memo` (a table refreshed each second shows mostly the texts it showed before: each is wrapped
    once, not at every refit)."""
    if memo is not None:
        found = memo.get((text, lines))
        if found is None:
            found = memo[text, lines] = narrowest(text, lines)
        return found
    if not text.strip():
        return 0
    if lines == 0:
        return longest_word(text)
    low, high = longest_word(text), cell_len(text)
    while low < high:
        middle = (low + high) // 2
        if len(wrapped(text, middle)) <= lines:
            high = middle
        else:
            low = middle + 1
    return low


def fit_columns(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, *, padding: int = 1,
                max_lines: int = MAX_LINES, memo: Narrowest | None = None) -> Layout:
    """The layout that fits `rows` in `width` columns (see the module's docstring for the order of what gives way).
    When nothing does, the columns that are never dropped take their longest words' widths and the rows are cut at
    `max_lines` with "…"; words are never broken, so a table narrower than its longest words still scrolls."""
    texts = [{row[index] for row in rows} for index in range(len(columns))]
    floors = [max([cell_len(column.label), *((narrowest(text, 0, memo) if column.wrap else cell_len(text)) for text in texts[index])])
              for index, column in enumerate(columns)]

    def need(index: int, lines: int) -> int:
        return max([floors[index], *(narrowest(text, lines, memo) for text in texts[index] if cell_len(text) > floors[index])])

    def fits(shown: Sequence[int], widths: Sequence[int]) -> bool:
        return sum(widths) + 2 * padding * len(shown) <= width

    def breakpoints(index: int, lines: int) -> set[int]:
        return {narrowest(text, fewer, memo) for text in texts[index] for fewer in range(1, lines + 1)}

    def layout(shown: Sequence[int], widths: Sequence[int], lines: int) -> Layout:
        points = [breakpoints(index, lines) for index in shown]
        return Layout(tuple(shown), _grown(widths, points, width - 2 * padding * len(shown)), lines)

    shown = list(range(len(columns)))
    for index, lines in _attempts(columns, max_lines):
        if index is not None:
            shown.remove(index)
        widths = [need(i, lines) for i in shown]
        if fits(shown, widths):
            return layout(shown, widths, lines)
    return layout(shown, [floors[i] for i in shown], max_lines)


def _attempts(columns: Sequence[Column], max_lines: int) -> list[tuple[int | None, int]]:
    """What gives way, in order: (a column to leave out from now on, or None; the lines a row may take)."""
    last_first = list(reversed(range(len(columns))))  # the rightmost of a kind goes first
    attempts: list[tuple[int | None, int]] = [(None, 1)]
    attempts += [(index, 1) for index in last_first if columns[index].drop is Drop.FIRST]
    attempts += [(None, lines) for lines in range(2, max_lines + 1)]
    for index in (i for i in last_first if columns[i].drop is Drop.LAST):
        attempts += [(index, 1)] + [(None, lines) for lines in range(2, max_lines + 1)]
    return attempts


def _grown(widths: Sequence[int], breakpoints: Sequence[Collection[int]], room: int) -> tuple[int, ...]:
    """`widths` given the room left over: step by step, the column whose next breakpoint (a width at which one of
    its cells takes a line fewer) is nearest, while the room lasts; so the most cells lose a line."""
    grown = list(widths)
    spare = room - sum(grown)
    points = [sorted(column) for column in breakpoints]
    while True:
        nearest = [(column[at] - grown[index], index) for index, column in enumerate(points)
                   if (at := bisect.bisect_right(column, grown[index])) < len(column)]
        step, index = min(nearest, default=(spare + 1, -1))
        if step > spare:
            return tuple(grown)
        grown[index] += step
        spare -= step


class FittedTable(DataTable[Text]):
    """A row-cursor DataTable of str cells whose columns are fitted to its width (`fit_columns`); rows are keyed, and
    the cursor stays on the same key when they change."""

    DEFAULT_CSS = "FittedTable { scrollbar-size-vertical: 1; }"  # its room is kept in the fitting: one column, not two
    # A fitted table never scrolls sideways, so DataTable's home and end (first and last column) did nothing: here they
    # go to the first and last row, as ctrl+home and ctrl+end do.
    BINDINGS = [
        Binding("home", "scroll_top", "First row", show=False, id="table.first"),
        Binding("end", "scroll_bottom", "Last row", show=False, id="table.last"),
    ]

    def __init__(self, columns: Sequence[Column], *, id: str | None = None) -> None:  # noqa: A002 - Textual's keyword
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)  # stripes: where one wrapped row ends
        self.fitted_columns = tuple(columns)
        self._texts: dict[str, tuple[str, ...]] = {}
        self._layout: Layout | None = None  # the layout shown
        self._width = 0  # the width it was fitted to
        # What refits computed, by text: a failures pane of 1,000 rows refreshed each second changes a few of them.
        self._narrowest: Narrowest = {}
        self._cuts: dict[tuple[str, int, int], list[str]] = {}

    def on_mount(self) -> None:
        self._refit()  # the header, before any row

    def set_rows(self, rows: Mapping[str, Sequence[str]]) -> None:
        """Show `rows` (key -> cells, in order); the cells are shown as written (they come from the cluster's objects)."""
        glyphs = [column.glyph for column in self.fitted_columns]
        texts = {key: tuple(self._glued(printable(cell, newlines=False), index < len(glyphs) and glyphs[index]) for index, cell in enumerate(cells))
                 for key, cells in rows.items()}
        if list(texts.items()) != list(self._texts.items()):  # in order: the same rows reordered are shown reordered
            self._texts = texts
            self._refit()

    def on_resize(self, event: events.Resize) -> None:
        if self.size.width != self._width:  # not when only the height changed (rows wrapped or added)
            self._refit()

    def _refit(self) -> None:
        self._width = self.size.width
        # Not laid out yet: every column at its natural width until the first resize. The scrollbar's room is kept:
        # fitted without it, rows wrapped taller could bring it and push the last column out.
        width = self._width - self.styles.scrollbar_size_vertical if self._width else 10_000
        self._forget_unshown()
        layout = fit_columns(self.fitted_columns, list(self._texts.values()), width, padding=self.cell_padding, memo=self._narrowest)
        cells: dict[str, tuple[Text, ...]] = {}
        heights: dict[str, int] = {}
        for key, row in self._texts.items():
            lines = [self._cut(row[index], column_width, layout.lines) for index, column_width in zip(layout.shown, layout.widths)]
            cells[key] = tuple(Text("\n".join(cell).replace(NO_BREAK, " ")) for cell in lines)
            heights[key] = max([1, *(len(cell) for cell in lines)])
        if self._layout is None or (self._layout.shown, self._layout.widths) != (layout.shown, layout.widths):
            selected = selected_key(self)
            self.clear(columns=True)  # new widths: Textual has no call to change a column's width
            for index, column_width in zip(layout.shown, layout.widths):
                self.add_column(Text(self.fitted_columns[index].label), width=column_width, key=str(index))
            update_rows(self, cells, heights, selected=selected)
        else:
            update_rows(self, cells, heights)
        self._layout = layout

    @staticmethod
    def _glued(cell: str, glyph: bool) -> str:
        """A glyph column's cell with its glyph glued to the word after it (shown with a plain space again)."""
        return cell.replace(" ", NO_BREAK, 1) if glyph else cell

    def _cut(self, text: str, width: int, lines: int) -> list[str]:
        key = (text, width, lines)
        found = self._cuts.get(key)
        if found is None:
            found = self._cuts[key] = cut_at_word(text, width, lines)
        return found

    def _forget_unshown(self) -> None:
        """Empty the memos once they hold far more than the rows shown (texts gone, widths left behind)."""
        cells = sum(len(row) for row in self._texts.values())
        if len(self._narrowest) + len(self._cuts) > 8 * MAX_LINES * max(cells, 64):
            self._narrowest.clear()
            self._cuts.clear()
