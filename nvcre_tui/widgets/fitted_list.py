"""A titled list of entries fitted to the widget's size: each entry wrapped at word boundaries to a few lines (the
last cut at a word with "…", never mid-number), as many entries as the height holds, and "+N more" kept in sight
when some are left out. The wall's failures.

Its word wrapping (`wrapped`, `cut_at_word`) is the console's one: the fitted tables and the compose screen's
category list wrap with it too."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from nvcre_tui.widgets.detail import shown

ELLIPSIS = "…"


@dataclass(frozen=True)
class Entry:
    """One entry: a glyph and a subject (bold), then its text."""

    glyph: str
    subject: str
    text: str


NO_BREAK = "\u00a0"  # a space no line breaks at: a glyph glued to the name after it (FittedTable's glyph columns)


class _Wrapper(textwrap.TextWrapper):
    """Wraps after a "/" too: a catalog key too long for the rest of a line ends it as "communication/", never
    broken inside a word ("communication/ncc" / "l-all-reduce", as a review saw on the wall). Never at NO_BREAK."""

    wordsep_simple_re = re.compile(r"([^\S\u00a0]+|(?<=/)(?=[^\s/]))")


def wrapped(text: str, width: int, indent: str = "") -> list[str]:
    """`text` wrapped to `width` columns at the words `cut_at_word` breaks at, in as many lines as it takes."""
    return _Wrapper(width, subsequent_indent=indent, break_on_hyphens=False).wrap(text) or [""]


def longest_word(text: str) -> int:
    """The width of `text`'s longest word, as `wrapped` splits it: the narrowest line that breaks no word."""
    return max((len(word) for word in _Wrapper.wordsep_simple_re.split(text) if word and not word.isspace()), default=0)


def cut_at_word(text: str, width: int, lines: int, indent: str = "") -> list[str]:
    """`text` wrapped to `width` columns in at most `lines` lines (the second and later after `indent`); when more
    would be needed, the last line ends at a word boundary with "…" (a word longer than a whole line is broken, as
    nothing else fits)."""
    if width <= len(indent) or lines < 1:
        return []
    wrapped_lines = wrapped(text, width, indent)
    if len(wrapped_lines) <= lines:
        return wrapped_lines
    kept, last = wrapped_lines[: lines - 1], wrapped_lines[lines - 1]
    while last.strip() and len(last) + len(ELLIPSIS) + 1 > width:
        last = last.rpartition(" ")[0]  # drop whole words until "…" fits after the line
    start = indent if kept else ""
    return [*kept, f"{last} {ELLIPSIS}" if last.strip() else start + ELLIPSIS]


def fit(entries: Sequence[Entry], width: int, height: int, lines_per_entry: int) -> tuple[list[list[str]], int]:
    """(each shown entry's lines, how many are left out): entries in order while they fit in `height` lines, one line
    kept for "+N more" when not all of them fit."""
    shown_entries: list[list[str]] = []
    used = 0
    for index, entry in enumerate(entries):
        lines = cut_at_word(f"{entry.glyph} {entry.subject}  {entry.text}".rstrip(), width, lines_per_entry, indent="  ")
        more = 1 if index + 1 < len(entries) else 0  # the "+N more" line, needed unless this is the last entry
        if used + len(lines) + more > height:
            break
        shown_entries.append(lines)
        used += len(lines)
    return shown_entries, len(entries) - len(shown_entries)


class FittedList(Widget):
    """A title line, then `Entry`s fitted to what remains of the height (`fit`); redrawn on resize."""

    DEFAULT_CSS = "FittedList { height: 1fr; }"
    MIN_LINES, MAX_LINES = 3, 8  # lines per entry: few entries get the room to say their measured value in full

    def __init__(self, title: str, *, id: str | None = None) -> None:  # noqa: A002 - Textual's keyword
        super().__init__(id=id)
        self.title = title
        self.entries: tuple[Entry, ...] = ()

    def set_entries(self, entries: Sequence[Entry]) -> None:
        """Show these entries (their text is object text: control characters are neutralised here)."""
        cleaned = tuple(Entry(entry.glyph, shown(entry.subject), shown(entry.text)) for entry in entries)
        if cleaned != self.entries:
            self.entries = cleaned
            self.refresh()

    def render(self) -> Text:
        width, height = self.content_size.width, self.content_size.height
        text = Text(no_wrap=True, overflow="crop")  # lines fitted here: never wrapped again
        text.append(self.title, style="bold")
        per_entry = max(self.MIN_LINES, min(self.MAX_LINES, (height - 1) // max(1, len(self.entries))))
        lines, left_out = fit(self.entries, width, height - 1, per_entry)
        for entry in lines:
            subject = len(entry[0].partition("  ")[0])  # the glyph and subject of the first line, bold
            text.append("\n")
            text.append(entry[0][:subject], style="bold")
            text.append(entry[0][subject:])
            for line in entry[1:]:
                text.append(f"\n{line}")
        if left_out and height > 1:  # `fit` kept its line
            text.append(f"\n+{left_out} more", style="bold")
        return text
