"""The map's NVSentinel legend (v) on 80 columns: one line high, it was cut after "⧗ validating  ◔ " (found pressing
v on the map at 80x24); it wraps between its entries now."""

from __future__ import annotations

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.history.nvsentinel import MARKS
from nvcre_tui.screens.topology import TopologyScreen

from .harness import INTRA_NODE, marks_lines, session_with


async def test_the_nvsentinel_legend_says_every_mark_whole_at_80_columns() -> None:
    app = NvcreApp(session=await session_with(INTRA_NODE), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        await pilot.press("v")
        await pilot.pause()
        await pilot.pause()
        shown = marks_lines(app)
        for _, glyph, meaning in MARKS:
            assert any(f"{glyph} {meaning}" in line for line in shown), (glyph, meaning, shown)
        assert any("v: stale marks" in line for line in shown), shown
