"""A Tree brought to a planned shape in place, as a DataTable's rows are updated cell by cell.

Screens describe the tree they want with `PlannedNode` (the same `add` / `add_leaf` calls a TreeNode takes) and
`sync` it onto the live Tree: a node whose key is still there keeps its TreeNode (so its expansion, the cursor
on it and its line stay), its label is set only when it changed, and only nodes that vanished, moved or changed
from leaf to branch are removed and added again. A refresh that changes one group's phase touches one line.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text, TextType
from textual.widgets.tree import TreeNode

from nvcre_tui.engine.printable import printable

KeyOf = Callable[[Any], Hashable]


@dataclass
class PlannedNode:
    """One node of the tree a screen wants: label, data and children (a leaf cannot be expanded)."""

    label: TextType
    data: Any = None
    leaf: bool = False
    children: list[PlannedNode] = field(default_factory=list)

    def add(self, label: TextType, data: Any = None) -> PlannedNode:
        child = PlannedNode(label, data)
        self.children.append(child)
        return child

    def add_leaf(self, label: TextType, data: Any = None) -> PlannedNode:
        child = PlannedNode(label, data, leaf=True)
        self.children.append(child)
        return child


def _keyed(items: list[Any], key: Callable[[Any], Hashable]) -> list[tuple[Hashable, int]]:
    """Each item's key with its occurrence among equal keys, so siblings that share a key still pair up in order."""
    seen: dict[Hashable, int] = {}
    out = []
    for item in items:
        k = key(item)
        seen[k] = seen.get(k, -1) + 1
        out.append((k, seen[k]))
    return out


def literal(label: TextType) -> Text:
    """A label as it reads: a Tree takes a str as markup, and labels carry the cluster's messages and what the
    user typed (`[/dev/shm]` would raise, `[gpu0]` would vanish); control characters are neutralised."""
    return Text(printable(label, newlines=False)) if isinstance(label, str) else label


def sync(node: TreeNode[Any], planned: PlannedNode, key_of: KeyOf) -> None:
    """Make `node` (and its subtree) show `planned`, reusing every TreeNode whose key (from its data) stays."""
    label = literal(planned.label)
    if not isinstance(node.label, Text) or node.label != label:
        node.set_label(label)
    node.data = planned.data
    wanted = _keyed(planned.children, lambda p: (key_of(p.data), p.leaf))
    current = list(node.children)
    have = _keyed(current, lambda n: (key_of(n.data), not n.allow_expand))
    keep = set(wanted)
    for child, pair in zip(current, have, strict=True):
        if pair not in keep:
            child.remove()
    by_pair = {pair: child for child, pair in zip(current, have, strict=True) if pair in keep}
    for index, (pair, spec) in enumerate(zip(wanted, planned.children, strict=True)):
        existing = by_pair.get(pair)
        if existing is not None and not (index < len(node.children) and node.children[index] is existing):
            existing.remove()  # it moved: add it again where it belongs
            existing = None
        if existing is None:
            place = {"before": index} if index < len(node.children) else {}
            existing = (node.add_leaf if spec.leaf else node.add)(literal(spec.label), spec.data, **place)
        sync(existing, spec, key_of)
