"""Compose's notifications are about the form: they leave with it. F3's "default certification" toast, raised just
before ctrl+s submitted, stayed up on the dashboard for the rest of its 5 seconds (top right, over the failures pane
at 80x24); the app's own "certification ... submitted" stays, as it says what just happened there."""

from __future__ import annotations

from textual.widgets._toast import Toast

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.compose import ComposeScreen
from nvcre_tui.screens.dashboard import DashboardScreen

from .harness import session_with


def _said(app: NvcreApp) -> list[str]:
    return [str(toast._notification.message) for toast in app.screen.query(Toast)]


async def test_compose_toasts_leave_with_the_form() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        await app.push_screen(ComposeScreen())
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()
        assert any(said.startswith("default certification") for said in _said(app)), _said(app)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause(0.2)
        assert isinstance(app.screen, DashboardScreen), app.screen
        said = _said(app)
        assert any("submitted" in line for line in said), said
        assert not any(line.startswith("default certification") for line in said), said


async def test_compose_toasts_leave_on_escape_too() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        await app.push_screen(ComposeScreen())
        await pilot.pause()
        await pilot.press("ctrl+s")  # refused: an empty form
        await pilot.pause()
        assert any("problem" in line for line in _said(app)), _said(app)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause(0.2)
        assert isinstance(app.screen, DashboardScreen), app.screen
        assert not _said(app), _said(app)
