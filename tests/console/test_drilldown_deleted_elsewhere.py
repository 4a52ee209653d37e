"""The drill-down when its certification is deleted by another client (emptied, said once, back to the
dashboard), and `n` on a line that is not a node (said, as `l` and `b` say theirs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.history.deletion import delete_certification
from nvcre_tui.engine.session import Session
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.confirm import ConfirmModal
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.help import HelpScreen

from .harness import reopen

GONE = "certification burn-in was deleted by another client"


def messages(app: NvcreApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def delete_elsewhere(session: Session, name: str = "burn-in") -> None:
    """What `nvcre certification delete` in another terminal does (not through this app)."""
    cert = await session.store.get(CERTIFICATION, name, "default")
    await delete_certification(session.store, session.cache, None, cert)


async def test_a_certification_deleted_by_another_client_takes_the_drilldown_back_to_the_dashboard(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        await delete_elsewhere(session)
        await app.refresh_snapshot()
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert messages(app).count(GONE) == 1
        for key in ("f", "l", "b", "n", "enter"):  # the dashboard's keys now: nothing opens a deleted object
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, DashboardScreen), key
        await app.refresh_snapshot()
        await pilot.pause()
        assert messages(app).count(GONE) == 1  # said once


async def test_under_a_modal_the_drilldown_empties_refuses_its_keys_and_leaves_when_on_top_again(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        drill = app.screen
        assert isinstance(drill, DrilldownScreen)
        tree = drill.query_one(Tree)
        assert tree.root.children
        await pilot.press("question_mark")  # the help over it: the drill-down still shows around it
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await delete_elsewhere(session)
        await app.refresh_snapshot()
        await pilot.pause()
        assert messages(app).count(GONE) == 1
        assert not tree.root.children and "(deleted)" in str(tree.root.label)  # no category or group left with a live glyph
        assert "was deleted" in str(drill.query_one("#detail", Static).render())
        depth = len(app.screen_stack)
        for action in (drill.action_next_failure, drill.action_logs, drill.action_bandwidth, drill.action_node, drill.action_delete_certification):
            action()
            await pilot.pause()
            assert len(app.screen_stack) == depth, action.__name__  # nothing opened for a deleted object
        assert messages(app)[-1] == "certification burn-in was deleted: nothing to open"
        await pilot.press("escape")  # the help closes: the drill-down is on top, and leaves
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert messages(app).count(GONE) == 1


async def test_x_on_the_drilldown_is_not_reported_as_another_clients_deletion(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert GONE not in messages(app)
        assert messages(app)[-1].startswith("certification burn-in deleted from namespace default")


async def test_a_name_never_seen_still_reads_not_found(finished_intra_node: Path) -> None:
    """Opened on a name no certification holds (`:cert NAME` refuses it: tests/console/test_registry.py)."""
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        app.push_screen(DrilldownScreen("no-such-cert"))
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        assert "(not found)" in str(app.screen.query_one(Tree).root.label)
        assert not [m for m in messages(app) if "was deleted" in m]


async def test_n_on_a_line_that_is_not_a_node_says_what_to_select(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        drill = app.screen
        assert isinstance(drill, DrilldownScreen)
        tree: Tree[Any] = drill.query_one(Tree)
        category = tree.root.children[0]
        group = next(n for n in drill._walk(category) if (n.data or {}).get("kind") == "group")
        for line in (tree.root, category, group):
            tree.move_cursor(line)
            await pilot.pause()
            before = len(messages(app))
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, DrilldownScreen), (line.data or {}).get("kind")  # nothing opened
            assert messages(app)[before:] == ["select a node line to open its record"], (line.data or {}).get("kind")
        node = next(n for n in drill._walk(group) if (n.data or {}).get("kind") == "node")
        tree.move_cursor(node)
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert type(app.screen).__name__ == "NodeScreen"  # a node line still opens its record


async def test_the_map_of_a_deleted_certification_leaves_with_its_drilldown(finished_intra_node: Path) -> None:
    """The drill-down's `m` maps its certification alone. Deleted by another client meanwhile, the map stayed, the whole
    fleet drawn ◦ untested under "certification burn-in": a certification that had tested nothing. It goes back, and
    the drill-down under it says the deletion once and goes back too."""
    from nvcre_tui.screens.topology import TopologyScreen

    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("enter", "m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen) and app.screen.certification == "burn-in"
        await delete_elsewhere(session)
        await app.refresh_snapshot()
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert messages(app).count(GONE) == 1


async def test_under_a_modal_the_map_of_a_deleted_certification_is_emptied_and_says_so(finished_intra_node: Path) -> None:
    from nvcre_tui.screens.topology import TopologyScreen
    from nvcre_tui.widgets.rack_map import RackMap

    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("enter", "m")
        await pilot.pause()
        racks = app.screen
        assert isinstance(racks, TopologyScreen)
        await pilot.press("question_mark")  # the help over it: the map still shows around it
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await delete_elsewhere(session)
        await app.refresh_snapshot()
        await pilot.pause()
        assert racks.query_one(RackMap).cell("gpu-node-01") is None  # no node drawn ◦ untested for a certification gone
        assert str(racks.query_one("#scope", Static).render()) == "certification burn-in was deleted"
        assert "nothing is left to map" in str(racks.query_one("#explain", Static).render())
        await pilot.press("escape")  # the help closes: the map is on top and leaves, then the drill-down
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert messages(app).count(GONE) == 1


async def test_the_bandwidth_of_a_deleted_certification_is_emptied_and_leaves_with_its_drilldown(finished_intra_node: Path) -> None:
    """The drill-down's `b`, then the certification deleted by another client: the curves, the spread and the outliers
    stayed under "Workflow ... not found", as if measured by something still there. Under a modal it is emptied and
    says so; on top again it goes back, and the drill-down under it says the deletion once and goes back too."""
    from textual.widgets import OptionList

    from nvcre_tui.screens.bandwidth import BandwidthScreen
    from nvcre_tui.widgets.bandwidth import BandwidthPlot

    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("enter", "b")
        await pilot.pause()
        bandwidth = app.screen
        assert isinstance(bandwidth, BandwidthScreen)
        assert bandwidth.query_one(OptionList).option_count == 32
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await delete_elsewhere(session)
        await app.refresh_snapshot()
        await pilot.pause()
        assert bandwidth.query_one(OptionList).option_count == 0 and not bandwidth.query_one(BandwidthPlot).series
        assert not bandwidth.outliers
        title = str(bandwidth.query_one("#bw-title", Static).render())
        assert title == "Workflow burn-in-communication-nccl-all-reduce was deleted: nothing is left to plot. esc: back", title
        await pilot.press("escape")  # the help closes: the bandwidth screen is on top and leaves, then the drill-down
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert messages(app).count(GONE) == 1


async def test_a_workflow_never_seen_still_reads_not_found_on_the_bandwidth_screen(finished_intra_node: Path) -> None:
    from nvcre_tui.screens.bandwidth import BandwidthScreen

    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await app.push_screen(BandwidthScreen("no-such-workflow"))
        await pilot.pause()
        assert isinstance(app.screen, BandwidthScreen)
        assert str(app.screen.query_one("#bw-title", Static).render()) == "Workflow no-such-workflow not found"
