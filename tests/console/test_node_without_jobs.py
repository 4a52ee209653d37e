"""The node screen of a node no Job ran on: its empty results table and evidence box said nothing, and `l` did
nothing (found opening an untested node at 80x24)."""

from __future__ import annotations

from textual.widgets import Static

from nvcre_tui.app import NvcreApp

from .harness import open_node_screen, session_with


async def test_a_node_no_job_ran_on_says_so_and_l_says_why_no_log_opens() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await app.refresh_snapshot()
        screen = await open_node_screen(app, pilot, "gpu-node-05")
        assert str(screen.query_one("#evidence", Static).render()) == "no Job has run on gpu-node-05 in the certifications shown"
        await pilot.press("l")
        await pilot.pause()
        assert app.screen is screen
        assert [str(n.message) for n in app._notifications][-1] == "no Job has run on gpu-node-05: no log to open"
