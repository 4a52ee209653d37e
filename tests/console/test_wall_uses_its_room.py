"""The wall's legend and map use the screen: at 80 columns the legend wrapped, leaving "⊘ excluded" alone on a line
the failures list lost (the tally line above names waiting, untested and excluded with their glyphs: the legend
leaves those out where it would wrap); at 200x60 the map drew 32 glyphs on a few of its 45 lines, nothing readable
across a room: its cells name their nodes where they fit without scrolling."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.wall import WallMap, WallScreen
from nvcre_tui.widgets.legend import Legend

from .harness import reopen
from .test_wall_keys_and_counters import screen_lines


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40), (200, 60)])
async def test_the_legend_is_one_line(size: tuple[int, int], finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        legend = app.screen.query_one(Legend)
        assert legend.region.height == 1, (size, legend.region)
        lines = screen_lines(app)
        said = lines[legend.region.y]
        for state in ("failed", "suspect", "inconclusive", "running", "passed"):
            assert state in said, (size, said)
        tally = lines[legend.region.y - 1]
        for state in ("waiting", "untested", "excluded"):  # said where the legend leaves them out
            assert state in said or state in tally, (size, said, tally)
        assert not any(line.strip() == "⊘ excluded" for line in lines), lines


async def test_a_big_wall_names_its_nodes(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        rack_map = app.screen.query_one(WallMap)
        top, bottom = rack_map.region.y, rack_map.region.bottom
        lines = [line[: rack_map.region.width] for line in screen_lines(app)[top:bottom]]
        assert "✗ gpu-node-07" in "\n".join(lines), lines
        assert "✓ gpu-node-32" in "\n".join(lines), lines
        assert sum(1 for line in lines if line.strip()) >= 8, lines  # 4 cliques: a header and a row of names each
