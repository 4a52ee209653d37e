"""A certification that failed stays on the wall for RECENT_FAILURE after it finished (a review saw one that failed
while another still ran vanish from the wall: FAILED read 0, `right` never brought it back, the dashboard said
✗ FAILED)."""

from __future__ import annotations

from datetime import timedelta

from textual.pilot import Pilot
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.fitted_list import FittedList

from .harness import DIAGNOSE_AND_TRAIN, intra_all_reduce, session_with

RECENT_FAILURE = timedelta(minutes=30)  # the README's rule


async def rotation(app: NvcreApp, pilot: Pilot[None]) -> list[str]:
    """The certifications the wall shows in turn, one `right` each, from the one shown now."""
    assert isinstance(app.screen, WallScreen)
    await app.refresh_snapshot()
    app.screen.refresh_now()  # the session clock moved: the rotation is read again at the time it is now
    seen = [str(app.screen.current)]
    for _ in range(3):
        await pilot.press("right")
        await pilot.pause()
        if app.screen.current == seen[0]:
            break
        seen.append(str(app.screen.current))
    return sorted(seen)


async def finished_at(session: SimSession, name: str) -> timedelta:
    """When the certification finished, from the session clock's start of the test."""
    cert = await session.store.get(CERTIFICATION, name, "default")
    return parse_time(certification_status(cert)["completionTime"]) - session.clock.now()


async def test_a_failed_certification_stays_in_the_rotation_while_another_runs() -> None:
    # alpha fails at about 9 minutes (gpu-node-07 below 400 GB/s); diagnose-and-train waits for its nodes, then runs on.
    session = await session_with(intra_all_reduce("alpha"), DIAGNOSE_AND_TRAIN, settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=600)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        assert await rotation(app, pilot) == ["alpha", "diagnose-and-train"]
        while app.screen.current != "alpha":
            await pilot.press("right")
            await pilot.pause()
        title = str(app.screen.query_one("#title", Static).render())
        assert title.lstrip().startswith("alpha  FAILED") and "finished " in title, title
        assert app.screen.query_one("#count-failed", Digits).value != "0"
        assert "gpu-node-07" in [entry.subject for entry in app.screen.query_one("#failures", FittedList).entries]

        # Nothing runs any more: both failed within the last 30 minutes, both rotate.
        await session.engine.run_until_settled()
        assert await rotation(app, pilot) == ["alpha", "diagnose-and-train"]

        # Past RECENT_FAILURE after alpha finished (not after the other): alpha leaves the rotation.
        alpha_done = await finished_at(session, "alpha")
        assert isinstance(session.clock, ManualClock)
        session.clock.advance((alpha_done + RECENT_FAILURE).total_seconds() + 1)
        assert await finished_at(session, "diagnose-and-train") > -RECENT_FAILURE
        assert await rotation(app, pilot) == ["diagnose-and-train"]

        # Both long finished: the latest one stays on the wall, never an empty one.
        session.clock.advance(RECENT_FAILURE.total_seconds())
        assert await rotation(app, pilot) == ["diagnose-and-train"]
        assert app.screen.query_one("#count-failed", Digits).value != "0"
