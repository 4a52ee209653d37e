"""The node screen's History lines are cut between whole cells, never inside one: on 80x24 a node's archived row read
`nccl-all-gather ✗ faulty 160.20…` (the value's unit cut off) and the trend line `... 265.03 GB/s   nc…`. A cell that
does not fit is left out and counted (`+2 more`); a first cell too long for the line alone is cut at a word, its value
kept with its unit (`nvcre history node NAME` prints every line whole)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from nvcre_tui.app import NvcreApp

from .harness import EXAMPLE, INTRA_NODE, open_node_screen, session_with

VALUE = re.compile(r"\d+\.\d+")


def visible_lines(app: NvcreApp, selector: str) -> list[str]:
    region = app.screen.query_one(selector).content_region
    return [strip.text[region.x : region.right].rstrip() for strip in app.screen._compositor.render_strips()[region.y : region.bottom]]


@pytest.mark.parametrize("width", [80, 120])
async def test_history_lines_keep_each_value_with_its_unit(width: int) -> None:
    session = await session_with(INTRA_NODE, EXAMPLE)  # two archived certifications, several categories each
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(width, 40)) as pilot:
        await open_node_screen(app, pilot, "gpu-node-12")
        lines = [line for line in visible_lines(app, "#history") if line]
        assert lines[0].startswith("History (2 archived certifications)") and len(lines) == 3, lines
        for line in lines:
            assert cell_len(line) <= app.screen.query_one("#history").content_region.width, line
            for value in VALUE.finditer(line):
                assert line[value.end():].startswith(" GB/s"), (line, value.group())  # never "160.20…"
            assert "…" not in line or " …" in line, line  # an ellipsis after a whole word only
        assert all(" nccl-" in line for line in lines[1:]), lines  # the verdict and the first cell apart
        said = " ".join(lines)
        assert any(line.endswith(" …") or re.search(r"  \+\d+ more$", line) for line in lines), lines  # what does not fit is said to be there
    await session.close()


def test_a_row_keeps_whole_cells_and_counts_the_rest() -> None:
    from nvcre_tui.screens.node import fitted_row

    cells = ["nccl-all-gather ✗ faulty 160.20 GB/s (ThresholdViolation)", "nccl-all-reduce ✓ 479.44 GB/s", "nccl-loopback ✗ 161.57 GB/s"]
    lead = "2026-01-01 02:15Z  everything  ✗ faulty       "
    assert fitted_row(lead, "  ", cells, 400) == lead + "  ".join(cells)
    assert fitted_row(lead, "  ", cells, 120) == lead + cells[0] + "  +2 more"
    # the first cell alone is too long: cut at a word, the value whole with its unit
    assert fitted_row(lead, "  ", cells, 95) == lead + "nccl-all-gather ✗ faulty 160.20 GB/s …  +2 more"
    # the others no longer counted where that would cost the first cell its value: its "…" says there is more
    assert fitted_row(lead, "  ", cells, 90) == lead + "nccl-all-gather ✗ faulty 160.20 GB/s …"
    assert fitted_row(lead, "  ", cells, 80) == lead + "nccl-all-gather ✗ faulty …"  # never "160.20 …"
    assert fitted_row(lead, "  ", cells, 60) == lead + "+3 more"
