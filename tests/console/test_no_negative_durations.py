"""A viewer whose clock is behind the times the engine wrote (a read-only console on a cluster whose engine
plays simulated time): the dashboard never shows a negative Runtime or Age."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import DataTable

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.store.protocol import CERTIFICATION

from .harness import INTRA_NODE, session_with


async def test_a_viewer_behind_the_engines_clock_shows_no_negative_duration() -> None:
    session = await session_with(INTRA_NODE, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=120)  # part way: running, with a startTime
    cert = await session.store.get(CERTIFICATION, "burn-in", "default")
    status = certification_status(cert)
    assert status.get("startTime") and not status.get("completionTime")
    # the viewer's wall clock: two hours before the certification was even created
    session.clock = ManualClock(parse_time(cert["metadata"]["creationTimestamp"]) - timedelta(hours=2))
    app = NvcreApp(session=session, live=False, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        assert table.row_count == 1
        row = [str(cell) for cell in table.get_row_at(0)]
        assert "RUNNING" in row[1]
        runtime, age = row[4], row[6]  # Left between them
        assert not runtime.startswith("-") and not age.startswith("-"), row
        assert runtime == "0s" and age == "0s", row
