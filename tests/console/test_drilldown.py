"""The drill-down's cursor and details: where it opens and stays, and what a category without a Workflow says."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views import node_states
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import DIAGNOSE, session_with


async def test_the_cursor_the_user_moved_stays_when_the_first_failure_comes() -> None:
    """The drill-down opens on the first failed node; opened before any failure and moved by the user, it jumped to
    the first failure when one came (a review found it). Once moved, the cursor is the user's."""
    from nvcre_tui.engine.views import Snapshot

    session = await session_with(DIAGNOSE, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=30)  # screening under way, nothing failed yet
    assert not any(state == "failed" for state, _ in node_states(await Snapshot.read(session.store, "default"), "isolate").values())
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await app.refresh_snapshot()
        await app.push_screen(DrilldownScreen("isolate"))
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        tree.focus()
        await pilot.press("down")  # onto the category
        await pilot.pause()
        chosen = tree.cursor_node
        assert chosen is not None and tree.cursor_line == 1
        for _ in range(60):
            await session.engine.run_until_settled(max_seconds=60)
            await app.refresh_snapshot()
            await pilot.pause()
            snapshot = app.snapshot
            assert snapshot is not None
            if any((n.data or {}).get("failed") for n in DrilldownScreen._walk(tree.root)):
                break
        else:
            raise AssertionError("no failure came")
        await pilot.pause()
        assert tree.cursor_node is not None, chosen.label
        assert DrilldownScreen._key_of(tree.cursor_node.data) == DrilldownScreen._key_of(chosen.data), (tree.cursor_node.label, chosen.label)


async def test_a_category_waiting_for_the_ones_before_it_says_so_in_its_detail() -> None:
    """The detail of a category with no Workflow yet read "Select a category, group or node." (a review found it)."""
    from .harness import INTRA_NODE

    session = await session_with(INTRA_NODE, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=30)  # the first category runs, the second waits its turn
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await app.refresh_snapshot()
        await app.push_screen(DrilldownScreen("burn-in"))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DrilldownScreen)
        [waiting] = [n for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "pending"]
        screen._show_detail(waiting)
        detail = str(screen.query_one("#detail").render())
        assert detail.startswith("Category          communication/nccl-loopback\nStatus            Pending"), detail
        assert "Why               " in detail and "Select a category" not in detail
