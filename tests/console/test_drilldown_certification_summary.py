"""The drill-down's top line (the certification itself) shows its summary as the dashboard says it: selected, it
said only "Select a category, group or node." (a walkthrough found it)."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.certifications import certification_rows
from nvcre_tui.engine.views.failures import fault_rows

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, open_drilldown, session_with


async def test_the_certification_line_shows_its_summary() -> None:
    app = NvcreApp(session=await session_with(DIAGNOSE, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        tree = screen.query_one(Tree)
        tree.focus()
        await pilot.pause()
        await pilot.press("home")  # up to the certification's line
        await pilot.pause()
        assert tree.cursor_node is tree.root
        detail = str(screen.query_one("#detail").render())
        assert "Select a category" not in detail, detail
        assert app.snapshot is not None
        [row] = [r for r in certification_rows(app.snapshot, app.now()) if r.name == "isolate"]
        [fault] = fault_rows(app.snapshot, "isolate")
        lines = [" ".join(line.split()) for line in detail.splitlines()]
        assert lines[:5] == ["Result ✗ FAILED", "Categories 0/1 passed, 1 failed: communication/nccl-all-reduce",
                             f"Failed nodes {row.failed_nodes}", f"Runtime {row.runtime}",
                             f"Infra faults {fault.node} (communication/nccl-all-reduce)"], lines
        assert row.failed_nodes >= 1 and row.runtime != "-", lines


async def test_the_certification_lines_keys_are_those_that_act_on_it() -> None:
    """Its hint listed `l: logs   b: bandwidth   n: node`, which on the certification's line only say "select a group or
    node ...": it lists the keys that act there (`x` only where the console may delete)."""
    for read_only, keys in ((False, "f: next failure   m: rack map   x: delete"), (True, "f: next failure   m: rack map")):
        app = NvcreApp(session=await session_with(DIAGNOSE, scenario=FABRIC_AND_SLOW_GPU), live=False, read_only=read_only)
        async with app.run_test(size=(140, 45)) as pilot:
            screen = await open_drilldown(app, pilot, "isolate")
            tree = screen.query_one(Tree)
            tree.focus()
            await pilot.pause()
            await pilot.press("home")
            await pilot.pause()
            assert tree.cursor_node is tree.root
            last = str(screen.query_one("#detail").render()).rstrip().splitlines()[-1]
            assert last.strip() == keys, (read_only, last)
