"""The SQLite file behind SqliteStore: opening it (WAL, busy timeout), its tables, and one-line errors.

Tables:
  meta        the store's own values: format; rv, the global resourceVersion, and clock, the writer's
              clock at that write; floor: the change log holds every change after it
  kinds       each kind ever stored (group/version/kind/plural/namespaced), so unknown kinds round-trip
  objects     one row per object, JSON body; primary key (kind, namespace, name), uid unique (a rowid
              table: bodies are large, which WITHOUT ROWID stores poorly)
  owners      (owner uid, dependent uid) from ownerReferences: the cascade finds dependents by index
  changes     the change log for watch replay: rv, kind, type, the old version's selection data, new body (JSON
              text; from format v2 a long one zlib-compressed, a BLOB: tables.packed)
  floors      per kind, the newest change dropped from the log: a watch behind it has missed one (Gone)
  properties  caller-owned JSON values (the simulator session's clock and scenario), no resourceVersion
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import stat
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from ...errors import InputError

__all__ = ["FORMAT", "TEXT_LOG_FORMATS", "BUSY_TIMEOUT_SECONDS", "StoreFileError", "connect"]

FORMAT = "nvcre-sqlite-store/v2"
# v1 keeps its change log as JSON text only, and stays so: an older nvcre may have it open (a wall left running), and its
# watches would skip a compressed row without a word (the format is checked only when a file is opened). A store
# created as v2 compresses long change-log bodies (tables.packed); one of v1 is read and written as v1.
TEXT_LOG_FORMATS = {"nvcre-sqlite-store/v1"}
BUSY_TIMEOUT_SECONDS = 10.0  # how long a write waits for another process's transaction (they take milliseconds)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kinds (
    id TEXT PRIMARY KEY, grp TEXT NOT NULL, version TEXT NOT NULL, kind TEXT NOT NULL, plural TEXT NOT NULL,
    namespaced INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS objects (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL UNIQUE,
    rv INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, namespace, name));
CREATE TABLE IF NOT EXISTS owners (owner_uid TEXT NOT NULL, uid TEXT NOT NULL, PRIMARY KEY (owner_uid, uid))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS owners_by_dependent ON owners (uid);
CREATE TABLE IF NOT EXISTS changes (
    rv INTEGER PRIMARY KEY, kind TEXT NOT NULL, type TEXT NOT NULL, old TEXT, new TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS changes_by_kind ON changes (kind, rv);
CREATE TABLE IF NOT EXISTS floors (kind TEXT PRIMARY KEY, rv INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS properties (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('format', '{format}'), ('rv', 0), ('floor', 0);
"""
_TABLES = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", _SCHEMA))


class StoreFileError(InputError, ValueError):
    """The store file cannot be used: one line naming the file and the problem (the CLI prints it, exit 2)."""


def _problem(path: Path, what: str) -> StoreFileError:
    return StoreFileError(f"{path}: {what}")


def file_head(path: str | os.PathLike[str], size: int = 64) -> tuple[int, bytes] | None:
    """(size as stat says, first `size` bytes) of a regular file; None for anything else or what cannot be read. Opened
    without blocking (a named pipe opened plainly would wait for a writer, forever); /proc's files say 0 and have bytes."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            return (info.st_size, handle.read(size)) if stat.S_ISREG(info.st_mode) else None
    except OSError:
        return None


def _looks_like_json(head: tuple[int, bytes] | None) -> bool:
    return head is not None and head[1].lstrip().startswith(b"{")


def _sized_zero_with_content(head: tuple[int, bytes] | None) -> bool:
    """A file whose size reads 0 yet has bytes (/proc, /sys): SQLite would take it for an empty store."""
    return head is not None and head[0] == 0 and bool(head[1])


def connect(path: str | os.PathLike[str], *, readonly: bool = False, power_safe: bool = False,
            one_shot: bool = False) -> sqlite3.Connection:
    """An open, checked connection in autocommit mode (transactions are explicit); StoreFileError otherwise.

    Commits use synchronous=NORMAL: in WAL mode a committed write survives the process being killed at
    any moment; a power cut or OS crash may lose the last ones (never the file's consistency).
    power_safe=True uses FULL (an fsync per commit) so it survives those too, at several times the cost.
    one_shot (read-only): a short read (`report`) that must not even create the -wal and -shm files;
    a long-lived reader (a read-only console) needs them to see later commits.
    """
    path = Path(path)
    if path.is_dir():
        raise _problem(path, "is a directory, not an nvcre store file")
    head = file_head(path)
    if _looks_like_json(head):
        raise _problem(path, "is a JSON state file of an older nvcre, not an SQLite store; import it once "
                             "into a new store (import_json_state) or move it away")
    if _sized_zero_with_content(head):
        raise _problem(path, "not a usable nvcre store (a file the kernel makes, not a database)")
    if readonly and not path.exists():
        raise _problem(path, "no such store (read-only mode opens an existing store only)")
    if not readonly:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _problem(path.parent, f"cannot create the store's folder ({error.strerror or error})") from None
    # the path's own bytes, percent-encoded: a name that is no UTF-8 (lone surrogates in str) could not be encoded as text
    target = f"file:{quote(os.fsencode(path.resolve()))}" + (_readonly_mode(path, one_shot) if readonly else "")
    try:
        db = sqlite3.connect(target, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS)
    except sqlite3.Error as error:
        raise _problem(path, f"cannot open ({error})") from None
    try:
        _prepare(path, db, readonly=readonly, power_safe=power_safe)
    except sqlite3.DatabaseError as error:
        db.close()
        raise _problem(path, f"not a usable nvcre store ({error})") from None
    except UnicodeDecodeError:  # SQLite's message quoted a schema that is not UTF-8: the file is damaged
        db.close()
        raise _problem(path, "not a usable nvcre store (malformed database schema: not UTF-8 text)") from None
    except StoreFileError:
        db.close()
        raise
    return db


def _readonly_mode(path: Path, one_shot: bool) -> str:
    """mode=ro; for a one-shot read, immutable=1 too when no process has the store open (no -wal file): a
    plain read-only connection would create the -wal and -shm files beside it. Without a WAL file every
    committed write is in the main file, so reading it unlocked sees all of them."""
    return "?mode=ro&immutable=1" if one_shot and not Path(f"{path}-wal").exists() else "?mode=ro"


@functools.cache
def _expected_columns() -> dict[str, tuple[str, ...]]:
    """Each table's columns as this version creates them (read from a scratch in-memory database)."""
    scratch = sqlite3.connect(":memory:")
    try:
        for statement in _SCHEMA.replace("{format}", FORMAT).split(";"):
            if statement.strip():
                scratch.execute(statement)
        return {table: _columns(scratch, table) for table in _TABLES}
    finally:
        scratch.close()


def _columns(db: sqlite3.Connection, table: str) -> tuple[str, ...]:
    return tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))


def _check_columns(path: Path, db: sqlite3.Connection, tables: set[str]) -> None:
    """A table of ours with other columns: the file was made by something else, or edited by hand."""
    for table, expected in sorted(_expected_columns().items()):
        if table in tables and (found := _columns(db, table)) != expected:
            raise _problem(path, f"table {table} has columns ({', '.join(found)}), expected ({', '.join(expected)}); "
                                 "not a store of this nvcre version")


def _prepare(path: Path, db: sqlite3.Connection, *, readonly: bool, power_safe: bool) -> None:
    """Check the file is an nvcre store (or empty) BEFORE changing anything in it; then WAL and the tables."""
    db.execute(f"PRAGMA synchronous={'FULL' if power_safe else 'NORMAL'}")
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}  # not SQLite: fails
    if tables and "meta" not in tables:
        raise _problem(path, "an SQLite database but not an nvcre store (no meta table)")
    if tables:
        _check_format(path, db)
        _check_columns(path, db, tables)
        _check_meta(path, db, tables)
    if readonly:
        if not tables:
            raise _problem(path, "an empty file, not an nvcre store yet (read-only mode creates nothing)")
        if missing := sorted(_TABLES - tables):
            raise _problem(path, f"an incomplete nvcre store (no table {', '.join(missing)})")
        return
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.execute("PRAGMA journal_mode=WAL")
    if tables >= _TABLES:
        return
    db.execute("BEGIN IMMEDIATE")  # two processes creating the same new store serialise here
    try:
        for statement in _SCHEMA.replace("{format}", FORMAT).split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    _check_format(path, db)  # another process may have created it first


def _check_meta(path: Path, db: sqlite3.Connection, tables: set[str]) -> None:
    """The store's counters are whole numbers >= 0, rv not behind the resourceVersions it gave out, and its clock a
    time (a hand edit, or a damaged disk, would otherwise surface as an internal error, a constraint failure blamed on
    the input, or a negative resourceVersion as a watch that never ends)."""
    # One statement, so one snapshot: another process's write between separate reads would look like damage.
    newest_of = [table for table in ("changes", "objects") if table in tables]
    query = " UNION ALL ".join(["SELECT key, value FROM meta WHERE key IN ('rv', 'floor', 'clock')",
                                *(f"SELECT 'newest {table}', MAX(rv) FROM {table}" for table in newest_of)])
    values = dict(db.execute(query).fetchall())
    for key in ("rv", "floor"):
        value = values.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _problem(path, f"damaged nvcre store: meta {key} is {value!r}, not a whole number >= 0")
    # The next write takes rv + 1: behind what the change log or an object holds, it would fail UNIQUE (blamed on
    # whatever was being written) or hand out a resourceVersion a watch has already seen.
    for table, what in (("changes", "its change log"), ("objects", "its newest object")):
        newest = values.get(f"newest {table}")
        if isinstance(newest, int) and newest > values["rv"]:
            raise _problem(path, f"damaged nvcre store: its resourceVersion counter (meta rv {values['rv']}) is behind "
                                 f"{what} ({newest})")
    if "clock" in values:
        try:
            moment = datetime.fromisoformat(values["clock"])
        except (TypeError, ValueError):
            moment = None
        if moment is None or moment.tzinfo is None or moment.year >= 9000:
            raise _problem(path, f"damaged nvcre store: meta clock is {values['clock']!r}, not a time of this era")


def _check_format(path: Path, db: sqlite3.Connection) -> str:
    """The store's format (FORMAT or one of TEXT_LOG_FORMATS); StoreFileError for any other."""
    row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    if row is None or not isinstance(row[0], str) or not row[0].startswith("nvcre-sqlite-store/"):
        # no format (an emptied meta table) or another's: nvcre wrote no version into it
        shown = "no format" if row is None else f"format {row[0]!r:.60}"
        raise _problem(path, f"not an nvcre store, or a damaged one: its meta table holds {shown} "
                             f"(an nvcre store says {FORMAT!r}); move it away or name another --state")
    if row[0] != FORMAT and row[0] not in TEXT_LOG_FORMATS:
        raise _problem(path, f"store format {row[0] if row else None!r}, expected {FORMAT!r} "
                             "(written by another nvcre version)")
    return str(row[0])
