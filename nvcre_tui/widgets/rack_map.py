"""RackMap: every node as one glyph coloured by state, grouped by domain (clique, rack) in blocks.

Line API (ScrollView + render_line): no widget per node, only visible lines are rendered, and a state
change re-renders only the lines that show it. The pure layout (blocks, filter, navigation) lives in
`rack_layout.py`; this module is the widget: data, rendering, keys, mouse and messages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from nvcre_tui.widgets.node_state import NodeCell, NodeState, state_component_classes, state_component_css
from nvcre_tui.widgets.rack_layout import Group, Layout, NodeFilter, build_layout, natural_key, parse_filter

_PREFIX = "rack-map"

# The counts a header too narrow for all of them keeps first: in display order, except that the excluded count comes
# before waiting, running, untested and passed. It is last in display order, so a compact map's 20-column headers
# dropped it first ("rack-07 ✗1 !2 ?1 ◷3" over a rack with 3 cordoned nodes), while its cells ("⊘") said otherwise;
# the passed and untested counts are what the rest of the block's cells are.
HEADER_PRIORITY: tuple[NodeState, ...] = (
    NodeState.FAILED, NodeState.SUSPECT, NodeState.INCONCLUSIVE, NodeState.EXCLUDED, NodeState.WAITING, NodeState.RUNNING,
    NodeState.UNTESTED, NodeState.PASSED,
)


@dataclass(frozen=True)
class _Palette:
    base: Style
    domain: Style
    states: dict[NodeState, Style]
    cursor: dict[NodeState, Style]


NAMED_EXTRA = 4  # a named cell's columns besides the name: space, glyph, mark, space


class RackMap(ScrollView, can_focus=True):
    """Nodes grouped by domain, one cell each: glyph + `$verdict-<state>` colour, a header with counts per group.

    `compact`: None = automatic (1-column cells when 3-column cells do not fit), True/False forces it.
    `filter`: a regex on node names; `!regex` hides matching names; `!failed,suspect` hides those states.
    `marks` (set_marks): an overlay glyph per node (stale, NVSentinel's view), drawn beside the state glyph
    in 3-column cells and in its place in 1-column cells, in the state's colour.
    `domain_marks` (set_domain_marks): a short word per domain (a degraded link of a clique: "✗link"), drawn in its
    header after the domain name, before the counts, in the failed colour.
    """

    COMPONENT_CLASSES = state_component_classes(_PREFIX) | {f"{_PREFIX}--domain", f"{_PREFIX}--cursor"}
    DEFAULT_CSS = (
        """
    RackMap { height: 1fr; overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1; }
    RackMap > .rack-map--domain { text-style: bold; }
    RackMap > .rack-map--cursor { text-style: reverse bold; }
    """
        + state_component_css("RackMap", _PREFIX)
    )
    HELP_NAME = "on the map"  # how `?` says where its keys apply
    # Automatic mode draws cells that name their node (" ✓ gpu-node-07 ") where they fit without scrolling: a display
    # (the wall) has the room; the console's map keeps its cursor cells.
    NAMED_CELLS: ClassVar[bool] = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "vertical(-1)", "Up", show=False, id="rack-map.up"),
        Binding("down,j", "vertical(1)", "Down", show=False, id="rack-map.down"),
        Binding("left,h", "step(-1)", "Previous node", show=False, id="rack-map.left"),
        Binding("right,l", "step(1)", "Next node", show=False, id="rack-map.right"),
        Binding("home", "jump(0)", "First node", show=False, id="rack-map.first"),
        Binding("end", "jump(-1)", "Last node", show=False, id="rack-map.last"),
        # Out of the map screen's footer (listed by ?, said under the map): on 80 columns it cut ? and q off.
        Binding("enter", "select", "Open node", show=False, id="rack-map.select", tooltip="Open the highlighted node"),
    ]

    compact: reactive[bool | None] = reactive(None, init=False)
    filter: reactive[str] = reactive("", init=False)

    class _NodeMessage(Message):
        def __init__(self, name: str, rack_map: RackMap) -> None:
            super().__init__()
            self.name = name
            self.rack_map = rack_map

        @property
        def control(self) -> RackMap:
            """The map that sent it (for `@on(RackMap.NodeSelected, "#selector")`)."""
            return self.rack_map

    class NodeHighlighted(_NodeMessage):
        """The cursor moved to node `name`."""

    class NodeSelected(_NodeMessage):
        """Node `name` was chosen (enter or click)."""

    class CellsChanged(Message):
        """The cell mode (`compact`) or the width automatic mode picks changed: what `cells_said` says changed."""

    def __init__(
        self,
        cells: Sequence[NodeCell] = (),
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._cells: dict[str, NodeCell] = {}
        self._groups: list[Group] = []
        self._group_of: dict[str, Group] = {}
        self._visible: list[str] = []
        self._index: dict[str, int] = {}
        self._node_filter: NodeFilter = parse_filter("")
        self._layout: Layout = build_layout([], 0, 0, compact=None)
        self._auto_compact = False  # what automatic mode picks at the current size (said while a width is forced)
        self._cells_said: tuple[bool | None, bool, bool] | None = None  # (compact, shown, automatic) when CellsChanged was last posted
        self._strips: dict[int, Strip] = {}
        self._palette: _Palette | None = None
        self._cursor: str | None = None
        self._marks: dict[str, str] = {}
        self._domain_marks: dict[str, str] = {}
        self._words: dict[str, str] = {}
        self.set_nodes(cells)

    # ---- data in -------------------------------------------------------------------------------------

    def set_nodes(self, cells: Sequence[NodeCell]) -> None:
        """Replace every node. Groups sort by domain, nodes by name (numbers in names compare as numbers)."""
        by_name: dict[str, NodeCell] = {}
        for cell in cells:
            if cell.name in by_name:
                raise ValueError(f"RackMap.set_nodes: node {cell.name!r} is listed twice")
            by_name[cell.name] = cell
        members: dict[str, list[str]] = {}
        for cell in by_name.values():
            members.setdefault(cell.domain, []).append(cell.name)
        self._cells = by_name
        self._groups = [
            Group(domain, sorted(names, key=lambda n: (natural_key(n), n)), Counter(by_name[n].state for n in names))
            for domain, names in sorted(members.items(), key=lambda item: natural_key(item[0]))
        ]
        self._group_of = {name: group for group in self._groups for name in group.names}
        self._refilter()

    def set_marks(self, marks: Mapping[str, str]) -> None:
        """Replace the overlay marks (one narrow glyph per node; absent: none). Redraws only on a change."""
        if dict(marks) != self._marks:
            self._marks = dict(marks)
            self._strips.clear()
            self.refresh()

    @property
    def marks(self) -> dict[str, str]:
        """The overlay marks shown, by node name."""
        return dict(self._marks)

    def set_domain_marks(self, marks: Mapping[str, str]) -> None:
        """Replace the header marks (one short word per domain; absent: none). Redraws only on a change."""
        if dict(marks) != self._domain_marks:
            self._domain_marks = dict(marks)
            self._strips.clear()
            self.refresh()

    def set_words(self, words: Mapping[str, str]) -> None:
        """Say these nodes' states in these words in the tooltip (the others by their state's name): a running
        diagnosis's narrowing set, drawn !, is `under suspicion` (views.state_word), as the legend beside the map says.
        Nothing is drawn from them."""
        self._words = dict(words)

    @property
    def domain_marks(self) -> dict[str, str]:
        """The header marks shown, by domain."""
        return dict(self._domain_marks)

    def update_states(self, changes: Mapping[str, NodeState | tuple[NodeState, str]]) -> None:
        """Apply many changes, each a state or a (state, detail): O(len(changes)), one refresh of only the affected
        visible lines (a new detail alone redraws nothing: the tooltip reads it).

        Unknown names are ignored (a node may have left between a snapshot and this update). A change that
        crosses a hidden-state filter (e.g. a node becomes `passed` under `!passed`) re-lays out the map.
        """
        dirty: set[int] = set()
        crossed = False
        hidden = self._node_filter.hidden_states
        for name, change in changes.items():
            cell = self._cells.get(name)
            if cell is None:
                continue
            new_state, detail = (NodeState(change[0]), change[1]) if isinstance(change, tuple) else (NodeState(change), cell.detail)
            if cell.state == new_state:
                if detail != cell.detail:
                    self._cells[name] = NodeCell(cell.name, cell.domain, new_state, detail)
                continue
            group = self._group_of[name]
            group.counts[cell.state] -= 1
            group.counts[new_state] += 1
            self._cells[name] = NodeCell(cell.name, cell.domain, new_state, detail)
            crossed = crossed or ((cell.state in hidden) != (new_state in hidden))
            dirty.add(self._layout.header_y.get(group.domain, -1))
            dirty.add(self._layout.positions.get(name, (0, -1))[1])
        if crossed:
            self._refilter()
        else:
            self._invalidate(dirty - {-1})

    def cell(self, name: str) -> NodeCell | None:
        """The node as the map holds it (its state and the detail its tooltip says)."""
        return self._cells.get(name)

    def watch_filter(self, text: str) -> None:
        self._node_filter = parse_filter(text)
        self._refilter()

    def watch_compact(self, compact: bool | None) -> None:
        self._relayout()

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()

    # ---- what callers read ---------------------------------------------------------------------------

    @property
    def highlighted(self) -> str | None:
        """Name of the node under the cursor (None when nothing is shown)."""
        return self._cursor

    @highlighted.setter
    def highlighted(self, name: str) -> None:
        """Move the cursor to `name` and scroll to it; names hidden by the filter are ignored."""
        if name in self._index:
            self._move_to(name)

    @property
    def is_compact(self) -> bool:
        """Whether cells are 1 column (chosen or automatic)."""
        return self._layout.compact

    @property
    def auto_compact(self) -> bool:
        """Whether automatic mode (compact None) picks 1-column cells at the map's current size."""
        return self._auto_compact

    def cycle_cells(self) -> None:
        """The next cell mode, as `z` steps through them: automatic, then the width automatic mode does not show (so
        the first press always changes the map), then the other width, then automatic again."""
        if self.compact is None:
            self.compact = not self._auto_compact
        else:
            self.compact = None if self.compact == self._auto_compact else not self.compact

    def cells_said(self) -> str:
        """The cell mode as the map's legend says it: "cells: auto (full)", "cells: compact", "cells: full"."""
        width = "compact" if self._layout.compact else "full"
        return f"cells: auto ({width})" if self.compact is None else f"cells: {width}"

    @property
    def visible_names(self) -> list[str]:
        """Names the filter lets through, in display order."""
        return list(self._visible)

    # ---- layout --------------------------------------------------------------------------------------

    def _refilter(self) -> None:
        """Recompute which nodes the filter shows, then lay out again."""
        old_index = self._index.get(self._cursor or "", 0)
        for group in self._groups:
            group.visible = [n for n in group.names if self._node_filter.shows(n, self._cells[n].state)]
        self._visible = [name for group in self._groups for name in group.visible]
        self._index = {name: i for i, name in enumerate(self._visible)}
        if self._cursor not in self._index:
            self._cursor = self._visible[min(old_index, len(self._visible) - 1)] if self._visible else None
            if self._cursor is not None:
                self.post_message(self.NodeHighlighted(self._cursor, self))
        self._relayout()

    def _relayout(self) -> None:
        size = self.size
        groups = [g for g in self._groups if g.visible]
        scrollbar = self.styles.scrollbar_size_vertical
        named = max((len(name) for group in groups for name in group.visible), default=0) + NAMED_EXTRA if self.NAMED_CELLS else 0
        self._layout = build_layout(groups, size.width, size.height, compact=self.compact, scrollbar=scrollbar, named=named)
        self._auto_compact = (self._layout.compact if self.compact is None
                              else build_layout(groups, size.width, size.height, compact=None, scrollbar=scrollbar, named=named).compact)
        cells = (self.compact, self._layout.compact, self._auto_compact)
        if cells != self._cells_said and size.width > 0:  # laid out: automatic mode has chosen
            self._cells_said = cells
            self.post_message(self.CellsChanged())
        self._strips.clear()
        self.virtual_size = Size(self._layout.width, self._layout.height)
        self.refresh()

    def _invalidate(self, lines: Iterable[int]) -> None:
        """Forget cached strips for `lines`; repaint those on screen with one refresh."""
        top, height, width = self.scroll_offset.y, self.size.height, self.size.width
        regions = []
        for y in lines:
            self._strips.pop(y, None)
            if top <= y < top + height:
                regions.append(Region(0, y - top, width, 1))
        if regions:
            self.refresh(*regions)

    def notify_style_update(self) -> None:
        # A theme switch changes the component styles baked into the palette and the cached strips.
        super().notify_style_update()
        self._palette = None
        self._strips.clear()

    # ---- rendering -----------------------------------------------------------------------------------

    def _get_palette(self) -> _Palette:
        """Styles resolved once per style change (rich_style walks the DOM, too slow per line)."""
        if self._palette is None:
            component = self.get_component_rich_style
            states = {state: component(f"{_PREFIX}--{state.value}") for state in NodeState}
            self._palette = _Palette(
                base=self.rich_style,
                domain=component(f"{_PREFIX}--domain"),
                states=states,
                cursor={state: style + component(f"{_PREFIX}--cursor", partial=True) for state, style in states.items()},
            )
        return self._palette

    def render_line(self, y: int) -> Strip:
        line_y = y + self.scroll_offset.y
        strip = self._strips.get(line_y)
        if strip is None:
            strip = self._render_map_line(line_y)
            if line_y < self._layout.height:
                self._strips[line_y] = strip
        return strip

    def _render_map_line(self, line_y: int) -> Strip:
        """One virtual line: for each block on it, padding then its header or its cell row; padded to width."""
        palette, width = self._get_palette(), self.size.width
        segments: list[Segment] = []
        column = 0
        for span in self._layout.lines[line_y] if line_y < self._layout.height else ():
            segments.append(Segment(" " * (span.x - column), palette.base))
            if span.row < 0:
                column = span.x + self._header(span.group, palette, segments)
            else:
                column = span.x + self._cells_row(self._layout.row_names(span), palette, segments)
        segments.append(Segment(" " * max(0, width - column), palette.base))
        return Strip(segments, max(width, column))

    def _header(self, group: Group, palette: _Palette, out: list[Segment]) -> int:
        """Domain name, its mark, then `glyph count` per present state in display order: those of HEADER_PRIORITY's
        first states that fit whole."""
        room = self._layout.block_width
        domain = group.domain[:room]
        out.append(Segment(domain, palette.domain))
        room -= len(domain)
        mark = self._domain_marks.get(group.domain, "")[: max(0, room - 1)]
        if mark:
            out += [Segment(" ", palette.base), Segment(mark, palette.states[NodeState.FAILED])]
            room -= len(mark) + 1
        entries = {state: f"{state.glyph}{group.counts[state]}" for state in NodeState if group.counts[state]}
        kept: set[NodeState] = set()
        for state in HEADER_PRIORITY:  # what a narrow header keeps: the passed and untested counts go first
            if state in entries:
                if len(entries[state]) + 1 > room:
                    break
                kept.add(state)
                room -= len(entries[state]) + 1
        for state in (state for state in NodeState if state in kept):  # shown in display order
            out += [Segment(" ", palette.base), Segment(entries[state], palette.states[state])]
        return self._layout.block_width - room

    def _cells_row(self, names: Sequence[str], palette: _Palette, out: list[Segment]) -> int:
        """One segment per run of same-state cells (fewer segments: faster to build and to composite)."""
        compact = self._layout.compact
        cells, cursor, marks = self._cells, self._cursor, self._marks
        if self._layout.named:  # " ✓ gpu-node-07 ", each padded to the longest name
            room = self._layout.named - NAMED_EXTRA
            for name in names:
                cell = f" {cells[name].state.glyph}{marks.get(name) or ' '}{name.ljust(room)} "
                out.append(Segment(cell, (palette.cursor if name == cursor else palette.states)[cells[name].state]))
            return len(names) * self._layout.cell_width
        for (state, is_cursor, mark), run in groupby(names, key=lambda name: (cells[name].state, name == cursor, marks.get(name))):
            cell = (mark or state.glyph) if compact else f" {state.glyph}{mark or ' '}"
            text = cell * sum(1 for _ in run)
            out.append(Segment(text, (palette.cursor if is_cursor else palette.states)[state]))
        return len(names) * self._layout.cell_width

    # ---- cursor, keys, mouse -------------------------------------------------------------------------

    def _move_to(self, name: str | None, *, scroll: bool = True) -> None:
        if name is None or name == self._cursor:
            return
        old, self._cursor = self._cursor, name
        positions = self._layout.positions
        self._invalidate(positions[n][1] for n in (old, name) if n in positions)
        if scroll and name in positions:
            x, y = positions[name]
            self.scroll_to_region(Region(x, max(0, y - 1), self._layout.cell_width, 2), animate=False)
        self.post_message(self.NodeHighlighted(name, self))

    def action_step(self, delta: int) -> None:
        """Previous/next node in display order (domain, then name)."""
        if self._visible:
            index = self._index.get(self._cursor or "", -delta)
            self._move_to(self._visible[max(0, min(len(self._visible) - 1, index + delta))])

    def action_vertical(self, direction: int) -> None:
        """The cell above/below in the same block column."""
        self._move_to(self._layout.vertical_neighbour(self._cursor, direction) if self._cursor else None)

    def action_jump(self, index: int) -> None:
        """First (0) or last (-1) node."""
        self._move_to(self._visible[index] if self._visible else None)

    def action_select(self) -> None:
        if self._cursor is not None:
            self.post_message(self.NodeSelected(self._cursor, self))

    def _node_under(self, event: events.MouseEvent) -> str | None:
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        return self._layout.node_at(offset.x + self.scroll_offset.x, offset.y + self.scroll_offset.y)

    def on_click(self, event: events.Click) -> None:
        name = self._node_under(event)
        if name is not None:
            self._move_to(name, scroll=False)
            self.post_message(self.NodeSelected(name, self))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Tooltip: name, domain, state and the caller's detail for the node under the mouse."""
        cell = self._cells.get(self._node_under(event) or "")
        if cell is None:
            self.tooltip = None
        else:
            said = self._words.get(cell.name, cell.state.value)
            self.tooltip = f"{cell.name} · {cell.domain} · {cell.state.glyph} {said}\n{cell.detail}".strip()
