"""Printing objects for the CLI: YAML (multi-document), JSON, rich tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table
from rich.text import Text

from nvcre_tui.engine.printable import json_printable, printable


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


class _Dumper(yaml.SafeDumper):
    """Block-style YAML with multi-line strings as literal blocks."""


_Dumper.add_representer(str, _str_presenter)


def to_yaml(documents: Sequence[Any]) -> str:
    """Multi-document YAML, keys in insertion order."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def to_json(value: Any) -> str:
    """Indented JSON (control characters escaped, so it is safe on a terminal)."""
    return json_printable(json.dumps(value, indent=2, ensure_ascii=False))


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """A plain rich table on stdout (no colour when piped). Cells are plain text: a "[" in a parsed
    hostname is not Rich markup, and control characters are neutralised."""
    table = Table(*columns, title=title, box=None, header_style="bold", pad_edge=False)
    for row in rows:
        table.add_row(*(Text(printable(str(cell), newlines=False)) for cell in row))
    # Piped output is for scripts and grep: never truncate cells to a guessed terminal width.
    console = Console() if sys.stdout.isatty() else Console(width=1000, no_color=True)
    console.print(table)
