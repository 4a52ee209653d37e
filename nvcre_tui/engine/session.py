"""What the CLI and the console open: a Session (store, clock, runner, log source, watch cache, and an
engine when this process runs one), on the embedded simulator (`SimSession`, here) or on a Kubernetes API
server (`KubeSession`, engine/kube/session.py). Screens read `cache` and `logs` and send intents; nothing
outside the engine touches `runner` or the engine's internals.

The simulator's session is persisted to a local state file so a second process (`nvcre certification
report`) sees the same certifications.

The simulator keeps time while no process runs: opening a session moves the simulated clock forward
by the wall-clock time since the last save times the scenario's speed, and lets the engine catch up.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from nvcre_tui.engine.catalog import Catalog, default_catalog
from nvcre_tui.engine.clock import Clock, ManualClock, ScaledClock, format_time, parse_time
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.runners.base import Runner
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.state_file import STATE_VERSION, load_state, save_state
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import ResourceStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore

if TYPE_CHECKING:
    from nvcre_tui.engine.history import Archiver, HistoryQuery
SIM_START = datetime(2026, 1, 1, tzinfo=UTC)


Obj = dict[str, Any]


@runtime_checkable
class LogSource(Protocol):
    """A run's output (the launcher / rank-0 log) as kubelet serves it: timestamped lines, no newlines."""

    async def lines(self, run: Obj) -> list[str]:
        """Every line so far (up to the end once the run finished)."""
        ...


@runtime_checkable
class Session(Protocol):
    """Everything one process opens to work with certifications."""

    store: ResourceStore       # reads and the console's intents (wrapped read-only where asked)
    clock: Clock
    catalog: Catalog
    cache: WatchCache          # the one read model source: the engine and the console read it
    logs: LogSource
    engine: Engine | None      # None when this process only watches (another engine holds the lease)
    viewer_reason: str | None  # why this session runs no engine (shown in the console's header), else None

    @property
    def title(self) -> str:
        """What the console's header says this session is (`SIMULATED · ...`, `cluster ... · context`)."""
        ...

    async def close(self) -> None:
        """Stop the engine's and the cache's work and release the store."""
        ...


@dataclass
class RunnerLogs:
    """The LogSource of a runner that can regenerate or fetch a run's output."""

    runner: Runner

    async def lines(self, run: Obj) -> list[str]:
        return await self.runner.logs(run)


def default_state_path() -> Path:
    """$NVCRE_STATE, else $XDG_STATE_HOME/nvcre/sim-state.json (~/.local/state by default)."""
    if os.environ.get("NVCRE_STATE"):
        return Path(os.environ["NVCRE_STATE"])
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "nvcre" / "sim-state.json"


@dataclass
class SimSession:
    """Everything one process needs to run certifications on the simulated fleet."""

    scenario: Scenario
    clock: Clock
    store: MemoryStore
    fleet: SimulatedFleet
    runner: SimulatedRunner
    engine: Engine
    catalog: Catalog
    cache: WatchCache
    logs: LogSource
    path: Path | None = None
    saved_at: datetime | None = None
    save_id: str | None = None  # which save of the state file this session holds
    viewer_reason: str | None = None
    history: HistoryQuery | None = None  # the certification archive, read-only (None: no archive)
    archiver: Archiver | None = None
    validation_requests: WatchCache | None = None  # NVSentinel's ValidationRequests (None: no NVSentinel)

    @property
    def title(self) -> str:
        return f"SIMULATED · {self.scenario.name}"

    @classmethod
    async def open(cls, scenario: Scenario, path: Path | None = None, catalog: Catalog | None = None, *, live: bool = False,
                   history: Path | None | Literal["default"] = "default") -> SimSession:
        """Load the state file, or start a fresh fleet when there is none. A state file of another
        scenario is refused (InputError), never replaced: it holds someone's certifications.

        live=False: a ManualClock the caller advances (CLI --wait, tests). live=True: a ScaledClock
        running at the scenario's speed, for the console's engine loop. `history`: the archive finished
        certifications are copied to ("default": $NVCRE_HISTORY or $XDG_STATE_HOME/nvcre/history.db; None: none).
        """
        from nvcre_tui.engine.history import attach_archiver, default_history_path
        from nvcre_tui.engine.history.nvsentinel import open_validation_requests

        data = load_state(path, scenario.to_wire(), scenario.name) if path else None
        resume = data is not None
        start = parse_time(data["clock"]) if resume else SIM_START  # type: ignore[index]
        if resume and live:  # the simulated fleet kept running while no process watched it
            start += (datetime.now(UTC) - parse_time(data["savedAt"])) * scenario.speed  # type: ignore[index]
        clock: Clock = ScaledClock(scenario.speed, start=start) if live else ManualClock(start)
        store = MemoryStore.from_snapshot(data["store"], clock) if resume else MemoryStore(clock)  # type: ignore[index]
        saved_at = parse_time(data["savedAt"]) if resume else None  # type: ignore[index]
        catalog = catalog or default_catalog()
        cache = engine_cache(store)
        writer = WriteThroughStore(store, cache)  # the engine and the simulated fleet see their own writes at once
        fleet = SimulatedFleet(writer, clock, scenario)
        runner = SimulatedRunner(writer, clock, scenario, fleet)
        engine = Engine(writer, clock, catalog, runner, cache=cache)
        session = cls(scenario, clock, store, fleet, runner, engine, catalog, cache, RunnerLogs(runner), path, saved_at,
                      data.get("saveId") if data else None)
        await fleet.ensure_nodes()
        # A state file is one simulated cluster across processes; a session without one is a cluster of its own.
        source = f"sim:{path.resolve()}" if path else f"sim:memory:{uuid.uuid4().hex}"
        archive = default_history_path() if history == "default" else history
        session.archiver = attach_archiver(session, archive, source, required=history != "default")
        await cache.start()
        session.validation_requests = await open_validation_requests(store)
        return session

    async def close(self) -> None:
        """End the engine's watches (the state file is saved by `save`, not here)."""
        await self.engine.stop()
        await self.cache.stop()
        if self.validation_requests is not None:
            await self.validation_requests.stop()
        if self.archiver is not None:
            self.archiver.close()

    async def catch_up(self, now: datetime | None = None) -> None:
        """Advance simulated time by the wall time since the last save (× speed) and settle the engine."""
        if self.saved_at is None or not isinstance(self.clock, ManualClock):
            await self.engine.settle()
            return
        wall = ((now or datetime.now(UTC)) - self.saved_at).total_seconds()
        await self.engine.run_until_settled(max_seconds=max(wall, 0.0) * self.scenario.speed)

    def save(self) -> bool:
        """Write the state file atomically (a temp file of this process + rename). Refused (False) when
        another nvcre process saved the file since this one loaded it: last-writer-wins would silently
        drop that process's certifications."""
        if self.path is None:
            return False
        on_disk = load_state(self.path)
        if on_disk is not None and on_disk.get("saveId") != self.save_id:
            return False
        self.saved_at, self.save_id = datetime.now(UTC), uuid.uuid4().hex
        data = {"version": STATE_VERSION, "saveId": self.save_id, "scenario": self.scenario.to_wire(), "clock": format_time(self.clock.now()),
                "savedAt": format_time(self.saved_at), "store": self.store.snapshot()}
        save_state(self.path, data)  # InputError naming the path when it cannot be written
        return True

