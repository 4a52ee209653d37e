"""Ages move on with the session's clock once every certification has finished: the screens were shown again only
while one ran, so the wall said "finished 0s ago" and the dashboard's Age stood still until the cluster changed."""

from __future__ import annotations

from nvcre_tui.app import IDLE_TICK_SECONDS, NvcreApp
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.wall import WallScreen

from .harness import DIAGNOSE_AND_TRAIN, session_with


async def test_the_wall_and_the_dashboard_age_move_on_after_the_last_certification_finished() -> None:
    session = await session_with(DIAGNOSE_AND_TRAIN)
    assert isinstance(session.clock, ManualClock)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)

        def row() -> str:
            return next(strip.text for strip in app.screen._compositor.render_strips() if "diagnose-and-train  " in strip.text)

        assert row().split()[-3:] == ["10m06s", "-", "10m06s"]  # Runtime, Left (finished: none) and Age
        app.run_command("wall")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)

        def title() -> str:
            return app.screen._compositor.render_strips()[0].text

        assert "finished 0s ago" in title()  # the session's clock stands where the last run ended
        session.clock.advance(600)
        app._shown_at -= IDLE_TICK_SECONDS  # as if that long went by on the screen
        await app.refresh_snapshot()
        await pilot.pause()
        assert "finished 10m00s ago" in title(), title()
        app.pop_screen()
        await pilot.pause()
        assert row().split()[-3:] == ["10m06s", "-", "20m06s"], row()  # the Age moved on, the Runtime of the finished run did not
