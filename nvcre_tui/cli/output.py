"""Printing for the CLI: rich tables (YAML and JSON text come from engine/api/serialize.py)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from nvcre_tui.engine.printable import printable


class _Output(Console):
    """A Console whose reader going away (`| head`) is a BrokenPipeError for the CLI's entry point (exit 0, as for
    plain prints): Rich's own handling exits 1, which `parse` means as FAILED."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """A plain rich table on stdout (no colour when piped). Cells are plain text: a "[" in a parsed
    hostname is not Rich markup, and control characters are neutralised."""
    table = Table(*columns, title=title, box=None, header_style="bold", pad_edge=False)
    for row in rows:
        table.add_row(*(Text(printable(str(cell), newlines=False)) for cell in row))
    if sys.stdout.isatty():
        _Output().print(table)
        return
    # Piped output is for scripts and grep: never truncate cells to a guessed terminal width, and no cell padding
    # after a line's last word (Rich pads every cell to its column).
    console = _Output(width=1000, no_color=True)
    with console.capture() as captured:
        console.print(table)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
