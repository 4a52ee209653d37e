"""Legend: every node state's glyph and name in its colour (colour is never the only signal), on one line where it
fits, else wrapped between entries, never inside one."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from nvcre_tui.widgets.item_line import pack
from nvcre_tui.widgets.node_state import NodeState, state_component_classes, state_component_css

_PREFIX = "legend"
_GAP = "  "


class Legend(Widget):
    """`✗ failed  ! suspect  ...` in state order, each entry coloured by its `$verdict-<state>` variable."""

    COMPONENT_CLASSES = state_component_classes(_PREFIX)
    DEFAULT_CSS = "Legend { height: auto; width: 1fr; }\n" + state_component_css("Legend", _PREFIX)

    def _entries(self) -> list[Text]:
        return [Text(f"{state.glyph} {state.value}", self.get_component_rich_style(f"{_PREFIX}--{state.value}"))
                for state in NodeState]

    def render(self) -> Text:
        return pack(self._entries(), self.size.width or 10_000, _GAP)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return pack(self._entries(), width, _GAP).plain.count("\n") + 1
