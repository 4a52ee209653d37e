"""The JSON state file of nvcre before the SQLite store: read and check one, to import it once
(sim_state.py) or to show it read-only.

A damaged file is one InputError line: the file, the first problem, its path inside the file and what
to do. A file of another scenario is refused, never replaced: it holds someone's certifications.
Object-level damage (a Certification with a wrong field type) is not the file's problem: such an
object loads, and the report names it (see `api.damage`).
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs import MAX_STATE_BYTES, MissingInput, load_json
from nvcre_tui.engine.store.sqlite.database import file_head
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.sim.scenario import Scenario, same_fleet
from nvcre_tui.engine.store.persist import parse_snapshot

STATE_VERSION = 1
_ADVICE = "move it aside (or delete it) to start afresh"
_EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
_LATEST = datetime(9000, 1, 1, tzinfo=UTC)  # far enough for any run, far from datetime's end (9999)


class _Damage(ValueError):
    """A problem at a path inside the state file."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)


def check_time(data: Mapping[str, Any], key: str, *, past: bool = False) -> datetime:
    """A time of a state, in years 2000..8999 (and, with `past`, not in the future); ValueError `key: what`."""
    try:
        moment = parse_time(data.get(key))
    except ValueError:
        raise _Damage(key, f"must be an RFC 3339 time such as 2026-01-01T00:00:00Z, got {_short(data.get(key))}") from None
    if not _EARLIEST <= moment < _LATEST:
        raise _Damage(key, f"{data[key]!r} is out of range (years {_EARLIEST:%Y} to {_LATEST.year - 1})")
    if past and moment > datetime.now(UTC) + timedelta(days=1):
        raise _Damage(key, f"{data[key]!r} is in the future")
    return moment


def check_catch_up(data: Mapping[str, Any], speed: Any, clock_key: str = "clock", saved_key: str = "savedAt") -> None:
    """Opening a state (this file, or the store's clock property) moves its clock by (now - saved) x speed:
    that must stay a date (a ValueError `key: what is wrong` otherwise)."""
    if not isinstance(speed, (int, float)) or speed <= 0:
        return
    clock, saved = parse_time(data[clock_key]), parse_time(data[saved_key])
    ahead = (datetime.now(UTC) - saved).total_seconds() * float(speed)
    if ahead > (_LATEST - clock).total_seconds():
        raise _Damage(saved_key, f"{data[saved_key]!r} is too long ago for a fleet at speed {speed:g}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _check_object(where: str, item: Mapping[str, Any]) -> None:
    """What the store needs to index an object: a name, a namespace, integer resourceVersion."""
    metadata = item["metadata"]
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise _Damage(f"{where}.metadata.name", f"must be a non-empty string, got {_short(name)}")
    for key in ("namespace", "uid"):
        if metadata.get(key) is not None and not isinstance(metadata[key], str):
            raise _Damage(f"{where}.metadata.{key}", f"must be a string, got {_short(metadata[key])}")
    version = metadata.get("resourceVersion")
    if version is not None and not (isinstance(version, str) and version.isdigit()):
        raise _Damage(f"{where}.metadata.resourceVersion", f"must be an integer string, got {_short(version)}")


def check_state(data: Any) -> None:
    """Raise _Damage for the first problem that keeps the file from loading at all."""
    if not isinstance(data, Mapping):
        raise _Damage("", f"must be a JSON object, got {type(data).__name__}")
    if data.get("version") != STATE_VERSION:
        raise _Damage("version", f"simulator state of another version ({_short(data.get('version'))}, expected {STATE_VERSION})")
    if data.get("saveId") is not None and not isinstance(data["saveId"], str):
        raise _Damage("saveId", f"must be a string, got {_short(data['saveId'])}")
    if not isinstance(data.get("scenario"), Mapping):
        raise _Damage("scenario", f"must be an object, got {_short(data.get('scenario'))}")
    check_time(data, "clock")
    check_time(data, "savedAt", past=True)
    if "store" not in data:
        raise _Damage("store", "missing")
    try:
        parse_snapshot(data["store"])
    except ValueError as error:  # "store snapshot kinds[2]: what" -> "store.kinds[2]: what"
        where, _, what = str(error).removeprefix("store snapshot").partition(": ")
        raise _Damage(f"store.{where.strip()}" if where.strip() else "store", what) from None
    for k, entry in enumerate(data["store"]["kinds"]):
        for i, item in enumerate(entry["items"]):
            _check_object(f"store.kinds[{k}].items[{i}]", item)


def other_fleet(path: Path, held: Any, wanted: str) -> str:
    """The message for a state holding another scenario's fleet than `wanted` (a scenario name); one whose scenario
    has the same name differs in its nodes, faults or settings, and says so."""
    name = held.get("name", "another scenario") if isinstance(held, Mapping) else "another scenario"
    what = (f"another simulated fleet under the same scenario name {wanted!r} (its nodes, faults or settings differ)"
            if name == wanted else f"the simulated fleet of scenario {printable(str(name))!r}, not {wanted!r}")
    return f"{path}: holds {what}; pass --state PATH to keep a separate one (or delete the file to start afresh)"


def looks_like_json(path: Path) -> bool:
    """Whether `path` is a regular file starting (after blanks) with `{` or `[`: an old JSON state, not a database."""
    head = file_head(path)
    return head is not None and head[1].lstrip()[:1] in (b"{", b"[")


def load_legacy_state(path: Path, scenario: Scenario | None = None) -> dict[str, Any] | None:
    """The state at `path` (None when there is none); InputError when it is damaged or of another scenario."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError(f"{path}: cannot read the simulator state: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: not a regular file; pass --state PATH of a file (it need not exist yet)")
    try:
        _, data = load_json(str(path), MAX_STATE_BYTES)
    except MissingInput:
        return None
    except InputError as error:
        raise InputError(f"{error.messages[0]} (simulator state); {_ADVICE}") from None
    try:
        check_state(data)
    except _Damage as damage:
        raise InputError(f"{path}: damaged simulator state: {damage}; {_ADVICE}") from None
    if scenario is not None and not same_fleet(data["scenario"], scenario):
        raise InputError(other_fleet(path, data["scenario"], scenario.name))
    try:
        if scenario is not None:
            check_catch_up(data, scenario.speed)
    except _Damage as damage:
        raise InputError(f"{path}: damaged simulator state: {damage}; {_ADVICE}") from None
    return dict(data)
