"""The wall's map is updated in place while its Nodes stay the same: a refresh redraws only the lines whose cells (or
block headers) changed, none when nothing did, and shows what a map laid out anew would show. It was given every node
again at each refresh (sorted, laid out and every line drawn anew): 60 ms more CPU a refresh at 10,000 nodes, each second
while a certification ran (bench/tui_wall.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console
from rich.style import Style
from textual.geometry import Region
from textual.renderables.digits import Digits as DigitsRenderable
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.screens.wall import WallMap, WallScreen
from nvcre_tui.widgets.node_state import NodeCell, NodeState
from nvcre_tui.widgets.rack_map import RackMap

from .harness import INTRA_NODE, reopen, session_run_for


async def test_a_refresh_redraws_only_what_changed_and_shows_what_a_new_layout_would(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[int] = []
    render_map_line = RackMap._render_map_line

    def counted(self: RackMap, y: int) -> Strip:
        drawn.append(y)
        return render_map_line(self, y)

    monkeypatch.setattr(RackMap, "_render_map_line", counted)
    session = await session_run_for(INTRA_NODE, 60)  # its first Jobs running, the others waiting
    assert session.engine is not None
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WallScreen)
        rack_map = screen.query_one(WallMap)
        shown_lines = rack_map.size.height

        drawn.clear()
        screen.refresh_now()  # the same snapshot again, as the app shows it every second while a certification runs
        await pilot.pause()
        assert drawn == [], f"the same snapshot redrew map lines {sorted(set(drawn))}"

        assert app.snapshot is not None
        before = node_states(app.snapshot, screen.current)
        for _ in range(20):  # until a node's state changes (Jobs start and finish)
            await session.engine.run_until_settled(max_seconds=30)
            await app.refresh_snapshot()
            await pilot.pause()
            assert app.snapshot is not None
            if node_states(app.snapshot, screen.current) != before:
                break
        states = node_states(app.snapshot, screen.current)
        changed = {name for name in states if states[name][0] != before[name][0]}
        assert changed, "no node changed state"
        assert 0 < len(set(drawn)) < shown_lines, f"{len(set(drawn))} of {shown_lines} lines redrawn for {len(changed)} changed nodes"

        assert {name: rack_map.cell(name).state.value for name in states} == {name: state for name, (state, _) in states.items()}  # type: ignore[union-attr]
        lines = [rack_map.render_line(y).text for y in range(shown_lines)]
        cells = [rack_map.cell(name) for name in rack_map.visible_names]
        rack_map.set_nodes([cell for cell in cells if cell is not None])  # laid out anew from the same cells
        assert [rack_map.render_line(y).text for y in range(shown_lines)] == lines
        assert Counter(cell.state for cell in cells if cell is not None) == Counter(NodeState(state) for state, _ in states.values())
        assert all(isinstance(cell, NodeCell) for cell in cells)


async def test_the_same_snapshot_again_lays_nothing_out(monkeypatch: pytest.MonkeyPatch, finished_intra_node: Path) -> None:
    """The title and the tally line are updated only when what they say changed: each update laid the whole screen out
    again and drew it anew, every second while a certification ran, though nothing had changed."""
    app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WallScreen)
        laid_out: list[str] = []
        refresh = Widget.refresh

        def counted(self: Widget, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Widget:
            if layout:
                laid_out.append(str(self.id or type(self).__name__))
            return refresh(self, *regions, repaint=repaint, layout=layout, recompose=recompose)

        monkeypatch.setattr(Widget, "refresh", counted)
        screen.refresh_now()
        await pilot.pause()
        assert laid_out == [], f"the same snapshot laid out {laid_out}"
        title = str(screen.query_one("#title", Static).render())
        assert title.lstrip().startswith("burn-in"), title


async def test_a_count_of_another_width_lays_nothing_out(monkeypatch: pytest.MonkeyPatch, finished_intra_node: Path) -> None:
    """Textual's Digits laid the whole screen out whenever its text changed width (9 to 10 running, a count to "-"); the
    wall's counters are as wide as their boxes, so a new count redraws the counter alone, and shows it whole as before."""
    app = NvcreApp(session=await reopen(finished_intra_node), live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WallScreen)
        counter = screen.query_one("#count-running", Digits)
        region = counter.region
        laid_out: list[str] = []
        refresh = Widget.refresh

        def counted(self: Widget, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Widget:
            if layout:
                laid_out.append(str(self.id or type(self).__name__))
            return refresh(self, *regions, repaint=repaint, layout=layout, recompose=recompose)

        monkeypatch.setattr(Widget, "refresh", counted)
        for value in ("10", "2048", "-", "7"):
            counter.update(value)
            await pilot.pause()
            assert laid_out == [], f"{value}: laid out {laid_out}"
            assert counter.region == region and counter.value == value
            drawn = [strip.text.rstrip() for strip in counter.render_lines(Region(0, 0, counter.size.width, 3))]
            glyphs = Console(width=40).render_lines(DigitsRenderable(value, Style()), pad=False)  # its big digits, as Digits draws them
            assert drawn == ["".join(segment.text for segment in line).rstrip() for line in glyphs], value
