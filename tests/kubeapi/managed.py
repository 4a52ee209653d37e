"""metadata.managedFields and server-side apply, after structured-merge-diff's rules as far as they matter
to clients: every write records who set which fields; an apply conflicts on fields another manager set
to a different value (unless force), takes ownership of what it applies, and removes fields it applied
before and no longer applies when nobody else owns them.
"""

from __future__ import annotations

import json
from typing import Any

from nvcre_tui.engine.clock import Clock, format_time

from .errors import ApiError, Cause
from .fieldpaths import NODE, ListTypes, Path, delete_path, field_values, from_fields_v1, to_fields_v1
from .storage import clone

__all__ = ["ManagedFields", "render_path"]

Obj = dict[str, Any]
OWNED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")
MISSING = object()


def render_path(path: Path) -> str:
    """`.spec.containers[name="main"].image`, as conflict messages print a field."""
    out = ""
    for part in path:
        if part.startswith("f:"):
            out += "." + part[2:]
        elif part.startswith("k:"):
            keys = json.loads(part[2:])
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif part.startswith("v:"):
            out += f"[={part[2:]}]"
    return out


class _Entry:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.paths = from_fields_v1(raw.get("fieldsV1") or {})

    def ident(self) -> tuple[str, str, str]:
        return (self.raw.get("manager", ""), self.raw.get("operation", ""), self.raw.get("subresource", ""))


class ManagedFields:
    """Computes managedFields for updates and merges applies."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    @staticmethod
    def scoped(obj: Obj, subresource: str, status_subresource: bool) -> Obj:
        """The part of an object an endpoint can own: /status owns status, the main endpoint the rest."""
        if subresource == "status":
            return {"status": obj["status"]} if "status" in obj else {}
        out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
        if status_subresource:
            out.pop("status", None)
        meta = {k: obj.get("metadata", {})[k] for k in OWNED_METADATA if k in obj.get("metadata", {})}
        if meta:
            out["metadata"] = meta
        return out

    def _values(self, obj: Obj, subresource: str, status_sub: bool, types: ListTypes) -> dict[Path, Any]:
        return field_values(self.scoped(obj, subresource, status_sub), types)

    def _entry(self, manager: str, operation: str, subresource: str, api_version: str, paths: set[Path]) -> Obj:
        raw: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version,
                               "time": format_time(self.clock.now()), "fieldsType": "FieldsV1",
                               "fieldsV1": to_fields_v1(paths)}
        if subresource:
            raw["subresource"] = subresource
        return raw

    def record(self, new: Obj, old: Obj | None, manager: str, operation: str, subresource: str, api_version: str,
               types: ListTypes, status_sub: bool) -> None:
        """Attribute the fields an Update (create, update, patch) changed to `manager`, in place on `new`."""
        if operation == "Apply":
            return
        old_values = self._values(old, subresource, status_sub, types) if old else {}
        new_values = self._values(new, subresource, status_sub, types)
        changed = {p for p, v in new_values.items()
                   if p not in old_values or (v is not NODE and old_values[p] is not NODE and old_values[p] != v)
                   or (v is NODE) != (old_values[p] is NODE)}
        removed = set(old_values) - set(new_values)
        base = (old or {}).get("metadata", {}).get("managedFields") or []
        given = new["metadata"].get("managedFields")
        if old is not None and given and given != base:
            base = given  # a client may rewrite managedFields itself
        if not changed and not removed:
            if base:
                new["metadata"]["managedFields"] = clone(base)
            else:
                new["metadata"].pop("managedFields", None)
            return
        entries = [_Entry(raw) for raw in base if isinstance(raw, dict)]
        me = (manager, operation, subresource)
        leaf_changes = {p for p in changed if new_values[p] is not NODE}
        mine = None
        for entry in entries:
            entry.paths -= removed
            if entry.ident() == me:
                mine = entry
            else:
                entry.paths -= leaf_changes
        mine_paths = (mine.paths if mine else set()) | changed
        out = []
        for entry in entries:
            if entry is mine:
                continue
            if entry.paths:
                out.append(dict(entry.raw, fieldsV1=to_fields_v1(entry.paths)))
        out.append(self._entry(manager, operation, subresource, api_version, mine_paths))
        new["metadata"]["managedFields"] = out

    def apply(self, live: Obj | None, applied: Obj, manager: str, force: bool, subresource: str, api_version: str,
              types: ListTypes, status_sub: bool, resource: str, name: str) -> Obj:
        """The object after server-side applying `applied` by `manager` over `live` (None: created)."""
        applied_values = self._values(applied, subresource, status_sub, types)
        live_obj = live or {"metadata": {}}
        live_values = self._values(live_obj, subresource, status_sub, types)
        entries = [_Entry(raw) for raw in live_obj["metadata"].get("managedFields") or [] if isinstance(raw, dict)]
        me = (manager, "Apply", subresource)
        mine = next((e for e in entries if e.ident() == me), None)
        conflicts: list[tuple[str, Path]] = []
        for entry in entries:
            if entry is mine:
                continue
            for path in sorted(entry.paths & set(applied_values)):
                value = applied_values[path]
                if value is NODE:
                    continue
                if live_values.get(path, MISSING) != value:
                    conflicts.append((entry.raw.get("manager", ""), path))
        if conflicts and not force:
            raise _conflict_error(conflicts, entries, resource, name)
        taken = {path for _, path in conflicts}
        others = set().union(*(e.paths for e in entries if e is not mine)) - taken if entries else set()
        result = clone(live) if live is not None else {}
        previous = mine.paths if mine else set()
        shared = {path[:n] for path in others for n in range(1, len(path) + 1)}  # others' fields and parents
        for path in sorted(previous - set(applied_values) - shared, key=len, reverse=True):
            if path:
                delete_path(result, path)
        result = _merge(result, applied, types, ())
        out = []
        for entry in entries:
            if entry is mine:
                continue
            paths = entry.paths - taken
            if paths:
                out.append(dict(entry.raw, fieldsV1=to_fields_v1(paths)))
        out.append(self._entry(manager, "Apply", subresource, api_version, set(applied_values)))
        result.setdefault("metadata", {})["managedFields"] = out
        return result


def _conflict_error(conflicts: list[tuple[str, Path]], entries: list[_Entry], resource: str, name: str) -> ApiError:
    versions = {e.raw.get("manager", ""): e.raw.get("apiVersion", "") for e in entries}
    causes = [Cause("FieldManagerConflict", f'conflict with "{manager}" using {versions.get(manager, "")}',
                    render_path(path)) for manager, path in conflicts]
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        text = f'Apply failed with 1 conflict: conflict with "{manager}" using {versions.get(manager, "")}: ' \
               f"{render_path(path)}"
    else:
        lines = "\n".join(f"- {render_path(path)}" for _, path in conflicts)
        managers = ", ".join(sorted({f'"{m}"' for m, _ in conflicts}))
        text = f"Apply failed with {len(conflicts)} conflicts: conflicts with {managers}:\n{lines}"
    return ApiError("Conflict", text, name=name, kind=resource, causes=causes)


def _merge(live: Any, applied: Any, types: ListTypes, pattern: tuple[str, ...]) -> Any:
    if isinstance(applied, dict) and isinstance(live, dict) and not types.atomic_map(pattern):
        out = dict(live)
        for key, value in applied.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(live.get(key), value, types, (*pattern, key))
        return out
    if isinstance(applied, list) and isinstance(live, list):
        kind, keys = types.list_type(pattern)
        if kind == "map":
            merged = list(live)
            for item in applied:
                if not isinstance(item, dict):
                    continue
                ident = {k: item.get(k) for k in keys}
                index = next((i for i, old in enumerate(merged)
                              if isinstance(old, dict) and {k: old.get(k) for k in keys} == ident), None)
                if index is None:
                    merged.append(clone(item))
                else:
                    merged[index] = _merge(merged[index], item, types, (*pattern, "[]"))
            return merged
        if kind == "set":
            return list(live) + [clone(item) for item in applied if item not in live]
    return clone(applied)
