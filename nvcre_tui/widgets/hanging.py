"""Detail text wrapped with hanging indents, in a Static: a `label` line's value (detail.label) wraps under the value,
another line under its first word after its own indent plus two ("  ✗ r0-screen-1 ..." continues at column 4).
Wrapped by a plain Static, a long Verdict or Why went on at the pane's left edge, under the keys, and read as a line of
its own (the drill-down's and the node screen's detail on 80 columns)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.style import Style
from rich.text import Text
from textual.app import RenderResult as TextualRenderResult
from textual.widgets import Static

MIN_ROOM = 30  # the fewest columns a wrapped line keeps after its hanging indent: in a narrow pane, 2 columns' indent


class Hanging:
    """`text` wrapped by `hanging` at the width it is rendered at; str(): the text as written."""

    def __init__(self, text: Text, label_indent: int | None = None) -> None:
        self.text = text
        self.label_indent = label_indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield hanging(self.text, options.max_width, self.label_indent)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)

    def __str__(self) -> str:
        return self.text.plain


def hanging(text: Text, width: int, label_indent: int | None = None) -> Text:
    """`text` with every line longer than `width` cells broken at spaces (or after a "/", a "-" between letters), its
    later lines indented (see the module); a word longer than a line is broken where the line ends. `label_indent`: a
    label's value wraps there instead (a pane a few lines high, where the value's column would cost it lines)."""
    out = Text(justify="left", no_wrap=True, overflow="fold", end="")
    lines = text.split("\n", allow_blank=True)
    for number, line in enumerate(lines):
        plain = line.plain
        hang = next((int(span.style.meta["hang"]) for span in line.spans
                     if span.start == 0 and isinstance(span.style, Style) and "hang" in span.style.meta), None)
        lead = len(plain) - len(plain.lstrip(" "))
        indent = (hang if label_indent is None else label_indent) if hang is not None else lead + 2
        longest = max((cell_len(word) for word in plain[max(hang or 0, lead):].split()), default=0)
        if width - indent < max(MIN_ROOM, longest):  # a narrow pane (or a long word): the value's lines keep their room
            indent = min(indent, lead + 2)
        for index, (start, end) in enumerate(_pieces(plain, width, indent, max(hang or 0, lead))):
            if index:
                out.append("\n" + " " * indent)
            out.append_text(line[start:end])
        if number + 1 < len(lines):
            out.append("\n")
    return out


def _pieces(plain: str, width: int, indent: int, keep: int) -> list[tuple[int, int]]:
    """(start, end) of each line `plain` wraps into: `width` cells the first, `width - indent` the others; broken at a
    space or after a "/", else after a "-" between letters (a catalog key too long for the rest of a line was cut
    mid-word, "communication/nccl-all-r" over "educe" in a 120-column drill-down's detail), never before `keep` (a
    label's padding, a line's own indent)."""
    pieces: list[tuple[int, int]] = []
    start, room = 0, max(1, width)
    while True:
        if cell_len(plain[start:]) <= room:
            pieces.append((start, len(plain)))
            return pieces
        used, cut, hyphen, index = 0, None, None, start
        for index in range(start, len(plain)):
            used += cell_len(plain[index])
            if used > room:
                break
            if index > max(start, keep if not pieces else start):
                if plain[index] == " " or (plain[index] == "/" and not _in_unit(plain, index)):
                    cut = index + (plain[index] == "/")  # after a "/": a catalog key ends its line "communication/"
                elif _joins_words(plain, index):
                    hyphen = index + 1  # only where no space or "/" is left: "nccl-all-" never before "communication/"
        cut = cut if cut is not None else hyphen
        end = cut if cut is not None else max(index, start + 1)
        pieces.append((start, end))
        start = end
        while start < len(plain) and plain[start] == " ":
            start += 1
        if start >= len(plain):
            return pieces
        room = max(1, width - indent)


def _in_unit(plain: str, index: int) -> bool:
    """A "/" inside a unit ("GB/s", "TFLOP/s"): a word of one or two letters follows it. A line never ends there
    ("264.81 GB/" over "s")."""
    rest = plain[index + 1 : index + 4]
    letters = len(rest) - len(rest.lstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    return 0 < letters <= 2 and (index + 1 + letters == len(plain) or not plain[index + 1 + letters].isalnum())


def _joins_words(plain: str, index: int) -> bool:
    """A "-" between two letters (a Workflow's name, "nccl-all-reduce"): a line may end after it. Never one beside a
    digit: "185.22-185.99" and "-3" stay whole."""
    return plain[index] == "-" and 0 < index < len(plain) - 1 and plain[index - 1].isalpha() and plain[index + 1].isalpha()


class HangingStatic(Static):
    """A Static showing detail Text with hanging indents (`show`); str(render()) is the text as written."""

    def __init__(self, *, id: str | None = None, label_indent: int | None = None) -> None:  # noqa: A002 - Textual's keyword
        super().__init__(id=id)
        self.label_indent = label_indent

    def show(self, text: Text) -> None:
        self.update(Hanging(text, self.label_indent))

    def render(self) -> TextualRenderResult:
        content = self.content
        return content if isinstance(content, Hanging) else self.visual
