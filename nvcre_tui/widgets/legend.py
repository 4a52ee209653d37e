"""Legend: every node state's glyph and name in its colour (colour is never the only signal), on one line where it
fits, else wrapped between entries, never inside one. States a screen names with their glyphs elsewhere (`spared`:
the wall's tally line says "0 ◷ waiting + 0 ◦ untested + 0 ⊘ excluded") are left out where the whole legend would
wrap: on 80 columns "⊘ excluded" took a line of its own, a line the wall's failures list lost."""

from __future__ import annotations

from rich.text import Text
from collections.abc import Iterable, Mapping

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

    def __init__(self, *, spared: Iterable[NodeState] = (), id: str | None = None) -> None:  # noqa: A002 - Textual's keyword
        super().__init__(id=id)
        self._spared = frozenset(spared)
        self._words: dict[NodeState, str] = {}

    def set_words(self, words: Mapping[NodeState, str]) -> None:
        """Say these states in these words (the others by their name): ! is `under suspicion` while the map draws a
        running diagnosis's narrowing set with it, as the dashboard and the wall call it."""
        wanted = {state: word for state, word in words.items() if word != state.value}
        if wanted != self._words:
            self._words = wanted
            self.refresh(layout=True)  # a longer word may wrap the line

    def _entries(self, width: int) -> list[Text]:
        entries = [(state, Text(f"{state.glyph} {self._words.get(state, state.value)}", self.get_component_rich_style(f"{_PREFIX}--{state.value}")))
                   for state in NodeState]
        if "\n" in pack([text for _, text in entries], width, _GAP).plain:
            entries = [(state, text) for state, text in entries if state not in self._spared]
        return [text for _, text in entries]

    def _packed(self, width: int) -> Text:
        return pack(self._entries(width), width, _GAP)

    def render(self) -> Text:
        return self._packed(self.size.width or 10_000)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._packed(width).plain.count("\n") + 1
