"""An engine PROCESS on SqliteStore killed (SIGKILL, SIGHUP) in the middle of the restart test's
certifications, then started again as a new process (its clock resumed from the latest write, as a restarted
simulator's): the reports equal the uninterrupted MemoryStore run's, timestamps included."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.sqlite import SqliteStore
from tests.engine.test_restart import reference
from tests.scenarios.harness import report_from, snapshot
from tests.store.test_sqlite_restart import world
from tests.hangup import default_hangup

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("sqlite_worker.py")
GUARD_SECONDS = 120


def engine_process(path: Path, names: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the worker imports the restart test's engine
    return subprocess.Popen([sys.executable, str(WORKER), "engine", str(path), *names], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True, preexec_fn=default_hangup)


def resource_version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        value = int(db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0])
    db.close()
    return value


def kill_after(process: subprocess.Popen[str], path: Path, writes: int, sig: signal.Signals) -> None:
    """Send `sig` once the store holds `writes` more writes than now (checked every millisecond)."""
    target, deadline = resource_version(path) + writes, time.monotonic() + GUARD_SECONDS
    while resource_version(path) < target:
        assert process.poll() is None, "the engine finished before it could be killed"
        assert time.monotonic() < deadline, "the engine made no progress"
        time.sleep(0.001)
    process.send_signal(sig)
    process.communicate(timeout=GUARD_SECONDS)
    assert process.returncode == -sig


@pytest.mark.parametrize(("fraction", "sig"), [(0.3, signal.SIGKILL), (0.7, signal.SIGHUP)])
def test_an_engine_process_killed_mid_run_and_started_again_reaches_the_same_reports(
        tmp_path: Path, fraction: float, sig: signal.Signals) -> None:
    expected, writes = reference()
    path = tmp_path / "store.db"
    names = asyncio.run(world(path, ManualClock(SIM_START)))
    kill_after(engine_process(path, names), path, int(writes * fraction), sig)
    again = engine_process(path, names)
    out, _ = again.communicate(timeout=GUARD_SECONDS)
    assert again.returncode == 0 and out == "done\n"
    store = SqliteStore(path, ManualClock())
    objects = asyncio.run(snapshot(store))
    asyncio.run(store.close())
    assert [report_from(objects, name) for name in names] == expected
