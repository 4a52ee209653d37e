"""`?` lists the keys of the screen it was pressed on first, after those that work everywhere: on the drill-down at
80x24 its first page was the dashboard's keys, and the drill-down's (f, l, b, n, m, x) two pages down, out of sight
of the on-call engineer who pressed it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.help import HelpScreen

from .harness import reopen


def headings(app: NvcreApp) -> list[str]:
    """The section headings the help shows on screen, top to bottom."""
    names = ("Everywhere", "Dashboard", "Drill-down", "Topology map", "Node", "Logs", "Bandwidth", "Compose", "Catalog", "Wall")
    lines = [strip.text.strip("│ ").strip() for strip in app.screen._compositor.render_strips()]
    return [line for line in lines if line in names]


@pytest.mark.parametrize(("keys", "first"), [(("enter",), "Drill-down"), (("m",), "Topology map"), ((), "Dashboard"),
                                             (("enter", "l"), "Logs")])
async def test_help_opens_on_the_keys_of_the_screen_it_was_pressed_on(keys: tuple[str, ...], first: str, finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*keys)
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert headings(app) == ["Everywhere", first], headings(app)  # in sight on the first page, the others below
        said = [entry.title for entry in app.screen.screens]
        assert said[0] == first and len(said) == len(set(said)) == 9  # every screen still listed, once
