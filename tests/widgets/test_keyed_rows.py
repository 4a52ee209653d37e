"""keyed_rows.update_rows: cells that come from the cluster's objects are shown as written."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from nvcre_tui.widgets.keyed_rows import update_rows


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()


async def test_str_cells_are_never_read_as_markup() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(DataTable)
        table.add_columns("Job", "Reason")
        update_rows(table, {"job-1": ("job-1", "cannot open [/dev/shm]")})
        await pilot.pause()
        app.export_screenshot()  # renders every cell: markup would raise here
        assert "cannot open [/dev/shm]" in table.render_line(1).text
        update_rows(table, {"job-1": ("job-1", "rank [gpu0] \x1b[2J lost")})  # updated in place: the same key
        await pilot.pause()
        app.export_screenshot()  # renders every cell
        shown = [table.render_line(y).text for y in range(3)]
        assert any("rank [gpu0] \ufffd[2J lost" in line for line in shown), shown
    assert app.return_code is None


async def test_a_cell_updated_in_place_widens_its_column() -> None:
    # A running certification's Age grows from "0s" to "5m00s": the column kept its first width and showed "5m0".
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(DataTable)
        table.add_columns("Certification", "Age", "Running")
        update_rows(table, {"burn-in": ("burn-in", "0s", "-")})
        await pilot.pause()
        update_rows(table, {"burn-in": ("burn-in", "5m00s", "communication/nccl-all-reduce")})
        await pilot.pause()
        app.export_screenshot()
        row = table.render_line(1).text
        assert "5m00s" in row and "communication/nccl-all-reduce" in row, row
