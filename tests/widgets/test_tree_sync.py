"""tree_sync.sync brings a live Tree to a planned shape in place: kept nodes stay the same TreeNode (with their
expansion), changed labels are set, vanished nodes go, new and moved ones appear where the plan puts them."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Tree

from nvcre_tui.widgets.tree_sync import PlannedNode, sync


class TreeApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Tree("root")


def key(data: Any) -> Any:
    return (data or {}).get("key")


def plan(groups: dict[str, list[str]], label: str = "cert") -> PlannedNode:
    root = PlannedNode(label, {"key": "root"})
    for name, nodes in groups.items():
        branch = root.add(f"group {name}", {"key": name})
        for node in nodes:
            branch.add_leaf(node, {"key": f"{name}/{node.split()[0]}"})
    return root


def shape(node: Any) -> list[Any]:
    return [(str(child.label), shape(child)) for child in node.children]


async def test_kept_nodes_stay_and_only_changes_are_applied() -> None:
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(Tree)
        sync(tree.root, plan({"a": ["n1", "n2"], "b": ["n3"], "c": ["n4"]}), key)
        a, b, c = tree.root.children
        a.expand()
        n1, n2 = a.children
        sync(tree.root, plan({"a": ["n1 failed", "n2"], "c": ["n4"], "d": ["n5"]}, label="cert FAILED"), key)
        assert str(tree.root.label) == "cert FAILED"
        assert shape(tree.root) == [("group a", [("n1 failed", []), ("n2", [])]), ("group c", [("n4", [])]), ("group d", [("n5", [])])]
        assert tree.root.children[0] is a and a.is_expanded and a.children[0] is n1 and a.children[1] is n2
        assert tree.root.children[1] is c
        assert b not in tree.root.children


async def test_a_moved_node_is_placed_where_the_plan_puts_it_and_equal_keys_pair_in_order() -> None:
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(Tree)
        sync(tree.root, plan({"a": [], "b": [], "c": []}), key)
        sync(tree.root, plan({"c": [], "a": [], "b": []}), key)
        assert [str(n.label) for n in tree.root.children] == ["group c", "group a", "group b"]
        twins = PlannedNode("root", {"key": "root"})
        for text in ("first", "second"):
            twins.add_leaf(text, {"key": "same"})
        sync(tree.root, twins, key)
        assert [str(n.label) for n in tree.root.children] == ["first", "second"]
        kept = list(tree.root.children)
        sync(tree.root, twins, key)
        assert list(tree.root.children) == kept


async def test_a_leaf_that_becomes_a_branch_is_made_again() -> None:
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(Tree)
        leaf_plan = PlannedNode("root", {"key": "root"})
        leaf_plan.add_leaf("x", {"key": "x"})
        sync(tree.root, leaf_plan, key)
        branch_plan = PlannedNode("root", {"key": "root"})
        branch_plan.add("x", {"key": "x"}).add_leaf("y", {"key": "y"})
        sync(tree.root, branch_plan, key)
        [x] = tree.root.children
        assert x.allow_expand and [str(n.label) for n in x.children] == ["y"]


async def test_labels_are_shown_as_written_never_read_as_markup() -> None:
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(Tree)
        messages = PlannedNode("cert", {"key": "root"})
        messages.add_leaf("cannot open [/dev/infiniband/uverbs0]", {"key": "closing"})  # markup: a closing tag with no opening one
        messages.add_leaf("rank [gpu0] \x1b[2J timed out", {"key": "style"})  # markup: a style tag, and an escape
        sync(tree.root, messages, key)
        assert [str(n.label) for n in tree.root.children] == ["cannot open [/dev/infiniband/uverbs0]", "rank [gpu0] \ufffd[2J timed out"]
