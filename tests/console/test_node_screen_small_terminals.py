"""The node screen on a small terminal: the header (node, state, Why) stays on screen and the results
table keeps about five lines of rows; the evidence and history boxes shrink first."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from nvcre_tui.app import NvcreApp

from .harness import INTRA_NODE, open_node_screen, reopen, save_finished

RESULT_ROWS = 5  # the results table's lines of rows a small terminal still shows (under its header)


@pytest.fixture(scope="module")
def finished_twice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two certifications on the same nodes: the node has four results (more than a 1-row table shows)."""
    return save_finished(tmp_path_factory.mktemp("finished") / "twice.json", INTRA_NODE, INTRA_NODE.replace("name: burn-in", "name: soak"))


def screen_lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
async def test_the_header_and_several_results_stay_visible(size: tuple[int, int], finished_twice: Path) -> None:
    app = NvcreApp(session=await reopen(finished_twice), live=False)
    async with app.run_test(size=size) as pilot:
        screen = await open_node_screen(app, pilot, "gpu-node-07")
        table = screen.query_one("#results", DataTable)
        assert table.row_count == 4
        assert screen.scroll_y == 0 and screen.max_scroll_y == 0, "the screen scrolls: its top is out of sight"
        assert table.region.height >= 1 + RESULT_ROWS, f"results table {table.region.height} rows high"
        lines = screen_lines(app)
        top = "\n".join(lines[1 : table.region.y])
        assert "Node" in top and "gpu-node-07" in top and "failed" in top and "Why" in top, top
        shown = "\n".join(lines[table.region.y : table.region.bottom])
        # A Job takes two lines below 120 columns (its measurements wrap rather than go off the edge): on 24 lines three
        # of the four are in sight, the fourth a cursor key away.
        assert sum(name in line for line in shown.splitlines() for name in ("burn-in ", "soak ")) == (3 if size == (80, 24) else 4), shown
        for box in ("#history", "#evidence-box"):  # below the table, whole on screen, above the footer
            region = screen.query_one(box).region
            assert region.height >= 2 and region.y >= table.region.bottom and region.bottom <= size[1] - 1, box
