"""`f` in the failures pane did nothing: the footer offers `f Failures` there too, and a user who pressed it to go
back to the certifications saw no change. `f` again goes back to the table, the same row highlighted."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from nvcre_tui.app import NvcreApp
from nvcre_tui.widgets.failures_pane import FailuresPane

from .harness import reopen


async def test_f_in_the_failures_pane_goes_back_to_the_table(finished_intra_node_and_example: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node_and_example), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        await pilot.press("down")
        row = table.cursor_row
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.focused, FailuresPane)
        await pilot.press("f")
        await pilot.pause()
        assert app.focused is table and table.cursor_row == row
