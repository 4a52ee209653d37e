"""The node screen's NVSentinel view on 80x24: stacked under the node's summary in a top pane of 5 lines, it was out
of sight with no key to reach it (only a mouse wheel scrolled the pane). `s` scrolls the pane to it and focuses the
pane, whose arrows then scroll it (found opening a quarantined node at 80x24)."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.app import NvcreApp
from tests.history.test_console import finished_session


def screen_text(app: NvcreApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_s_brings_nvsentinels_view_into_sight_and_the_arrows_scroll_it(tmp_path: Path) -> None:
    session = await finished_session(tmp_path)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.run_command("node gpu-node-02")
        await pilot.pause()
        await pilot.pause()
        assert "NVSentinel: ⚑ quarantined" not in screen_text(app)  # under the summary: out of sight
        await pilot.press("s")
        await pilot.pause()
        shown = screen_text(app)
        assert "NVSentinel: ⚑ quarantined" in shown and "validation state: validation-failed" in shown, shown
        assert app.focused is not None and app.focused.id == "top"
        for _ in range(4):
            await pilot.press("down")
        await pilot.pause()
        assert "ValidationRequest vr-weekly: Failed" in screen_text(app)
    await session.close()
