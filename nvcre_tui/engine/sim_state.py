"""Where the simulator's state lives and how a session opens it: an SQLite store (store/sqlite) holding
every object plus three properties, the scenario it simulates, its clock and its own id.

- Path: `--state PATH`, else $NVCRE_STATE, else $XDG_STATE_HOME/nvcre/sim.db (~/.local/state by default).
- An old JSON state file (nvcre before the SQLite store) at that path, or at the old default
  `sim-state.json` beside the new one, is imported once: the objects, the scenario and the clock go into
  the database, and the JSON file is kept as `<name>.imported`. A damaged one is refused in one line.
- A store of another scenario is refused, never replaced: it holds someone's certifications.
- Read-only opening (`report`, a read-only console) never writes: a missing store is an empty fleet in
  memory, an old JSON file is read without importing it.
- The store's id (`storeId`, random, given on its first writable opening): what tells this store from another of the
  same scenario, whose uids and times are the same (both seeded), and what a copy of the file keeps: the history keys
  a simulated certification on it, so a copied or moved store counts its certifications once.
- The clock: the engine holding the lease records `{simulated, wall}` every few seconds and on exit;
  a restart resumes at that simulated time plus the wall time since × the scenario's speed (the simulated
  fleet keeps time while no process runs), and never before the latest write's time.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.clock import Clock, SystemClock, format_time, parse_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.outfiles import env_path
from nvcre_tui.engine.store.sqlite.database import file_head
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.sim.scenario import Scenario, same_fleet
from nvcre_tui.engine.state_file import check_catch_up, check_time, load_legacy_state, looks_like_json, other_fleet
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.sqlite import SqliteStore, import_json_state
from nvcre_tui.engine.store.sqlite.imports import IMPORTED_SUFFIX
from nvcre_tui.paths import state_home

__all__ = ["STATE_NAME", "LEGACY_NAME", "SCENARIO_PROPERTY", "CLOCK_PROPERTY", "ClockRecord", "OpenedState",
           "check_state", "default_state_path", "legacy_default_path", "open_state", "read_clock", "record_clock", "resume_times",
           "STORE_ID_PROPERTY", "store_id"]

STATE_NAME = "sim.db"
LEGACY_NAME = "sim-state.json"
SCENARIO_PROPERTY = "scenario"
CLOCK_PROPERTY = "clock"
STORE_ID_PROPERTY = "storeId"
_ADVICE = "move it aside (or delete it) to start afresh"


def default_state_path() -> Path:
    """$NVCRE_STATE, else $XDG_STATE_HOME/nvcre/sim.db (~/.local/state by default)."""
    if os.environ.get("NVCRE_STATE"):
        return env_path("NVCRE_STATE")
    return state_home("the simulator's store", "--state PATH (or $NVCRE_STATE)") / STATE_NAME


def legacy_default_path() -> Path | None:
    """The old default JSON state (imported into the default store), or None when $NVCRE_STATE names one."""
    return None if os.environ.get("NVCRE_STATE") else state_home("the simulator's store", "--state PATH (or $NVCRE_STATE)") / LEGACY_NAME


@dataclass(frozen=True)
class ClockRecord:
    """The simulated time at a wall-clock moment (None: unknown, no catch-up)."""

    simulated: datetime
    wall: datetime | None

    def at(self, wall_now: datetime, speed: float) -> datetime:
        """The simulated time at `wall_now` had the fleet kept running since."""
        if self.wall is None:
            return self.simulated
        return self.simulated + max(wall_now - self.wall, timedelta(0)) * speed

    def to_wire(self) -> dict[str, str]:
        return {"simulated": format_time(self.simulated), "wall": format_time(self.wall or datetime.now(UTC))}


@dataclass
class OpenedState:
    """What open_state found: a database, or (read-only) an old file's snapshot, or nothing yet."""

    store: SqliteStore | None
    snapshot: Mapping[str, Any] | None
    record: ClockRecord | None


def resume_times(opened: OpenedState, speed: float, start: datetime, wall_now: datetime | None = None) -> tuple[datetime, datetime]:
    """(base, target): the latest simulated time anything was recorded or written at, and that time moved on
    by the wall time since the record × speed. A ManualClock starts at base and the engine catches up to
    target; a running clock starts at target."""
    wall_now = wall_now or datetime.now(UTC)
    base = opened.record.simulated if opened.record else start
    try:
        written = opened.store.last_write_time if opened.store is not None else None
    except (ValueError, StoreError):  # an unreadable meta row: the clock property alone decides
        written = None
    if written is not None and written > base:
        base = written
    target = max(base, opened.record.at(wall_now, speed)) if opened.record else base
    return base, target


def record_clock(store: SqliteStore, record: ClockRecord) -> None:
    """Store the simulated time (committed at once): a restart resumes from here."""
    store.set_property(CLOCK_PROPERTY, record.to_wire())


def _damaged(path: Path, what: str) -> InputError:
    return InputError(printable(f"{path}: damaged simulator state: {what}; {_ADVICE}", newlines=False))


def _clock_record(path: Path, value: Any, speed: float) -> ClockRecord | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _damaged(path, f"property clock: must be an object, got {type(value).__name__}")
    try:
        simulated = check_time(value, "simulated")
        wall = check_time(value, "wall", past=True)
        check_catch_up(value, speed, "simulated", "wall")
    except ValueError as error:
        raise _damaged(path, f"property clock.{error}") from None
    return ClockRecord(simulated, wall)


def _check_scenario(path: Path, held: Any, scenario: Scenario) -> None:
    if held is not None and not same_fleet(held, scenario):
        raise InputError(other_fleet(path, held, scenario.name))


def _legacy_record(data: Mapping[str, Any]) -> ClockRecord:
    return ClockRecord(parse_time(data["clock"]), parse_time(data["savedAt"]))


async def _import(json_path: Path, db_path: Path, clock: Clock, data: Mapping[str, Any]) -> None:
    """The JSON state into a new database at `db_path` (built beside it, then renamed into place, so a
    crash leaves either the old file or the new store); the JSON file is kept as `<name>.imported`."""
    building = db_path.with_name(db_path.name + ".importing")
    for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
        leftover.unlink(missing_ok=True)
    store = import_json_state(json_path, building, clock, retire=False)
    try:
        store.set_property(SCENARIO_PROPERTY, data["scenario"])
        record_clock(store, _legacy_record(data))
    finally:
        await store.close()  # the last connection: the WAL is checkpointed into the file and removed
    kept = json_path.with_name(json_path.name + IMPORTED_SUFFIX)
    if json_path == db_path:
        shutil.copy2(json_path, kept)
        os.replace(building, db_path)
    else:
        os.replace(building, db_path)
        os.replace(json_path, kept)


def stored_scenario(path: Path) -> Scenario | None:
    """The scenario a store at `path` simulates, read without writing; None where there is no store (or an old JSON
    state) or it holds none, or it cannot be read (opening it then says why, in one line); InputError when the
    scenario it holds is damaged."""
    if not path.is_file() or looks_like_json(path) or _empty_file(path):
        return None
    try:
        store = SqliteStore(path, SystemClock(), readonly=True, one_shot=True)
    except (StoreError, OSError):
        return None
    try:
        held = store.get_property(SCENARIO_PROPERTY)
        return Scenario.model_validate(held) if held is not None else None
    except StoreError:
        return None
    except ValidationError as error:  # said as what it is, not as "another scenario's fleet"
        raise _damaged(path, f"property scenario: {validation_messages(error, '')[0].removeprefix(': ')}") from None
    finally:
        store._tables.db.close()


def store_id(store: SqliteStore) -> str | None:
    """The store's own id (None before its first writable opening); InputError when it is damaged."""
    held = store.get_property(STORE_ID_PROPERTY)
    if held is not None and (not isinstance(held, str) or not held):
        raise _damaged(store.path, f"property {STORE_ID_PROPERTY}: {held!r} is no id")
    return held


def read_clock(store: SqliteStore, scenario: Scenario) -> ClockRecord | None:
    """The clock property of the store (None before the first record); InputError when it is damaged."""
    return _clock_record(store.path, store.get_property(CLOCK_PROPERTY), scenario.speed)


def _open_database(path: Path, scenario: Scenario, clock: Clock, readonly: bool, one_shot: bool = False) -> OpenedState:
    store = SqliteStore(path, clock, readonly=readonly, one_shot=one_shot)
    try:
        _check_scenario(path, store.get_property(SCENARIO_PROPERTY), scenario)
        record = read_clock(store, scenario)
        if not readonly and store.get_property(SCENARIO_PROPERTY) is None:
            store.set_property(SCENARIO_PROPERTY, scenario.to_wire())
        if not readonly:
            store.claim_property(STORE_ID_PROPERTY, uuid.uuid4().hex)  # two processes making the store agree on the first
        store_id(store)
    except StoreError as error:  # a damaged property row, a locked file
        store._tables.db.close()
        raise InputError(error.message) from None
    except BaseException:
        store._tables.db.close()
        raise
    return OpenedState(store, None, record)


async def open_state(path: Path, scenario: Scenario, clock: Clock, *, readonly: bool = False,
                     legacy: Path | None = None, one_shot: bool = False) -> OpenedState:
    """Open the simulator's state at `path` (module docstring). `legacy`: the old default JSON state, imported
    when `path` does not exist yet; `one_shot`: a short read-only look (`report`) that creates no file.
    InputError (one line naming the file) for anything unusable."""
    if looks_like_json(path):
        data = load_legacy_state(path, scenario)
        assert data is not None
        if readonly:
            return OpenedState(None, data["store"], _legacy_record(data))
        await _import(path, path, clock, data)
    elif legacy is not None and legacy.exists():
        if path.exists():
            raise InputError(f"{legacy}: an old JSON state file beside the store {path}; not imported because the store "
                             f"exists: move it away (or rename it {legacy.name}{IMPORTED_SUFFIX})")
        data = load_legacy_state(legacy, scenario)
        if data is not None:
            if readonly:
                return OpenedState(None, data["store"], _legacy_record(data))
            await _import(legacy, path, clock, data)
    if readonly and (not path.exists() or _empty_file(path)):
        return OpenedState(None, None, None)  # nothing recorded yet: a fresh fleet, in memory only (an empty file too, as it would become)
    if path.exists() and not path.is_file():
        raise InputError(f"{path}: not a regular file; pass --state PATH of a file (it need not exist yet)")
    return _open_database(path, scenario, clock, readonly, one_shot=readonly and one_shot)


def _empty_file(path: Path) -> bool:
    """A regular file with nothing in it (a store about to be made); not /proc's files, which stat calls empty."""
    return file_head(path, 1) == (0, b"")


def check_state(path: Path, scenario: Scenario, *, readonly: bool = False, legacy: Path | None = None) -> None:
    """What open_state would refuse, found without writing anything (the console checks before it takes
    over the screen): a damaged or foreign JSON state or store, another scenario's fleet."""
    for candidate in (path, legacy):
        if candidate is not None and looks_like_json(candidate):
            load_legacy_state(candidate, scenario)
    if legacy is not None and legacy.exists() and path.exists():
        raise InputError(f"{legacy}: an old JSON state file beside the store {path}; not imported because the store "
                         f"exists: move it away (or rename it {legacy.name}{IMPORTED_SUFFIX})")
    if looks_like_json(path) or not path.exists() or _empty_file(path):
        return
    if not path.is_file():
        raise InputError(f"{path}: not a regular file; pass --state PATH of a file (it need not exist yet)")
    opened = _open_database(path, scenario, SystemClock(), readonly=True, one_shot=True)  # a look that writes nothing: no clock asked
    assert opened.store is not None
    opened.store._tables.db.close()
