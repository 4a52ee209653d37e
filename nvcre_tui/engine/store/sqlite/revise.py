"""The objects a write stores, computed from the request and the stored version: pure functions.

They follow MemoryStore's rules exactly (status is a subresource, system metadata is the store's,
generation counts spec changes), so both stores give the same answers.

`current` is always the store's own version, decoded from its row for this one write and dropped after it: the
object returned may share its unchanged parts (a Workflow's megabytes of spec are not copied again on each status
patch). What a caller passes in (`obj`, a status, a patch) is copied, never shared.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import AlreadyExists
from ..objects import copy_json, merge_patch, spec_body
from ..protocol import ResourceKind

__all__ = ["created", "replaced", "with_status", "status_patched", "generated_name"]

Obj = dict[str, Any]
_KEPT_ON_UPDATE = ("uid", "creationTimestamp", "deletionTimestamp", "resourceVersion", "namespace")


def generated_name(kind: ResourceKind, namespace: str | None, prefix: str, rv: int,
                   taken: Callable[[str], bool]) -> str:
    """A name for `metadata.generateName`: deterministic (seeded runs replay exactly), derived from the
    current resourceVersion as MemoryStore does, and free."""
    for attempt in range(1000):
        name = f"{prefix}{hashlib.sha256(f'{prefix}:{rv}:{attempt}'.encode()).hexdigest()[:5]}"
        if not taken(name):
            return name
    raise AlreadyExists.about(kind, prefix, namespace, "could not generate a free name")


def created(kind: ResourceKind, obj: Mapping[str, Any], name: str, namespace: str | None, rv: int, now: str) -> Obj:
    """A new object as stored: status dropped, system metadata set (uid derived from the next resourceVersion)."""
    new = copy_json(dict(obj))
    new.pop("status", None)  # status is a subresource: ignored on create, as for CRDs
    metadata = new["metadata"]
    for system_field in ("resourceVersion", "deletionTimestamp", "namespace"):
        metadata.pop(system_field, None)
    metadata.update(
        name=name,
        uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"nvcre-store:{rv + 1}:{kind.plural}/{namespace}/{name}")),
        generation=1,
        creationTimestamp=now,
    )
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": kind.api_version, "kind": kind.kind, **new}


def replaced(kind: ResourceKind, obj: Mapping[str, Any], current: Obj) -> Obj:
    """An update: everything from `obj` but status and system metadata; generation up on a spec change."""
    new = {"apiVersion": kind.api_version, "kind": kind.kind, **copy_json(dict(obj))}
    new.pop("status", None)
    if "status" in current:
        new["status"] = current["status"]
    metadata = new["metadata"]
    for system_field in _KEPT_ON_UPDATE:
        metadata.pop(system_field, None)
        if system_field in current["metadata"]:
            metadata[system_field] = current["metadata"][system_field]
    metadata["generation"] = current["metadata"].get("generation", 1) + (spec_body(new) != spec_body(current))
    return new


def with_status(current: Obj, status: Any) -> Obj:
    """`current` with its status replaced (removed when `status` is None)."""
    new = _outer(current)
    new.pop("status", None)
    if status is not None:
        new["status"] = copy_json(status)
    return new


def status_patched(current: Obj, status_patch: Mapping[str, Any]) -> Obj:
    """`current` with a JSON merge patch applied to its status."""
    new = _outer(current)
    new["status"] = merge_patch(current.get("status") or {}, copy_json(dict(status_patch)))
    return new


def _outer(current: Obj) -> Obj:
    """A copy of `current` whose top level and metadata are its own (the store sets metadata.resourceVersion in it);
    the rest is shared with `current`."""
    return {**current, "metadata": dict(current["metadata"])}
