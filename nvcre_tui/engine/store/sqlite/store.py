"""SqliteStore: the embedded ResourceStore, durable and shared by processes, with MemoryStore's semantics.

Every write is one `BEGIN IMMEDIATE` transaction, committed before the call returns: the check (exists,
preconditions), the new resourceVersion from the counter in the file, the object row, the change-log row
and the cascade all commit together or not at all, and writers in other processes queue behind it.

sqlite3 calls run synchronously on the event loop, not in a thread: each is local and takes well under a
millisecond (a durable commit about one fsync), less than handing it to a thread would cost, and running
between awaits makes every operation atomic for the other coroutines exactly as in MemoryStore. The one
wait that can be longer, another process holding the write lock, is awaited (see `_lock`), so the loop
runs meanwhile; after database.BUSY_TIMEOUT_SECONDS it is a StoreError.

Watches read the change log from their own position, so they see every process's writes in
resourceVersion order; see feed.py for when they look. A watch whose position falls out of the retained
log (history_limit changes) gets Gone, as from an API server.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...clock import Clock, format_time
from ..errors import AlreadyExists, Forbidden, Gone, Invalid, NotFound, StoreError, describe
from ..events import record_event as _record_event
from ..history import Change, Watcher
from ..memory import DEFAULT_HISTORY_LIMIT
from ..objects import check_preconditions, identify, owner_uids, parse_resource_version, scoped_namespace
from ..persist import build_snapshot
from ..protocol import LabelSelectorInput, ListResult, ResourceKind, WatchEvent, WatchEventType
from ..selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from . import revise
from .database import BUSY_TIMEOUT_SECONDS, connect
from .feed import POLL_SECONDS, Feed

__all__ = ["SqliteStore"]

Obj = dict[str, Any]
_BATCH = 256  # change-log rows a watch reads at a time
LOCK_RETRY_SECONDS = 0.001


def kind_id(kind: ResourceKind) -> str:
    """`nvcre.nvidia.com/v1alpha1/workflows`, `v1/nodes`: how a kind is named in the file."""
    return f"{kind.api_version}/{kind.plural}"


def encode(kind: ResourceKind, obj: Obj) -> str:
    try:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as error:
        metadata = obj.get("metadata") or {}
        raise Invalid.about(kind, metadata.get("name"), metadata.get("namespace"),
                            f"not storable as JSON ({error})") from None


def _selection_data(obj: Obj) -> str:
    """What a watch needs of an object's previous version: whether it was selected (namespace, labels)."""
    metadata = obj["metadata"]
    return json.dumps({"metadata": {"namespace": metadata.get("namespace"), "labels": metadata.get("labels")}})


@dataclass
class _Write:
    """One write transaction: the counter as it goes, and what it changed."""

    rv: int
    changes: int = 0
    new_kinds: dict[str, ResourceKind] = field(default_factory=dict)  # known to this process once committed


class SqliteStore:
    """A ResourceStore in an SQLite file (WAL). `history_limit` bounds the change log kept for watch replay."""

    def __init__(self, path: str | os.PathLike[str], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT,
                 *, readonly: bool = False, durable: bool = True, poll_seconds: float = POLL_SECONDS) -> None:
        if history_limit < 1:
            raise ValueError(f"history limit must be >= 1, got {history_limit}")
        self.path = Path(path)
        self.readonly = readonly
        self._clock = clock
        self._history_limit = history_limit
        self._db = connect(self.path, readonly=readonly, durable=durable)
        self._feed = Feed(self._db, poll_seconds)
        self._kinds: dict[str, ResourceKind] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT,
             **options: Any) -> SqliteStore:
        """Open (creating it and its folders when absent) the store at `path`; StoreFileError names what is wrong."""
        return cls(path, clock, history_limit, **options)

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write, by any process."""
        with self._guard():
            return str(self._meta("rv"))

    # ----- reads -------------------------------------------------------------------------------------

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        with self._guard():
            return self._require(kind, name, scoped_namespace(kind, namespace, name))

    async def list(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | None = None,
    ) -> ListResult:
        labels, fields = _selectors(kind, label_selector, field_selector)
        in_namespace = namespace if kind.namespaced else None
        with self._guard(), self._reading():
            rv = self._meta("rv")
            items = [obj for obj in self._bodies(kind, in_namespace)
                     if labels.matches(obj["metadata"].get("labels")) and fields.matches(obj)]
        return ListResult(items, str(rv))

    async def watch(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        resource_version: str | None = None,
    ) -> AsyncIterator[WatchEvent]:
        labels, _ = _selectors(kind, label_selector, None)
        watcher = Watcher(kind, namespace if kind.namespaced else None, labels, self._history_limit)
        self._feed.subscribe()
        try:
            if resource_version is None:
                with self._guard(), self._reading():
                    position = self._meta("rv")
                    backlog = [obj for obj in self._bodies(kind, watcher.namespace) if watcher.selects(obj)]
                for obj in backlog:
                    yield WatchEvent("ADDED", obj)
                behind = "watch fell too far behind and was dropped; list again"
            else:
                position = parse_resource_version(kind, resource_version)
                behind = ""
            while not self._feed.closed:
                signal = self._feed.signal()
                changes, position = self._changes_after(kind, position, behind)
                behind = "watch fell too far behind and was dropped; list again"
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
                                             lambda candidate: self._load(kind, candidate, namespace) is not None)
            if self._load(kind, name, namespace) is not None:
                raise AlreadyExists.about(kind, name, namespace, "already exists")
            new = revise.created(kind, obj, name, namespace, write.rv, format_time(self._clock.now()))
            return self._put(write, kind, "ADDED", None, new)

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

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        if self.readonly:
            metadata = involved.get("metadata") if isinstance(involved, Mapping) else None
            raise self._refusal("record_event", involved.get("kind") if isinstance(involved, Mapping) else "Event",
                                (metadata or {}).get("name"), (metadata or {}).get("namespace"))
        return await _record_event(self, self._clock, involved, type, reason, message)

    async def close(self) -> None:
        """End every watch and close the file (every write is already committed)."""
        if self._feed.closed:
            return
        self._feed.close()
        self._db.close()

    # ----- beyond the protocol -------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Every object and the resourceVersion counter in MemoryStore's snapshot format (export, tests)."""
        with self._guard(), self._reading():
            rv = self._meta("rv")
            kinds = [self._kind(row[0]) for row in self._db.execute("SELECT id FROM kinds ORDER BY id")]
            objects = {kind: self._bodies(kind, None) for kind in kinds}
        return build_snapshot(rv, objects)

    def get_property(self, key: str) -> Any:
        """A caller's JSON value stored beside the objects (None when absent)."""
        with self._guard():
            row = self._db.execute("SELECT value FROM properties WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_property(self, key: str, value: Any) -> None:
        """Store a caller's JSON value, committed before returning; it has no resourceVersion and no watch."""
        if self.readonly:
            raise self._refusal("set_property", "property", key, None)
        text = json.dumps(value)
        with self._guard():
            self._db.execute("INSERT OR REPLACE INTO properties (key, value) VALUES (?, ?)", (key, text))

    # ----- transactions and rows ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """sqlite3 errors (locked too long, disk full, closed store) as one-line StoreErrors naming the file."""
        try:
            yield
        except sqlite3.Error as error:
            raise StoreError(f"store {self.path}: {error}") from None

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """One read transaction: everything read inside it is one consistent state of the file."""
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    @contextlib.asynccontextmanager
    async def _writing(self, verb: str, kind: ResourceKind, name: str | None,
                       namespace: str | None) -> AsyncIterator[_Write]:
        """One write transaction: committed on return, rolled back on any error; watchers woken after it.
        Only taking the write lock awaits: the body and the commit run without a pause."""
        if self.readonly:
            raise self._refusal(verb, kind, name, namespace)
        with self._guard():
            await self._lock()
            try:
                write = _Write(self._meta("rv"))
                yield write
                if write.changes:
                    self._advance(write.rv)
                self._db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):  # a failed COMMIT may have rolled back already
                    self._db.execute("ROLLBACK")
                raise
        self._kinds.update(write.new_kinds)
        if write.changes:
            self._feed.notify()

    async def _lock(self) -> None:
        """BEGIN IMMEDIATE: take the file's write lock. While another process holds it, try again every
        LOCK_RETRY_SECONDS on the event loop (SQLite's own busy wait would block the loop, and backs off
        to 100 ms, so a steady writer elsewhere would starve this one)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        while True:
            self._db.execute("PRAGMA busy_timeout = 0")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if getattr(error, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            await asyncio.sleep(LOCK_RETRY_SECONDS)

    def _refusal(self, verb: str, kind: object, name: str | None, namespace: str | None) -> Forbidden:
        return Forbidden(f"read-only store {self.path}: {verb} {describe(kind, name, namespace)} refused",
                         kind=kind, name=name or "", namespace=namespace)

    def _meta(self, key: str) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])

    def _advance(self, rv: int) -> None:
        """Store the counter and drop change-log rows beyond the history limit (the floor moves with them)."""
        floor = rv - self._history_limit
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'rv'", (rv,))
        if floor > self._meta("floor"):
            self._db.execute("DELETE FROM changes WHERE rv <= ?", (floor,))
            self._db.execute("UPDATE meta SET value = ? WHERE key = 'floor'", (floor,))

    def _kind(self, identifier: str) -> ResourceKind:
        kind = self._kinds.get(identifier)
        if kind is None:
            row = self._db.execute("SELECT grp, version, kind, plural, namespaced FROM kinds WHERE id = ?",
                                   (identifier,)).fetchone()
            kind = self._kinds[identifier] = ResourceKind(row[0], row[1], row[2], row[3], bool(row[4]))
        return kind

    def _load(self, kind: ResourceKind, name: str, namespace: str | None) -> Obj | None:
        row = self._db.execute("SELECT body FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
                               (kind_id(kind), namespace or "", name)).fetchone()
        return json.loads(row[0]) if row else None

    def _require(self, kind: ResourceKind, name: str, namespace: str | None) -> Obj:
        found = self._load(kind, name, namespace)
        if found is None:
            raise NotFound.about(kind, name, namespace, "not found")
        return found

    def _bodies(self, kind: ResourceKind, namespace: str | None) -> list[Obj]:
        """Objects of a kind (in one namespace, or all) in (namespace, name) order."""
        if namespace is None:
            rows = self._db.execute("SELECT body FROM objects WHERE kind = ? ORDER BY namespace, name",
                                    (kind_id(kind),))
        else:
            rows = self._db.execute("SELECT body FROM objects WHERE kind = ? AND namespace = ? ORDER BY name",
                                    (kind_id(kind), namespace))
        return [json.loads(row[0]) for row in rows]

    def _changes_after(self, kind: ResourceKind, position: int, behind: str) -> tuple[list[Change], int]:
        """The next changes of `kind` after `position`, and the position after them; Gone when some are no
        longer retained. The position moves past other kinds' changes too, so they never make it stale."""
        with self._guard(), self._reading():
            floor = self._meta("floor")
            if position < floor:
                raise Gone.about(kind, None, None, behind or f"resourceVersion {position} is too old "
                                                            f"(history starts after {floor}); list again")
            latest = self._meta("rv")
            rows = self._db.execute(
                "SELECT rv, type, old, new FROM changes WHERE kind = ? AND rv > ? AND rv <= ? ORDER BY rv LIMIT ?",
                (kind_id(kind), position, latest, _BATCH)).fetchall()
        changes = [Change(rv, kind, change_type, json.loads(old) if old else None, json.loads(new))
                   for rv, change_type, old, new in rows]
        return changes, (changes[-1].rv if len(changes) == _BATCH else max(latest, position))

    def _put(self, write: _Write, kind: ResourceKind, change: WatchEventType, old: Obj | None, new: Obj) -> Obj:
        """Give `new` the next resourceVersion, store (or remove) its row, log the change; return it."""
        write.rv += 1
        write.changes += 1
        identifier = kind_id(kind)
        if identifier not in self._kinds and identifier not in write.new_kinds:
            self._db.execute("INSERT OR IGNORE INTO kinds VALUES (?, ?, ?, ?, ?, ?)",
                             (identifier, kind.group, kind.version, kind.kind, kind.plural, int(kind.namespaced)))
            write.new_kinds[identifier] = kind
        metadata = new["metadata"]
        metadata["resourceVersion"] = str(write.rv)
        key = (identifier, metadata.get("namespace") or "", metadata["name"])
        body = encode(kind, new)
        self._db.execute("DELETE FROM owners WHERE uid = ?", (metadata["uid"],))
        if change == "DELETED":
            self._db.execute("DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?", key)
        else:
            self._db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                             (*key, metadata["uid"], write.rv, body))
            self._db.executemany("INSERT OR IGNORE INTO owners VALUES (?, ?)",
                                 [(owner, metadata["uid"]) for owner in sorted(owner_uids(new))])
        self._db.execute("INSERT INTO changes VALUES (?, ?, ?, ?, ?)",
                         (write.rv, identifier, change, _selection_data(old) if old else None, body))
        return new

    def _modify(self, write: _Write, kind: ResourceKind, current: Obj, new: Obj) -> Obj:
        if new == current:  # nothing changed: no new resourceVersion, no watch event
            return current
        return self._put(write, kind, "MODIFIED", current, new)

    def _delete(self, write: _Write, kind: ResourceKind, current: Obj) -> None:
        if not current["metadata"].get("finalizers"):
            self._remove_and_collect(write, kind, current, copy.deepcopy(current))
        elif not current["metadata"].get("deletionTimestamp"):
            marked = copy.deepcopy(current)
            marked["metadata"]["deletionTimestamp"] = format_time(self._clock.now())
            self._put(write, kind, "MODIFIED", current, marked)

    def _remove_and_collect(self, write: _Write, kind: ResourceKind, current: Obj, final: Obj) -> Obj:
        """Remove an object, then delete (background cascade) every object left without a living owner,
        all in the same transaction."""
        removed = self._put(write, kind, "DELETED", current, final)
        dependents = self._db.execute(
            "SELECT o.kind, o.namespace, o.name FROM owners w JOIN objects o ON o.uid = w.uid "
            "WHERE w.owner_uid = ? ORDER BY o.kind, o.namespace, o.name", (current["metadata"]["uid"],)).fetchall()
        for identifier, namespace, name in dependents:
            dependent_kind = self._kind(identifier)
            dependent = self._load(dependent_kind, name, namespace or None)  # an earlier step may have removed it
            if dependent is not None and not self._has_living_owner(dependent["metadata"]["uid"]):
                self._delete(write, dependent_kind, dependent)
        return removed

    def _has_living_owner(self, uid: str) -> bool:
        return self._db.execute(
            "SELECT 1 FROM owners w JOIN objects o ON o.uid = w.owner_uid WHERE w.uid = ? LIMIT 1", (uid,)
        ).fetchone() is not None


def _selectors(
    kind: ResourceKind, label_selector: LabelSelectorInput, field_selector: str | None
) -> tuple[LabelSelector, FieldSelector]:
    try:
        return parse_label_selector(label_selector), parse_field_selector(field_selector)
    except ValueError as error:
        raise Invalid.about(kind, None, None, str(error)) from None
