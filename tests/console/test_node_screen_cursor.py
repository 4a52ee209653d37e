"""Where the node screen's cursor starts: on the first Job that marks the node, whose evidence the box shows."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.node import NodeScreen

from .harness import reopen


async def test_a_node_opens_on_the_first_job_that_marks_it_not_on_one_it_passed(finished_diagnose_and_train: Path) -> None:
    """An on-call walkthrough opened a failed node (`n` in the drill-down): the cursor sat on its first Job, a screening
    test it passed, and the evidence box said `busBandwidthGBps: measured 404.65, expected value >= 300  ✓ met` under
    `✗ failed`. gpu-node-01 passed two tests of the diagnosis, was cleared in a third, and its training group failed
    (! suspect): the cursor starts on that training Job, and stays where the user moves it."""
    app = NvcreApp(session=await reopen(finished_diagnose_and_train), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("colon", *"node gpu-node-01", "enter")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen)
        table = app.screen.query_one("#results", DataTable)
        assert table.row_count == 4
        cells = [str(cell) for cell in table.get_row_at(table.cursor_row)]
        assert cells[1] == "training/nemotron5-8b" and cells[2].startswith("!"), cells
        assert "avgTFLOPsPerGPU" in str(app.screen.query_one("#evidence", Static).render())
        table.move_cursor(row=0)
        assert app.snapshot is not None
        app.screen.show(app.snapshot)  # a redraw leaves the cursor where the user put it
        await pilot.pause()
        assert table.cursor_row == 0
