"""Legend: every node state's glyph and name in its colour, on one line (colour is never the only signal)."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from nvcre_tui.widgets.node_state import NodeState, state_component_classes, state_component_css

_PREFIX = "legend"


class Legend(Widget):
    """`✓ passed  ✗ failed  ...` in state order, each entry coloured by its `$verdict-<state>` variable."""

    COMPONENT_CLASSES = state_component_classes(_PREFIX)
    DEFAULT_CSS = "Legend { height: 1; width: 1fr; }\n" + state_component_css("Legend", _PREFIX)

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for state in NodeState:
            if text:
                text.append("  ")
            text.append(f"{state.glyph} {state.value}", self.get_component_rich_style(f"{_PREFIX}--{state.value}"))
        return text
