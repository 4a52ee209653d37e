"""The dashboard's failures pane says a threshold no test came near before the nodes it failed, as the drill-down and
the wall do: it listed 32 ThresholdViolation rows (GB200 figures on the H100 fleet), a fleet-wide failure, the
threshold unsaid (a walkthrough found it)."""

from __future__ import annotations

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.widgets.failures_pane import FailuresPane

from .harness import session_with
from .test_wall_failures import intra_all_reduce_against


async def test_the_pane_says_the_threshold_out_of_reach_first_and_enter_lands_on_it() -> None:
    app = NvcreApp(session=await session_with(intra_all_reduce_against("gb200", 900)), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        pane = app.screen.query_one(FailuresPane)
        first = pane.failures[0]
        assert (first.node, first.reason) == ("communication/nccl-all-reduce", "threshold out of reach"), pane.failures[:2]
        cells = [" ".join(str(cell).split()) for cell in pane.get_row_at(0)]
        assert cells[0].replace("/ ", "/") == "✗ communication/nccl-all-reduce", cells  # wrapped after its /
        assert any(cell.startswith("threshold value >= 900 is above anything measured on this fleet: best ") for cell in cells), cells
        assert [row.node for row in pane.failures[1:]] == [f"gpu-node-{i:02d}" for i in range(1, 33)]  # the nodes still listed
        title = str(app.screen.query_one("#failures-title", Static).render())
        assert "1 threshold out of reach, 32 nodes blamed" in " ".join(title.split()), title
        pane.focus()
        pane.move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        cursor = app.screen.query_one(Tree).cursor_node
        assert cursor is not None and str(cursor.label).startswith("! threshold value >= 900 is above anything measured"), cursor
