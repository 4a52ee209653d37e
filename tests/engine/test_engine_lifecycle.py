"""An engine's life: stop() is final. A stopped engine (its session lost the Lease) never reconciles again,
whichever way it is driven."""

from __future__ import annotations

import asyncio

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.planning.catalog import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION
from tests.engine.test_unblamed_failures import CERT


async def test_a_stopped_engine_never_starts_again() -> None:
    """stop() is final (the Lease lost: another engine reconciles now). settle, sweep and run_until_settled used to
    start a stopped engine again, so `run --wait` went on reconciling beside the new holder."""
    session = await SimSession.open(default_scenario(), None, history=None)
    engine = session.engine
    assert engine is not None
    cert = certification_from_text("c", CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", "{}"),
                                   default_catalog()).to_wire()
    cert.pop("status", None)
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
