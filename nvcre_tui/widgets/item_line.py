"""A line of short items ("✗ 1 failed", "◦ 32 untested") that wraps between items, never inside one: Textual
wraps at any space, so an item's glyph could end one line and its count and word begin the next."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.widgets import Static

GAP = "   "


def pack(items: Sequence[Text], width: int, gap: str = GAP) -> Text:
    """The items joined by `gap`, a line break before each item that would not fit on the line it follows (an item
    wider than `width` gets a line of its own and is cut there)."""
    packed = Text(no_wrap=True, overflow="ellipsis")
    used = 0
    for item in items:
        size = item.cell_len
        if used and used + len(gap) + size > width:
            packed.append("\n")
            used = 0
        elif used:
            packed.append(gap)
            used += len(gap)
        packed.append_text(item)
        used += size
    return packed


class ItemLine(Static):
    """Static text of items, packed again whenever its width changes."""

    DEFAULT_CSS = "ItemLine { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, markup=False)
        self._items: list[Text] = []
        self._gap = GAP

    def set_items(self, items: Sequence[Text], gap: str = GAP) -> None:
        """Show these items (packed to the current width; a width not known yet packs them on one line), `gap` between
        them (a sentence given word by word: " ")."""
        self._items, self._gap = list(items), gap
        self.update(pack(self._items, self.size.width or 10_000, gap))

    def on_resize(self, event: events.Resize) -> None:
        self.update(pack(self._items, self.size.width, self._gap))
