"""Pure geometry of the rack map: node filter, block layout and cursor navigation (no Textual).

Groups are drawn as blocks: a header line (domain + counts) over rows of cells. Blocks sit side by side
in as many columns as the width allows, so 32 racks x 32 nodes fit 200x50 with 3-column cells.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from nvcre_tui.engine.names import natural_key as natural_key  # the map's order; engine/names.py holds it
from nvcre_tui.widgets.node_state import NodeState

GAP = 2  # columns between blocks
MIN_BLOCK_WIDTH = 20  # so a header keeps its domain name and the most urgent counts over a small group
CELL_WIDTH: dict[bool, int] = {False: 3, True: 1}  # compact? -> columns per cell
_STATE_NAMES = frozenset(state.value for state in NodeState)


@dataclass(frozen=True)
class NodeFilter:
    """Which nodes a map shows: a name pattern (optionally inverted) and states to hide."""

    pattern: re.Pattern[str] | None = None
    invert: bool = False
    hidden_states: frozenset[NodeState] = frozenset()

    def shows(self, name: str, state: NodeState) -> bool:
        if state in self.hidden_states:
            return False
        return self.pattern is None or bool(self.pattern.search(name)) != self.invert


def parse_filter(text: str) -> NodeFilter:
    """`gpu-a1` regex on names (case-insensitive); `!passed` or `!passed,excluded` hides states;
    any other `!regex` hides matching names. An invalid regex matches literally; never an error."""
    text = text.strip()
    invert = text.startswith("!")
    body = text[1:].strip() if invert else text
    if not body:
        return NodeFilter()
    tokens = [token.strip().lower() for token in body.split(",")]
    if invert and all(token in _STATE_NAMES for token in tokens):
        return NodeFilter(hidden_states=frozenset(NodeState(token) for token in tokens))
    try:
        pattern = re.compile(body, re.IGNORECASE)
    except re.error:
        pattern = re.compile(re.escape(body), re.IGNORECASE)
    return NodeFilter(pattern=pattern, invert=invert)


@dataclass(eq=False)
class Group:
    """One domain: all its node names (sorted), counts by state, and the names the filter shows."""

    domain: str
    names: list[str]
    counts: Counter[NodeState]
    visible: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Span:
    """A group's piece of one line: its header (row -1) or its cell row `row`, starting at column x."""

    x: int
    group: Group
    row: int


@dataclass(frozen=True)
class Plan:
    per_row: int
    block_width: int
    columns: int
    height: int


def plan_blocks(sizes: Sequence[int], width: int, cell_width: int, budget: int) -> Plan:
    """How many cells per block row. Among plans that fit `budget` lines: the fewest rows for the largest
    group, spread evenly (32 nodes in 2 rows -> 16 per row, not 23 + 9); if none fits, the fewest lines."""
    largest = max(sizes, default=1)
    plans = [_plan(sizes, width, cell_width, cells) for cells in range(1, max(1, min(largest, width // cell_width)) + 1)]
    fitting = [plan for plan in plans if plan.height <= budget]
    if fitting:
        return min(fitting, key=lambda plan: (-(-largest // plan.per_row), plan.per_row))
    return min(plans, key=lambda plan: (plan.height, -plan.per_row))


def _plan(sizes: Sequence[int], width: int, cell_width: int, cells: int) -> Plan:
    block = min(width, max(cells * cell_width, MIN_BLOCK_WIDTH))
    per_row = max(1, block // cell_width)
    columns = max(1, (width + GAP) // (block + GAP))
    height = sum(1 - (-max(sizes[i : i + columns]) // per_row) for i in range(0, len(sizes), columns))
    return Plan(per_row, block, columns, height)


@dataclass(frozen=True)
class Layout:
    """Where every visible node and header sits, in virtual (scrollable) coordinates."""

    compact: bool
    width: int
    per_row: int
    block_width: int
    lines: list[list[Span]]
    positions: dict[str, tuple[int, int]]
    header_y: dict[str, int]
    named: int = 0  # the width of a cell that names its node (0: glyph cells)

    @property
    def height(self) -> int:
        return len(self.lines)

    @property
    def cell_width(self) -> int:
        return self.named or CELL_WIDTH[self.compact]

    def row_names(self, span: Span) -> list[str]:
        start = span.row * self.per_row
        return span.group.visible[start : start + self.per_row]

    def node_at(self, x: int, y: int) -> str | None:
        """The node drawn at virtual column x, line y (None for headers, gaps and blank space)."""
        if not 0 <= y < len(self.lines):
            return None
        for span in self.lines[y]:
            if span.row >= 0 and span.x <= x < span.x + self.per_row * self.cell_width:
                names = self.row_names(span)
                index = (x - span.x) // self.cell_width
                return names[index] if index < len(names) else None
        return None

    def vertical_neighbour(self, name: str, direction: int) -> str | None:
        """The cell above/below `name` in the same block column, skipping headers; None at the edge."""
        if name not in self.positions:
            return None
        x, y = self.positions[name]
        band = self.block_width + GAP
        block_x = x // band * band
        line = y + direction
        while 0 <= line < len(self.lines):
            for span in self.lines[line]:
                if span.x == block_x and span.row >= 0:
                    names = self.row_names(span)
                    return names[min(len(names) - 1, (x - block_x) // self.cell_width)]
            line += direction
        return None


def build_layout(groups: Sequence[Group], width: int, height: int, *, compact: bool | None, scrollbar: int = 1, named: int = 0) -> Layout:
    """Lay out the groups' visible nodes in `width` x `height`; compact=None picks 1-column cells only
    when 3-column cells would not fit the height, and with `named` (the width of a cell that names its node) those
    first where they fit without scrolling (a wall's room: 32 glyphs on 2 lines of 60 said nothing across it). A
    vertical scrollbar's columns are given up only when the map has to scroll."""
    sizes = [len(group.visible) for group in groups]
    named = named if compact is None and named > 0 and width > 0 and groups and plan_blocks(sizes, width, named, height).height <= height else 0
    if compact is None:
        compact = not named and width > 0 and plan_blocks(sizes, width, CELL_WIDTH[False], height).height > height
    if width <= 0 or not groups:
        return Layout(compact, 0, 1, MIN_BLOCK_WIDTH, [], {}, {})
    cell_width = named or CELL_WIDTH[compact]
    plan = plan_blocks(sizes, width, cell_width, height)
    if plan.height > height and width - scrollbar >= cell_width:
        width -= scrollbar
        plan = plan_blocks(sizes, width, cell_width, height)
    lines: list[list[Span]] = []
    positions: dict[str, tuple[int, int]] = {}
    header_y: dict[str, int] = {}
    for first in range(0, len(groups), plan.columns):
        block_row = groups[first : first + plan.columns]
        top = len(lines)
        lines.extend([] for _ in range(plan_rows(block_row, plan.per_row) + 1))
        for column, group in enumerate(block_row):
            x = column * (plan.block_width + GAP)
            header_y[group.domain] = top
            lines[top].append(Span(x, group, -1))
            for row in range(-(-len(group.visible) // plan.per_row)):
                lines[top + 1 + row].append(Span(x, group, row))
            for i, name in enumerate(group.visible):
                positions[name] = (x + (i % plan.per_row) * cell_width, top + 1 + i // plan.per_row)
    used_width = min(width, plan.columns * (plan.block_width + GAP) - GAP)
    return Layout(compact, used_width, plan.per_row, plan.block_width, lines, positions, header_y, named)


def plan_rows(groups: Sequence[Group], per_row: int) -> int:
    """Cell rows the tallest group of a block row needs."""
    return max(-(-len(group.visible) // per_row) for group in groups)
