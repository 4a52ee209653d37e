"""RackMap and Legend driven through a tiny host app: rendering, batched updates, cursor, filter, size, snapshots."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
import textual.constants
from textual.app import ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip

from nvcre_tui.theme import ThemedApp, load_themes
from nvcre_tui.widgets.legend import Legend
from nvcre_tui.widgets.node_state import STATE_GLYPHS, NodeCell, NodeState
from nvcre_tui.widgets.rack_map import RackMap

STATES = list(NodeState)
GLYPHS = set(STATE_GLYPHS.values())
DARK = load_themes()["nvcre-dark"].variables


def fleet(racks: int, per_rack: int, seed: int = 7) -> list[NodeCell]:
    """A deterministic fleet: mostly passed, with every other state sprinkled in (seeded)."""
    rng = random.Random(seed)
    weights = [3, 2, 2, 2, 4, 3, 40, 1]  # in NodeState order: failed .. excluded
    return [
        NodeCell(f"gpu-r{r:02d}-n{n:02d}", f"rack-{r:02d}", rng.choices(STATES, weights)[0])
        for r in range(racks)
        for n in range(per_rack)
    ]


class MapApp(ThemedApp[None]):
    """Host: one RackMap (and optionally a Legend), recording the map's messages."""

    def __init__(self, cells: Sequence[NodeCell], *, legend: bool = False) -> None:
        super().__init__()
        self.cells = cells
        self.legend = legend
        self.messages: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield RackMap(self.cells)
        if self.legend:
            yield Legend()

    def on_rack_map_node_highlighted(self, message: RackMap.NodeHighlighted) -> None:
        self.messages.append(("highlighted", message.name))

    def on_rack_map_node_selected(self, message: RackMap.NodeSelected) -> None:
        self.messages.append(("selected", message.name))


def text(strip: Strip) -> str:
    return strip.text.rstrip()


def colour_of(strip: Strip, glyph: str) -> str:
    """Hex colour of the first segment showing `glyph`."""
    segment = next(s for s in strip if glyph in s.text)
    assert segment.style is not None and segment.style.color is not None
    return segment.style.color.triplet.hex.upper()  # type: ignore[union-attr]


def cell_glyph_count(rack_map: RackMap, lines: int) -> int:
    """Glyphs on cell lines (header lines start with the domain, 'rack-')."""
    rendered = [text(rack_map.render_line(y)) for y in range(lines)]
    return sum(sum(ch in GLYPHS for ch in line) for line in rendered if "rack-" not in line)


SMALL = [
    NodeCell("a-1", "rack-a", NodeState.PASSED),
    NodeCell("a-2", "rack-a", NodeState.FAILED),
    NodeCell("a-10", "rack-a", NodeState.RUNNING),
    NodeCell("b-1", "rack-b", NodeState.SUSPECT, detail="XID 79"),
    NodeCell("b-2", "rack-b", NodeState.UNTESTED),
]


async def test_renders_one_glyph_per_node_in_state_colour_grouped_and_sorted() -> None:
    app = MapApp(SMALL)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        rack_map = app.query_one(RackMap)
        header, cells = rack_map.render_line(0), rack_map.render_line(1)
        # Blocks side by side; natural name order (a-10 after a-2); 3-column cells " g ".
        assert text(header).split() == ["rack-a", "✗1", "⋯1", "✓1", "rack-b", "!1", "◦1"]
        assert text(cells).split() == ["✓", "✗", "⋯", "!", "◦"]
        assert text(cells).startswith(" ✓  ✗  ⋯ ")
        assert colour_of(cells, "✗") == DARK["verdict-failed"].upper()
        assert colour_of(cells, "!") == DARK["verdict-suspect"].upper()
        assert rack_map.visible_names == ["a-1", "a-2", "a-10", "b-1", "b-2"]
        assert rack_map.highlighted == "a-1"


async def test_update_states_rerenders_only_the_affected_lines_with_one_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    cells = fleet(racks=32, per_rack=32)
    app = MapApp(cells)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        rack_map = app.query_one(RackMap)
        rendered: list[int] = []
        refreshes: list[int] = []
        render_line, refresh = rack_map.render_line, rack_map.refresh

        def counted_render_line(y: int) -> Strip:
            rendered.append(y)
            return render_line(y)

        def counted_refresh(*regions: Region, **kw: Any) -> RackMap:
            refreshes.append(len(regions))
            return refresh(*regions, **kw)

        monkeypatch.setattr(rack_map, "render_line", counted_render_line)
        monkeypatch.setattr(rack_map, "refresh", counted_refresh)
        # rack-02 sits in the first column of the second block row: header line 2, cells line 3.
        target = next(c for c in cells if c.domain == "rack-02" and c.state is NodeState.PASSED)
        rack_map.update_states({target.name: NodeState.FAILED, "no-such-node": NodeState.FAILED})
        await pilot.pause()
        assert sorted(set(rendered)) == [2, 3]
        assert len(refreshes) == 1
        failed = sum(c.state is NodeState.FAILED for c in cells if c.domain == "rack-02") + 1
        assert f"✗{failed}" in text(rack_map.render_line(2)).split()[:2]

        rendered.clear()
        refreshes.clear()
        many = {c.name: NodeState.RUNNING for c in cells[:200]}
        rack_map.update_states(many)
        await pilot.pause()
        assert len(refreshes) == 1
        assert set(rendered) <= set(range(14))  # racks 0-6 live in the first 7 block rows (2 lines each)
        assert text(rack_map.render_line(1)).split() == ["⋯"] * 64


async def test_cursor_keys_move_and_enter_selects() -> None:
    app = MapApp(fleet(racks=4, per_rack=32))
    async with app.run_test(size=(200, 50)) as pilot:
        rack_map = app.query_one(RackMap)
        rack_map.focus()
        await pilot.press("right", "l", "left")
        assert rack_map.highlighted == "gpu-r00-n01"
        await pilot.press("down")  # racks 0|1 on lines 0-1, racks 2|3 below: down lands in rack-02
        assert rack_map.highlighted == "gpu-r02-n01"
        await pilot.press("k", "j", "j")  # j at the bottom edge stays
        assert rack_map.highlighted == "gpu-r02-n01"
        await pilot.press("end", "h", "enter")
        assert rack_map.highlighted == "gpu-r03-n30"
        await pilot.press("home", "enter")
        assert app.messages == [
            ("highlighted", "gpu-r00-n00"),
            ("highlighted", "gpu-r00-n01"),
            ("highlighted", "gpu-r00-n02"),
            ("highlighted", "gpu-r00-n01"),
            ("highlighted", "gpu-r02-n01"),
            ("highlighted", "gpu-r00-n01"),
            ("highlighted", "gpu-r02-n01"),
            ("highlighted", "gpu-r03-n31"),
            ("highlighted", "gpu-r03-n30"),
            ("selected", "gpu-r03-n30"),
            ("highlighted", "gpu-r00-n00"),
            ("selected", "gpu-r00-n00"),
        ]
        # The cursor cell is drawn reversed, so it is visible without colour.
        first = next(c for c in app.cells if c.name == "gpu-r00-n00")
        cursor = [s.text for s in rack_map.render_line(1) if s.style and s.style.reverse]
        assert cursor == [f" {first.state.glyph} "]


async def test_click_selects_the_node_under_the_mouse() -> None:
    app = MapApp(SMALL)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.click(RackMap, offset=(7, 1))  # third cell of rack-a: columns 6-8
        assert app.query_one(RackMap).highlighted == "a-10"
        assert app.messages[-2:] == [("highlighted", "a-10"), ("selected", "a-10")]
        await pilot.click(RackMap, offset=(7, 0))  # a header: nothing
        assert app.messages[-1] == ("selected", "a-10")


async def test_filter_hides_by_name_or_state_and_keeps_counts() -> None:
    app = MapApp(SMALL)
    async with app.run_test(size=(120, 40)) as pilot:
        rack_map = app.query_one(RackMap)
        rack_map.filter = "^b-"
        await pilot.pause()
        assert rack_map.visible_names == ["b-1", "b-2"]
        assert rack_map.highlighted == "b-1"
        assert text(rack_map.render_line(0)).split() == ["rack-b", "!1", "◦1"]
        rack_map.filter = "!passed,untested"
        await pilot.pause()
        assert rack_map.visible_names == ["a-2", "a-10", "b-1"]
        assert "✓1" in text(rack_map.render_line(0))  # counts still cover hidden nodes
        rack_map.update_states({"a-2": NodeState.PASSED, "b-2": NodeState.FAILED})
        await pilot.pause()
        assert rack_map.visible_names == ["a-10", "b-1", "b-2"]
        rack_map.filter = "!a-"  # not state names: an inverted name regex
        assert rack_map.visible_names == ["b-1", "b-2"]
        rack_map.filter = "a-[1"  # invalid regex: matched literally, no error
        assert rack_map.visible_names == []
        assert rack_map.highlighted is None and rack_map.virtual_size.height == 0
        rack_map.filter = ""
        assert len(rack_map.visible_names) == 5


async def test_domain_marks_sit_in_their_header_before_the_counts_in_the_failed_colour() -> None:
    app = MapApp(SMALL)
    async with app.run_test(size=(120, 40)) as pilot:
        rack_map = app.query_one(RackMap)
        rack_map.set_domain_marks({"rack-b": "✗uplink", "rack-z": "✗link"})  # a domain not shown: no harm
        await pilot.pause()
        header = rack_map.render_line(0)
        assert text(header).split() == ["rack-a", "✗1", "⋯1", "✓1", "rack-b", "✗uplink", "!1", "◦1"]
        assert colour_of(header, "✗uplink") == DARK["verdict-failed"].upper()
        assert rack_map.domain_marks == {"rack-b": "✗uplink", "rack-z": "✗link"}
        rack_map.set_domain_marks({})
        await pilot.pause()
        assert "✗uplink" not in text(rack_map.render_line(0))


async def test_compact_switches_cell_width_and_auto_compacts_when_too_small() -> None:
    app = MapApp(SMALL)
    async with app.run_test(size=(120, 40)) as pilot:
        rack_map = app.query_one(RackMap)
        assert not rack_map.is_compact
        rack_map.compact = True
        await pilot.pause()
        assert rack_map.is_compact
        assert text(rack_map.render_line(1)).startswith("✓✗⋯")
        rack_map.compact = False
        await pilot.pause()
        assert text(rack_map.render_line(1)).startswith(" ✓  ✗  ⋯")

    app = MapApp(fleet(racks=32, per_rack=32))
    async with app.run_test(size=(100, 30)) as pilot:
        rack_map = app.query_one(RackMap)
        assert rack_map.compact is None and rack_map.is_compact
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert not rack_map.is_compact


async def test_1024_nodes_all_visible_on_200x50_with_normal_cells() -> None:
    app = MapApp(fleet(racks=32, per_rack=32))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        rack_map = app.query_one(RackMap)
        assert not rack_map.is_compact
        assert rack_map.virtual_size.height <= rack_map.size.height
        assert cell_glyph_count(rack_map, rack_map.size.height) == 1024


async def test_4096_nodes_scroll_and_render_only_visible_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[int] = []
    render_map_line = RackMap._render_map_line

    def counted_render_map_line(self: RackMap, y: int) -> Strip:
        rendered.append(y)
        return render_map_line(self, y)

    monkeypatch.setattr(RackMap, "_render_map_line", counted_render_map_line)
    app = MapApp(fleet(racks=128, per_rack=32))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        rack_map = app.query_one(RackMap)
        assert rack_map.is_compact
        assert rack_map.virtual_size.height > rack_map.size.height  # it scrolls
        # Only the 30 visible lines were ever rendered, not the whole map (a first frame before the
        # Resize event renders the still-empty layout, hence "at most twice").
        assert set(rendered) == set(range(rack_map.size.height))
        assert len(rendered) <= 2 * rack_map.size.height
        rack_map.focus()
        await pilot.press("end")
        assert rack_map.highlighted == "gpu-r127-n31"
        assert rack_map.scroll_y == rack_map.max_scroll_y > 0
        visible = [rack_map.render_line(y) for y in range(rack_map.size.height)]
        assert sum(bool(s.style and s.style.reverse) for strip in visible for s in strip) == 1


async def test_theme_switch_restyles_cells_and_legend() -> None:
    app = MapApp(SMALL, legend=True)
    async with app.run_test(size=(120, 40)) as pilot:
        rack_map, legend = app.query_one(RackMap), app.query_one(Legend)
        assert colour_of(rack_map.render_line(1), "✗") == DARK["verdict-failed"].upper()
        app.theme = "nvcre-high-contrast"
        await pilot.pause()
        contrast = app.nvcre_themes["nvcre-high-contrast"].variables
        assert colour_of(rack_map.render_line(1), "✗") == contrast["verdict-failed"].upper()
        spans = {legend.render().plain[s.start : s.end]: s.style for s in legend.render().spans}
        assert str(spans["✗ failed"].color.triplet.hex).upper() == contrast["verdict-failed"].upper()  # type: ignore[union-attr]


async def test_legend_lists_every_state_with_its_glyph_on_one_line() -> None:
    app = MapApp(SMALL, legend=True)
    async with app.run_test(size=(120, 40)):
        legend = app.query_one(Legend)
        assert legend.size.height == 1
        assert legend.render().plain == "  ".join(f"{s.glyph} {s.value}" for s in NodeState)


async def test_legend_wraps_between_entries_where_one_line_is_too_narrow() -> None:
    app = MapApp(SMALL, legend=True)
    async with app.run_test(size=(80, 24)):
        legend = app.query_one(Legend)
        lines = legend.render().plain.splitlines()
        assert legend.size.height == len(lines) == 2 and all(len(line) <= 80 for line in lines)
        entries = [entry for line in lines for entry in line.split("  ")]
        assert entries == [f"{s.glyph} {s.value}" for s in NodeState]  # every one whole, none cut


def test_set_nodes_rejects_duplicate_names() -> None:
    with pytest.raises(ValueError, match="'a-1' is listed twice"):
        RackMap([SMALL[0], SMALL[0]])


# ---- snapshots (synchronous: snap_compare runs the app itself) -------------------------------------------


@pytest.fixture
def no_animations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    # textual.constants read the environment at import; App.__init__ reads this attribute.
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")


@pytest.mark.usefixtures("no_animations")
def test_snapshot_1024_nodes_200x50(snap_compare) -> None:
    assert snap_compare(MapApp(fleet(racks=32, per_rack=32)), terminal_size=(200, 50))


@pytest.mark.usefixtures("no_animations")
def test_snapshot_small_map_with_legend_120x40(snap_compare) -> None:
    async def move(pilot: Pilot[None]) -> None:
        pilot.app.query_one(RackMap).focus()
        await pilot.press("right", "right")

    assert snap_compare(MapApp(fleet(racks=6, per_rack=18), legend=True), terminal_size=(120, 40), run_before=move)


async def test_update_states_takes_a_new_detail_with_or_without_a_new_state() -> None:
    """A live run's new reason reaches the tooltip: a cell keeps no stale detail (found by a console review)."""
    cells = [NodeCell("a-1", "a", NodeState.RUNNING, "round 1: suspect, under test"), NodeCell("a-2", "a", NodeState.PASSED)]
    app = MapApp(cells)
    async with app.run_test(size=(40, 10)) as pilot:
        rack_map = app.query_one(RackMap)
        rack_map.update_states({"a-1": (NodeState.SUSPECT, "round 2: suspect")})
        await pilot.pause()
        assert rack_map.cell("a-1") == NodeCell("a-1", "a", NodeState.SUSPECT, "round 2: suspect")
        rack_map.update_states({"a-1": (NodeState.SUSPECT, "round 3: suspect"), "a-2": NodeState.FAILED})
        await pilot.pause()
        assert rack_map.cell("a-1") == NodeCell("a-1", "a", NodeState.SUSPECT, "round 3: suspect")
        assert rack_map.cell("a-2") == NodeCell("a-2", "a", NodeState.FAILED, "")  # a state alone keeps the detail


async def test_a_narrow_header_keeps_the_excluded_count_before_running_and_passed() -> None:
    """A compact map's 20-column header kept counts in display order while they fit, and excluded is last: a rack with
    cordoned nodes read "rack-07 ✗1 !1 ?1 ◷1" over cells showing "⊘" (found on a compact map of 64 racks of 8)."""
    states = [NodeState.FAILED, NodeState.SUSPECT, NodeState.INCONCLUSIVE, NodeState.WAITING, NodeState.RUNNING,
              NodeState.EXCLUDED, NodeState.EXCLUDED, NodeState.PASSED]
    cells = [NodeCell(f"r{rack:02d}-n{n}", f"rack-{rack:02d}", state) for rack in range(64) for n, state in enumerate(states)]
    app = MapApp(cells)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rack_map = app.query_one(RackMap)
        assert rack_map.is_compact
        header = text(rack_map.render_line(0))
        first = header[: rack_map._layout.block_width].split()
        assert first[0] == "rack-00" and "⊘2" in first, header
        assert first[1:] == [entry for entry in ["✗1", "!1", "?1", "◷1", "⋯1", "✓1", "⊘2"] if entry in first[1:]], "display order"
        assert "✗1" in first and "!1" in first and "?1" in first
