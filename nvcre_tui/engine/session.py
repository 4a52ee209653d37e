"""What the CLI and the console open: a Session (store, clock, runner, log source, watch cache, and an
engine when this process runs one), on the embedded simulator (`SimSession`, here) or on a Kubernetes API
server (`KubeSession`, engine/kube/session.py). Screens read `cache` and `logs` and send intents; nothing
outside the engine touches `runner` or the engine's internals.

The simulator's session lives in an SQLite store (sim_state.py: path, import of an old JSON file, the
clock and scenario properties): every write is committed before it returns, so a process killed at any
moment loses nothing, and every process on the store sees every other's changes through its watch.
Exactly one engine reconciles: the one holding the `nvcre-engine` Lease in the store (local_lease.py);
any other session is a viewer (engine None, `viewer_reason` says who holds it) and may take over later.

The simulator keeps time while no process runs: opening a session moves the simulated clock forward
by the wall-clock time since the clock was last recorded times the scenario's speed, and lets the engine
catch up. A session without a path is a simulated cluster of its own, in memory (tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from nvcre_tui.engine.clock import Clock, ManualClock, ScaledClock, SystemClock
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.local_lease import LEASE_NAMESPACE, LEASE_SECONDS, LocalLease, describe_holder, local_identity
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.runners.base import Runner
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import FleetError, SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.sim_state import ClockRecord, OpenedState, default_state_path, open_state, read_clock, record_clock, resume_times, store_id
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import ResourceStore
from nvcre_tui.engine.store.readonly import ReadOnlyStore
from nvcre_tui.engine.store.sqlite import SqliteStore
from nvcre_tui.engine.store.sqlite.imports import write_snapshot
from nvcre_tui.engine.store.writethrough import WriteThroughStore

if TYPE_CHECKING:
    from nvcre_tui.engine.history import Archiver, HistoryQuery
SIM_START = datetime(2026, 1, 1, tzinfo=UTC)
RECORD_SECONDS = 2.0  # how often the engine records the simulated time (wall seconds; a kill loses none: see ClockRecord)
__all__ = ["Session", "SimSession", "LogSource", "RunnerLogs", "SIM_START", "default_state_path"]


Obj = dict[str, Any]


@runtime_checkable
class LogSource(Protocol):
    """A run's output (the launcher / rank-0 log) as kubelet serves it: timestamped lines, no newlines."""

    async def lines(self, run: Obj) -> list[str]:
        """Every line so far (up to the end once the run finished)."""
        ...


class TitleCut(IntEnum):
    """How a narrow header may cut a part of a session's title (Session.title_parts)."""

    NEVER = 0    # the namespace, the words around the names
    SHORTEN = 1  # a context or a server: cut in its middle, never left out (it says which cluster this is)
    GONE = 2     # a scenario's name, with its separator: cut, and left out where the room is short


@runtime_checkable
class Session(Protocol):
    """Everything one process opens to work with certifications."""

    clock: Clock
    catalog: Catalog
    cache: WatchCache          # the one read model source: the engine and the console read it
    logs: LogSource
    engine: Engine | None      # None when this process only watches (another engine holds the lease)
    viewer_reason: str | None  # why this session runs no engine (shown in the console's header), else None
    engine_stopped: str | None  # why this session's engine stopped (on a cluster, its CRDs were given another nvcre's
                                # schema while it ran): it takes the Lease again only once `setup init` of its version
                                # gives them its schema back (None again then); None otherwise
    notices: list[str]         # one line each, told once (the CLI on stderr, the console as a notification): e.g. the history is off;
                               # appended to while the session runs (an archive write that failed, the engine's runner tick that
                               # fails: Engine.tell): readers keep how many they told
    history: HistoryQuery | None            # the certification archive, read-only (None: no archive)
    archiver: Archiver | None               # what archives finished certifications into it (None: nothing is archived)
    validation_requests: WatchCache | None  # NVSentinel's ValidationRequests (None: that CRD is not served)

    @property
    def namespace(self) -> str:
        """The namespace the console shows and creates certifications in (-n, else the context's, else default)."""
        ...

    @property
    def store(self) -> ResourceStore:
        """Reads and the console's intents (wrapped read-only where asked)."""
        ...

    @property
    def title(self) -> str:
        """What the console's header says this session is (`SIMULATED · ...`, `cluster ... · context`)."""
        ...

    def title_parts(self, clock_mark: str = "") -> tuple[tuple[str, TitleCut], ...]:
        """`title` in parts, each with how a narrow header may cut it (TitleCut). `clock_mark` (the console's SIM_TIME)
        follows the word that says the fleet is simulated."""
        ...

    async def take_over(self) -> bool:
        """When this session would run the engine but another held the Lease (or took it), take the Lease once it is
        free; True when this session runs the engine now."""
        ...

    async def refresh_viewer(self) -> None:
        """A session that only views reads again who holds the engine Lease (its `viewer_reason`)."""
        ...

    async def runs_otherwise(self) -> str | None:
        """Why a certification this process creates now would be run wrongly by the engine that holds the Lease (it
        runs workloads otherwise than this process would); None when nothing says so."""
        ...

    def stamp(self, body: Obj) -> None:
        """Mark a Certification this process is about to create with what it is meant to be run with, where that is
        not the obvious (on a cluster with --sim-runner: the simulated fleet)."""
        ...

    async def close(self) -> None:
        """Stop the engine's and the cache's work and release the store."""
        ...


def plays_the_fleet(session: Session) -> bool:
    """This process plays the simulated fleet (the embedded simulator, or a cluster's with --sim-runner), so its log
    source makes a simulated run's output; no pod holds one."""
    return getattr(session, "scenario", None) is not None


def store_now(session: Session) -> datetime:
    """Now on the clock that stamps the store's creationTimestamps: the simulator's store writes simulated time (the
    session's clock); an API server stamps its own, the wall clock, whatever a --sim-runner session's simulated clock,
    which runs ahead of it, says."""
    return session.clock.now() if isinstance(session, SimSession) else datetime.now(UTC)


@dataclass
class RunnerLogs:
    """The LogSource of a runner that can regenerate or fetch a run's output."""

    runner: Runner

    async def lines(self, run: Obj) -> list[str]:
        return await self.runner.logs(run, required=False)  # a viewer: what was kept when a read fails


async def _acquire(database: SqliteStore, role: str, seconds: float) -> tuple[LocalLease, bool]:
    """The engine Lease of a store file, and whether this process took it (False too when the store failed)."""
    lease = LocalLease(database, SystemClock(), LEASE_NAMESPACE, local_identity(role), seconds)
    try:
        return lease, await lease.try_acquire()
    except StoreError:
        return lease, False


def _players(database: SqliteStore | MemoryStore, cache: WatchCache, clock: Clock, scenario: Scenario, catalog: Catalog, *,
             engine: bool) -> tuple[SimulatedFleet, SimulatedRunner, LogSource, Engine | None]:
    """The simulated fleet and runner (writing only with an engine: a viewer's regenerate logs), their log source,
    and the engine when `engine`."""
    # The engine and the simulated fleet see their own writes in the cache at once.
    writer: ResourceStore = WriteThroughStore(database, cache) if engine else ReadOnlyStore(database)
    fleet = SimulatedFleet(writer, clock, scenario)
    runner = SimulatedRunner(writer, clock, scenario, fleet)
    return fleet, runner, RunnerLogs(runner), Engine(writer, clock, catalog, runner, cache=cache) if engine else None


@dataclass
class SimSession:
    """Everything one process needs to run certifications on the simulated fleet (or watch them)."""

    scenario: Scenario
    clock: Clock
    store: ResourceStore       # reads and intents (a viewer's too: the holder's engine acts on them); read-only wrapped when asked
    database: SqliteStore | MemoryStore  # the store itself
    fleet: SimulatedFleet
    runner: SimulatedRunner
    engine: Engine | None
    catalog: Catalog
    cache: WatchCache
    logs: LogSource
    path: Path | None = None
    viewer_reason: str | None = None
    engine_stopped: str | None = None  # see Session.engine_stopped (the embedded store's schema is this nvcre's)
    readonly: bool = False
    history: HistoryQuery | None = None  # the certification archive, read-only (None: no archive)
    archiver: Archiver | None = None
    notices: list[str] = field(default_factory=list)  # see Session.notices
    validation_requests: WatchCache | None = None  # NVSentinel's ValidationRequests (None: no NVSentinel)
    lease: LocalLease | None = None
    namespace: str = "default"  # see Session.namespace (-n on the simulator)
    resume: ClockRecord | None = None  # the simulated time at opening, to catch up to and to record from
    behind: float = 0.0                # simulated seconds a ManualClock session still has to catch up
    _tasks: list[asyncio.Task[None]] = field(default_factory=list, repr=False)

    @property
    def title(self) -> str:
        return "".join(text for text, _ in self.title_parts())

    def title_parts(self, clock_mark: str = "") -> tuple[tuple[str, TitleCut], ...]:
        shown = "" if self.namespace == "default" else f" · {self.namespace}"  # as on a cluster; default goes unsaid
        return (f"SIMULATED{clock_mark}", TitleCut.NEVER), (f" · {self.scenario.name}", TitleCut.GONE), (shown, TitleCut.NEVER)

    @classmethod
    async def open(cls, scenario: Scenario, path: Path | None = None, catalog: Catalog | None = None, *, live: bool = False,
                   history: Path | None | Literal["default"] = "default", readonly: bool = False, want_engine: bool = True,
                   role: str = "engine", legacy: Path | None = None, lease_seconds: float = LEASE_SECONDS,
                   archive_writes: bool = True, namespace: str = "default") -> SimSession:
        """Open the store at `path` (a fresh simulated cluster in memory when None), or refuse it in one line
        (InputError: damaged, another scenario's, unwritable). The engine runs here when `want_engine`, the
        store is writable and this session takes the Lease; otherwise the session is a viewer.

        live=False: a ManualClock the caller advances (CLI --wait, tests). live=True: a ScaledClock
        running at the scenario's speed, for the console's engine loop. `history`: the archive finished
        certifications are copied to ("default": $NVCRE_HISTORY or $XDG_STATE_HOME/nvcre/history.db; None: none);
        with `archive_writes=False` (a read-only console) it is only read.
        `legacy`: the old default JSON state, imported when `path` does not exist yet.
        """
        from nvcre_tui.engine.history import attach_archiver, default_history_path
        from nvcre_tui.engine.history.archive import SIM_SOURCE
        from nvcre_tui.engine.history.nvsentinel import open_validation_requests

        opened = OpenedState(None, None, None)
        if path is not None:
            opened = await open_state(path, scenario, ManualClock(SIM_START), readonly=readonly, legacy=legacy, one_shot=not live)
        wall = datetime.now(UTC)
        base, target = resume_times(opened, scenario.speed, SIM_START, wall)
        clock: Clock = ScaledClock(scenario.speed, start=target) if live else ManualClock(base)
        database: SqliteStore | MemoryStore
        if opened.store is not None:
            database = opened.store
            database.clock = clock
        elif opened.snapshot is not None:
            database = MemoryStore.from_snapshot(opened.snapshot, clock)
        else:
            database = MemoryStore(clock)
        try:
            cache = engine_cache(database)
            writable = not readonly
            store: ResourceStore = database if writable else ReadOnlyStore(database)
            catalog = catalog or default_catalog()
            shared = isinstance(database, SqliteStore)
            lease: LocalLease | None = None
            holds = writable and want_engine
            if holds and isinstance(database, SqliteStore):
                lease, holds = await _acquire(database, role, lease_seconds)
            fleet, runner, logs, engine = _players(database, cache, clock, scenario, catalog, engine=holds)
            session = cls(scenario, clock, store, database, fleet, runner, engine, catalog, cache, logs, path,
                          readonly=readonly, lease=lease, namespace=namespace, resume=ClockRecord(target, wall),
                          behind=0.0 if live else (target - base).total_seconds())
            session._tell_notices()
            try:
                if holds:
                    await session.fleet.ensure_nodes()
                elif not shared:  # a read-only view of a cluster in memory: its fleet is filled in there only
                    await SimulatedFleet(WriteThroughStore(database, cache), clock, scenario).ensure_nodes()
            except FleetError as error:  # the store refused the scenario's Nodes or requests: one line, as on a cluster
                raise InputError(f"{path or 'the simulator'}: {error}") from None
            if holds and shared:
                session._keep_lease()
            elif shared:
                session.viewer_reason = await session._viewer_reason()
            # A store file is one simulated cluster across processes; a session without one is a cluster of its own.
            memory = uuid.uuid4().hex
            # text the archive can hold: a path's bytes that are no UTF-8 as \xNN (the archive could not encode them)
            source = f"{SIM_SOURCE}{os.fsencode(path.resolve()).decode('utf-8', 'backslashreplace')}" if path else f"{SIM_SOURCE}memory:{memory}"
            # What a copy of the store file keeps (its id), so the history counts its certifications once; an old store
            # opened read-only has none yet: its path alone keys them.
            identity = store_id(database) if isinstance(database, SqliteStore) else None if path else memory
            archive = default_history_path() if history == "default" else history
            session.archiver = attach_archiver(session, archive, source, required=history != "default", write=archive_writes,
                                               store_id=identity)
            await cache.start()
            session.validation_requests = await open_validation_requests(database)
        except BaseException:
            await database.close()
            raise
        return session

    # ----- the engine and the lease ----------------------------------------------------------------------

    async def _viewer_reason(self) -> str:
        """`viewer: engine held by <identity> (renewed 2s ago)`, or that nobody holds the Lease."""
        probe = self.lease or LocalLease(self.database, SystemClock(), LEASE_NAMESPACE, "probe")
        holder = None
        with contextlib.suppress(StoreError):
            holder = await probe.holder()
        return f"viewer: {describe_holder(holder, datetime.now(UTC))}"

    async def _play(self, *, engine: bool) -> None:
        """A new simulated fleet, runner and log source, and the engine when `engine` (see _players)."""
        self.fleet, self.runner, self.logs, self.engine = _players(self.database, self.cache, self.clock, self.scenario,
                                                                   self.catalog, engine=engine)
        self._tell_notices()

    def _tell_notices(self) -> None:
        """What the engine tells once (a runner tick that fails) is one of this session's notices."""
        if self.engine is not None:
            self.engine.tell = self.notices.append

    def _keep_lease(self) -> None:
        """Renew the Lease (stop reconciling at once if it is lost) and record the clock, in the background."""
        assert self.lease is not None
        for task in self._tasks:  # a Lease held before and lost: its clock recorder went on, and outlived close()
            task.cancel()
        self._tasks = [asyncio.create_task(self.lease.hold(on_lost=self._lost), name="lease"),
                       asyncio.create_task(self._recording(), name="clock")]

    async def _recording(self) -> None:
        while True:
            self.record()
            await asyncio.sleep(RECORD_SECONDS)

    def record(self) -> None:
        """Record the simulated time in the store (the engine's session only; a viewer's clock follows)."""
        if self.engine is None or not isinstance(self.database, SqliteStore) or self.resume is None:
            return
        wall = datetime.now(UTC)
        now = max(self.clock.now(), self.resume.at(wall, self.scenario.speed))
        with contextlib.suppress(StoreError):
            record_clock(self.database, ClockRecord(now, wall))

    async def _lost(self) -> None:
        """Another engine took the Lease (we could not renew in time): stop reconciling at once."""
        if self.engine is not None:
            await self.engine.stop()
        self.engine = None
        await self._play(engine=False)
        self.viewer_reason = "viewer: lost the engine lease"

    async def runs_otherwise(self) -> str | None:
        """Every engine on the simulator's store plays the same fleet: nothing to say."""
        return None

    def stamp(self, body: Obj) -> None:
        """Nothing: every certification of the simulator's store is the fleet's."""

    async def refresh_viewer(self) -> None:
        """A viewer's header reads who holds the Lease now (a read-only console and the wall never take it over)."""
        if self.engine is None and self.viewer_reason is not None:
            self.viewer_reason = await self._viewer_reason()

    async def take_over(self) -> bool:
        """A viewer takes the Lease when its holder released it, died or stopped renewing; True when this
        session runs the engine now. Its clock first moves to the store's latest simulated time."""
        if self.engine is not None:
            return True
        if self.readonly or self.lease is None:
            return False
        try:
            if not await self.lease.try_acquire():
                self.viewer_reason = await self._viewer_reason()
                return False
        except StoreError:
            return False
        self.follow_store_clock()
        self.resume = ClockRecord(self.clock.now(), datetime.now(UTC))
        await self._play(engine=True)
        self.viewer_reason = None
        self._keep_lease()
        return True

    def follow_store_clock(self) -> None:
        """A ManualClock viewer moves to the simulated time the store's writers reached."""
        if not isinstance(self.clock, ManualClock) or not isinstance(self.database, SqliteStore):
            return
        with contextlib.suppress(StoreError, InputError):
            opened = OpenedState(self.database, None, read_clock(self.database, self.scenario))
            latest, _ = resume_times(opened, self.scenario.speed, self.clock.now())
            if latest > self.clock.now():
                self.clock.advance_to(latest)

    # ----- time and closing ------------------------------------------------------------------------------

    async def catch_up(self) -> None:
        """Let the engine handle what fell due while no process ran (the wall time since the clock was last
        recorded × speed), then settle."""
        if self.engine is None:
            return
        if not isinstance(self.clock, ManualClock) or self.behind <= 0:
            await self.engine.settle()
            return
        behind, self.behind = self.behind, 0.0
        await self.engine.run_until_settled(max_seconds=behind)
        self.record()

    async def close(self) -> None:
        """Stop the engine, record the clock, give the Lease up, end the watches and close the store."""
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.engine is not None:
            await self.engine.stop()
            self.record()
            if self.lease is not None:
                with contextlib.suppress(StoreError):
                    await self.lease.release()
        await self.cache.stop()
        if self.validation_requests is not None:
            await self.validation_requests.stop()
        if self.archiver is not None:
            self.archiver.close()
        await self.database.close()

    def save(self) -> bool:
        """Nothing to do on a store file: every write is already committed. A session without one (in
        memory) writes a copy of its cluster to `path` when one is set (test fixtures)."""
        if isinstance(self.database, MemoryStore) and self.path is not None and not self.readonly:
            if self.path.exists() and not self.path.is_file():
                raise InputError(f"{self.path}: not a regular file; pass --state PATH of a file (it need not exist yet)")
            write_snapshot(self.path, self.database.snapshot(), {"scenario": self.scenario.to_wire(),
                                                                 "clock": ClockRecord(self.clock.now(), datetime.now(UTC)).to_wire()})
        return True

