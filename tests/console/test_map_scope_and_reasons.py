"""The dashboard's fleet line and the map say when their states merge several certifications; the map's explain
line has room for a failure's measured value and threshold, and its cells follow a live run's reasons (found by a
console review)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.item_line import ItemLine
from nvcre_tui.widgets.rack_map import RackMap

from .harness import INTRA_NODE, reopen, session_with


def screen_lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def test_merged_states_say_across_how_many_certifications(finished_intra_node_and_example: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node_and_example), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        fleet = str(app.screen.query_one("#fleet", ItemLine).render())
        assert "across 2 certifications" in fleet
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        assert "across 2 certifications" in "\n".join(screen_lines(app))
        await pilot.press("escape", "w")
        await pilot.pause()
        assert isinstance(app.screen, WallScreen) and app.screen.current is not None
        assert app.screen.current in screen_lines(app)[0]  # the wall names the one certification it shows


async def test_one_certification_is_named_and_not_said_merged(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        fleet = str(app.screen.query_one("#fleet", ItemLine).render())
        assert "across" not in fleet
        await pilot.press("m")
        await pilot.pause()
        assert str(app.screen.query_one("#scope", Static).render()) == "certification burn-in"


async def test_the_explain_line_shows_the_measured_value_and_threshold(finished_intra_node: Path) -> None:
    for width in (100, 120):  # where one line cut them; on 80 columns the threshold's value may be cut
        app = NvcreApp(session=await reopen(finished_intra_node), live=False)
        async with app.run_test(size=(width, 30)) as pilot:
            await pilot.press("m")
            await pilot.pause()
            app.screen.query_one(RackMap).highlighted = "gpu-node-07"
            await pilot.pause()
            assert app.snapshot is not None
            row = next(r for r in failure_rows(app.snapshot, "burn-in") if r.node == "gpu-node-07")
            numbers = row.message[row.message.index("measured "):]  # "measured 264.8140, expression: value >= 400"
            shown = " ".join(line.strip() for line in screen_lines(app)[-4:-1])  # the explain lines above the footer
            assert numbers.endswith("value >= 400") and numbers in shown, (width, shown)


async def test_the_map_cells_follow_a_live_runs_reasons() -> None:
    session = await session_with(INTRA_NODE, settle=False)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        rack_map = app.screen.query_one(RackMap)
        assert session.engine is not None
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        assert app.snapshot is not None
        for name, (state, detail) in node_states(app.snapshot).items():
            cell = rack_map.cell(name)
            assert cell is not None and (cell.state.value, cell.detail) == (state, detail), name
