"""The console of a user who may not list Nodes (nvcre-edit and nvcre-view, as setup's roles grant): its cache goes on
without them, and the screens that draw Nodes showed that as a fleet: the dashboard's `Fleet 0 nodes ✗ 0 failed` beside a
certification that blamed two, an empty map under its legend, the wall's counters at 0 `of 0 nodes`. Each says instead,
once, that this user may not list Nodes."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.nodes import NODES_WITHHELD
from nvcre_tui.engine.store.protocol import NODE
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.screens.wall import WallScreen
from tests.kube.cluster import installed
from tests.kube.test_console_on_cluster import args_for, opened, opener
from tests.kube.test_run_engine_leaves import _register
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import least_privileged
from tests.test_cli_list import _create
from tests.test_cli_logs import _as_on_a_cluster, burned  # noqa: F401 - burned: the fixture


def screen_text(app: NvcreApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_the_screens_that_draw_nodes_say_this_user_may_not_list_them(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        await _register(kubeconfig)
        await _create(kubeconfig)
        bob = await least_privileged(server, kubeconfig, "bob", nodes=False)
        app = NvcreApp(opener=opener(args_for(bob, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(240, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and NODE in app.session.cache.withheld
            assert isinstance(app.screen, DashboardScreen)
            await pilot.pause(0.3)
            text = screen_text(app)
            assert f"Fleet not shown: {NODES_WITHHELD}" in text and "0 nodes" not in text, text
            await pilot.press("m")
            await pilot.pause(0.3)
            assert isinstance(app.screen, TopologyScreen)
            assert f"no map: {NODES_WITHHELD}" in screen_text(app)
            await pilot.press("escape", "w")
            await pilot.pause(0.3)
            assert isinstance(app.screen, WallScreen)
            text = screen_text(app)
            assert f"no node counts and no map: {NODES_WITHHELD}" in text and "of 0 nodes" not in text, text
            assert {str(digits.value) for digits in app.screen.query(Digits)} == {"-"}


async def test_a_nodes_record_does_not_say_no_such_node_to_a_user_who_may_not_list_them(burned: Path, tmp_path: Path) -> None:  # noqa: F811
    """The node screen of gpu-node-07, whose failed results it lists below, said "gpu-node-07: no such node"."""
    from nvcre_tui.screens.node import NodeScreen

    async with installed(tmp_path) as (server, kubeconfig):
        await _as_on_a_cluster(kubeconfig, burned, server)
        bob = await least_privileged(server, kubeconfig, "bob", nodes=False)
        app = NvcreApp(opener=opener(args_for(bob, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(200, 40)) as pilot:
            await opened(app, pilot)
            await app.push_screen(NodeScreen("gpu-node-07"))
            await pilot.pause(0.5)
            summary = str(app.screen.query_one("#summary", Static).render())
            assert summary.startswith(f"gpu-node-07: its Node is not shown: {NODES_WITHHELD}\n") and "no such node" not in summary, summary
            assert "ThresholdViolation" in screen_text(app)  # its results, read from the certification's objects


async def test_the_walls_failures_list_the_blamed_nodes_without_the_nodes(burned: Path, tmp_path: Path) -> None:  # noqa: F811
    """The wall of a failed certification listed no failure to a user who may not list Nodes: the list drew the nodes'
    states, none without Nodes, while the failures pane listed gpu-node-07 from the certification's Jobs."""
    from nvcre_tui.widgets.fitted_list import FittedList

    async with installed(tmp_path) as (server, kubeconfig):
        await _as_on_a_cluster(kubeconfig, burned, server)
        bob = await least_privileged(server, kubeconfig, "bob", nodes=False)
        app = NvcreApp(opener=opener(args_for(bob, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(200, 40)) as pilot:
            await opened(app, pilot)
            await pilot.press("w")
            await pilot.pause(0.3)
            assert isinstance(app.screen, WallScreen)
            entries = app.screen.query_one("#failures", FittedList).entries
            # (the copied certification's other category, whose objects were not copied, is a failure that blamed nobody)
            assert [(entry.glyph, entry.subject) for entry in entries if entry.subject.startswith("gpu-")] == [("✗", "gpu-node-07")], entries
            assert "ThresholdViolation" in entries[0].text


async def test_the_dashboard_of_a_cluster_with_no_nodes_at_all_says_why_its_fleet_is_empty(tmp_path: Path) -> None:
    """An API server alone (no kubelet) registers no Node: the dashboard said `Fleet 0 nodes ✗ 0 failed ... ◷ 0 waiting`,
    a fleet, where `certification run` refuses in one line that the cluster has no Nodes at all. The fleet line says that."""
    from nvcre_tui.engine.api.nodes import NO_NODES

    async with installed(tmp_path) as (server, kubeconfig):
        app = NvcreApp(opener=opener(args_for(kubeconfig, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(240, 50)) as pilot:
            await opened(app, pilot)
            assert isinstance(app.screen, DashboardScreen)
            await pilot.pause(0.3)
            text = screen_text(app)
            assert f"Fleet 0 nodes: {NO_NODES}" in text and "0 failed" not in text, text
