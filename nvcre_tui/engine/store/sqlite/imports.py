"""The one-time import of an old JSON state file (a simulator session's, or a MemoryStore snapshot) into a
new SqliteStore. Anything else, or a store that already holds objects, is refused with one line."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...clock import Clock
from ..errors import StoreError
from ..memory import DEFAULT_HISTORY_LIMIT
from ..objects import identify, owner_uids
from ..persist import SNAPSHOT_FORMAT, parse_snapshot
from ..protocol import ResourceKind
from .database import StoreFileError
from .store import SqliteStore
from .tables import encode, kind_id

__all__ = ["open_store", "import_json_state", "write_snapshot", "SESSION_PROPERTY", "IMPORTED_SUFFIX"]

SESSION_STATE_VERSION = 1  # engine/session.py's STATE_VERSION when the JSON file went away
SESSION_PROPERTY = "session"  # the old file's scenario, clock and savedAt, kept as a store property
IMPORTED_SUFFIX = ".imported"  # the JSON file is renamed so: it is imported once, and kept


def _snapshot_of(path: Path, data: object) -> tuple[Mapping[str, Any], dict[str, Any] | None]:
    """The store snapshot inside the file, and the session fields around it (None for a bare snapshot)."""
    if isinstance(data, Mapping) and data.get("format") == SNAPSHOT_FORMAT:
        return data, None
    if not isinstance(data, Mapping) or "store" not in data:
        raise StoreFileError(f"{path}: not an nvcre state file (neither a simulator session nor a store snapshot)")
    if data.get("version") != SESSION_STATE_VERSION:
        raise StoreFileError(f"{path}: simulator state of version {data.get('version')!r}; "
                             f"only version {SESSION_STATE_VERSION} can be imported")
    session = {key: data[key] for key in ("scenario", "clock", "savedAt") if key in data}
    return data["store"], session


def _read(path: Path) -> tuple[int, dict[ResourceKind, list[dict[str, Any]]], dict[str, Any] | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreFileError(f"{path}: no such state file") from None
    except OSError as error:
        raise StoreFileError(f"{path}: cannot read ({error.strerror or error})") from None
    except json.JSONDecodeError as error:
        raise StoreFileError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None
    except UnicodeDecodeError as error:
        raise StoreFileError(f"{path}: not a text file ({error.reason})") from None
    snapshot, session = _snapshot_of(path, data)
    try:
        rv, objects = parse_snapshot(snapshot)
        for kind, items in objects.items():
            for item in items:
                identify(kind, item)
                metadata = item["metadata"]
                if not isinstance(metadata.get("uid"), str):
                    raise ValueError(f"{kind} {metadata.get('name')}: metadata.uid is missing")
                if not str(metadata.get("resourceVersion") or 0).isdigit():
                    raise ValueError(f"{kind} {metadata.get('name')}: metadata.resourceVersion "
                                     f"{metadata.get('resourceVersion')!r} is not an integer")
    except (ValueError, StoreError) as error:
        raise StoreFileError(f"{path}: {error}") from None
    return rv, objects, session


def open_store(db_path: str | os.PathLike[str], clock: Clock, history_limit: int = DEFAULT_HISTORY_LIMIT, *,
               legacy_json: str | os.PathLike[str] | None = None, readonly: bool = False,
               **options: Any) -> SqliteStore:
    """The store at `db_path`, the one way a session should open it: an old JSON state file at `legacy_json`
    is imported once (then renamed `.imported`) when there is no store yet, and refused with one line when
    there is one, or when the store is opened read-only (importing writes)."""
    db_path = Path(db_path)
    legacy = Path(legacy_json) if legacy_json is not None else None
    if legacy is not None and legacy.exists():
        if db_path.exists():
            raise StoreFileError(f"{legacy}: an old JSON state file beside the store {db_path}, not imported "
                                 f"because the store exists; move it away (or the store, to import it)")
        if readonly:
            raise StoreFileError(f"{legacy}: an old JSON state file; start once without read-only to import it")
        return import_json_state(legacy, db_path, clock, history_limit, **options)
    return SqliteStore(db_path, clock, history_limit, readonly=readonly, **options)


def import_json_state(json_path: str | os.PathLike[str], db_path: str | os.PathLike[str], clock: Clock,
                      history_limit: int = DEFAULT_HISTORY_LIMIT, *, retire: bool = True,
                      **options: Any) -> SqliteStore:
    """A new store at `db_path` holding the JSON file's objects and resourceVersion counter (watch history
    starts there). The session fields (scenario, clock, savedAt) become the `session` property. With
    `retire`, the JSON file is renamed to `<name>.imported` afterwards, so it is never imported twice.

    StoreFileError (one line) for an unreadable or foreign file, or when `db_path` already holds objects.
    """
    json_path, db_path = Path(json_path), Path(db_path)
    rv, objects, session = _read(json_path)
    created = not db_path.exists()
    store = SqliteStore(db_path, clock, history_limit, **options)
    try:
        _fill(store, json_path, rv, objects, session)
    except BaseException:
        store._tables.db.close()
        if created:  # leave no empty store behind: it would stop the next attempt to import
            for leftover in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
                leftover.unlink(missing_ok=True)
        raise
    if retire:
        os.replace(json_path, json_path.with_name(json_path.name + IMPORTED_SUFFIX))
    return store


def _fill(store: SqliteStore, json_path: Path, rv: int, objects: dict[ResourceKind, list[dict[str, Any]]],
          session: dict[str, Any] | None) -> None:
    """Every object in one transaction, into a store that must be empty."""
    db = store._tables.db
    db.execute("BEGIN IMMEDIATE")
    try:
        held = db.execute("SELECT (SELECT value FROM meta WHERE key = 'rv'), (SELECT count(*) FROM objects)").fetchone()
        if int(held[0]) or held[1]:
            raise StoreFileError(f"{store.path}: already holds a store (resourceVersion {held[0]}); {json_path} "
                                 "is not imported into it (move one of them away)")
        for kind, items in objects.items():
            identifier = kind_id(kind)
            db.execute("INSERT OR IGNORE INTO kinds VALUES (?, ?, ?, ?, ?, ?)",
                       (identifier, kind.group, kind.version, kind.kind, kind.plural, int(kind.namespaced)))
            for item in items:
                metadata = item["metadata"]
                db.execute("INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                           (identifier, metadata.get("namespace") or "", metadata["name"], metadata["uid"],
                            int(metadata.get("resourceVersion") or 0), encode(kind, item)))
                db.executemany("INSERT OR IGNORE INTO owners VALUES (?, ?)",
                               [(owner, metadata["uid"]) for owner in sorted(owner_uids(item))])
        db.execute("UPDATE meta SET value = ? WHERE key IN ('rv', 'floor')", (rv,))
        if session is not None:
            value = {**session, "importedFrom": str(json_path)}
            db.execute("INSERT OR REPLACE INTO properties VALUES (?, ?)", (SESSION_PROPERTY, json.dumps(value)))
        db.execute("COMMIT")
    except sqlite3.IntegrityError as error:
        db.execute("ROLLBACK")
        raise StoreFileError(f"{json_path}: two objects share a name or uid ({error})") from None
    except BaseException:
        db.execute("ROLLBACK")
        raise


def write_snapshot(db_path: str | os.PathLike[str], snapshot: Mapping[str, Any], properties: Mapping[str, Any]) -> None:
    """A new store at `db_path` (replacing any file there) holding a MemoryStore snapshot and these
    properties: a copy of an in-memory cluster (test fixtures, exports). StoreFileError names what is wrong."""
    from ...clock import ManualClock

    db_path = Path(db_path)
    for leftover in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
        leftover.unlink(missing_ok=True)
    try:
        rv, objects = parse_snapshot(snapshot)
    except ValueError as error:
        raise StoreFileError(f"{db_path}: {error}") from None
    store = SqliteStore(db_path, ManualClock())
    try:
        _fill(store, db_path, rv, objects, None)
        for key, value in properties.items():
            store.set_property(key, value)
    finally:
        store._tables.db.close()
