"""Archiving: every terminal Certification seen by a WatchCache is written to the history once.

The archiver listens to the cache (`subscribe`) and reads a certification's Workflows (those it controls, as the
engine and the report join them), their Jobs (owner uid) and the Nodes from the cache. One whose status someone other
than nvcre wrote (refused: api/provenance.py) is archived FAILED and marked refused with why, with no node result
(record.refused_record); it was taken for damaged, never archived, and tried again by every process.
It waits until every Workflow of the certification is terminal too (watches of different kinds arrive in
any order), at most GRACE_SECONDS, and archives at once when the certification is deleted meanwhile.
Idempotent by (source, uid): restarts and a second process on the same history archive nothing twice; and on the
simulator by run (run_key: the store's own id, uid, creation time), so a copied or moved store file, another source
with the same id, archives nothing its original archived (a second real run, in it or in another store, is another key).
A store without an id (made before ids, only read since) has no run key: a record of a store without one either, with
the same uid and times, is its run (write_record), so its copies read at other paths archive nothing twice.
Archiving never breaks the engine: a failure is kept in `errors` and the certification is retried later;
the first failure of each cause (the disk is full, the file read-only, a lock held too long) is also added
to `notices` (the session's), which the CLI prints and the console shows: told once, not per retry.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.bodies import certification_status, creation_order, meta_of
from nvcre_tui.engine.api.damage import damaged_object
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.db import has_run_key, open_history
from nvcre_tui.engine.history.queries import HistoryQuery
from nvcre_tui.engine.history.record import CertRecord, build_record, refusal_of, refused_record
from nvcre_tui.engine.outfiles import check_writable
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, ResourceKind

Obj = dict[str, Any]
GRACE_SECONDS = 5.0
SIM_SOURCE = "sim:"  # a simulator store's source: sim:<state file> (session.py)
KEPT = 100  # `archived` and `errors` keep the latest this many: an engine runs for weeks, a failing disk fails every few seconds


def run_key(store_id: str | None, cert: Obj) -> str | None:
    """What identifies one run of a certification across copies of its store: the store's own id, its uid and creation
    time (db.py: `run`); None without a store id (a cluster, whose uids the server makes unique; an old store read-only)."""
    meta = meta_of(cert)
    return f"{store_id}/{meta.get('uid') or ''}/{meta.get('creationTimestamp') or ''}" if store_id else None


def write_record(connection: sqlite3.Connection, source: str, record: CertRecord, archived_at: datetime | None = None,
                 run: str | None = None) -> bool:
    """Write one record in one transaction; False when (source, uid) is archived already, or `run` (run_key: a copy of
    the store archived it under another source). Two results of one node under one category title are refused
    (sqlite3.IntegrityError, nothing written), never one kept in place of the other."""
    columns = "source, uid, name, namespace, result, start_time, completion_time, archived_at, report" + (", run" if run else "")
    values = (source, record.uid, record.name, record.namespace, record.result, record.start_time, record.completion_time,
              format_time(archived_at or datetime.now(UTC)), json.dumps(record.report, sort_keys=True), *((run,) if run else ()))
    # The same run: its run key; or, without one, (source, uid) whatever its key; or, with one, a record of (source, uid)
    # archived without (before the store had an id, or this nvcre the key): the store's first run key is its own.
    same = ("run = ? OR (source = ? AND uid = ? AND run IS NULL)", (run, source, record.uid)) if run else ("source = ? AND uid = ?", (source, record.uid))
    if not run and source.startswith(SIM_SOURCE) and has_run_key(connection):
        # A simulator store without an id (made before ids, opened read-only since) has none to tell its copies by: a
        # copy read at another path archived the same run again under its path (counted twice). Without ids on either
        # side, the same uid and times are the same run (a twin of the same scenario would be indistinguishable).
        same = (f"{same[0]} OR (substr(source, 1, {len(SIM_SOURCE)}) = '{SIM_SOURCE}' AND uid = ? AND run IS NULL "
                "AND start_time IS ? AND completion_time IS ?)", (*same[1], record.uid, record.start_time, record.completion_time))
    connection.execute("BEGIN IMMEDIATE")
    try:
        if connection.execute(f"SELECT 1 FROM certifications WHERE {same[0]}", same[1]).fetchone() is not None:
            connection.execute("ROLLBACK")
            return False
        cursor = connection.execute(f"INSERT OR IGNORE INTO certifications ({columns}) VALUES ({', '.join('?' * len(values))})", values)
        if cursor.rowcount == 0:
            connection.execute("ROLLBACK")
            return False
        cert_id = cursor.lastrowid
        connection.executemany(
            "INSERT INTO node_results (cert_id, node, category, state, reason, message, bus_bw, measurements, evidence, jobs) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(cert_id, r.node, r.category, r.state, r.reason, r.message, r.bus_bw, json.dumps(r.measurements),
              json.dumps(r.evidence), json.dumps(r.jobs)) for r in record.results])
        connection.executemany("INSERT INTO node_baselines (cert_id, node, baseline) VALUES (?, ?, ?)",
                               [(cert_id, node, json.dumps(baseline, sort_keys=True)) for node, baseline in record.baselines.items()])
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return True


class Archiver:
    """Archives each terminal Certification of `cache` into `history_db` once."""

    def __init__(self, history_db: Path, cache: WatchCache, source: str, notices: list[str] | None = None,
                 store_id: str | None = None) -> None:
        self.path, self.cache, self.source = history_db, cache, source
        self.connection = open_history(history_db)
        # The simulator's store id (sim_state.store_id): its certifications are keyed by run too (run_key), where the
        # history has that key (one that could not be written since it was made before it has not).
        self.store_id = store_id if store_id and has_run_key(self.connection) else None
        self.archived: list[str] = []   # namespace/name of what this process archived, in order (the latest KEPT)
        self.errors: list[str] = []     # why an archive failed (it is tried again on the next change; the latest KEPT)
        self.notices: list[str] = [] if notices is None else notices  # one line per distinct cause of failure
        self._told: set[str] = set()    # the causes already in `notices`
        self._pending: dict[str, tuple[Obj, float]] = {}  # uid -> (last seen certification, loop time first seen)
        self._done: set[str] = set()  # uids of cached certifications archived (forgotten once deleted: a uid never comes back)
        self._given_up: set[str] = set()  # uids in _done that could not be archived
        self._waiting: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def attach(self) -> Archiver:
        """Listen to the cache; certifications already terminal in it are archived too."""
        self.cache.subscribe(self._on_change)
        # In the order they finished, then were created: those that finished in one second keep their order of creation in
        # the history (its order after completion time), not the cache's order by name.
        for cert in sorted(self.cache.list(CERTIFICATION) if CERTIFICATION in self.cache.objects else (), key=_archive_order):
            self._on_change(CERTIFICATION, None, cert, False)
        return self

    def holds(self, uid: str) -> bool:
        """Whether the history already holds this certification's record (from this source); False when it cannot be
        read (a locked or damaged file: said in `errors`)."""
        prefix = f"{self.store_id}/{uid}/" if self.store_id else None  # archived from a copy of this store
        try:
            found = self.connection.execute("SELECT 1 FROM certifications WHERE (source = ? AND uid = ?) OR substr(run, 1, ?) = ?",
                                            (self.source, uid, len(prefix or ""), prefix)).fetchone()
        except sqlite3.Error as error:
            _keep(self.errors, f"{self.path}: {error}")
            return False
        return found is not None

    def archive_now(self, cert: Obj) -> bool:
        """Archive a finished certification now, whatever its Workflows say (it is about to be deleted): whether
        the history holds it. An unfinished one has no record to keep (False)."""
        uid = str(meta_of(cert).get("uid") or "")
        if not uid or not cond.is_terminal(cert):
            return False
        if uid in self._done:
            return uid not in self._given_up
        self._pending.setdefault(uid, (cert, _now()))
        try:
            return self._archive(uid, force=True)
        except Exception as error:  # noqa: BLE001 - told as for any archive that fails
            self._give_up(uid, error)
            return False

    def close(self) -> None:
        """Stop (what is still pending is archived by the next process that sees it)."""
        for handle in (self._waiting, self._timer):
            if handle is not None:
                handle.cancel()
        self.connection.close()

    # ----- listening --------------------------------------------------------------------------------

    def _on_change(self, kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        try:
            if kind == CERTIFICATION:
                cert = new or old
                uid = str(meta_of(cert or {}).get("uid") or "")
                if cert is not None and uid and uid not in self._done and cond.is_terminal(cert):
                    self._pending[uid] = (cert, self._pending[uid][1] if uid in self._pending else _now())
                    if new is None:  # deleted: archive now with whatever children are still cached
                        self._archive(uid, force=True)
                if new is None:  # gone for good (uids are never reused): nothing to remember it by
                    self._done.discard(uid)
                    self._given_up.discard(uid)
            if self._pending and kind in (CERTIFICATION, WORKFLOW, JOB):
                self.flush()
        except Exception as error:  # never let archiving break the cache's other subscribers (the engine)
            self._failed("a certification", error)

    def flush(self, force: bool = False) -> None:
        """Archive every pending certification whose Workflows are all finished (all, with `force`)."""
        if not self.cache.synced.is_set():  # the first list is under way: children may not be cached yet
            self._wait_for_sync()
            return
        if NODE in self.cache.withheld:  # a viewer that may not read Nodes would archive no baselines: left to one that may
            return
        for uid in sorted(self._pending, key=lambda uid: _archive_order(self._pending[uid][0])):
            cert, since = self._pending[uid]
            try:
                self._archive(uid, force=force or _now() - since >= GRACE_SECONDS)
            except Exception as error:  # one certification that cannot be archived holds up none of the others
                self._give_up(uid, error)
        self._arm_timer()

    def _archive(self, uid: str, force: bool) -> bool:
        """Archive the pending certification `uid` (`force`: whatever its Workflows say); whether the history holds it."""
        cert = self.cache.get_by_uid(uid) or self._pending[uid][0]
        refusal = refusal_of(cert)
        problem = damaged_object(CERTIFICATION.kind, cert) if refusal is None else None
        if problem:
            raise _Damaged(f"it is damaged: {problem}")
        workflows = self._workflows(cert)
        if refusal is None and not force and not all(cond.is_terminal(wf) for wf in workflows):
            return False
        workflows = [wf for wf in workflows if not damaged_object(WORKFLOW.kind, wf)]  # left out, as the report does
        jobs = {wf["metadata"]["name"]: [job for job in self.cache.owned_by(wf["metadata"]["uid"], JOB) if not damaged_object(JOB.kind, job)]
                for wf in workflows if wf["metadata"].get("uid")}
        if refusal is not None:  # no result nvcre measured: kept so (the history shows it was not one, and why)
            record = refused_record(cert, refusal, [job for ran in jobs.values() for job in ran])
        else:
            record = build_record(cert, workflows, jobs, self.cache.list(NODE) if NODE in self.cache.objects else [])
        try:
            if write_record(self.connection, self.source, record, run=run_key(self.store_id, cert)):
                _keep(self.archived, f"{record.namespace}/{record.name}")
        except sqlite3.Error as error:
            self._failed(record.name, error)
            return False
        self._pending.pop(uid, None)
        self._remember(uid)
        return True

    def _remember(self, uid: str) -> None:
        """Done with `uid`: remembered while its certification is cached (its later changes archive nothing), never after
        (a deleted one's uid never comes back; kept, one per certification a long-lived engine saw)."""
        if self.cache.get_by_uid(uid) is not None:
            self._done.add(uid)

    def _give_up(self, uid: str, error: Exception) -> None:
        """Leave a certification that cannot be archived unarchived in this process (the next one tries again), and
        say why once. A damaged one is only kept in `errors`: the commands that read it name its damage, and every
        other command would repeat it."""
        cert = self._pending.pop(uid, (None, 0.0))[0] or {}
        self._remember(uid)
        if uid in self._done:
            self._given_up.add(uid)
        name = f"{meta_of(cert).get('namespace')}/{meta_of(cert).get('name')}"
        if isinstance(error, _Damaged):
            _keep(self.errors, f"{self.path}: archiving {name}: {error}")
        else:
            self._failed(name, error)

    def _failed(self, name: str, error: Exception) -> None:
        """Keep why archiving `name` failed; its cause's first failure becomes a notice (later ones, retries
        and other certifications alike, would only repeat it). An error that is not the database's or the file
        system's is nvcre's own (a record it could not build, or one whose results collide: write_record): said so, by
        its type, never as the history file's."""
        cause = str(error) or type(error).__name__
        if not isinstance(error, sqlite3.Error | OSError) or isinstance(error, sqlite3.IntegrityError):
            cause = f"a bug in nvcre, not a problem of the history file ({type(error).__name__}: {cause})"
        _keep(self.errors, f"{self.path}: archiving {name}: {cause}")
        if cause not in self._told:
            self._told.add(cause)
            self.notices.append(f"history: could not archive {name}: {self.path}: {cause}")

    def _workflows(self, cert: Obj) -> list[Obj]:
        meta = cert["metadata"]
        # by owner, as the engine and the report join them (report/readmodel.py): a label removed by hand hides nothing
        return [wf for wf in self.cache.controlled_by(str(meta.get("uid") or ""), WORKFLOW.kind)
                if wf["metadata"].get("namespace") == meta.get("namespace")]

    def _wait_for_sync(self) -> None:
        if self._waiting is not None or not _loop_running():
            return

        async def wait() -> None:
            await self.cache.synced.wait()
            self._waiting = None
            try:
                self.flush()
            except Exception as error:  # a task's error would be printed as a traceback at exit
                self._failed("a certification", error)

        self._waiting = asyncio.get_running_loop().create_task(wait(), name="archiver sync")

    def _arm_timer(self) -> None:
        """Look again after the grace period while something is pending (a Workflow whose end never comes)."""
        if self._timer is not None or not self._pending or not _loop_running():
            return

        def fire() -> None:
            self._timer = None
            self._on_change(WORKFLOW, None, None, False)

        self._timer = asyncio.get_running_loop().call_later(GRACE_SECONDS, fire)


def _keep(kept: list[str], line: str) -> None:
    """Append `line`, keeping the latest KEPT lines."""
    kept.append(line)
    del kept[:-KEPT]


class _Damaged(ValueError):
    """A stored certification the models refuse (an edited store file): not archived."""


def _archive_order(cert: Obj) -> tuple[str, tuple[str, int, str, str]]:
    """Archived in this order (the history's ids): completion time, then creation (api.bodies.creation_order)."""
    completed = certification_status(cert).get("completionTime") if isinstance(cert.get("status"), dict) else None
    return (str(completed or ""), creation_order(cert) if isinstance(cert.get("metadata"), dict) else ("", 0, "", ""))


def _now() -> float:
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return 0.0


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


NO_HISTORY_READ_ONLY = "no such file (a read-only session creates none)"  # a notice's end: a named history absent, only read


def attach_archiver(session: Any, history: Path | None, source: str, *, required: bool = True,
                    write: bool = True, store_id: str | None = None) -> Archiver | None:
    """Archive the session's terminal certifications into `history` (None: no archive) and give the session
    its read-only `history` query, over `source`'s certifications (`store_id`: the simulator's store id, see
    Archiver). `write=False` (a read-only console, the wall): an existing history is only
    read, and no file is created or written. A file that is not a history database is an InputError when `required`
    (the user named it). The default place failing (not writable, not a history) leaves the session without
    an archive and says so in one of its `notices`: a readable history there is still shown, read-only.
    A write that fails later adds a notice too (see Archiver)."""
    session.history = None
    if history is None:
        return None
    if not write:
        session.history = _readable_history(history, source, store_id)
        if session.history is None and history.exists():
            problem = f"{history}: not a readable history database"
            if required:
                raise InputError(problem)
            session.notices.append(f"history off: {problem}")
        elif session.history is None and required:  # named, yet nothing to read and nothing may be created
            session.notices.append(f"history off: {history}: {NO_HISTORY_READ_ONLY}")
        return None
    try:
        if not required:  # mode bits count, as for every file nvcre writes: root too sees a folder made read-only
            check_writable(history)
        archiver = Archiver(history, session.cache, source, session.notices, store_id).attach()
    except InputError as error:
        if required:
            raise
        reason = "; ".join(error.messages)
        hint = "" if "--history PATH" in reason else " (give --history PATH)"
        session.history = _readable_history(history, source, store_id)
        state = "off" if session.history is None else "read-only, nothing is archived"
        session.notices.append(f"history {state}: {reason}{hint}")
        return None
    session.history = HistoryQuery(history, [source, *store_sources(history, store_id)])  # this store's certifications: see HistoryQuery
    return archiver


def store_sources(path: Path, store_id: str | None) -> list[str]:
    """The sources under which a simulator store with this id (run_key) had certifications archived: the paths it was
    copied or moved from, whose records are its own ([] without an id, or a history without the key)."""
    if not store_id:
        return []
    try:
        return HistoryQuery(path).sources_of_store(store_id)
    except InputError:  # a history made before the key (read only: not given it), or unreadable (said where it is read)
        return []


def _readable_history(path: Path, source: str, store_id: str | None = None) -> HistoryQuery | None:
    """The query of an existing history that can be read (though not written), over `source`'s certifications (and those
    archived from elsewhere by the store `store_id`), else None."""
    if not path.is_file():
        return None
    query = HistoryQuery(path, [source, *store_sources(path, store_id)])
    try:
        query.version()
    except InputError:
        return None
    return query
