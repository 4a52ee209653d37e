"""`:theme` without a name says its usage (audit of the command bar's messages)."""

from __future__ import annotations

from nvcre_tui.app import NvcreApp

from .harness import session_with


async def test_theme_without_a_name_says_its_usage() -> None:
    """`:theme` alone said "unknown theme ''", as if an empty name had been typed."""
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("colon", *"theme", "enter")
        await pilot.pause()
        assert [str(n.message) for n in app._notifications][-1] == "usage: :theme NAME; known: nvcre-dark, nvcre-high-contrast, nvcre-light"
