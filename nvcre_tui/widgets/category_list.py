"""The compose screen's category checklist: a SelectionList whose check mark is a glyph, not a colour, and whose
entries wrap rather than cut a category's title.

Textual draws `▐X▌` on every row and tells checked from unchecked by colour alone; a monochrome
terminal, a screen reader's text or a colour-blind operator sees every category ticked. Here an
unchecked row draws `▐ ▌` (colours unchanged), so the state survives a plain-text capture.

SelectionList cuts each entry to one line: on 80 columns the titles were cut to a word or two and the longest key to
"communication/nccl-loopback-nvswi…"; on 120, "NCCL loopback over NV…". Here each entry is wrapped to the width, as
the wall wraps (`wrapped`: at words, and after a key's "/"), again when the width changes. SelectionList takes screen
line y for entry y (Textual #5326), so a wrapped entry's second line would draw the next entry's box: each line is
drawn from OptionList's own map of lines, the box on an entry's first line, blank under it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.content import Content
from textual.strip import Strip
from textual.widgets import OptionList, SelectionList
from textual.widgets._toggle_button import ToggleButton  # the mark SelectionList draws (no public name)
from textual.widgets.selection_list import Selection

from nvcre_tui.widgets.fitted_list import wrapped

UNCHECKED = " "
BOX = ToggleButton.BUTTON_LEFT + ToggleButton.BUTTON_INNER + ToggleButton.BUTTON_RIGHT + " "  # drawn left of an entry's first line


def entry_prompt(key: str, title: str, width: int = 0) -> Content:
    """The entry's key (bold) and title (muted) on one line when they fit `width` columns (0: always), else the key,
    then the title under it, each wrapped at words (a title begun beside its key and ended under it read as two)."""
    title = " ".join(title.split())
    if width <= 0 or len(key) + 2 + len(title) <= width:
        return Content.assemble((key, "bold"), (f"  {title}", "$text-muted"))
    parts: list[str | tuple[str, str]] = []
    for number, line in enumerate(wrapped(key, width)):
        parts += ["\n"] if number else []
        parts.append((line, "bold"))
    for line in wrapped(title, width):
        parts += ["\n", (line, "$text-muted")]
    return Content.assemble(*parts)


class CategoryList(SelectionList[str]):
    """A checklist of catalog entries, (key, title) each: an empty box on unchecked rows, entries wrapped to the width."""

    def __init__(self, entries: Sequence[tuple[str, str]], *, id: str | None = None) -> None:  # noqa: A002 - Textual's keyword
        self.entries = tuple(entries)
        self._wrapped_to = 0  # the width the entries were last wrapped to
        super().__init__(*(Selection(entry_prompt(key, title), key) for key, title in self.entries), compact=True, id=id)

    def on_resize(self, event: events.Resize) -> None:
        width = self.size.width - self.styles.scrollbar_size_vertical - len(BOX)  # the scrollbar's room kept: wrapping may need it
        if width == self._wrapped_to:  # only the height changed
            return
        self._wrapped_to = width
        for index, (key, title) in enumerate(self.entries):
            self.replace_option_prompt_at_index(index, entry_prompt(key, title, width))
        self.refresh(layout=True)  # a height of its entries' lines

    def render_line(self, y: int) -> Strip:
        prompt = OptionList.render_line(self, y)  # the entry's line; SelectionList's own would misplace the box
        try:
            index, line_in_entry = self._lines[self.scroll_offset.y + y]
        except IndexError:  # past the last entry: a blank line
            return prompt
        underlying = next(iter(prompt)).style or self.rich_style
        here = Style(meta={"option": index})  # a click on the box or under it toggles the entry, as on its text
        if line_in_entry:
            return Strip([Segment(" " * len(BOX), underlying + here), *prompt])
        checked = self.get_option_at_index(index).value in self.selected
        # SelectionList's colours for the box, as it draws them.
        component = "selection-list--button" + ("-selected" if checked else "") + ("-highlighted" if self.highlighted == index else "")
        button = self.get_component_rich_style(component) + here
        side = Style.from_color(button.bgcolor, underlying.bgcolor) + here
        inner = ToggleButton.BUTTON_INNER if checked else UNCHECKED * len(ToggleButton.BUTTON_INNER)
        return Strip([Segment(ToggleButton.BUTTON_LEFT, side), Segment(inner, button), Segment(ToggleButton.BUTTON_RIGHT, side),
                      Segment(" ", underlying), *prompt])
