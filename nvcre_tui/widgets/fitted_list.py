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

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from nvcre_tui.widgets.detail import shown

ELLIPSIS = "…"
# A count whose noun a cut would leave out ("…, 3 …" of "3 nodes blamed", "failed 3 …" of "failed 3 of 5 tests"): a
# whole number the cut parts from the word after it, and the words that tie on what was cut ("of", "·"); a cut line
# never ends on them. A number that ends its phrase ("round 2 (confirmation)", "GPU 5:") and a measured value ("264.81")
# are kept.
_BARE_COUNT = re.compile(r"[(\[]?\d+")
_TIES = frozenset({"of", "and", "or", "in", "to", "at", "for", "·", "-", "+"})


def without_bare_count(kept: str, rest: str) -> str:
    """`kept` (what a cut keeps of a line) less any trailing count whose noun is in `rest` (what the cut leaves out),
    and the words tying on the cut."""
    words, following = kept.rstrip().split(" "), (rest.split() or [""])[0]
    while len(words) > 1:
        last = words[-1]
        if last in _TIES or (_BARE_COUNT.fullmatch(last) and following[:1].isalpha()):
            following = words.pop()
        else:
            break
    return " ".join(words)


@dataclass(frozen=True)
class Entry:
    """One entry: a glyph and a subject (bold), then its text."""

    glyph: str
    subject: str
    text: str


NO_BREAK = "\u00a0"  # a space no line breaks at: a glyph glued to the name after it (FittedTable's glyph columns)


class _Wrapper(textwrap.TextWrapper):
    """Wraps after a "/" too: a catalog key too long for the rest of a line ends it as "communication/", never
    broken inside a word ("communication/ncc" / "l-all-reduce", as a review saw on the wall). Never at NO_BREAK.

    Widths are terminal cells (rich's `cell_len`), not characters: textwrap's `len` let a CJK or other wide word
    take twice the columns it was given (a node's reason in Japanese ran past its table column)."""

    wordsep_simple_re = re.compile(r"([^\S\u00a0]+|(?<=/)(?=[^\s/]))")

    def _wrap_chunks(self, chunks: list[str]) -> list[str]:
        """textwrap's greedy fill, measured in cells (no max_lines or placeholder: the console cuts lines itself)."""
        lines: list[str] = []
        chunks.reverse()
        while chunks:
            indent = self.subsequent_indent if lines else self.initial_indent
            width = self.width - cell_len(indent)
            if chunks[-1].strip() == "" and lines:  # a line never starts with the space it broke at
                del chunks[-1]
            line: list[str] = []
            used = 0
            while chunks and used + (size := cell_len(chunks[-1])) <= width:
                line.append(chunks.pop())
                used += size
            if chunks and cell_len(chunks[-1]) > width:  # longer than a whole line: broken, as nothing else fits
                room = max(1, width - used)
                head, tail = _cells_head(chunks[-1], room)
                if head:
                    line.append(head)
                    chunks[-1] = tail
                elif not line:  # not even one character fits: it takes the line alone
                    line.append(chunks.pop())
            if line and line[-1].strip() == "":
                del line[-1]
            if line:
                lines.append(indent + "".join(line))
        return lines


def _cells_head(word: str, cells: int) -> tuple[str, str]:
    """`word` split after the most characters that take at most `cells` cells (never half a wide character)."""
    used = 0
    for index, character in enumerate(word):
        used += cell_len(character)
        if used > cells:
            return word[:index], word[index:]
    return word, ""


def wrapped(text: str, width: int, indent: str = "") -> list[str]:
    """`text` wrapped to `width` columns at the words `cut_at_word` breaks at, in as many lines as it takes."""
    return _Wrapper(width, subsequent_indent=indent, break_on_hyphens=False).wrap(text) or [""]


def longest_word(text: str) -> int:
    """The width of `text`'s longest word, as `wrapped` splits it: the narrowest line that breaks no word."""
    return max((cell_len(word) for word in _Wrapper.wordsep_simple_re.split(text) if word and not word.isspace()), default=0)


def cut_at_word(text: str, width: int, lines: int, indent: str = "") -> list[str]:
    """`text` wrapped to `width` columns in at most `lines` lines (the second and later after `indent`); when more
    would be needed, the last line ends at a word boundary with "…" (a word longer than a whole line is broken, as
    nothing else fits)."""
    if width <= cell_len(indent) or lines < 1:
        return []
    wrapped_lines = wrapped(text, width, indent)
    if len(wrapped_lines) <= lines:
        return wrapped_lines
    kept, last = wrapped_lines[: lines - 1], wrapped_lines[lines - 1]
    while last.strip() and cell_len(last) + cell_len(ELLIPSIS) + 1 > width:
        last = last.rpartition(" ")[0]  # drop whole words until "…" fits after the line
    if last.strip():  # "…, 3 nodes" never cut to "…, 3 …"
        line = wrapped_lines[lines - 1]
        last = without_bare_count(last, line[len(last):] + " " + " ".join(wrapped_lines[lines:]))
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


def fit_roomiest(entries: Sequence[Entry], width: int, height: int, lines_per_entry: int, most: int) -> tuple[list[list[str]], int]:
    """`fit` with the lines the short entries leave given to the long ones: as many lines per entry as `most`, while
    that leaves out no more entries than `lines_per_entry` does (an even share of the height cut a suspect's line at
    "failed …" with lines of the pane left blank under it)."""
    best = fit(entries, width, height, lines_per_entry)
    for lines in range(lines_per_entry + 1, most + 1):
        roomier = fit(entries, width, height, lines)
        if roomier[1] > best[1] or roomier == best:  # fewer shown, or none was cut: more lines change nothing
            break
        best = roomier
    return best


class FittedList(Widget):
    """A title line, then `Entry`s fitted to what remains of the height (`fit`); redrawn on resize."""

    DEFAULT_CSS = "FittedList { height: 1fr; }"
    # Lines per entry: an even share of the height within these, then what the short ones leave to the long (fit_roomiest)
    MIN_LINES, MAX_LINES = 3, 8

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
        lines, left_out = fit_roomiest(self.entries, width, height - 1, per_entry, self.MAX_LINES)
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
