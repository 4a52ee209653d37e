"""Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), as kubectl get asks for it.

Custom resources get a Name column plus their additionalPrinterColumns (first JSONPath match per cell, as
the real table convertor; `date` cells as ages like `5m`); without columns, Name and Age. Built-in kinds
get Name and Age only (the real per-type printers are not emulated).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from nvcre_tui.engine.clock import parse_time

from .resources import Resource

__all__ = ["wants_table", "to_table", "jsonpath"]

NAME_COLUMN = {"name": "Name", "type": "string", "format": "name", "priority": 0,
               "description": "Name must be unique within a namespace."}
AGE_COLUMN = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
_SEGMENT = re.compile(r"\.([A-Za-z0-9_\-]+)|\[(\*|\d+|\?\(@\.([A-Za-z0-9_.\-]+)\s*(==|!=)\s*(\"[^\"]*\"|'[^']*'|[^)]+)\)|"
                      r"\?\(@\.([A-Za-z0-9_.\-]+)\))\]")


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def jsonpath(obj: Any, expression: str) -> list[Any]:
    """Values selected by a Kubernetes JSONPath of the forms printer columns use: .a.b, [n], [*],
    [?(@.x=="y")] and [?(@.x)]."""
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    current = [obj]
    position = 0
    while position < len(text):
        match = _SEGMENT.match(text, position)
        if match is None:
            return []
        position = match.end()
        key, bracket = match.group(1), match.group(2)
        following: list[Any] = []
        for value in current:
            if key is not None:
                if isinstance(value, dict) and key in value:
                    following.append(value[key])
            elif bracket == "*":
                following += value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
            elif bracket.isdigit():
                if isinstance(value, list) and int(bracket) < len(value):
                    following.append(value[int(bracket)])
            elif isinstance(value, list):
                following += [item for item in value if _filter(item, match)]
        current = following
    return current


def _filter(item: Any, match: re.Match[str]) -> bool:
    field = match.group(3) or match.group(6)
    found = jsonpath(item, "." + field)
    if match.group(6):
        return bool(found)
    literal = match.group(5).strip()
    wanted: Any = literal[1:-1] if literal[:1] in "\"'" else json.loads(literal) if literal else None
    equal = bool(found) and found[0] == wanted
    return equal if match.group(4) == "==" else not equal


def _age(timestamp: Any, now: datetime) -> str:
    try:
        seconds = int((now - parse_time(str(timestamp))).total_seconds())
    except ValueError:
        return "<invalid>"
    if seconds < 0:
        return "<invalid>"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d" if days < 365 * 8 else f"{days // 365}y"


def _cell(column: dict[str, Any], obj: dict[str, Any], now: datetime) -> Any:
    found = jsonpath(obj, column.get("jsonPath", ""))
    if not found or found[0] is None:
        return None
    value = found[0]
    kind = column.get("type")
    if kind == "date":
        return _age(value, now)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def to_table(res: Resource, objects: list[dict[str, Any]], list_meta: dict[str, Any], now: datetime,
             include: str = "Metadata") -> dict[str, Any]:
    columns = res.printer_columns if res.custom and res.printer_columns else [AGE_COLUMN]
    definitions = [dict(NAME_COLUMN)] + [
        {"name": c["name"], "type": c.get("type", "string"), "format": c.get("format", ""),
         "description": c.get("description", ""), "priority": c.get("priority", 0)} for c in columns]
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [obj["metadata"]["name"], *(_cell(c, obj, now) for c in columns)]}
        if include == "Object":
            row["object"] = obj
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": obj["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": definitions,
            "rows": rows}
