"""Compose's notifications leave its controls in sight: at the bottom right (Textual's place) a refused ctrl+s's
"not submitted" and F3's "default certification" covered Load, Save and Submit and the status line on 80x24 for
their 5 seconds, just when the user needed them next. They sit top right now, over the YAML preview alone."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import Button
from textual.widgets._toast import Toast

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.compose import ComposeScreen

from .harness import session_with


def _toasts(app: NvcreApp) -> list[Region]:
    return [toast.region for toast in app.screen.query(Toast) if toast.region.area]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_compose_notifications_cover_no_control_and_no_field(size: tuple[int, int]) -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=size, notifications=True) as pilot:
        await app.push_screen(ComposeScreen())
        await pilot.pause()
        for key in ("ctrl+s", "f3"):  # refused (no name, no category), then the default filled in
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause(0.3)
            screen = app.screen
            assert isinstance(screen, ComposeScreen)
            toasts = _toasts(app)
            assert toasts, key
            kept = [*screen.query(Button).filter("#actions Button"), screen.query_one("#status"), screen.query_one("#form")]
            for widget in kept:
                assert not any(toast.overlaps(widget.region) for toast in toasts), (key, widget, widget.region, toasts)
            assert all(toast.y >= 1 for toast in toasts), toasts  # the header stays in sight too
