"""The history database: where it lives and its schema (stdlib sqlite3, WAL, one schema version).

Two processes may archive at once (a console and `nvcre certification run`): each archive is one
`BEGIN IMMEDIATE` transaction and its key is unique, so a certification is archived once. A simulated certification
is keyed by `run` (the store's own id, its uid and creation time): a copied or moved store file is another source with
the same store id, and its certifications are the ones archived already, never counted twice; another store of the
same scenario, even a new one at the path of a deleted one (its uids and times seeded alike), has another id. Others
(a cluster's, an old store's read-only) are keyed by (source, uid). A history made before `run` gains it when first
opened for writing (an older nvcre still reads and writes it: its records have no run). Its read indexes (INDEXES) are
added likewise, by every open of a history that can be written (`nvcre history` too): no new schema version, so an older
nvcre reads and writes it as before, and SQLite keeps the indexes up to date under it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.outfiles import check_writable, env_path
from nvcre_tui.paths import state_home

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000

# The certifications table; a history made before `run` had `UNIQUE (source, uid)` in it, in place of the two indexes.
CERTIFICATIONS = """
CREATE TABLE IF NOT EXISTS {table} (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,            -- which store: a cluster's server URL or a simulator state
    uid TEXT NOT NULL,
    name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    result TEXT NOT NULL,
    start_time TEXT,
    completion_time TEXT,
    archived_at TEXT NOT NULL,
    report TEXT NOT NULL,            -- build_report's JSON
    run TEXT                         -- <store id>/<uid>/<creationTimestamp> of a simulated one (NULL: none, a cluster's)
)"""
# A report holding a diagnosis's verdicts (json.dumps writes the key as it is): the term queries.py filters by, as
# written here, so that SQLite answers it from the partial index.
WITH_VERDICTS = """instr(report, '"verdicts"') > 0"""
# One record per run: by run where there is one (a copy of a store is another source, the same run), else by (source,
# uid) (a new store at the path of a deleted one has the same seeded uids: another run, its own run key).
KEYS = ("CREATE UNIQUE INDEX IF NOT EXISTS certifications_by_run ON certifications (run)",
        "CREATE UNIQUE INDEX IF NOT EXISTS certifications_by_source_uid ON certifications (source, uid) WHERE run IS NULL")
# What the read paths (queries.py) look up at scale: certifications in the history's order, those whose report holds a
# diagnosis's verdicts (a partial index: `history node` read every report of the node to find the few with any), and
# each node's states and bandwidths per certification without its rows' JSON (`history nodes`). None by source: SQLite,
# without statistics, took a source's certifications for a few and joined every node's results to a whole scan of them
# (the map's stale marks of one source, 78 s at 10,000 certifications).
INDEXES = ("CREATE INDEX IF NOT EXISTS certifications_in_order ON certifications (completion_time, id)",
           f"CREATE INDEX IF NOT EXISTS certifications_with_verdicts ON certifications (id) WHERE {WITH_VERDICTS}",
           "CREATE INDEX IF NOT EXISTS node_results_summary ON node_results (node, cert_id, category, state, bus_bw)")
COLUMNS = "id, source, uid, name, namespace, result, start_time, completion_time, archived_at, report"
# What every history has (`run` aside: an older one gains it when opened for writing), read when it is opened.
TABLE_COLUMNS = {"certifications": COLUMNS,
                 "node_results": "cert_id, node, category, state, reason, message, bus_bw, measurements, evidence, jobs",
                 "node_baselines": "cert_id, node, baseline"}

SCHEMA = CERTIFICATIONS.format(table="certifications") + """;
CREATE TABLE IF NOT EXISTS node_results (
    cert_id INTEGER NOT NULL REFERENCES certifications(id),
    node TEXT NOT NULL,
    category TEXT NOT NULL,          -- the category's title in the report: domain/variant, `#N` after it when the certification runs one twice
    state TEXT NOT NULL,             -- failed | suspect | inconclusive | passed | excluded | untested
    reason TEXT NOT NULL,
    message TEXT NOT NULL,
    bus_bw REAL,                     -- busBandwidthGBps of the node's last measured job, for trends
    measurements TEXT NOT NULL,      -- JSON object metric -> value
    evidence TEXT NOT NULL,          -- JSON list of threshold evidence
    jobs TEXT NOT NULL,              -- JSON list of {job, phase, groupSize, measurements, failures}
    PRIMARY KEY (cert_id, node, category)
);
CREATE TABLE IF NOT EXISTS node_baselines (
    cert_id INTEGER NOT NULL REFERENCES certifications(id),
    node TEXT NOT NULL,
    baseline TEXT NOT NULL,          -- JSON object: kubelet, kernel, osImage, containerRuntime, driver, cuda, gpuProduct, migStrategy
    PRIMARY KEY (cert_id, node)
);
CREATE INDEX IF NOT EXISTS node_results_by_node ON node_results (node);
""" + ";\n".join((*KEYS, *INDEXES)) + ";\n"


def default_history_path() -> Path:
    """$NVCRE_HISTORY, else $XDG_STATE_HOME/nvcre/history.db (~/.local/state by default)."""
    if os.environ.get("NVCRE_HISTORY"):
        return env_path("NVCRE_HISTORY")
    return state_home("the history archive", "--history PATH (or $NVCRE_HISTORY)") / "history.db"


def open_history(path: Path, *, create: bool = True) -> sqlite3.Connection:
    """Open (and with `create`, make) the history database; InputError names the file when it is not one."""
    if not create and not path.exists():
        raise InputError(f"{path}: no history database (it is created when a certification finishes; --history PATH names another)")
    if path.is_dir():
        raise InputError(f"{path}: a directory, not a history database (--history PATH names a file)")
    new = create and not path.exists()
    if new:
        _check_creatable(path)
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            connection.close()
            raise InputError(f"{path}: history schema version {version}, this nvcre reads version {SCHEMA_VERSION}")
        if create and version == 0:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("BEGIN IMMEDIATE")  # two processes creating one history serialise here
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            tables = sorted(row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
            if version == 0 and tables:  # another program's database (or the simulator's store): never add ours to it
                connection.execute("ROLLBACK")
                connection.close()
                shown = ", ".join(tables[:5]) + (" ..." if len(tables) > 5 else "")
                raise InputError(f"{path}: an SQLite database but not an nvcre history (it holds tables {shown}); --history PATH names another")
            if version == 0:  # statement by statement: executescript would commit first, ending the lock
                for statement in [*SCHEMA.split(";"), f"PRAGMA user_version = {SCHEMA_VERSION}"]:
                    if statement.strip():
                        connection.execute(statement)
            connection.execute("COMMIT")  # made now, or by the other process first
        elif version == 0:
            connection.close()
            raise InputError(f"{path}: not an nvcre history database (no schema)")
        for table, columns in TABLE_COLUMNS.items():  # parses the schema now: a damaged or partial one is said here,
            connection.execute(f"SELECT {columns} FROM {table} LIMIT 0")  # not after a run it then cannot archive
        if create:
            _add_run_key(connection)
        _add_indexes(connection)
    except sqlite3.DatabaseError as error:
        if new and getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_CANTOPEN:  # a read-only filesystem, say
            raise InputError(f"{path}: no such history database, and it cannot be created there ({error})") from None
        raise InputError(f"{path}: not a readable history database ({error})") from None
    except UnicodeDecodeError:  # SQLite's message quoted a schema that is not UTF-8: the file is damaged
        raise InputError(f"{path}: not a readable history database (malformed database schema: not UTF-8 text)") from None
    except OSError as error:
        raise InputError(f"{path}: cannot open the history database ({error.strerror})") from None
    return connection


def has_run_key(connection: sqlite3.Connection) -> bool:
    """Whether the history has the `run` column (one made before it, and not writable since, has not)."""
    return "run" in {row[1] for row in connection.execute("PRAGMA table_info(certifications)")}


def _add_run_key(connection: sqlite3.Connection) -> None:
    """The `run` column and the keys (KEYS), on a history made before them; a history that cannot be written stays as
    it is (what would be written to it fails as it did, and is said then)."""
    if has_run_key(connection):
        return

    def add(connection: sqlite3.Connection) -> None:
        if not has_run_key(connection):  # SQLite drops no table constraint: the table is made anew, ids kept
            connection.execute(CERTIFICATIONS.format(table="certifications_keyed"))
            connection.execute(f"INSERT INTO certifications_keyed ({COLUMNS}) SELECT {COLUMNS} FROM certifications")
            connection.execute("DROP TABLE certifications")
            connection.execute("ALTER TABLE certifications_keyed RENAME TO certifications")
            for key in KEYS:
                connection.execute(key)

    _upgrade(connection, add, frozenset({sqlite3.SQLITE_READONLY}))


def _add_indexes(connection: sqlite3.Connection) -> None:
    """INDEXES, on a history made before them (a few seconds once at 10,000 certifications: the partial index reads
    every report); a history that cannot be written now (read-only, its lock held past BUSY_TIMEOUT_MS by another
    process, a full disk) stays as it is, read as before (slower): they are only an aid to reading it, never a reason
    a command that reads it fails."""
    names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    if all(index.split()[5] in names for index in INDEXES):
        return

    def add(connection: sqlite3.Connection) -> None:
        for index in INDEXES:
            connection.execute(index)

    _upgrade(connection, add, _NOT_NOW)


# Why a history cannot be written now, for _add_indexes (its primary result codes)
_NOT_NOW = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL})


def _upgrade(connection: sqlite3.Connection, change: Callable[[sqlite3.Connection], None], skipped: frozenset[int]) -> None:
    """`change` to an older history's schema in one IMMEDIATE transaction (two processes upgrading one history serialise
    here; `change` checks again what the first may have done); left undone, the history as it was, where SQLite's
    primary result code is one of `skipped` (a history that cannot be written)."""
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if getattr(error, "sqlite_errorcode", 0) & 0xFF in skipped:
            return
        raise
    try:
        change(connection)
        connection.execute("COMMIT")
    except sqlite3.OperationalError as error:
        connection.execute("ROLLBACK")
        if getattr(error, "sqlite_errorcode", 0) & 0xFF not in skipped:
            raise


def _check_creatable(path: Path) -> None:
    """A history that does not exist yet must be creatable where it is named: said as such, not as SQLite's "unable
    to open database file" under "not a readable history database"."""
    try:
        check_writable(path)
    except InputError as error:
        why = str(error).removeprefix(f"{path}: ").removeprefix("cannot write: ")
        raise InputError(f"{path}: no such history database, and it cannot be created there: {why}") from None


def check_history(path: Path, named_by: str = "--history") -> None:
    """InputError when `path` cannot be the history database, found before anything else is created: a new file
    must be writable, an existing one a history (or an empty file, which becomes one). `named_by`: what named it
    (--history, $NVCRE_HISTORY), for the message."""
    check_writable(path, named_by)  # mode bits count, as for every file nvcre writes: root too sees a read-only file
    if path.exists():
        open_history(path).close()
