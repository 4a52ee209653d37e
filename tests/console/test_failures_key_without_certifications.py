"""`f` on a dashboard with no certification said "no failures in the highlighted certification", with none in the
table to highlight (found pressing f on an empty dashboard at 80x24)."""

from __future__ import annotations

from nvcre_tui.app import NvcreApp

from .harness import session_with


async def test_f_on_an_empty_dashboard_says_there_is_no_certification() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert [str(n.message) for n in app._notifications][-1] == "no certification in the table: no failures to show (c composes one)"
