"""A Tree whose labels end at its width with "…" after their last whole word, never cut mid-word at the edge: on 80
columns the drill-down's category line read "⋯ communication/nccl-all-reduce  diagnosing: 2 suspects · round 3
(confirmat" and a waiting category's "WaitingForNodes: waits for an earlier category on the". The detail pane says
the whole of what a line leaves out; the tree never scrolls sideways."""

from __future__ import annotations

from typing import TypeVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from nvcre_tui.widgets.fitted_list import ELLIPSIS, without_bare_count

Data = TypeVar("Data")
# A node whose data is a dict may offer shorter wordings of its label under this key (a sequence of str, longest
# first): where the label does not fit, the first that fits whole is shown before a cut ("…") is made.
SHORTER = "shorter labels"
MIN_KEPT = 12  # the fewest cells a label keeps before its "…" (a deep line in a narrow tree is cut at the edge instead)


def fitted_label(text: Text, room: int) -> Text:
    """`text` whole when it fits `room` cells, else up to its last whole word that leaves room for " …"."""
    if text.cell_len <= room or room < MIN_KEPT:
        return text
    plain = text.plain
    used, end = 0, 0
    for index, character in enumerate(plain):
        used += cell_len(character)
        if used + cell_len(ELLIPSIS) + 1 > room:
            break
        if character == " " and plain[:index].strip():
            end = index
    if end < MIN_KEPT // 2:  # one long word: cut inside it
        end = max(1, index)
    else:  # never on a count whose noun is cut off ("round 2 (confirmation), 3 …")
        end = len(without_bare_count(plain[:end], plain[end:])) or end
    fitted = text[:end].copy()
    fitted.rstrip()
    fitted.append(f" {ELLIPSIS}")
    return fitted


class FittedTree(Tree[Data]):
    """A Tree fitting each label to the room its line's guides leave (`fitted_label`)."""

    def render_label(self, node: TreeNode[Data], base_style: Style, style: Style) -> Text:
        label = super().render_label(node, base_style, style)
        width = self.scrollable_content_region.width
        if not width:
            return label
        depth, parent = 0, node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        guides = depth * self.guide_depth if self.show_root else max(0, depth - 1) * self.guide_depth
        room = width - guides
        shorter = node.data.get(SHORTER) if isinstance(node.data, dict) else None
        if label.cell_len > room and shorter:  # the node's shorter wordings, in order: the first that fits whole
            head = label[: len(label) - len(node.label)]  # the expand toggle
            for said in shorter:
                candidate = head + Text(str(said), style=style)
                if candidate.cell_len <= room:
                    return candidate
        return fitted_label(label, room)

    def on_resize(self, event: events.Resize) -> None:
        self._invalidate()  # the labels fitted again to the new width (and the virtual width with them)
