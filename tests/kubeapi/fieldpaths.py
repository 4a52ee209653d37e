"""Field paths as structured-merge-diff sees them: `f:name` for map keys, `k:{...}` for items of
associative lists, `v:...` for set members; atomic lists and scalars are leaves.

Which lists are associative comes from the schema (x-kubernetes-list-type / -list-map-keys) for custom
resources and from the patch strategy tags of the built-in types we serve (a table here).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["Path", "NODE", "ListTypes", "field_values", "to_fields_v1", "from_fields_v1", "delete_path"]

Path = tuple[str, ...]
NODE = object()  # value marker of a map or list item that has children (never in conflict itself)

# (path pattern with "[]" for list items) -> list type and keys, for built-in kinds
BUILTIN_LISTS: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = {}
for _pod in ((), ("template",), ("jobTemplate", "spec", "template")):
    _spec = ("spec", *(_pod and (*_pod, "spec")))
    for _field in ("containers", "initContainers", "ephemeralContainers"):
        BUILTIN_LISTS[(*_spec, _field)] = ("map", ("name",))
        BUILTIN_LISTS[(*_spec, _field, "[]", "env")] = ("map", ("name",))
        BUILTIN_LISTS[(*_spec, _field, "[]", "ports")] = ("map", ("containerPort", "protocol"))
        BUILTIN_LISTS[(*_spec, _field, "[]", "volumeMounts")] = ("map", ("mountPath",))
    BUILTIN_LISTS[(*_spec, "volumes")] = ("map", ("name",))
    BUILTIN_LISTS[(*_spec, "tolerations")] = ("atomic", ())
for _status in (("status", "conditions"),):
    BUILTIN_LISTS[_status] = ("map", ("type",))
BUILTIN_LISTS[("status", "addresses")] = ("map", ("type",))
BUILTIN_LISTS[("status", "containerStatuses")] = ("atomic", ())
BUILTIN_LISTS[("spec", "ports")] = ("map", ("port", "protocol"))
BUILTIN_LISTS[("metadata", "finalizers")] = ("set", ())
BUILTIN_LISTS[("metadata", "ownerReferences")] = ("map", ("uid",))


class ListTypes:
    """Answers `list_type(pattern)` from a schema (custom resources) or the built-in table."""

    def __init__(self, schema: dict[str, Any] | None = None) -> None:
        self.schema = schema

    def list_type(self, pattern: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        if pattern in (("metadata", "finalizers"), ("metadata", "ownerReferences")) or self.schema is None:
            return BUILTIN_LISTS.get(pattern, ("atomic", ()))
        node: dict[str, Any] | None = self.schema
        for part in pattern:
            if node is None:
                break
            if part == "[]":
                node = node.get("items")
            else:
                node = (node.get("properties") or {}).get(part) or (
                    node.get("additionalProperties") if isinstance(node.get("additionalProperties"), dict) else None)
        if not node:
            return ("atomic", ())
        kind = node.get("x-kubernetes-list-type", "atomic")
        return (kind, tuple(node.get("x-kubernetes-list-map-keys") or ()))

    def atomic_map(self, pattern: tuple[str, ...]) -> bool:
        if self.schema is None:
            return False
        node: dict[str, Any] | None = self.schema
        for part in pattern:
            if node is None:
                return False
            node = node.get("items") if part == "[]" else (node.get("properties") or {}).get(part)
        return node is not None and node.get("x-kubernetes-map-type") == "atomic"


def _key(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    return "k:" + json.dumps({k: item.get(k) for k in keys if k in item}, separators=(",", ":"), sort_keys=True)


def field_values(value: Any, types: ListTypes, pattern: tuple[str, ...] = (), path: Path = ()) -> dict[Path, Any]:
    """Every field path set in `value` -> its value (NODE for maps and list items with children)."""
    out: dict[Path, Any] = {}
    if isinstance(value, dict) and value and not types.atomic_map(pattern):
        for key, item in value.items():
            child, child_pattern = (*path, f"f:{key}"), (*pattern, key)
            nested = field_values(item, types, child_pattern, child)
            out[child] = NODE if nested else item
            out.update(nested)
    elif isinstance(value, list) and value:
        kind, keys = types.list_type(pattern)
        if kind == "set":
            for item in value:
                out[(*path, "v:" + json.dumps(item, separators=(",", ":")))] = item
        elif kind == "map":
            for item in value:
                if isinstance(item, dict):
                    child = (*path, _key(item, keys))
                    out[child] = NODE
                    out.update(field_values(item, types, (*pattern, "[]"), child))
    return out


def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    """The FieldsV1 tree of a set of paths; a path that has children and is itself owned gets ".": {}."""
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(part, {})
    def mark(node: dict[str, Any], path: Path) -> None:
        for part, child in node.items():
            if part == ".":
                continue
            if child and (*path, part) in paths:
                child["."] = {}
            mark(child, (*path, part))
    mark(tree, ())
    return tree


def from_fields_v1(tree: dict[str, Any], path: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for part, child in (tree or {}).items():
        if part == ".":
            out.add(path)
            continue
        here = (*path, part)
        if not child:
            out.add(here)
        else:
            out |= from_fields_v1(child, here)
    return out


def _matches(item: Any, part: str) -> bool:
    if part.startswith("k:"):
        keys = json.loads(part[2:])
        return isinstance(item, dict) and all(item.get(k) == v for k, v in keys.items())
    return part.startswith("v:") and item == json.loads(part[2:])


def delete_path(obj: Any, path: Path) -> None:
    """Remove the field (or list item) at `path` from `obj` in place; missing paths are ignored."""
    node = obj
    for part in path[:-1]:
        if isinstance(node, dict) and part.startswith("f:"):
            node = node.get(part[2:])
        elif isinstance(node, list):
            node = next((item for item in node if _matches(item, part)), None)
        else:
            return
        if node is None:
            return
    last = path[-1]
    if isinstance(node, dict) and last.startswith("f:"):
        node.pop(last[2:], None)
    elif isinstance(node, list):
        node[:] = [item for item in node if not _matches(item, last)]
