"""A node a failure marks (✗ ! ?) outranks running on the map; while a later iteration or category runs on it the
wall read "RUNNING 0" and the fleet line "⋯ 0 running" for an hour of work. Both now count those nodes apart."""

from __future__ import annotations

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.bodies import orchestration_of
from nvcre_tui.engine.store import WORKFLOW
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.suspicion import RUNNING_AGAIN, blamed_and_running, fleet_summary
from nvcre_tui.widgets.item_line import ItemLine

from .harness import intra_all_reduce, session_with

TWICE = intra_all_reduce("twice").replace("testScale: intra-node}", "testScale: intra-node, repeatCount: 2}")


async def test_a_failed_node_running_its_second_iteration_is_counted_as_running_too() -> None:
    session = await session_with(TWICE, settle=False)
    assert session.engine is not None

    async def second_iteration_running() -> bool:
        (wf,) = (await session.store.list(WORKFLOW, "default")).items
        orch = orchestration_of(wf)
        return len(orch.get("iterationHistory") or []) == 1 and any(g.get("phase") == "Running" for g in orch.get("groups") or [])

    assert await session.engine.run_until_settled(until=second_iteration_running, max_seconds=4 * 3600)
    snapshot = await Snapshot.read(session.store)
    states = node_states(snapshot, "twice")
    assert states["gpu-node-07"][0] == "failed"  # iteration 1 convicted it: ✗ outranks running
    assert "gpu-node-07" in blamed_and_running(snapshot, states, "twice")
    assert fleet_summary(snapshot, states, "twice")[RUNNING_AGAIN] >= 1
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert "blamed node running a test now" in str(app.screen.query_one("#tally", Static).render())
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert f"{RUNNING_AGAIN})" in str(app.screen.query_one("#fleet", ItemLine).render())
