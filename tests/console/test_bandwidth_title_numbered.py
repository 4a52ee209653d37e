"""The bandwidth view's title names a category a certification runs twice as the drill-down does (`#2`): both runs'
titles read `communication/nccl-all-reduce` (a walkthrough found it)."""

from __future__ import annotations

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.bandwidth import BandwidthScreen

from .harness import open_drilldown, session_with
from .test_drilldown import TWICE


async def test_b_on_the_second_run_of_a_category_titles_it_hash_2() -> None:
    app = NvcreApp(session=await session_with(TWICE), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "twice")
        tree = screen.query_one(Tree)
        for line, number in ((1, "#2"), (0, "#1")):
            category = tree.root.children[line]
            assert str(category.label).startswith(f"✗ communication/nccl-all-reduce {number}  "), category.label
            tree.move_cursor(category)
            await pilot.pause()
            await pilot.press("b")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, BandwidthScreen)
            title = str(app.screen.query_one("#bw-title", Static).render())
            assert f"   communication/nccl-all-reduce {number} · " in title, title
            await pilot.press("escape")
            await pilot.pause()
