"""A long certification name on the dashboard at 80 columns: cut in its middle so Runtime, Age and Running stay in
sight. It took the row whole and pushed them off the right edge (a Kubernetes name runs to 253 characters; found
with "isolate-a-very-long-certification-name-for-rack-12" beside burn-in at 80x24)."""

from __future__ import annotations

from textual.widgets import DataTable

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import DIAGNOSE, INTRA_NODE, session_with

LONG = "isolate-a-very-long-certification-name-for-rack-12"


def test_a_name_is_cut_in_its_middle() -> None:
    from nvcre_tui.screens.dashboard import cut_middle

    assert cut_middle("burn-in", 20) == "burn-in"
    assert cut_middle(LONG, 18) == "isolate-a…-rack-12"
    assert all(len(cut_middle(LONG, width)) <= width for width in range(2, 60))


async def test_runtime_age_and_running_stay_in_sight_beside_a_long_name() -> None:
    app = NvcreApp(session=await session_with(INTRA_NODE, DIAGNOSE.replace("name: isolate", f"name: {LONG}"), settle=False), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        assert table.max_scroll_x == 0, f"{table.virtual_size.width} columns in {table.scrollable_content_region.width}"
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        assert any(line.lstrip().startswith("Certification") and line.rstrip().endswith("Running") for line in lines), lines
        row = next(line for line in lines if line.lstrip().startswith("isolate-a"))
        assert "…" in row and "rack-12" in row and "0s" in row, row
        table.move_cursor(row=table.get_row_index(LONG))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen) and app.screen.certification == LONG
