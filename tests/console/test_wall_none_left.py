"""The wall once every certification is deleted: it said "no certification yet", as on a fresh fleet, while the room
had watched one fail a minute before. It says none is left and what was last there: the one it showed (it remembers
what it showed, and writes nothing), else the history's last archived one."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.wall import last_archived, none_left

from .harness import INTRA_NODE, certification_body, session_with


def _title(app: NvcreApp) -> str:
    return str(app.screen.query_one("#title", Static).render())


async def test_the_wall_says_the_certification_it_showed_was_deleted() -> None:
    session = await session_with(INTRA_NODE)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert _title(app).startswith("burn-in  FAILED"), _title(app)
        await session.store.delete(CERTIFICATION, "burn-in", "default")
        await app.refresh_snapshot()
        await pilot.pause()
        title = _title(app)
        assert "no certification yet" not in title, title
        assert title.startswith("no certification left: burn-in (FAILED) was deleted"), title


async def test_a_new_wall_says_the_last_archived_one() -> None:
    session = await session_with(INTRA_NODE)
    assert session.history is not None and session.history.certifications()  # archived when it finished
    archived = last_archived(session.history)
    assert archived is not None and parse_time(archived["archivedAt"])  # when, on the wall clock of the process that archived it
    await session.store.delete(CERTIFICATION, "burn-in", "default")
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        title = _title(app)
        assert title.startswith("no certification left; the last archived: burn-in FAILED, finished "), title


async def test_a_fresh_fleet_has_no_certification_yet() -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert _title(app).startswith("no certification yet"), _title(app)


async def test_a_wall_left_running_remembers_no_certification_that_left() -> None:
    """An operations-room wall runs for weeks: it kept the name of every certification it ever saw (to count those
    deleted); it now counts them as they go, and holds nothing that grows with them."""
    session = await session_with()
    app = NvcreApp(session=session, live=False, wall=True)
    cycles = 12

    def kept() -> dict[str, int]:  # the sizes of the wall's own collections (Textual's are the screen's business)
        own = set(vars(app.screen)) - set(vars(Screen()))
        return {name: len(value) for name, value in vars(app.screen).items() if name in own and isinstance(value, set | dict | list | frozenset)}

    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        halfway: dict[str, int] = {}
        for i in range(cycles):
            await session.store.create(CERTIFICATION, certification_body(INTRA_NODE.replace("name: burn-in", f"name: burn-in-{i}")))
            await app.refresh_snapshot()
            await session.store.delete(CERTIFICATION, f"burn-in-{i}", "default")
            await app.refresh_snapshot()
            halfway = kept() if i == cycles // 2 else halfway
        await pilot.pause()
        title = _title(app)
        assert title.startswith(f"no certification left: burn-in-{cycles - 1} (WAITING to start) and {cycles - 1} others were deleted"), title
        assert kept() == halfway  # nothing grew with the certifications that came and went
def test_an_archived_one_a_simulated_clock_stamped_ahead_says_how_long_ago_it_was_archived_on_a_cluster() -> None:
    """A --sim-runner engine stamps completionTime in simulated time, ahead of the wall clock: a new wall on the cluster
    said "finished 0s ago" of a certification archived 6 minutes before (its end "in the future"). It finished no
    later than it was archived, on the wall clock its `now` is (store_now); on the simulator both are the fleet's time."""
    now = parse_time("2026-12-06T05:50:00Z")
    archived = {"name": "train-long", "result": "PASSED", "completionTime": "2026-12-06T06:20:26Z", "archivedAt": "2026-12-06T05:44:00Z"}
    assert none_left(None, 0, archived, now, wall_clock=True) == "no certification left; the last archived: train-long PASSED, finished 6m00s ago"
    ended_on_time = {**archived, "completionTime": "2026-12-06T05:43:58Z"}  # a real engine's: archived a moment after it ended
    assert none_left(None, 0, ended_on_time, now, wall_clock=True).endswith("finished 6m02s ago")
