"""On the simulator every time the console shows is the simulated clock's (Ages, "finished ... ago", a log's stamps,
a failure log's span), running `speed` times the wall clock, yet it read as real dates and durations. The header's
title (the wall's title line) says `SIMULATED, sim time` on every screen, and a failure log's span says `(sim time)`."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.screens.wall import WallScreen

from .harness import reopen
from .test_header_badges import screen_lines

MARK = "SIMULATED, sim time"


async def test_every_screen_says_its_times_are_the_simulated_clocks(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert MARK in screen_lines(app)[0], screen_lines(app)[0]  # the dashboard
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        assert MARK in screen_lines(app)[0], screen_lines(app)[0]
        detail = str(app.screen.query_one("#detail", Static).render())
        assert "Failure log" in detail and "  sim time 00:" in detail and "2026-" not in detail, detail  # "sim time 00:07:44Z to 00:08:29Z"
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)
        assert MARK in screen_lines(app)[0], screen_lines(app)[0]
        app.run_command("wall")
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        assert MARK in screen_lines(app)[0], screen_lines(app)[0]
