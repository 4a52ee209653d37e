"""A certification deleted with kubectl --cascade=foreground on an API server without a garbage collector stays,
held by the collector's finalizer, its status RUNNING for good: `report` and `list` say what holds it, and the
dashboard showed it running. The dashboard's row, the line under its table and the drill-down's root say so now,
from the cache."""

from __future__ import annotations

from textual.widgets import DataTable, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import CERTIFICATION

from nvcre_tui.screens.wall import WallScreen

from .harness import INTRA_NODE, open_drilldown, session_run_for, session_with

NAME = "burn-in"


async def held_session() -> SimSession:
    """Mid-run, then deleted as kubectl --cascade=foreground leaves it where nothing removes the finalizer."""
    session = await session_run_for(INTRA_NODE, 30)
    cert = await session.store.get(CERTIFICATION, NAME, "default")
    cert["metadata"]["finalizers"] = ["foregroundDeletion"]
    await session.store.update(CERTIFICATION, cert)
    await session.store.delete(CERTIFICATION, NAME, "default")
    return session


async def test_the_dashboard_and_the_drilldown_say_what_holds_a_deletion() -> None:
    session = await held_session()
    held = (await session.store.get(CERTIFICATION, NAME, "default"))["metadata"]
    assert held["deletionTimestamp"] and held["finalizers"] == ["foregroundDeletion"]
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        row = [str(cell) for cell in app.screen.query_one("#certs", DataTable).get_row(NAME)]
        assert row[1] == "· DELETING", row  # not ⋯ RUNNING: nothing advances it
        line = str(app.screen.query_one("#waiting", Static).render())
        said = (f"certification {NAME} is being deleted (since {held['deletionTimestamp']}) and held by foregroundDeletion, the "
                "garbage collector's finalizer (kubectl delete --cascade=foreground): an API server without "
                f"kube-controller-manager never removes it; `nvcre certification delete {NAME}` completes the deletion")
        assert " ".join(line.split()) == f"· {said}", line
        screen = await open_drilldown(app, pilot, NAME)
        tree = screen.query_one(Tree)
        assert str(tree.root.label).startswith(f"{NAME}  DELETING  "), tree.root.label
        tree.move_cursor(tree.root)
        await pilot.pause()
        detail = " ".join(str(screen.query_one("#detail", Static).render()).split())
        assert detail.startswith(f"Deleting {said} Result ⋯ DELETING Categories "), detail  # what holds it, then its summary


async def test_the_wall_title_says_deleting() -> None:
    app = NvcreApp(session=await held_session(), live=False, wall=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        title = str(app.screen.query_one("#title", Static).render())
        assert f"{NAME}  DELETING" in title and "RUNNING" not in title, title


async def unstarted_held_session() -> SimSession:
    """Deleted, held by another client's finalizer, before the engine gave it any status."""
    session = await session_with(INTRA_NODE, settle=False)
    cert = await session.store.get(CERTIFICATION, NAME, "default")
    assert not cert.get("status"), cert["status"]
    cert["metadata"]["finalizers"] = ["example.com/hold"]
    await session.store.update(CERTIFICATION, cert)
    await session.store.delete(CERTIFICATION, NAME, "default")
    return session


async def test_one_held_before_it_had_a_status_says_deleting_on_the_wall_and_the_dashboard() -> None:
    """DELETING stood only in place of RUNNING: a certification deleted and held before the engine gave it a status
    showed neither on the wall (its title said only WAITING, or nothing). Held, it says DELETING wherever it shows."""
    session = await unstarted_held_session()
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        title = " ".join(str(app.screen.query_one("#title", Static).render()).split())
        assert f"{NAME} DELETING" in title, title
    app = NvcreApp(session=await unstarted_held_session(), live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        row = [str(cell) for cell in app.screen.query_one("#certs", DataTable).get_row(NAME)]
        assert row[1] == "· DELETING", row
        screen = await open_drilldown(app, pilot, NAME)
        assert str(screen.query_one(Tree).root.label).startswith(f"{NAME}  DELETING"), screen.query_one(Tree).root.label


async def finished_held_session() -> tuple[SimSession, str]:
    """Finished, then deleted and held by the garbage collector's finalizer; with its result."""
    session = await session_with(INTRA_NODE)
    cert = await session.store.get(CERTIFICATION, NAME, "default")
    result = cert["status"]["summary"]["result"]
    assert result in ("PASSED", "FAILED", "INCOMPLETE"), cert["status"]["summary"]
    cert["metadata"]["finalizers"] = ["foregroundDeletion"]
    await session.store.update(CERTIFICATION, cert)
    await session.store.delete(CERTIFICATION, NAME, "default")
    return session, result


async def test_a_finished_one_held_says_deleting_and_keeps_its_result() -> None:
    """Finished, then deleted and held: its result stood as if it were still there to read, then DELETING alone hid it
    (the run was over, its verdict known). DELETING with the result it finished with, wherever it shows."""
    session, result = await finished_held_session()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        row = [str(cell) for cell in app.screen.query_one("#certs", DataTable).get_row(NAME)]
        assert row[1] == f"· DELETING (was {result})", row
        screen = await open_drilldown(app, pilot, NAME)
        label = str(screen.query_one(Tree).root.label)
        assert label.startswith(f"{NAME}  DELETING (was {result})  "), label
    session, result = await finished_held_session()
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        title = " ".join(str(app.screen.query_one("#title", Static).render()).split())
        assert f"{NAME} DELETING (was {result})" in title, title
