"""The wall once every certification is deleted: it said "no certification yet", as on a fresh fleet, while the room
had watched one fail a minute before. It says none is left and what was last there: the one it showed (it remembers
what it showed, and writes nothing), else the history's last archived one."""

from __future__ import annotations

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.store.protocol import CERTIFICATION

from .harness import INTRA_NODE, session_with


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
