"""The rows behind SqliteStore: transactions, objects, owners, the change log and the counter.

sqlite3 calls run synchronously on the event loop, not in a thread: each is local and takes well under a
millisecond (a power-safe commit about one fsync), less than handing it to a thread would cost, and running
between awaits makes every store operation atomic for the other coroutines exactly as in MemoryStore.
The one wait that can be longer, another process holding the write lock, is awaited (`Tables.lock`), so
the loop runs meanwhile; after database.BUSY_TIMEOUT_SECONDS it is a StoreError.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sqlite3
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import Gone, Invalid, StoreError
from ..history import Change
from ..objects import owner_uids, text_maps_problem
from ..protocol import ResourceKind, WatchEventType
from .database import BUSY_TIMEOUT_SECONDS, TEXT_LOG_FORMATS
from .feed import Feed

__all__ = ["Tables", "Write", "DamagedRow", "kind_id", "encode"]

Obj = dict[str, Any]
BATCH = 256  # change-log rows a watch reads at a time
PACK_FROM = 1024  # change-log bodies of at least this many characters are stored compressed
LOCK_RETRY_SECONDS = 0.001
FELL_BEHIND = "watch fell too far behind and was dropped; list again"


def kind_id(kind: ResourceKind) -> str:
    """`nvcre.nvidia.com/v1alpha1/workflows`, `v1/nodes`: how a kind is named in the file."""
    return f"{kind.api_version}/{kind.plural}"


def encode(kind: ResourceKind, obj: Obj) -> str:
    """The JSON text of an object; Invalid when something in it is not JSON."""
    try:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as error:
        metadata = obj.get("metadata") or {}
        raise Invalid.about(kind, metadata.get("name"), metadata.get("namespace"),
                            f"not storable as JSON ({error})") from None


class DamagedRow(StoreError):
    """A stored row that is not an object (edited by hand, a damaged disk): named, never a traceback."""


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON has")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is beyond a float's range")
    return value


def _decode(text: object, name: str | None) -> tuple[Obj | None, str]:
    """A row's JSON body, or (None, what is wrong with it). NaN, Infinity and numbers past a float's range are
    refused as Kubernetes refuses them: read, they would print as a measurement and make the JSON report invalid."""
    try:
        # deliberate: a damaged row may hold any SQLite value; json.loads raises TypeError for a non-text one (an int, NULL), caught below
        body = json.loads(text, parse_constant=_no_constant, parse_float=_finite)  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        return None, f"body is not JSON ({str(error).splitlines()[0][:80]})"
    except RecursionError:
        return None, "body is JSON nested too deep to read"
    metadata = body.get("metadata") if isinstance(body, dict) else None
    if not isinstance(metadata, dict):
        return None, "body is not an object with metadata"
    if not isinstance(metadata.get("name"), str) or (name is not None and metadata["name"] != name):
        return None, f"metadata.name {metadata.get('name')!r} does not match the row ({name!r})"
    if problem := text_maps_problem(metadata):
        return None, problem
    return body, ""


def packed(body: str) -> str | bytes:
    """A change-log body as the log stores it: a long one zlib-compressed (a BLOB), a short one as it is. The log
    keeps the last history_limit versions of whatever changed, and a Workflow of a group per node is rewritten
    in full at each of its Jobs: 3,000 nodes made a 376 MB log of near-identical megabyte bodies, which
    compress about tenfold (level 1: faster than encoding them as JSON)."""
    return zlib.compress(body.encode(), 1) if len(body) >= PACK_FROM else body


def unpacked(value: object) -> object:
    """A change-log body's JSON text (what a damaged compressed one decompresses to, if anything, is left for
    _decode to name)."""
    if isinstance(value, bytes):
        try:
            return zlib.decompress(value).decode()
        except (zlib.error, UnicodeDecodeError):
            return value
    return value


def _selection(text: str | None) -> Obj | None:
    """A change's previous-version selection data (None when created, or when its text is damaged)."""
    try:
        value = json.loads(text) if text else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("metadata"), dict) else None


def _selection_data(obj: Obj) -> str:
    """What a watch needs of an object's previous version: whether it was selected (namespace, labels)."""
    metadata = obj["metadata"]
    return json.dumps({"metadata": {"namespace": metadata.get("namespace"), "labels": metadata.get("labels")}})


def locked_message(error: sqlite3.Error) -> str | None:
    """What to do about a store another process keeps locked (SQLite's "database is locked"), else None."""
    if getattr(error, "sqlite_errorcode", 0) & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return None
    return (f"locked by another process for more than {BUSY_TIMEOUT_SECONDS:g} s (another nvcre process writing it, or a program "
            "holding it open in a transaction); try again once it is done, or give this command its own --state")


@dataclass
class Write:
    """One write transaction: the counter before it and as it goes, and the kinds it changed."""

    start: int
    rv: int
    kinds: set[str] = field(default_factory=set)
    new_kinds: dict[str, ResourceKind] = field(default_factory=dict)  # known to this process once committed


class Tables:
    """One connection to the store file and every query the store makes."""

    def __init__(self, db: sqlite3.Connection, path: Path, history_limit: int, feed: Feed) -> None:
        self.db = db
        self.path = path
        self.history_limit = history_limit
        self.feed = feed
        self._kinds: dict[str, ResourceKind] = {}
        self.log_reads = 0  # change-log reads by watches (the benchmark and a test count them)
        self.damaged: dict[tuple[str, str, str], str] = {}  # (kind, namespace, name) -> problem, rows left out
        # A store of a format whose change log is text alone (v1) is kept so: an older nvcre may be watching it.
        format_row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        self.packs_log = not (format_row and format_row[0] in TEXT_LOG_FORMATS)

    # ----- transactions --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """sqlite3 errors (locked too long, disk full, closed store) as one-line StoreErrors naming the file."""
        try:
            yield
        except sqlite3.Error as error:
            raise StoreError(f"store {self.path}: {locked_message(error) or error}") from None

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction: everything read inside it is one consistent state of the file."""
        with self.guard():
            self.db.execute("BEGIN")
            try:
                yield
            finally:
                self.db.execute("COMMIT")

    @contextlib.asynccontextmanager
    async def writing(self, now: datetime) -> AsyncIterator[Write]:
        """One write transaction: committed on return, rolled back on any error; watchers woken after it.
        Only taking the write lock awaits: the body and the commit run without a pause. `now` (the
        store's clock) is recorded with the counter."""
        with self.guard():
            await self._lock()
            try:
                counter = self.meta("rv")
                write = Write(counter, counter)
                yield write
                if write.kinds:
                    self._advance(write.rv, now)
                self.db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):  # a failed COMMIT may have rolled back already
                    self.db.execute("ROLLBACK")
                raise
        self._kinds.update(write.new_kinds)
        if write.kinds:
            self.feed.written(write.start, write.rv, frozenset(write.kinds))

    async def _lock(self) -> None:
        """BEGIN IMMEDIATE: take the file's write lock. While another process holds it, try again every
        LOCK_RETRY_SECONDS on the event loop (SQLite's own busy wait would block the loop, and backs off
        to 100 ms, so a steady writer elsewhere would starve this one)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        while True:
            self.db.execute("PRAGMA busy_timeout = 0")
            try:
                self.db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                busy = getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY  # extended codes too
                if not busy or time.monotonic() > deadline:
                    raise
            finally:
                self.db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            await asyncio.sleep(LOCK_RETRY_SECONDS)

    def meta(self, key: str) -> int:
        """A counter: `rv` (the latest resourceVersion) or `floor` (the change log holds every change after it)."""
        return int(self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])

    def _advance(self, rv: int, now: datetime) -> None:
        """Store the counter and the clock, and drop change-log rows beyond the history limit (the floor
        moves with them)."""
        floor = rv - self.history_limit
        self.db.execute("UPDATE meta SET value = ? WHERE key = 'rv'", (rv,))
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('clock', ?)", (now.isoformat(),))
        if floor > self.meta("floor"):
            self.db.execute("INSERT INTO floors SELECT kind, max(rv) FROM changes WHERE rv <= ? GROUP BY kind "
                            "ON CONFLICT (kind) DO UPDATE SET rv = max(rv, excluded.rv)", (floor,))
            self.db.execute("DELETE FROM changes WHERE rv <= ?", (floor,))
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'floor'", (floor,))

    # ----- objects -------------------------------------------------------------------------------------

    def kind(self, identifier: str) -> ResourceKind:
        kind = self._kinds.get(identifier)
        if kind is None:
            row = self.db.execute("SELECT grp, version, kind, plural, namespaced FROM kinds WHERE id = ?",
                                  (identifier,)).fetchone()
            kind = self._kinds[identifier] = ResourceKind(row[0], row[1], row[2], row[3], bool(row[4]))
        return kind

    def stored_kinds(self) -> list[ResourceKind]:
        return [self.kind(row[0]) for row in self.db.execute("SELECT id FROM kinds ORDER BY id").fetchall()]

    def load(self, kind: ResourceKind, name: str, namespace: str | None) -> Obj | None:
        """The stored object; DamagedRow (a StoreError naming the file and the row) when its row is damaged."""
        row = self.db.execute("SELECT body FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
                              (kind_id(kind), namespace or "", name)).fetchone()
        if row is None:
            return None
        body, problem = _decode(row[0], name)
        if body is None:
            raise DamagedRow.about(kind, name, namespace, f"damaged row in {self.path}: {problem}")
        return body

    def damaged_uid(self, kind: ResourceKind, name: str, namespace: str | None) -> str | None:
        """The uid column of a row whose body is damaged (None when there is no row, or its body reads well):
        the key and the uid are enough to delete it and find its dependents, without its body."""
        row = self.db.execute("SELECT uid, body FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
                              (kind_id(kind), namespace or "", name)).fetchone()
        if row is None or _decode(row[1], name)[0] is not None:
            return None
        return str(row[0])

    def bodies(self, kind: ResourceKind, namespace: str | None) -> list[Obj]:
        """Objects of a kind (in one namespace, or all) in (namespace, name) order. A damaged row is left
        out and recorded in `damaged` (the others are still returned: one bad row hides nothing else)."""
        if namespace is None:
            rows = self.db.execute("SELECT namespace, name, body FROM objects WHERE kind = ? ORDER BY namespace, name",
                                   (kind_id(kind),))
        else:
            rows = self.db.execute("SELECT namespace, name, body FROM objects WHERE kind = ? AND namespace = ? ORDER BY name",
                                   (kind_id(kind), namespace))
        found = []
        for row_namespace, name, text in rows:
            body, problem = _decode(text, name)
            if body is None:
                self.damaged.setdefault((kind.kind, row_namespace, name), problem)
            else:
                found.append(body)
        return found

    def put(self, write: Write, kind: ResourceKind, change: WatchEventType, old: Obj | None, new: Obj) -> Obj:
        """Give `new` the next resourceVersion, store (or remove) its row, log the change; return it."""
        write.rv += 1
        identifier = kind_id(kind)
        write.kinds.add(identifier)
        if identifier not in self._kinds and identifier not in write.new_kinds:
            self.db.execute("INSERT OR IGNORE INTO kinds VALUES (?, ?, ?, ?, ?, ?)",
                            (identifier, kind.group, kind.version, kind.kind, kind.plural, int(kind.namespaced)))
            write.new_kinds[identifier] = kind
        metadata = new["metadata"]
        metadata["resourceVersion"] = str(write.rv)
        key = (identifier, metadata.get("namespace") or "", metadata["name"])
        body = encode(kind, new)
        self.db.execute("DELETE FROM owners WHERE uid = ?", (metadata["uid"],))
        if change == "DELETED":
            self.db.execute("DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?", key)
        else:
            self.db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                            (*key, metadata["uid"], write.rv, body))
            self.db.executemany("INSERT OR IGNORE INTO owners VALUES (?, ?)",
                                [(owner, metadata["uid"]) for owner in sorted(owner_uids(new))])
        self.db.execute("INSERT INTO changes VALUES (?, ?, ?, ?, ?)",
                        (write.rv, identifier, change, _selection_data(old) if old else None, packed(body) if self.packs_log else body))
        return new

    def dependents(self, uid: str) -> list[tuple[ResourceKind, str, str | None]]:
        """(kind, name, namespace) of every object naming `uid` among its owners."""
        rows = self.db.execute(
            "SELECT o.kind, o.namespace, o.name FROM owners w JOIN objects o ON o.uid = w.uid "
            "WHERE w.owner_uid = ? ORDER BY o.kind, o.namespace, o.name", (uid,)).fetchall()
        return [(self.kind(identifier), name, namespace or None) for identifier, namespace, name in rows]

    def has_living_owner(self, uid: str) -> bool:
        return self.db.execute(
            "SELECT 1 FROM owners w JOIN objects o ON o.uid = w.owner_uid WHERE w.uid = ? LIMIT 1", (uid,)
        ).fetchone() is not None

    # ----- the change log ------------------------------------------------------------------------------

    def changes_after(self, kind: ResourceKind, position: int, first: bool = False) -> tuple[list[Change], int]:
        """The next changes of `kind` after `position`, and the position after them.

        Gone, on the `first` read of a watch, when the log no longer holds every change after `position`
        (as MemoryStore); later, only when a change of this kind that the watch has not read was dropped,
        so a flood of other kinds' writes never makes a watch stale."""
        self.log_reads += 1
        with self.reading():
            if first and position < (floor := self.meta("floor")):
                raise Gone.about(kind, None, None, f"resourceVersion {position} is too old "
                                                   f"(history starts after {floor}); list again")
            dropped = self.db.execute("SELECT rv FROM floors WHERE kind = ?", (kind_id(kind),)).fetchone()
            if not first and dropped and position < dropped[0]:
                raise Gone.about(kind, None, None, FELL_BEHIND)
            latest = self.meta("rv")
            rows = self.db.execute(
                "SELECT rv, type, old, new FROM changes WHERE kind = ? AND rv > ? AND rv <= ? ORDER BY rv LIMIT ?",
                (kind_id(kind), position, latest, BATCH)).fetchall()
        changes = []
        for rv, change_type, old, new in rows:
            body, _ = _decode(unpacked(new), None)
            previous = _selection(old)
            if body is not None:  # a damaged log row is skipped: the object's own row says what is wrong
                changes.append(Change(rv, kind, change_type, previous, body))
        return changes, (changes[-1].rv if len(changes) == BATCH else max(latest, position))

    # ----- properties ----------------------------------------------------------------------------------

    def get_property(self, key: str) -> Any:
        with self.guard():
            row = self.db.execute("SELECT value FROM properties WHERE key = ?", (key,)).fetchone()
        try:
            return json.loads(row[0]) if row else None
        except (TypeError, ValueError):
            raise DamagedRow(f"{self.path}: damaged row: property {key!r} is not JSON") from None

    def claim_property(self, key: str, value: Any) -> Any:
        """Store `value` unless the key holds one already; the value it holds now (another process's may have come first)."""
        with self.guard():
            self.db.execute("INSERT OR IGNORE INTO properties (key, value) VALUES (?, ?)", (key, json.dumps(value)))
        return self.get_property(key)

    def set_property(self, key: str, value: Any) -> None:
        text = json.dumps(value)
        with self.guard():
            self.db.execute("INSERT OR REPLACE INTO properties (key, value) VALUES (?, ?)", (key, text))
