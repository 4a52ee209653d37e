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

from .harness import INTRA_NODE, open_drilldown, session_run_for

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
        assert detail == f"Deleting {said}", detail


async def test_the_wall_title_says_deleting() -> None:
    app = NvcreApp(session=await held_session(), live=False, wall=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        title = str(app.screen.query_one("#title", Static).render())
        assert f"{NAME}  DELETING" in title and "RUNNING" not in title, title
