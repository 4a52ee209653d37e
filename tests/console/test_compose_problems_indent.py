"""The compose screen's problems on 80 columns: a problem that wraps goes on under its first word (column 4), not at
the pane's left edge, where its second line read as a problem of its own (found typing a bad selector at 80x24)."""

from __future__ import annotations

from textual.widgets import Input

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.compose import ComposeScreen

from .harness import session_with


async def test_a_wrapped_problem_goes_on_under_its_first_word() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(ComposeScreen())
        await pilot.pause()
        app.screen.query_one("#name", Input).value = "Bad_Name"
        app.screen.query_one("#selector", Input).value = "a in (b"
        await pilot.pause(0.3)
        status = app.screen.query_one("#status").content_region
        lines = [strip.text[status.x : status.right].rstrip() for strip in app.screen._compositor.render_strips()][status.y : status.bottom]
        assert lines[0].startswith("✗ 3 problems"), lines
        problems = [line for line in lines[1:] if line]
        assert len(problems) > 3, f"nothing wrapped: {problems}"  # the three problems take more than a line each here
        assert all(line.startswith("  compose: ") or line.startswith("    ") and line[4] != " " for line in problems), problems
