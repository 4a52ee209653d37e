"""A session on the embedded simulator: store, clock, fleet, runner and engine, persisted to a local
state file so a second process (`nvcre certification report`) sees the same certifications.

The simulator keeps time while no process runs: opening a session moves the simulated clock forward
by the wall-clock time since the last save times the scenario's speed, and lets the engine catch up.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nvcre_tui.engine.catalog import Catalog, default_catalog
from nvcre_tui.engine.clock import Clock, ManualClock, ScaledClock, format_time, parse_time
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.state_file import STATE_VERSION, load_state, save_state
from nvcre_tui.engine.store.memory import MemoryStore

SIM_START = datetime(2026, 1, 1, tzinfo=UTC)


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
    path: Path | None = None
    saved_at: datetime | None = None
    save_id: str | None = None  # which save of the state file this session holds

    @classmethod
    async def open(cls, scenario: Scenario, path: Path | None = None, catalog: Catalog | None = None, *, live: bool = False) -> SimSession:
        """Load the state file, or start a fresh fleet when there is none. A state file of another
        scenario is refused (InputError), never replaced: it holds someone's certifications.

        live=False: a ManualClock the caller advances (CLI --wait, tests). live=True: a ScaledClock
        running at the scenario's speed, for the console's engine loop.
        """
        data = load_state(path, scenario.to_wire(), scenario.name) if path else None
        resume = data is not None
        start = parse_time(data["clock"]) if resume else SIM_START  # type: ignore[index]
        if resume and live:  # the simulated fleet kept running while no process watched it
            start += (datetime.now(UTC) - parse_time(data["savedAt"])) * scenario.speed  # type: ignore[index]
        clock: Clock = ScaledClock(scenario.speed, start=start) if live else ManualClock(start)
        store = MemoryStore.from_snapshot(data["store"], clock) if resume else MemoryStore(clock)  # type: ignore[index]
        saved_at = parse_time(data["savedAt"]) if resume else None  # type: ignore[index]
        fleet = SimulatedFleet(store, clock, scenario)
        runner = SimulatedRunner(store, clock, scenario, fleet)
        session = cls(scenario, clock, store, fleet, runner, Engine(store, clock, catalog or default_catalog(), runner), path, saved_at,
                      data.get("saveId") if data else None)
        await fleet.ensure_nodes()
        return session

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

