"""`:` then escape (or a command that fails) gives the focus back to the widget that had it. It went to the screen's
first widget that takes focus: on the map the topology key's Select, where the arrows no longer moved the map's cursor
and enter opened the Select instead of the node (found walking the map at 80x24, keyboard only); on the dashboard an
open filter, which took the next keys as text."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.rack_map import RackMap

from .harness import reopen


async def test_escape_from_the_command_bar_gives_the_map_its_keys_back(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        rack_map = app.screen.query_one(RackMap)
        await pilot.press("colon", "escape")
        await pilot.pause()
        assert app.focused is rack_map, app.focused
        await pilot.press("colon", *"nothing", "enter")  # an unknown command: said, and the map keeps its keys
        await pilot.pause()
        assert app.focused is rack_map, app.focused
        await pilot.press("right", "enter")  # the map's cursor moves, and enter opens the node under it
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen) and app.screen.node == "gpu-node-02", app.screen


async def test_a_command_leaves_the_dashboard_table_focused_beside_an_open_filter(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"burn", "enter")  # the filter stays open; enter hands the keys to the table
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        assert app.focused is table
        await pilot.press("colon", *"racks", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert app.focused is table, app.focused
        assert app.screen.query_one("#filter", Input).value == "burn"
        await pilot.press("colon", "escape")
        await pilot.pause()
        assert app.focused is table, app.focused
