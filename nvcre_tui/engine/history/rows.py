"""The history's rows as the archive writes them: what each field must be, checked as each row is read (`_checked`),
and the join that reads a node's results (queries.py's, and summaries.py's, which checks in SQL what it does not read).

A field that is not what the archive writes (a hand edit, a damaged disk) is a `DamagedHistory` naming the file, the
table, the row and the field, before anything is shown.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED, NodeState
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.units import count

Obj = dict[str, Any]
NOT_PASSED = {"failed", "suspect", "inconclusive"}
STATES = frozenset(state.value for state in NodeState)
RESULTS = (RESULT_PASSED, RESULT_FAILED, RESULT_INCOMPLETE)  # what a finished certification's summary says; only finished ones are archived


class DamagedHistory(InputError):
    """A history row that is not what the archive writes (edited by hand, a damaged disk): one line naming the
    file, the table, the row and the field (bad input: the CLI exits 2, the console says it), never a traceback."""


def _shown(value: Any) -> str:
    """A stored value as a message shows it: its SQLite type and (shortened) value."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a BLOB of {len(value)} byte{'s' if len(value) != 1 else ''}"
    text = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return f"{'text' if isinstance(value, str) else 'an integer' if isinstance(value, int) else 'a real'} {text}"


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _name(value: Any) -> str:
    """A row's key as its message names it (a damaged key shown as what it is)."""
    return value if isinstance(value, str) and value and value.isprintable() and " " not in value else repr(value)


# What each field is: text | time (RFC 3339 text) | state (a node state) | result (a certification's) | count (a whole
# number >= 0) | number (finite) | object | objects (an array of them) | baseline (a JSON object of text) | measurements (a JSON object of
# finite numbers); `?` after one: or NULL (for baseline: no baseline row)
def _checked(path: Path, table: str, row: sqlite3.Row, fields: Mapping[str, str], where: str) -> Obj:
    """The fields of one row, decoded and checked; DamagedHistory names the file, table, row and field of the first
    damage. `fields` maps the row's column (as selected) to what it must be."""

    def damaged(column: str, what: str) -> DamagedHistory:
        return DamagedHistory(printable(f"{path}: damaged history: {table} row ({where}): {column} {what}", newlines=False))

    found: Obj = {}
    for column, kind in fields.items():
        value = row[column]
        optional = kind.endswith("?")
        kind = kind.rstrip("?")
        if value is None and optional:
            found[column] = None
        elif kind in ("text", "state", "result", "time"):
            if not isinstance(value, str):
                raise damaged(column, f"is {_shown(value)}, not text")
            if kind == "state" and value not in STATES:
                raise damaged(column, f"is {_shown(value)}, not a node state ({', '.join(sorted(STATES))})")
            if kind == "result" and value not in RESULTS:
                raise damaged(column, f"is {_shown(value)}, not a certification result ({', '.join(RESULTS)})")
            if kind == "time":
                try:
                    parse_time(value)
                except ValueError:
                    raise damaged(column, f"is {_shown(value)}, not a time like 2026-11-29T10:00:00Z") from None
            found[column] = value
        elif kind == "count":
            if not isinstance(value, int) or value < 0:
                raise damaged(column, f"is {_shown(value)}, not a whole number >= 0")
            found[column] = value
        elif kind == "number":
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise damaged(column, f"is {_shown(value)}, not a finite number")
            found[column] = float(value)
        else:  # JSON text: object | objects (an array of them) | baseline
            if not isinstance(value, str):
                raise damaged(column, f"is {_shown(value)}, not JSON text")
            try:
                decoded = json.loads(value)
            except ValueError as error:
                raise damaged(column, f"is not JSON ({str(error).splitlines()[0][:80]})") from None
            except RecursionError:
                raise damaged(column, "is JSON nested too deep to read") from None
            wanted = list if kind == "objects" else dict
            if not isinstance(decoded, wanted):
                raise damaged(column, f"is {_json_type(decoded)}, not {'an array' if wanted is list else 'an object'}")
            if kind == "objects" and isinstance(decoded, list):  # each read by its keys
                bad_index = next((i for i, part in enumerate(decoded) if not isinstance(part, dict)), None)
                if bad_index is not None:
                    raise damaged(f"{column}[{bad_index}]", f"is {_json_type(decoded[bad_index])}, not an object")
            if kind == "baseline" and isinstance(decoded, dict):
                bad = next((key for key, part in decoded.items() if not isinstance(part, str)), None)
                if bad is not None:
                    raise damaged(f"{column}.{bad}", f"is {_json_type(decoded[bad])}, not text")
            if kind == "measurements" and isinstance(decoded, dict):  # shown and plotted as numbers
                for key, part in decoded.items():
                    if isinstance(part, bool) or not isinstance(part, int | float):
                        raise damaged(f"{column}.{key}", f"is {_json_type(part)}, not a finite number")
                    if not math.isfinite(part):
                        raise damaged(f"{column}.{key}", f"is {part}, not a finite number")
            found[column] = decoded
    return found


CERTIFICATION_FIELDS = {"id": "count", "name": "text", "namespace": "text", "result": "result", "completion_time": "time?"}
RESULT_FIELDS = {"category": "text", "state": "state", "reason": "text", "message": "text", "bus_bw": "number?",
                 "measurements": "measurements", "evidence": "objects", "jobs": "objects"}
# A node's results with their certification and its baseline there (`_node`, `_histories`): WHERE and ORDER BY follow.
_RESULTS_SELECT = ("SELECT c.id, c.name, c.namespace, c.result, c.completion_time, r.node, r.category, r.state, r.reason, r.message, "
                   "r.bus_bw, r.measurements, r.evidence, r.jobs, b.baseline FROM node_results r JOIN certifications c ON c.id = r.cert_id "
                   "LEFT JOIN node_baselines b ON b.cert_id = r.cert_id AND b.node = r.node")


def _certification(row: sqlite3.Row) -> str:
    """`certification 3 burn-in`: the row's certification (by id, always a whole number, and name)."""
    return f"certification {row['id']} {_name(row['name'])}"


def series_key(points: list[tuple[str, int | None]]) -> list[str]:
    """The `trend` series of each (category, size of the group that measured it): the category, and where it was measured
    in groups of different sizes, `category (N nodes)`."""
    sizes: dict[str, set[int | None]] = {}
    for key, size in points:
        sizes.setdefault(key, set()).add(size)
    return [f"{key} ({count(size, 'node')})" if size is not None and len(sizes[key]) > 1 else key for key, size in points]
