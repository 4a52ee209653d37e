"""The wall's failures are cut only when their pane is full: each entry had an even share of the pane's lines (the
height over the number of entries), so on 80x24 mid-diagnosis a suspect's line read `diagnose round 3: under
suspicion, tested now; failed …` and another's `WorkloadFailed in test r3-confirm-0; the …` with three lines of the
pane left blank under them. Lines the short entries leave go to the long ones."""

from __future__ import annotations

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets import fitted_list
from nvcre_tui.widgets.fitted_list import ELLIPSIS, Entry, FittedList

from .harness import DIAGNOSE, FLAKY_AND_FABRIC, session_with

LONG = "diagnose round 3: under suspicion, tested now; failed 2 of 3 tests (r0-screen-5 WorkloadFailed, r2-confirm-0 WorkloadFailed)"


def test_lines_short_entries_leave_go_to_the_long_ones() -> None:
    entries = [Entry("✗", "fabric", "degraded"), Entry("!", "gpu-node-11", LONG), Entry("!", "gpu-node-12", LONG)]
    shown, left_out = fitted_list.fit_roomiest(entries, 31, 14, 4, 8)
    assert left_out == 0 and sum(len(lines) for lines in shown) <= 14
    assert shown[0] == ["✗ fabric  degraded"]
    assert not any(lines[-1].endswith(ELLIPSIS) for lines in shown), shown  # 1 + 6 + 6 lines: each said whole
    # never fewer entries than the even share shows: the room goes to those shown, not to fewer of them
    many = [Entry("!", f"gpu-node-{i:02d}", LONG) for i in range(10)]
    even, even_left = fitted_list.fit_roomiest(many, 31, 14, 3, 3)
    roomy, roomy_left = fitted_list.fit_roomiest(many, 31, 14, 3, 8)
    assert roomy_left == even_left and roomy == even


async def test_mid_diagnosis_at_80x24_the_suspects_are_said_whole() -> None:
    session = await session_with(DIAGNOSE, settle=False, scenario=FLAKY_AND_FABRIC)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=200)  # round 3: gpu-node-11 and gpu-node-12 under suspicion
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        pane = app.screen.query_one("#failures", FittedList)
        assert [entry.subject for entry in pane.entries][1:] == ["gpu-node-11", "gpu-node-12"], pane.entries
        lines = str(pane.render()).split("\n")
        said = " ".join(line.strip() for line in lines)
        assert "failed 2 of 3 tests" in said and "the diagnosis weighs it this round" in said, lines
        assert len(lines) <= pane.content_size.height
        if any(line.endswith(ELLIPSIS) for line in lines):  # cut only where the pane is full
            assert len(lines) == pane.content_size.height, lines
