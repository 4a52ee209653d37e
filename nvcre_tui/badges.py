"""The header's badges fitted to the room the header leaves them: what is long is cut (a context or server name in its
middle, a warning at its end), what must be seen never is (the read-only mark, the namespace).

At 80 columns a cluster's header read `nvcre console — 🔒 READ-ONLY  👁 viewer: engine held by nvcre-controller-7f9c…`:
the context name, the namespace the console shows and creates in, and whatever followed were cut off by the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from rich.cells import cell_len

GAP = "  "  # between badges
SIM_TIME_SAID = "sim time"  # beside times on a simulated clock (the header's title, a log's span): they are no real dates


class Cut(Enum):
    """How a piece of a badge gives up room."""

    NEVER = "never"    # the read-only mark, a namespace, the words around a name
    MIDDLE = "middle"  # a name: its start and its end around "…" (names of one fleet differ at either)
    END = "end"        # a sentence: its start, then "…"


@dataclass(frozen=True)
class Piece:
    """Part of a badge, cut (`cut`) in steps: first to `least` cells at rank `first`, then to `floor` cells at rank
    `floor_first` (None: no second step). Steps of a lower rank are taken first, and a badge is left out only after
    every cut ranked before it (Badge.drop)."""

    text: str
    cut: Cut = Cut.NEVER
    least: int = 0
    first: int = 0
    floor: int | None = None
    floor_first: int = 0


@dataclass(frozen=True)
class Badge:
    """One badge: its pieces, said together. `drop`: the rank at which it is left out whole where cuts are not enough
    (None: never)."""

    pieces: tuple[Piece, ...]
    drop: int | None = None

    @property
    def text(self) -> str:
        return "".join(piece.text for piece in self.pieces)


def cut_middle(text: str, width: int) -> str:
    """`text` whole when it fits `width` cells, else its start and its end around "…": certifications of one burn-in
    often differ at their end ("rack-12-burn-in-r1", "-r2"), which a cut at the end would hide."""
    if cell_len(text) <= width:
        return text
    if width <= 0:  # a name with its separator, gone
        return ""
    keep = width - 1  # the cells beside "…" (none in one cell: a character kept there made it two, past `width`)
    head_cells, tail_cells = (keep + 1) // 2, keep // 2
    head, used = "", 0
    for character in text:
        if used + cell_len(character) > head_cells:
            break
        head, used = head + character, used + cell_len(character)
    tail, used = "", 0
    for character in reversed(text):
        if used + cell_len(character) > tail_cells:
            break
        tail, used = character + tail, used + cell_len(character)
    return f"{head}…{tail}"


def cut_end(text: str, width: int) -> str:
    """`text` whole when it fits `width` cells, else as much of its start as fits before "…"."""
    if cell_len(text) <= width:
        return text
    if width <= 0:
        return ""
    kept, used = "", 0
    for character in text:
        if used + cell_len(character) > width - 1:
            break
        kept, used = kept + character, used + cell_len(character)
    return f"{kept.rstrip()}…"


def _said(badges: Sequence[Badge]) -> str:
    return GAP.join(badge.text for badge in badges)


def fitted(badges: Sequence[Badge], width: int) -> str:
    """The badges in `width` cells where they can be: whole when they fit; else cut in the order of their steps' ranks
    (Piece), each cut only as far as the room needs; a badge that may go (Badge.drop) goes only when every cut ranked
    before it is not enough, and then the others are cut from whole again (they keep the room it left). What never cuts
    is always said: on a terminal narrower still the header cuts its end."""
    drops = sorted((badge.drop, index) for index, badge in enumerate(badges) if badge.drop is not None)
    steps = sorted([(piece.first, b, p, piece.least) for b, badge in enumerate(badges) for p, piece in enumerate(badge.pieces)
                    if piece.cut is not Cut.NEVER]
                   + [(piece.floor_first, b, p, piece.floor) for b, badge in enumerate(badges) for p, piece in enumerate(badge.pieces)
                      if piece.cut is not Cut.NEVER and piece.floor is not None])
    said = _said(badges)
    for gone in range(len(drops) + 1):
        before = drops[gone][0] if gone < len(drops) else None  # the cuts ranked before the next badge that may go
        left = {index for _, index in drops[:gone]}
        said, excess = _cut(badges, left, [step for step in steps if before is None or step[0] < before], width)
        if excess <= 0:
            break
    return said


def _cut(badges: Sequence[Badge], left: set[int], steps: Sequence[tuple[int, int, int, int]], width: int) -> tuple[str, int]:
    """The badges but those `left` out, cut by `steps` ((rank, badge, piece, cells), in order) as far as `width` needs;
    with the cells still over it."""
    texts = {(b, p): piece.text for b, badge in enumerate(badges) for p, piece in enumerate(badge.pieces)}
    shown = [b for b in range(len(badges)) if b not in left]

    def said() -> str:
        return GAP.join("".join(texts[b, p] for p in range(len(badges[b].pieces))) for b in shown)

    excess = cell_len(said()) - width
    for _, b, p, cells in steps:
        if excess <= 0:
            break
        if b in left:
            continue
        text = texts[b, p]
        cut = (cut_middle if badges[b].pieces[p].cut is Cut.MIDDLE else cut_end)(text, max(cells, cell_len(text) - excess))
        excess -= cell_len(text) - cell_len(cut)
        texts[b, p] = cut
    return said(), excess
