"""The `:` command bar shows its hint and what is typed: focused, Input's tall border (its `:focus` rule outranks the
bar's own) left one line for the border's top edge only, so the bar read "▊▔▔▔▔▎" and the user typed blind (found
pressing `:` at 80x24); and docked at the bottom with the footer, it sat under it."""

from __future__ import annotations

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.widgets.command_bar import CommandBar

from .harness import session_with


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_command_bar_shows_its_hint_then_what_is_typed(size: tuple[int, int]) -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("colon")
        await pilot.pause()
        bar = app.screen.query_one(CommandBar)

        def line() -> str:
            return [strip.text for strip in app.screen._compositor.render_strips()][bar.region.y]

        assert bar.has_focus and bar.region.height == 1
        assert ":certs" in line() and ":node NAME" in line(), line()
        await pilot.press(*"node gpu-node-07")
        await pilot.pause()
        assert line().strip() == "node gpu-node-07", line()
