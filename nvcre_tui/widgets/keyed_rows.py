"""A DataTable's rows brought to new contents in place: rows are keyed, and a refresh rewrites only changed cells.

When the keys are the same, in the same order and of the same heights, only cells that changed are updated (no
flicker, the cursor and scroll stay). Otherwise the rows are rebuilt, and the cursor stays on the same key, not on
the same row number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from nvcre_tui.engine.printable import printable


def literal(cell: Any) -> Any:
    """A str cell as it reads: a DataTable takes a str as markup, and cells carry the cluster's objects (a failure
    reason, a certification or category name) where `[/x]` would end the console and `[gpu0]` would vanish."""
    return Text(printable(cell, newlines=False)) if isinstance(cell, str) else cell


def selected_key(table: DataTable[Any]) -> str | None:
    """The key of the row under the cursor (None in an empty table)."""
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value) if table.row_count else None


def update_rows(table: DataTable[Any], rows: Mapping[str, Sequence[Any]], heights: Mapping[str, int] | None = None, *,
                selected: str | None = None) -> None:
    """Show `rows` (key -> cells, in order) in `table`, each `heights[key]` lines high (1 when not given); str cells
    are shown as written, never read as markup. `selected` is the key the cursor stays on when the table was emptied
    before the call (its columns replaced); otherwise the key under the cursor."""
    rows = {name: tuple(literal(cell) for cell in cells) for name, cells in rows.items()}
    heights = heights or {}
    if [key.value for key in table.rows] == list(rows) and all(table.rows[key].height == heights.get(str(key.value), 1) for key in table.rows):
        columns = list(table.columns)
        for name, cells in rows.items():
            for column, (old, new) in zip(columns, zip(table.get_row(name), cells, strict=True), strict=True):
                if old != new:  # widened to fit: a column keeps its first draw's width otherwise ("5m0" for "5m00s")
                    table.update_cell(name, column, new, update_width=True)
        return
    selected = selected_key(table) or selected
    table.clear()
    for name, cells in rows.items():
        table.add_row(*cells, key=name, height=heights.get(name, 1))
    if selected is not None and selected in table.rows:
        table.move_cursor(row=table.get_row_index(selected))
