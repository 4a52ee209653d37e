"""An engine's life: stop() is final. A stopped engine (its session lost the Lease) never reconciles again,
whichever way it is driven; a cancelled run() is paused, and runs again."""

from __future__ import annotations

import asyncio
from typing import Any

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION
from tests.engine.test_unblamed_failures import CERT


async def _session_and_certification() -> tuple[SimSession, Engine, dict[str, Any]]:
    """A simulator session with its engine, and a two-node certification to create."""
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    cert = certification_from_text("c", CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", "{}"),
                                   default_catalog()).to_wire()
    cert.pop("status", None)
    return session, session.engine, cert


async def test_a_stopped_engine_never_starts_again() -> None:
    """stop() is final (the Lease lost: another engine reconciles now). settle, sweep and run_until_settled used to
    start a stopped engine again, so `run --wait` went on reconciling beside the new holder."""
    session, engine, cert = await _session_and_certification()
    try:
        await session.store.create(CERTIFICATION, cert)
        await engine.settle()
        await engine.stop()
        done = sum(engine.reconciles.values())
        assert await engine.run_until_settled(max_seconds=6 * 3600) is False
        assert await engine.sweep() is None and await engine.settle() is None
        await asyncio.wait_for(engine.run(), timeout=5)  # returns at once
        assert sum(engine.reconciles.values()) == done
        [left] = (await session.store.list(CERTIFICATION, "default")).items
        assert not cond.is_terminal(left)  # nobody finished it here
    finally:
        await session.close()


async def test_a_cancelled_run_is_paused_not_stopped() -> None:
    """`run --wait --cleanup` cancels the engine's run() once the certification finished, then runs it again to collect
    what the deletion orphans (no garbage collector on an API server alone). Cancelling used to stop it for good: the
    second run() returned at once, and the cleanup waited its whole 5 minutes and left every object."""
    session, engine, cert = await _session_and_certification()
    try:
        first = asyncio.create_task(engine.run())
        await asyncio.sleep(0.2)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        done = sum(engine.reconciles.values())
        await session.store.create(CERTIFICATION, cert)
        second = asyncio.create_task(engine.run())
        await asyncio.sleep(0.5)
        assert not second.done()  # running, not returned at once
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        assert sum(engine.reconciles.values()) > done  # it reconciled the new certification
    finally:
        await session.close()
