"""SqliteStore: the embedded ResourceStore, durable and shared by processes, with MemoryStore's semantics.

Every write is one `BEGIN IMMEDIATE` transaction, committed before the call returns: the check (exists,
preconditions), the new resourceVersion from the counter in the file, the object row, the change-log row
and the cascade all commit together or not at all, and writers in other processes queue behind it.
sqlite3 runs on the event loop, not in a thread (tables.py says why).

Watches read the change log from their own position, so they see every process's writes in
resourceVersion order; feed.py says when they look. The log keeps the last history_limit changes; a watch
gets Gone, as from an API server, when it starts before them or a change of its kind it has not yet read
is dropped.
"""

from __future__ import annotations

import builtins
import copy
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ...clock import Clock, format_time
from ..errors import AlreadyExists, Conflict, Forbidden, Invalid, NotFound, describe
from ..events import EventExpiry
from ..events import record_event as _record_event
from ..history import Watcher
from ..memory import DEFAULT_HISTORY_LIMIT
from ..objects import check_preconditions, identify, parse_resource_version, parse_selectors, scoped_namespace
from ..persist import build_snapshot
from ..protocol import LabelSelectorInput, ListResult, ResourceKind, WatchEvent
from . import revise
from .database import connect
from .feed import POLL_SECONDS, Feed
from .tables import DamagedRow, Tables, Write, kind_id

__all__ = ["SqliteStore"]

Obj = dict[str, Any]


class SqliteStore:
    """A ResourceStore in an SQLite file (WAL). `history_limit` bounds the change log kept for watch replay.

    readonly=True opens the file with mode=ro and refuses every write (Forbidden); power_safe=True fsyncs
    every commit (database.connect says what each survives); poll_seconds is how soon another process's
    writes reach a watch here; one_shot (with readonly) is a short read that creates no file (connect).
    """

    def __init__(self, path: str | os.PathLike[str], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT,
                 *, readonly: bool = False, power_safe: bool = False, poll_seconds: float = POLL_SECONDS,
                 one_shot: bool = False) -> None:
        if history_limit < 1:
            raise ValueError(f"history limit must be >= 1, got {history_limit}")
        self.path = Path(path)
        self.readonly = readonly
        self.clock = clock  # public: a session may replace it once it has read its time from the store
        db = connect(self.path, readonly=readonly, power_safe=power_safe, one_shot=one_shot)
        self._feed = Feed(db, poll_seconds)
        self._tables = Tables(db, self.path, history_limit, self._feed)
        self._event_expiry = EventExpiry()  # Events go an hour after their last write, as from an API server

    @classmethod
    def open(cls, path: str | os.PathLike[str], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT,
             **options: Any) -> SqliteStore:
        """Open (creating it and its folders when absent) the store at `path`; StoreFileError names what is wrong."""
        return cls(path, clock, history_limit, **options)

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write, by any process."""
        with self._tables.guard():
            return str(self._tables.meta("rv"))

    # ----- reads -------------------------------------------------------------------------------------

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        with self._tables.guard():
            return self._require(kind, name, scoped_namespace(kind, namespace, name))

    async def list(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | None = None,
    ) -> ListResult:
        labels, fields = parse_selectors(kind, label_selector, field_selector)
        with self._tables.reading():
            rv = self._tables.meta("rv")
            items = [obj for obj in self._tables.bodies(kind, namespace if kind.namespaced else None)
                     if labels.matches(obj["metadata"].get("labels")) and fields.matches(obj)]
        return ListResult(items, str(rv))

    async def watch(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        resource_version: str | None = None,
    ) -> AsyncGenerator[WatchEvent, None]:
        labels, _ = parse_selectors(kind, label_selector, None)
        watcher = Watcher(kind, namespace if kind.namespaced else None, labels, self._tables.history_limit)
        with self._tables.guard():
            self._feed.subscribe()
        try:
            if resource_version is None:
                with self._tables.reading():
                    position = self._tables.meta("rv")
                    backlog = [obj for obj in self._tables.bodies(kind, watcher.namespace) if watcher.selects(obj)]
                for obj in backlog:
                    yield WatchEvent("ADDED", obj)
                first = False  # the list was current: what follows can only have "fallen behind"
            else:
                position, first = parse_resource_version(kind, resource_version), True
            identifier, started = kind_id(kind), False
            while not self._feed.closed:
                signal = self._feed.signal()  # taken before reading: no change can fall in between
                if started:
                    position = self._feed.skip(identifier, position)
                    if self._feed.latest == position:
                        await signal.wait()  # nothing of this kind since: no need to read the file
                        continue
                changes, position = self._tables.changes_after(kind, position, first)
                first, started = False, True
                for change in changes:
                    event = watcher.event_for(change)
                    if event is not None:
                        yield event
                if not changes:
                    await signal.wait()
        finally:
            self._feed.unsubscribe()

    # ----- writes ------------------------------------------------------------------------------------

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        name, namespace = identify(kind, obj, allow_generate_name=True)
        async with self._writing("create", kind, name or obj["metadata"].get("generateName"), namespace) as write:
            if not name:
                name = revise.generated_name(kind, namespace, obj["metadata"]["generateName"], write.rv,
                                             lambda candidate: self._tables.load(kind, candidate, namespace) is not None)
            if self._tables.load(kind, name, namespace) is not None:
                raise AlreadyExists.about(kind, name, namespace, "already exists")
            new = revise.created(kind, obj, name, namespace, write.rv, format_time(self.clock.now()))
            return self._tables.put(write, kind, "ADDED", None, new)

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        name, namespace = identify(kind, obj)
        async with self._writing("update", kind, name, namespace) as write:
            current = self._require(kind, name, namespace)
            check_preconditions(kind, obj["metadata"], current, rv_required=True)
            new = revise.replaced(kind, obj, current)
            if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
                return self._remove_and_collect(write, kind, current, new)  # last finalizer gone: deletion completes
            return self._modify(write, kind, current, new)

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        name, namespace = identify(kind, obj)
        async with self._writing("update_status", kind, name, namespace) as write:
            current = self._require(kind, name, namespace)
            check_preconditions(kind, obj["metadata"], current, rv_required=True)
            return self._modify(write, kind, current, revise.with_status(current, obj.get("status")))

    async def patch_status(
        self,
        kind: ResourceKind,
        name: str,
        namespace: str | None,
        status_patch: Mapping[str, Any],
        resource_version: str | None = None,
    ) -> Obj:
        namespace = scoped_namespace(kind, namespace, name)
        async with self._writing("patch_status", kind, name, namespace) as write:
            current = self._require(kind, name, namespace)
            if not isinstance(status_patch, Mapping):
                raise Invalid.about(kind, name, namespace, f"status patch must be a mapping, got {status_patch!r}")
            check_preconditions(kind, {"resourceVersion": resource_version}, current, rv_required=False)
            return self._modify(write, kind, current, revise.status_patched(current, status_patch))

    async def delete(
        self, kind: ResourceKind, name: str, namespace: str | None = None, uid: str | None = None
    ) -> None:
        namespace = scoped_namespace(kind, namespace, name)
        async with self._writing("delete", kind, name, namespace) as write:
            current = self._require(kind, name, namespace)
            check_preconditions(kind, {"uid": uid}, current, rv_required=False)
            self._delete(write, kind, current)

    async def delete_damaged(self, kind: ResourceKind, name: str, namespace: str | None = None) -> str:
        """Delete an object whose row cannot be read (every get of it is a DamagedRow) by its key, without decoding
        its body, as an API server deletes a corrupt object when asked to ignore the read error: its finalizers
        unknown, it goes at once. Its dependents (found by its uid, which the row keeps beside the body) are
        collected as delete() collects them. Returns the uid deleted; NotFound when there is no such row, Conflict
        when its body reads well (then delete() is the way: it checks what this cannot)."""
        namespace = scoped_namespace(kind, namespace, name)
        async with self._writing("delete", kind, name, namespace) as write:
            uid = self._tables.damaged_uid(kind, name, namespace)
            if uid is None:
                self._require(kind, name, namespace)  # NotFound when absent
                raise Conflict.about(kind, name, namespace, "its row is not damaged: delete it as any other")
            self._remove_damaged(write, kind, name, namespace, uid)
        return uid

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        if self.readonly:
            metadata = (involved.get("metadata") if isinstance(involved, Mapping) else None) or {}
            kind = involved.get("kind") if isinstance(involved, Mapping) else None
            raise self._refusal("record_event", kind or "Event", metadata.get("name"), metadata.get("namespace"))
        await self._event_expiry.sweep(self, self.clock.now())
        return await _record_event(self, self.clock, involved, type, reason, message)

    async def close(self) -> None:
        """End every watch and close the file (every write is already committed)."""
        if self._feed.closed:
            return
        self._feed.close()
        self._tables.db.close()

    # ----- beyond the protocol -------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Every object and the resourceVersion counter in MemoryStore's snapshot format (export, tests)."""
        with self._tables.reading():
            rv = self._tables.meta("rv")
            objects = {kind: self._tables.bodies(kind, None) for kind in self._tables.stored_kinds()}
        return build_snapshot(rv, objects)

    @property
    def last_write_time(self) -> datetime | None:
        """The clock's time at the latest write, by any process (None before the first): a restarted
        simulator resumes its clock from here, so nothing it wrote lies in its future."""
        with self._tables.guard():
            row = self._tables.db.execute("SELECT value FROM meta WHERE key = 'clock'").fetchone()
        return datetime.fromisoformat(row[0]) if row else None

    @property
    def damaged_rows(self) -> builtins.list[str]:
        """`Job default/x: body is not JSON (...)` for each damaged row a read met and left out, in order."""
        return [f"{describe(kind, name, namespace or None)}: {problem}"
                for (kind, namespace, name), problem in self._tables.damaged.items()]

    def get_property(self, key: str) -> Any:
        """A caller's JSON value stored beside the objects (None when absent)."""
        return self._tables.get_property(key)

    def set_property(self, key: str, value: Any) -> None:
        """Store a caller's JSON value, committed before returning; it has no resourceVersion and no watch."""
        if self.readonly:
            raise self._refusal("set_property", "property", key, None)
        self._tables.set_property(key, value)

    def claim_property(self, key: str, value: Any) -> Any:
        """Store `value` unless the key holds one already (committed before returning); the value the key holds now."""
        if self.readonly:
            raise self._refusal("set_property", "property", key, None)
        return self._tables.claim_property(key, value)

    # ----- internals ---------------------------------------------------------------------------------

    @asynccontextmanager
    async def _writing(self, verb: str, kind: ResourceKind, name: str | None,
                       namespace: str | None) -> AsyncIterator[Write]:
        if self.readonly:
            raise self._refusal(verb, kind, name, namespace)
        async with self._tables.writing(self.clock.now()) as write:
            yield write

    def _refusal(self, verb: str, kind: object, name: str | None, namespace: str | None) -> Forbidden:
        return Forbidden(f"read-only store {self.path}: {verb} {describe(kind, name, namespace)} refused",
                         kind=kind, name=name or "", namespace=namespace)

    def _require(self, kind: ResourceKind, name: str, namespace: str | None) -> Obj:
        found = self._tables.load(kind, name, namespace)
        if found is None:
            raise NotFound.about(kind, name, namespace, "not found")
        return found

    def _modify(self, write: Write, kind: ResourceKind, current: Obj, new: Obj) -> Obj:
        if new == current:  # nothing changed: no new resourceVersion, no watch event
            return current
        return self._tables.put(write, kind, "MODIFIED", current, new)

    def _delete(self, write: Write, kind: ResourceKind, current: Obj) -> None:
        if not current["metadata"].get("finalizers"):
            self._remove_and_collect(write, kind, current, copy.deepcopy(current))
        elif not current["metadata"].get("deletionTimestamp"):
            marked = copy.deepcopy(current)
            marked["metadata"]["deletionTimestamp"] = format_time(self.clock.now())
            self._tables.put(write, kind, "MODIFIED", current, marked)

    def _remove_and_collect(self, write: Write, kind: ResourceKind, current: Obj, final: Obj) -> Obj:
        """Remove an object, then delete (background cascade) every object left without a living owner,
        all in the same transaction."""
        removed = self._tables.put(write, kind, "DELETED", current, final)
        self._collect(write, current["metadata"]["uid"])
        return removed

    def _remove_damaged(self, write: Write, kind: ResourceKind, name: str, namespace: str | None, uid: str) -> None:
        """Remove a damaged row by its key; the change log's DELETED holds what is known of it (kind, name,
        namespace, uid). Then collect its dependents."""
        metadata: Obj = {"name": name, "uid": uid}
        if namespace:
            metadata["namespace"] = namespace
        self._tables.put(write, kind, "DELETED", None, {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": metadata})
        self._collect(write, uid)

    def _collect(self, write: Write, uid: str) -> None:
        """Delete (background cascade) every dependent of `uid` left without a living owner; a damaged one by its key."""
        for dependent_kind, name, namespace in self._tables.dependents(uid):
            try:
                dependent = self._tables.load(dependent_kind, name, namespace)  # an earlier step may have removed it
            except DamagedRow:
                damaged_uid = self._tables.damaged_uid(dependent_kind, name, namespace)
                if damaged_uid is not None and not self._tables.has_living_owner(damaged_uid):
                    self._remove_damaged(write, dependent_kind, name, namespace, damaged_uid)
                continue
            if dependent is not None and not self._tables.has_living_owner(dependent["metadata"]["uid"]):
                self._delete(write, dependent_kind, dependent)

