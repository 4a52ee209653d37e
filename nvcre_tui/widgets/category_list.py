"""The compose screen's category checklist: a SelectionList whose check mark is a glyph, not a colour.

Textual draws `▐X▌` on every row and tells checked from unchecked by colour alone; a monochrome
terminal, a screen reader's text or a colour-blind operator sees every category ticked. Here an
unchecked row draws `▐ ▌` (colours unchanged), so the state survives a plain-text capture."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import SelectionList
from textual.widgets._toggle_button import ToggleButton  # the mark SelectionList draws (no public name)
from textual.widgets.option_list import OptionDoesNotExist

UNCHECKED = " "


class CategoryList(SelectionList[str]):
    """SelectionList with an empty box on unchecked rows."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        try:
            value = self.get_option_at_index(self.scroll_offset.y + y).value
        except OptionDoesNotExist:  # past the last option: a blank line
            return strip
        if value in self.selected or len(segments) < 3 or segments[1].text != ToggleButton.BUTTON_INNER:
            return strip
        segments[1] = Segment(UNCHECKED * len(ToggleButton.BUTTON_INNER), segments[1].style, segments[1].control)
        return Strip(segments, strip.cell_length)
