"""The dashboard's filter: a text that is no regex is matched as written, and the empty table says so (audit of
the console's messages about bad input)."""

from __future__ import annotations

from textual.widgets import Static

from nvcre_tui.app import NvcreApp

from .harness import session_with


async def test_a_dashboard_filter_that_is_no_regex_is_matched_as_written_and_said() -> None:
    """`/` then `burn-in(`: not a regex, and the dashboard dropped the filter without a word, every certification
    shown under it; the map's and the log's filters match such a text as written."""
    from textual.widgets import DataTable

    from .harness import INTRA_NODE

    app = NvcreApp(session=await session_with(INTRA_NODE, INTRA_NODE.replace("name: burn-in", "name: soak")), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"soak(")
        await pilot.pause()
        await app.refresh_snapshot()
        await pilot.pause()
        table, empty = app.screen.query_one("#certs", DataTable), app.screen.query_one("#empty", Static)
        assert table.row_count == 0 and empty.display
        assert str(empty.render()) == "No certification of 2 matches the filter 'soak(' (not a regex: matched as written)."
        await pilot.press("backspace")
        await pilot.pause()
        await app.refresh_snapshot()
        await pilot.pause()
        assert [str(key.value) for key in table.rows] == ["soak"] and not empty.display
