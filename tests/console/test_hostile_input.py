"""A hostile or careless operator: what is typed and what the cluster's objects say is shown as written, never
read as markup, and never ends the console."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import reopen


async def test_cert_command_with_markup_in_the_name_says_not_found(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("colon", *"cert [/x]", "enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        assert str(app.screen.query_one(Tree).root.label) == "[/x] (not found)"
        await pilot.press("f", "l", "b", "n", "escape")
        await pilot.pause()
    assert app.return_code in (None, 0)
