"""The simulator's session on its SQLite store, in one process: the old JSON state imported once, the clock
resumed from the store, one engine per store (a second session is a viewer that sees every change, says
who holds the Lease, and takes it over when the holder is gone)."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.session import SIM_START, SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.sim_state import ClockRecord, OpenedState, resume_times
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE
from tests.console.harness import INTRA_NODE, certification_body

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")


async def _settled(*texts: str) -> SimSession:
    session = await SimSession.open(default_scenario(), None, history=None)
    for text in texts:
        await session.store.create(CERTIFICATION, certification_body(text))
    assert session.engine is not None
    await session.engine.run_until_settled()
    return session


def _old_json_state(path: Path, saved_at: datetime) -> None:
    """The JSON state file nvcre wrote before the SQLite store, holding a finished certification `burn-in`."""
    session = asyncio.run(_settled(INTRA_NODE))
    data = {"version": 1, "saveId": "abc", "scenario": default_scenario().to_wire(), "clock": format_time(session.clock.now()),
            "savedAt": format_time(saved_at), "store": session.database.snapshot()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_old_default_json_state_is_imported_once_and_kept_aside(_private_state_home: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    legacy, store = _private_state_home / "nvcre" / "sim-state.json", _private_state_home / "nvcre" / "sim.db"
    _old_json_state(legacy, datetime.now(UTC))
    assert main(["certification", "report", "burn-in", "--sim"]) == 1  # read-only: read where it is, not imported
    assert "Name:           burn-in" in capsys.readouterr().out
    assert legacy.exists() and not store.exists()
    assert main(["certification", "run", "--sim", "--cert-file", BURN_IN, "--name", "new"]) == 0  # the first writer imports it
    capsys.readouterr()
    assert store.exists() and not legacy.exists() and legacy.with_name("sim-state.json.imported").exists()
    assert main(["certification", "report", "burn-in", "--sim"]) == 1  # the old certification, now in the store
    assert "Name:           burn-in" in capsys.readouterr().out
    legacy.write_text(legacy.with_name("sim-state.json.imported").read_text())  # put back: never imported twice
    assert main(["certification", "report", "burn-in", "--sim"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{legacy}: an old JSON state file beside the store {store}; not imported because the store exists: "
        "move it away (or rename it sim-state.json.imported)"]


def test_a_json_state_named_by_state_becomes_the_store_at_that_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "mine.json"
    _old_json_state(state, datetime.now(UTC))
    assert main(["certification", "run", "--sim", "--cert-file", BURN_IN, "--name", "new", "--state", str(state)]) == 0
    capsys.readouterr()
    assert state.read_bytes().startswith(b"SQLite format 3\x00")
    assert json.loads((tmp_path / "mine.json.imported").read_text())["saveId"] == "abc"
    assert sorted(p.name for p in tmp_path.iterdir() if "importing" in p.name) == []
    assert main(["certification", "report", "burn-in", "--sim", "--state", str(state)]) == 1


def test_the_clock_resumes_from_the_record_moved_on_by_the_wall_time_since() -> None:
    wall = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    record = ClockRecord(SIM_START + timedelta(hours=1), wall)
    base, target = resume_times(OpenedState(None, None, record), 60.0, SIM_START, wall + timedelta(seconds=10))
    assert base == SIM_START + timedelta(hours=1)
    assert target == base + timedelta(minutes=10)  # 10 s of wall time at speed 60
    assert resume_times(OpenedState(None, None, None), 60.0, SIM_START, wall) == (SIM_START, SIM_START)


async def test_a_restarted_session_resumes_its_simulated_time(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    first = await SimSession.open(default_scenario(), state, history=None)
    await first.store.create(CERTIFICATION, certification_body(INTRA_NODE))
    assert first.engine is not None
    await first.engine.run_until_settled()
    reached = first.clock.now()
    assert reached > SIM_START + timedelta(minutes=5)
    await first.close()
    again = await SimSession.open(default_scenario(), state, history=None)
    try:
        assert again.clock.now() >= reached  # never before what the store already holds
        assert again.clock.now() - reached < timedelta(hours=1)
        cert = await again.store.get(CERTIFICATION, "burn-in", "default")
        assert cond.is_terminal(cert)
    finally:
        await again.close()


async def _eventually(check: Any, what: str) -> None:
    for _ in range(1000):
        if check():
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"never: {what}")


async def test_a_second_session_is_a_viewer_that_sees_every_change_and_takes_over(tmp_path: Path) -> None:
    from nvcre_tui.app import NvcreApp

    state = tmp_path / "state.db"
    holder = await SimSession.open(default_scenario(), state, history=None)
    viewer = await SimSession.open(default_scenario(), state, history=None)
    try:
        assert holder.engine is not None and viewer.engine is None
        assert holder.lease is not None and viewer.viewer_reason is not None
        assert viewer.viewer_reason.startswith(f"viewer: engine held by {holder.lease.identity}")
        assert f"viewer: engine held by {holder.lease.identity}" in NvcreApp(session=viewer, live=False).sub_title
        await viewer.store.create(CERTIFICATION, certification_body(INTRA_NODE))  # an intent: the holder's engine acts
        await holder.engine.run_until_settled(until=lambda: _done(holder))
        jobs = {j["metadata"]["name"] for j in holder.cache.list(JOB)}
        assert jobs
        await _eventually(lambda: {j["metadata"]["name"] for j in viewer.cache.list(JOB)} == jobs
                          and cond.is_terminal(viewer.cache.get(CERTIFICATION, "burn-in", "default") or {}),
                          "the viewer's cache holds every Job and the finished certification")
        assert await viewer.take_over() is False  # the holder is alive and renewing
        await holder.close()  # releases the Lease
        assert await viewer.take_over() is True and viewer.engine is not None and viewer.viewer_reason is None
        assert len(viewer.cache.list(NODE)) == 32
    finally:
        await viewer.close()


async def _done(session: SimSession) -> bool:
    cert = session.cache.get(CERTIFICATION, "burn-in", "default")
    return cert is not None and cond.is_terminal(cert)


async def test_a_read_only_session_writes_nothing_and_runs_no_engine(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    await (await SimSession.open(default_scenario(), state, history=None)).close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    viewer = await SimSession.open(default_scenario(), state, history=None, readonly=True)
    try:
        assert viewer.engine is None and viewer.viewer_reason == "viewer: no engine holds the lease"
        assert len(viewer.cache.list(NODE)) == 32
        with pytest.raises(Exception, match="read-only"):
            await viewer.store.create(CERTIFICATION, certification_body(INTRA_NODE))
    finally:
        await viewer.close()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


async def test_a_lease_held_by_a_gone_local_process_is_taken_at_once(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.local_lease import LEASE_NAMESPACE, LocalLease
    from nvcre_tui.engine.store.sqlite import SqliteStore

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    store = SqliteStore(tmp_path / "state.db", SystemClock())
    try:
        host = socket.gethostname()
        alive = LocalLease(store, SystemClock(), LEASE_NAMESPACE, f"engine@{host}/1/abc")  # pid 1 exists
        assert await alive.try_acquire()
        assert not await LocalLease(store, SystemClock(), LEASE_NAMESPACE, "engine@elsewhere/7/x").try_acquire()
        await alive.release()
        dead = LocalLease(store, SystemClock(), LEASE_NAMESPACE, f"engine@{host}/{gone.stdout.strip()}/abc")
        assert await dead.try_acquire()  # its process has exited: within the Lease's duration, still free
        assert await dead.holder() is None
        taker = LocalLease(store, SystemClock(), LEASE_NAMESPACE, f"engine@{host}/{os.getppid()}/def")  # alive: our parent
        assert await taker.try_acquire()
        holder = await taker.holder()
        assert holder is not None and holder.identity == f"engine@{host}/{os.getppid()}/def"
    finally:
        await store.close()


async def test_the_namespace_flag_names_the_simulated_console_s_namespace(tmp_path: Path) -> None:
    """-n on the simulator is the namespace the console shows and submits to (it was accepted and ignored); a bad
    one is refused in one line naming the flag, before any store file is made."""
    from nvcre_tui.cli import _root_options, build_parser
    from nvcre_tui.cli.session import open_session
    from nvcre_tui.engine.errors import InputError
    from nvcre_tui.engine.planning.catalog_load import default_catalog

    state = tmp_path / "state.db"
    def console_args(*argv: str) -> Any:
        parser = build_parser()
        return _root_options(parser, parser.parse_args(argv), argv)  # as main reads the root's options: the console's own

    args = console_args("--sim", "--state", str(state), "--history", str(tmp_path / "h.db"), "-n", "team-b")
    session = await open_session(args, default_catalog(), live=False, want_engine=False, readonly=False)
    try:
        assert session.namespace == "team-b" and session.title.endswith(" · team-b")
    finally:
        await session.close()
    args = console_args("--sim", "--state", str(tmp_path / "other.db"), "-n", "Team_B")
    with pytest.raises(InputError, match="--namespace"):
        await open_session(args, default_catalog(), live=False, want_engine=False)
    assert not (tmp_path / "other.db").exists()


async def test_a_session_that_lost_the_lease_and_took_it_back_leaves_no_task_running_after_close(tmp_path: Path) -> None:
    """Each take-over started a new Lease holder and clock recorder in place of the last ones: the recorder of the Lease
    lost before went on (recording twice), and outlived close(), writing to the closed store every 2 s."""
    from nvcre_tui.engine.lease import format_micro_time
    from nvcre_tui.engine.store.protocol import LEASE

    session = await SimSession.open(default_scenario(), tmp_path / "state.db", history=None, lease_seconds=0.6)
    try:
        assert session.engine is not None and session.lease is not None

        async def hand_lease_to(identity: str, seconds: int) -> None:
            lease = await session.database.get(LEASE, session.lease.NAME, session.lease.namespace)  # type: ignore[union-attr]
            spec = {**lease["spec"], "holderIdentity": identity, "leaseDurationSeconds": seconds,
                    "renewTime": format_micro_time(datetime.now(UTC))}
            await session.database.update(LEASE, {**lease, "spec": spec})

        await hand_lease_to("engine@another-host/1/abcdef", 3600)  # another engine took it: lost at the next renewal
        await _eventually(lambda: session.engine is None, "the session to see its Lease lost")
        await hand_lease_to("", 1)  # released
        assert await session.take_over() is True
    finally:
        await session.close()
    running = [task.get_name() for task in asyncio.all_tasks() if task is not asyncio.current_task() and not task.done()
               and task.get_name() in ("lease", "clock")]
    assert running == []

