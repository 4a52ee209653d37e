"""The JSON state file of a MemoryStore: every object, grouped by kind, plus the resourceVersion counter."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .objects import text_maps_problem
from .protocol import ResourceKind

__all__ = ["SNAPSHOT_FORMAT", "build_snapshot", "parse_snapshot", "write_json_atomically", "read_json"]

SNAPSHOT_FORMAT = "nvcre-store/v1"
Objects = dict[ResourceKind, list[dict[str, Any]]]


def build_snapshot(resource_version: int, objects: Objects) -> dict[str, Any]:
    """A self-describing snapshot: kinds carry their group/version/plural so unknown kinds survive a round trip."""
    kinds = [
        {"group": kind.group, "version": kind.version, "kind": kind.kind, "plural": kind.plural,
         "namespaced": kind.namespaced, "items": items}
        for kind, items in sorted(objects.items(), key=lambda pair: (pair[0].group, pair[0].plural))
        if items
    ]
    return {"format": SNAPSHOT_FORMAT, "resourceVersion": str(resource_version), "kinds": kinds}


def _fail(where: str, what: str) -> ValueError:
    return ValueError(f"store snapshot{where}: {what}")


def parse_snapshot(data: object) -> tuple[int, Objects]:
    """Check a snapshot and return (resourceVersion, objects by kind); ValueError names what is wrong and where."""
    if not isinstance(data, Mapping) or data.get("format") != SNAPSHOT_FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise _fail("", f"format must be {SNAPSHOT_FORMAT!r}, got {found!r}")
    try:
        resource_version = int(data.get("resourceVersion", ""))
    except ValueError:
        raise _fail("", f"resourceVersion must be an integer string, got {data.get('resourceVersion')!r}") from None
    kinds = data.get("kinds")
    if not isinstance(kinds, list):
        raise _fail("", f"kinds must be a list, got {type(kinds).__name__}")
    objects: Objects = {}
    for index, entry in enumerate(kinds):
        where = f" kinds[{index}]"
        if not isinstance(entry, Mapping):
            raise _fail(where, "expected a mapping")
        try:
            kind = ResourceKind(str(entry["group"]), str(entry["version"]), str(entry["kind"]),
                                str(entry["plural"]), bool(entry["namespaced"]))
        except KeyError as missing:
            raise _fail(where, f"missing field {missing}") from None
        items = entry.get("items")
        if not isinstance(items, list) or not all(isinstance(i, Mapping) and isinstance(i.get("metadata"), Mapping)
                                                  for i in items):
            raise _fail(where, "items must be a list of objects with metadata")
        for position, item in enumerate(items):
            if problem := text_maps_problem(item["metadata"]):
                raise _fail(f"{where}.items[{position}]", problem)
        objects[kind] = [dict(item) for item in items]
    return resource_version, objects


def write_json_atomically(path: str | os.PathLike[str], data: Any) -> None:
    """Write JSON to a temporary file next to `path`, then rename it over `path`: readers never see half a file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file; a missing file raises FileNotFoundError, bad JSON a ValueError naming the file and line."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise ValueError(f"state file {path}: not valid JSON (line {error.lineno}: {error.msg})") from None
