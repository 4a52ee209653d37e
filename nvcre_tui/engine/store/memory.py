"""MemoryStore: the embedded ResourceStore, with the API server's semantics, persisted to a JSON file on demand.

All work happens between awaits on one event loop, so every operation is atomic for other coroutines.
Stored objects are never mutated in place: each write stores a new dict, so history entries stay valid.
"""

from __future__ import annotations

import copy
import hashlib
import os
import uuid
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from ..clock import Clock, format_time
from .errors import AlreadyExists, Gone, Invalid, NotFound, StoreError
from .events import EventExpiry
from .events import record_event as _record_event
from .history import CLOSED, OVERFLOWED, Change, History, Watcher
from .objects import check_preconditions, identify, merge_patch, owner_uids, parse_resource_version, parse_selectors, scoped_namespace, spec_body
from .persist import build_snapshot, parse_snapshot, read_json, write_json_atomically
from .protocol import LabelSelectorInput, ListResult, ResourceKind, WatchEvent, WatchEventType
from .selectors import FieldSelector, LabelSelector

__all__ = ["MemoryStore", "DEFAULT_HISTORY_LIMIT"]

DEFAULT_HISTORY_LIMIT = 10_000
Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)


class MemoryStore:
    """A ResourceStore in memory. `history_limit` bounds watch replay and each watcher's backlog."""

    def __init__(self, clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        self._clock = clock
        self._rv = 0
        self._objects: dict[ResourceKind, dict[Key, Obj]] = {}
        self._by_uid: dict[str, tuple[ResourceKind, Key]] = {}
        self._history = History(history_limit)
        self._event_expiry = EventExpiry()  # Events go an hour after their last write, as from an API server

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write."""
        return str(self._rv)

    # ----- reads -------------------------------------------------------------------------------------

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        return copy.deepcopy(self._require(kind, name, scoped_namespace(kind, namespace, name)))

    async def list(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | None = None,
    ) -> ListResult:
        labels, fields = parse_selectors(kind, label_selector, field_selector)
        items = [
            copy.deepcopy(obj)
            for _, obj in sorted(self._objects.get(kind, {}).items())
            if _selected(obj, kind, namespace, labels, fields)
        ]
        return ListResult(items, self.resource_version)

    async def watch(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        resource_version: str | None = None,
    ) -> AsyncGenerator[WatchEvent, None]:
        labels, _ = parse_selectors(kind, label_selector, None)
        watcher = Watcher(kind, namespace if kind.namespaced else None, labels, self._history.limit)
        if resource_version is None:
            backlog = [WatchEvent("ADDED", obj) for _, obj in sorted(self._objects.get(kind, {}).items())
                       if watcher.selects(obj)]
        else:
            replay = self._history.since(kind, parse_resource_version(kind, resource_version))
            backlog = [event for change in replay if (event := watcher.event_for(change)) is not None]
        # Subscribing in the same step as reading the backlog: no change can fall in between.
        self._history.subscribe(watcher)
        try:
            for event in backlog:
                yield WatchEvent(event.type, copy.deepcopy(event.object))
            while True:
                item = await watcher.queue.get()
                if item is CLOSED:
                    return
                if item is OVERFLOWED:
                    raise Gone.about(kind, None, namespace, "watch fell too far behind and was dropped; list again")
                assert isinstance(item, WatchEvent)
                yield WatchEvent(item.type, copy.deepcopy(item.object))
        finally:
            self._history.unsubscribe(watcher)

    # ----- writes ------------------------------------------------------------------------------------

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        name, namespace = identify(kind, obj, allow_generate_name=True)
        new = copy.deepcopy(dict(obj))
        new.pop("status", None)  # status is a subresource: ignored on create, as for CRDs
        metadata = new["metadata"]
        name = name or self._generated_name(kind, namespace, metadata["generateName"])
        if (namespace or "", name) in self._objects.get(kind, {}):
            raise AlreadyExists.about(kind, name, namespace, "already exists")
        for system_field in ("resourceVersion", "deletionTimestamp", "namespace"):
            metadata.pop(system_field, None)
        metadata.update(
            name=name,
            uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"nvcre-store:{self._rv + 1}:{kind.plural}/{namespace}/{name}")),
            generation=1,
            creationTimestamp=format_time(self._clock.now()),
        )
        if namespace is not None:
            metadata["namespace"] = namespace
        return self._write(kind, "ADDED", None, {"apiVersion": kind.api_version, "kind": kind.kind, **new})

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        name, namespace = identify(kind, obj)
        current = self._require(kind, name, namespace)
        check_preconditions(kind, obj["metadata"], current, rv_required=True)
        new = {"apiVersion": kind.api_version, "kind": kind.kind, **copy.deepcopy(dict(obj))}
        new.pop("status", None)
        if "status" in current:
            new["status"] = copy.deepcopy(current["status"])
        metadata = new["metadata"]
        for system_field in ("uid", "creationTimestamp", "deletionTimestamp", "resourceVersion", "namespace"):
            metadata.pop(system_field, None)
            if system_field in current["metadata"]:
                metadata[system_field] = current["metadata"][system_field]
        changed_spec = spec_body(new) != spec_body(current)
        metadata["generation"] = current["metadata"].get("generation", 1) + changed_spec
        if metadata.get("deletionTimestamp") and not metadata.get("finalizers"):
            return self._remove_and_collect(kind, current, new)  # last finalizer gone: deletion completes
        return self._modify(kind, current, new)

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        name, namespace = identify(kind, obj)
        current = self._require(kind, name, namespace)
        check_preconditions(kind, obj["metadata"], current, rv_required=True)
        new = copy.deepcopy(current)
        new.pop("status", None)
        if obj.get("status") is not None:
            new["status"] = copy.deepcopy(obj["status"])
        return self._modify(kind, current, new)

    async def patch_status(
        self,
        kind: ResourceKind,
        name: str,
        namespace: str | None,
        status_patch: Mapping[str, Any],
        resource_version: str | None = None,
    ) -> Obj:
        namespace = scoped_namespace(kind, namespace, name)
        current = self._require(kind, name, namespace)
        if not isinstance(status_patch, Mapping):
            raise Invalid.about(kind, name, namespace, f"status patch must be a mapping, got {status_patch!r}")
        check_preconditions(kind, {"resourceVersion": resource_version}, current, rv_required=False)
        # Structural sharing: stored objects are never mutated in place, so the new version may share every
        # subtree the patch does not touch with the old one (no deep copy of a 4,096-group Workflow per patch).
        new = {**current, "metadata": dict(current["metadata"])}
        new["status"] = merge_patch(current.get("status") or {}, copy.deepcopy(dict(status_patch)))
        return self._modify(kind, current, new)

    async def delete(
        self, kind: ResourceKind, name: str, namespace: str | None = None, uid: str | None = None
    ) -> None:
        namespace = scoped_namespace(kind, namespace, name)
        current = self._require(kind, name, namespace)
        check_preconditions(kind, {"uid": uid}, current, rv_required=False)
        self._delete(kind, current)

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        await self._event_expiry.sweep(self, self._clock.now())
        return await _record_event(self, self._clock, involved, type, reason, message)

    async def close(self) -> None:
        self._history.close_all()

    # ----- persistence -------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Every object and the resourceVersion counter, as JSON-ready data (a copy)."""
        objects = {kind: [bucket[key] for key in sorted(bucket)] for kind, bucket in self._objects.items()}
        return copy.deepcopy(build_snapshot(self._rv, objects))

    @classmethod
    def from_snapshot(
        cls, data: Mapping[str, Any], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> MemoryStore:
        """A store holding the snapshot's objects. Its history starts now: older resourceVersions are Gone."""
        resource_version, objects = parse_snapshot(data)
        store = cls(clock, history_limit)
        store._rv = resource_version
        store._history = History(history_limit, complete_after=resource_version)
        for kind, items in objects.items():
            for item in copy.deepcopy(items):
                _, namespace = identify(kind, item)
                key = (namespace or "", item["metadata"]["name"])
                store._objects.setdefault(kind, {})[key] = item
                store._by_uid[str(item["metadata"].get("uid"))] = (kind, key)
        return store

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the snapshot to `path` atomically (temporary file + rename)."""
        write_json_atomically(path, self.snapshot())

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> MemoryStore:
        """A store from a state file written by `save`; FileNotFoundError if absent, ValueError if malformed."""
        data = read_json(path)
        try:
            return cls.from_snapshot(data, clock, history_limit)
        except (ValueError, StoreError) as error:
            raise ValueError(f"state file {path}: {error}") from None

    # ----- internals ---------------------------------------------------------------------------------

    def _require(self, kind: ResourceKind, name: str, namespace: str | None) -> Obj:
        found = self._objects.get(kind, {}).get((namespace or "", name))
        if found is None:
            raise NotFound.about(kind, name, namespace, "not found")
        return found

    def _generated_name(self, kind: ResourceKind, namespace: str | None, prefix: str) -> str:
        # Deterministic (seeded runs replay exactly) yet unique: derived from the next resourceVersion.
        for attempt in range(1000):
            digest = hashlib.sha256(f"{prefix}:{self._rv}:{attempt}".encode()).hexdigest()
            name = f"{prefix}{digest[:5]}"
            if (namespace or "", name) not in self._objects.get(kind, {}):
                return name
        raise AlreadyExists.about(kind, prefix, namespace, "could not generate a free name")

    def _write(self, kind: ResourceKind, change: WatchEventType, old: Obj | None, new: Obj) -> Obj:
        """Give `new` the next resourceVersion, store (or remove) it, log it; return a caller's copy."""
        self._rv += 1
        metadata = new["metadata"]
        metadata["resourceVersion"] = str(self._rv)
        key = (metadata.get("namespace") or "", metadata["name"])
        bucket = self._objects.setdefault(kind, {})
        if change == "DELETED":
            del bucket[key]
            self._by_uid.pop(metadata["uid"], None)
        else:
            bucket[key] = new
            self._by_uid[metadata["uid"]] = (kind, key)
        self._history.append(Change(self._rv, kind, change, old, new))
        return copy.deepcopy(new)

    def _modify(self, kind: ResourceKind, current: Obj, new: Obj) -> Obj:
        if new == current:  # nothing changed: no new resourceVersion, no watch event
            return copy.deepcopy(current)
        return self._write(kind, "MODIFIED", current, new)

    def _delete(self, kind: ResourceKind, current: Obj) -> None:
        if not current["metadata"].get("finalizers"):
            self._remove_and_collect(kind, current, copy.deepcopy(current))
        elif not current["metadata"].get("deletionTimestamp"):
            marked = copy.deepcopy(current)
            marked["metadata"]["deletionTimestamp"] = format_time(self._clock.now())
            self._write(kind, "MODIFIED", current, marked)

    def _remove_and_collect(self, kind: ResourceKind, current: Obj, final: Obj) -> Obj:
        """Remove an object, then delete (background cascade) every object left without a living owner."""
        removed = self._write(kind, "DELETED", current, final)
        gone_uid = current["metadata"]["uid"]
        dependents = [
            (dependent_kind, key)
            for dependent_kind, bucket in self._objects.items()
            for key, obj in bucket.items()
            if gone_uid in owner_uids(obj)
        ]
        for dependent_kind, key in dependents:
            dependent = self._objects[dependent_kind].get(key)  # an earlier cascade step may have removed it
            if dependent is not None and not owner_uids(dependent) & self._by_uid.keys():
                self._delete(dependent_kind, dependent)
        return removed



def _selected(
    obj: Obj, kind: ResourceKind, namespace: str | None, labels: LabelSelector, fields: FieldSelector
) -> bool:
    metadata = obj["metadata"]
    in_namespace = namespace is None or not kind.namespaced or metadata.get("namespace") == namespace
    return in_namespace and labels.matches(metadata.get("labels")) and fields.matches(obj)
