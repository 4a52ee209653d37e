"""The dashboard's failures pane and the node screen's Jobs table on 80 and 120 columns: no sideways scrolling,
and a row's node, reason, category and measured value read whole in their columns (wrapped, never cut). At 80
columns both cut the Measured column off the right edge until the user scrolled sideways (a console review)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.widgets.detail import shown_measurement
from nvcre_tui.widgets.failures_pane import FailuresPane
from nvcre_tui.widgets.node_state import NodeState
from nvcre_tui.widgets.verdict_mark import VERDICT_MARKS

from .harness import LINK_FAULTS, open_node_screen, reopen

SIZES = [(80, 24), (120, 40)]
RESULTS = {f"{state.glyph} {state.value}" for state in NodeState} | {f"{state.glyph} {word}" for state, word in VERDICT_MARKS.values()}


def screen_lines(app: NvcreApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def joined(lines: Iterable[str]) -> str:
    """A wrapped cell's lines as one text: a line that ends after "/" (a catalog key's break) is joined without a space."""
    text = ""
    for line in lines:
        text += ("" if not text or text.endswith("/") or not line else " ") + line
    return text


def rendered_cells(app: NvcreApp, table: DataTable[Any]) -> list[dict[str, str]]:
    """Each row's cells as the screen shows them (for the rows in sight): a column's slice of each of the row's
    lines, `joined`; keyed by the column's label."""
    lines = screen_lines(app)
    region = table.region
    columns, x = [], region.x
    for column in table.ordered_columns:
        width = column.get_render_width(table)
        columns.append((str(column.label), x, x + width))
        x += width
    rows, y = [], region.y + table.header_height
    for row in table.ordered_rows:
        if y + row.height > region.bottom:
            break
        rows.append({label: joined(lines[line][start:end].strip() for line in range(y, y + row.height)) for label, start, end in columns})
        y += row.height
    return rows


def no_sideways_scroll(table: DataTable[Any]) -> None:
    assert table.max_scroll_x == 0, f"{table.id}: {table.virtual_size.width} columns in {table.scrollable_content_region.width}"


@pytest.mark.parametrize("size", SIZES)
async def test_the_failures_pane_reads_whole_without_scrolling_sideways(size: tuple[int, int], finished_diagnose_and_train: Path) -> None:
    app = NvcreApp(session=await reopen(finished_diagnose_and_train), live=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        pane = app.screen.query_one(FailuresPane)
        no_sideways_scroll(pane)
        shown = rendered_cells(app, pane)
        assert len(shown) >= 2, shown  # the pane shows rows, not only its header
        by_node = {row.node: row for row in pane.failures}
        for cells in shown:
            node = cells["Node"].split(" ", 1)[1]  # after the state glyph
            row = by_node[node]
            assert cells["Reason"] == row.reason and cells["Measured"] == row.measured, cells
            if "Category (+others)" in cells:
                assert cells["Category (+others)"] == row.category + (f" +{len(row.also)}" if row.also else ""), cells
            else:  # left out on 80 columns beside a threshold out of reach's sentence (its row names the category)
                assert size[0] < 120 and pane.failures[0].reason == "threshold out of reach", cells
        # Its title names the keys only where they fit whole: it was cut at "· f then".
        title = app.screen.query_one("#failures-title", Static)
        said = str(title.render())
        assert len(said) <= title.content_size.width and ("· f then" not in said or said.endswith("enter evidence, l log")), said


@pytest.mark.parametrize("size", SIZES)
async def test_an_infrastructure_faults_rows_read_whole_without_scrolling_sideways(size: tuple[int, int], finished_link_faults: Path) -> None:
    """The longest cells the pane shows: a fault's subject and a measured range over several tests."""
    app = NvcreApp(session=await reopen(finished_link_faults, scenario=LINK_FAULTS), live=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        pane = app.screen.query_one(FailuresPane)
        no_sideways_scroll(pane)
        shown = rendered_cells(app, pane)
        faults = [row for row in pane.failures if row.cliques]
        assert len(faults) == 2 and len(shown) >= 2, shown
        for cells, row in zip(shown, faults):
            assert cells["Node"] == f"✗ {row.node}" and cells["Reason"] == row.reason and cells["Measured"] == row.measured, cells


@pytest.mark.parametrize("size", SIZES)
async def test_the_node_screens_jobs_read_whole_without_scrolling_sideways(size: tuple[int, int], finished_diagnose_and_train: Path) -> None:
    """Four Jobs of gpu-node-07, the certification's long name among them: its Category, Result and Measurements
    read whole; a column left out on 80 columns is said whole in the evidence box of the highlighted Job."""
    app = NvcreApp(session=await reopen(finished_diagnose_and_train), live=False)
    async with app.run_test(size=size) as pilot:
        screen = await open_node_screen(app, pilot, "gpu-node-07")
        table = screen.query_one("#results", DataTable)
        no_sideways_scroll(table)
        shown = rendered_cells(app, table)
        assert shown, "no Job in sight"
        for cells, row in zip(shown, screen._history):
            measured = ", ".join(f"{k} {shown_measurement(k, v, row['evidence'])}" for k, v in sorted(row["measurements"].items()))
            assert cells["Certification"] == row["certification"] and cells["Category"] == row["category"], cells
            assert cells["Measurements"] == measured and cells["Result"] in RESULTS, cells
            if "Reason" in cells:
                assert cells["Reason"] == "; ".join(f["reason"] for f in row["failures"]), cells
        evidence = str(screen.query_one("#evidence").render())  # the box scrolls: its text, not the lines in sight
        first = screen._history[0]
        assert f"{first['failures'][0]['reason']}: " in evidence and f"Job {first['job']} (3 nodes)" in evidence, evidence
