"""The engine restart test (tests/engine/test_restart.py) on SqliteStore, each restart a new process's view:
the store is closed at the crash and a NEW SqliteStore opens the file for the next engine. The reports
equal the uninterrupted MemoryStore run's, timestamps included, and no child is created twice."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.sqlite import SqliteStore
from tests.engine.test_restart import CERTS, Crash, CrashingStore, Fault, assert_same_outcome, new_engine, planned, scenario
from tests.scenarios.harness import NAMESPACE, catalog, report_from, snapshot

Obj = dict[str, Any]


async def world(path: Path, clock: ManualClock) -> list[str]:
    """The fleet's Nodes and both certifications, written by a first process that then exits."""
    store = SqliteStore(path, clock)
    await SimulatedFleet(store, clock, scenario()).ensure_nodes()
    names = []
    for text in CERTS:
        cert = certification_from_text("cert.yaml", text, catalog()).to_wire()
        cert["metadata"]["namespace"] = NAMESPACE
        cert.pop("status", None)
        names.append((await store.create(CERTIFICATION, cert))["metadata"]["name"])
    await store.close()
    return names


async def _outcome(path: Path, faults: list[Fault]) -> tuple[list[Obj], CrashingStore, int]:
    clock = ManualClock(SIM_START)  # simulated time is the clock's, which the test carries across "processes"
    names = await world(path, clock)
    crashing = CrashingStore(SqliteStore(path, clock))
    crashing.faults = {fault.write: fault for fault in faults}

    async def done() -> bool:
        return all([cond.is_terminal(await crashing.inner.get(CERTIFICATION, name, NAMESPACE)) for name in names])

    crashes = 0
    while True:
        try:
            assert await new_engine(crashing, clock).run_until_settled(until=done, max_seconds=2 * 24 * 3600)
            break
        except (Crash, asyncio.CancelledError):
            crashes += 1
            await crashing.inner.close()
            crashing.inner = SqliteStore(path, clock)  # the next process opens the same file
    objects = await snapshot(crashing.inner)
    await crashing.inner.close()
    return [report_from(objects, name) for name in names], crashing, crashes


def test_an_uninterrupted_run_on_sqlite_reaches_the_memory_store_s_report(tmp_path: Path) -> None:
    reports, crashing, crashes = asyncio.run(_outcome(tmp_path / "store.db", []))
    assert crashes == 0
    assert_same_outcome(reports, crashing)


@pytest.mark.parametrize("index", [0, 7, 13])
def test_an_engine_killed_and_restarted_on_a_reopened_store_reaches_the_same_report(tmp_path: Path, index: int) -> None:
    faults = planned(index, count=2)
    reports, crashing, crashes = asyncio.run(_outcome(tmp_path / "store.db", faults))
    assert crashes == len(faults) - len(crashing.faults) >= 1
    assert_same_outcome(reports, crashing)
