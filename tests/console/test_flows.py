"""Pilot tests of the main flows on the simulator (fixed seed, ManualClock)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.rack_map import RackMap

from .harness import INTRA_NODE, certification_body, reopen, session_with


async def test_submit_watch_and_drill_to_the_slow_gpu_node() -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.screen, DashboardScreen)
        assert "SIMULATED" in app.sub_title
        assert await app.submit(certification_body(INTRA_NODE))
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=120)  # part way: jobs are running
        await app.refresh_snapshot()
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        assert "RUNNING" in str(table.get_row_at(0)[1])
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        assert "FAILED" in str(table.get_row_at(0)[1])
        await pilot.press("enter")  # 1 key: the first failed node's evidence
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        assert tree.cursor_node is not None and "gpu-node-07" in str(tree.cursor_node.label)
        detail = str(app.screen.query_one("#detail").render())
        assert "busBandwidthGBps: measured 26" in detail and "expected value >= 400" in detail
        seen = []
        for _ in range(3):  # next failures: the loopback category fails both faulty nodes
            await pilot.press("f")
            await pilot.pause()
            seen.append(str(tree.cursor_node.label).split()[1])
        assert seen[:2] == ["gpu-node-07", "gpu-node-12"] and seen[2] == "gpu-node-07"  # wraps to the first
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen)
        assert app.screen.node == "gpu-node-07"


async def test_topology_map_shows_both_faulty_nodes_and_opens_one(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        rack_map = app.screen.query_one(RackMap)
        states = app.screen._states
        assert states["gpu-node-07"][0] == "failed" and states["gpu-node-12"][0] == "failed"
        assert sum(1 for state, _ in states.values() if state == "passed") == 30
        rack_map.highlighted = "gpu-node-07"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen) and app.screen.node == "gpu-node-07"


async def test_a_filter_that_matches_nothing_says_so(finished_intra_node: Path) -> None:
    """An empty table under a filter looked like no certification at all (a review found it)."""
    from textual.widgets import DataTable, Input, Static

    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.query_one("#filter", Input).value = "nothing-like-it"
        await pilot.pause()
        await app.refresh_snapshot()
        await pilot.pause()
        empty = app.screen.query_one("#empty", Static)
        assert app.screen.query_one("#certs", DataTable).row_count == 0 and empty.display
        assert str(empty.render()) == "No certification of 1 matches the filter 'nothing-like-it'."
        app.screen.query_one("#filter", Input).value = "burn"
        await pilot.pause()
        await app.refresh_snapshot()
        await pilot.pause()
        assert app.screen.query_one("#certs", DataTable).row_count == 1 and not empty.display


async def test_colon_commands_and_palette_share_one_table() -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("colon", *"racks", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        app.run_command("node gpu-node-03")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen) and app.screen.node == "gpu-node-03"
        app.run_command("nonsense")
        await pilot.pause()


@pytest.mark.parametrize("theme", ["nvcre-dark", "nvcre-light", "nvcre-high-contrast"])
async def test_themes_switch_at_run_time(theme: str) -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        app.run_command(f"theme {theme}")
        await pilot.pause()
        assert app.theme == theme


async def test_new_user_flow_compose_default_submit_watch_map_drill_and_log() -> None:
    """The issue's 'done when': compose the default certification, submit, watch the map change, reach
    both faulty nodes' evidence and a log — all with keys."""
    from nvcre_tui.screens.compose import ComposeScreen
    from nvcre_tui.screens.logs import LogsScreen
    from nvcre_tui.widgets.log_view import LogView

    session = await session_with()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ComposeScreen)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.pause(0.3)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen), "submit returns to the dashboard"
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=200)
        await app.refresh_snapshot()
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        running = dict(app.screen._states)
        assert any(state == "running" for state, _ in running.values())
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        finished = dict(app.screen._states)
        assert finished["gpu-node-07"][0] == "failed" and finished["gpu-node-12"][0] == "failed"
        assert finished != running  # the map changed as the run progressed
        await pilot.press("escape", "enter")
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        detail = str(app.screen.query_one("#detail").render())
        assert tree.cursor_node is not None and "gpu-node-07" in str(tree.cursor_node.label) and "measured 26" in detail
        await pilot.press("f", "f")
        await pilot.pause()
        assert "gpu-node-12" in str(tree.cursor_node.label)
        assert "measured 16" in str(app.screen.query_one("#detail").render())
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        lines = app.screen.query_one(LogView).log_lines.lines
        assert any("gpu-node-12" in line for line in lines) and len(lines) > 20


async def test_live_engine_runs_a_certification_to_its_end() -> None:
    """The console's own engine loop on a running (scaled) clock: the default fleet, sped up."""
    import asyncio

    from nvcre_tui.engine.sim.scenario import default_scenario

    fast = default_scenario().model_copy(update={"speed": 20000.0})
    app = NvcreApp(scenario=fast, state_path=None, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await app.submit(certification_body(INTRA_NODE))
        for _ in range(150):  # at most ~15 s of real time
            await asyncio.sleep(0.1)
            await app.refresh_snapshot()
            cert = app.snapshot.certification("burn-in") if app.snapshot else None
            if cert and (cert.get("status") or {}).get("summary", {}).get("result") not in (None, "RUNNING"):
                break
        await pilot.pause()
        assert cert is not None and cert["status"]["summary"]["result"] == "FAILED"
        assert cert["status"]["summary"]["failedNodes"] == 2
        assert not [w for w in app.workers if w.group == "engine" and w.error]


async def test_dashboard_cursor_stays_on_its_certification_when_rows_move(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one("#certs", DataTable)
        assert str(table.get_row_at(table.cursor_row)[0]) == "burn-in"
        assert await app.submit(certification_body(INTRA_NODE.replace("name: burn-in", "name: newer")))
        await pilot.pause()
        assert table.row_count == 2 and str(table.get_row_at(0)[0]) == "newer"  # running certifications sort first
        assert str(table.get_row_at(table.cursor_row)[0]) == "burn-in"


async def test_dashboard_rows_are_updated_in_place_while_a_certification_runs() -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await app.submit(certification_body(INTRA_NODE))
        await pilot.pause()
        table = app.screen.query_one("#certs", DataTable)
        row_key = next(iter(table.rows))  # the row object the table made when the certification appeared
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=120)
        await app.refresh_snapshot()
        await pilot.pause()
        assert "RUNNING" in str(table.get_row_at(0)[1])
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        assert "FAILED" in str(table.get_row_at(0)[1]) and str(table.get_row_at(0)[3]) == "2"
        assert next(iter(table.rows)) is row_key  # cells rewritten, the row never rebuilt


async def test_a_covered_screen_does_no_work_and_catches_up_when_back_on_top() -> None:
    session = await session_with()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        dashboard = app.screen
        assert isinstance(dashboard, DashboardScreen)
        shown: list[str] = []
        original = dashboard.show

        def show(snapshot: Snapshot) -> None:
            shown.append(snapshot.resource_version)
            original(snapshot)

        dashboard.show = show  # type: ignore[method-assign]
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        assert await app.submit(certification_body(INTRA_NODE))  # a new snapshot while the map covers the dashboard
        await pilot.pause()
        assert shown == []
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is dashboard and shown == [app.snapshot.resource_version]  # type: ignore[union-attr]
        assert dashboard.query_one("#certs", DataTable).row_count == 1
        await pilot.press("question_mark")  # a modal leaves the dashboard visible: it keeps up
        await pilot.pause()
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=60)
        await app.refresh_snapshot()
        await pilot.pause()
        assert shown[-1] == app.snapshot.resource_version  # type: ignore[union-attr]


@pytest.mark.parametrize("job_deleted", [False, True], ids=["job-kept", "job-deleted-since"])
async def test_drilldown_marks_only_the_blamed_member_of_a_crashed_group_as_failed(job_deleted: bool) -> None:
    """An Xid on gpu-node-02 crashes the full-scale run: its peers exit as victims, blamed nothing, shown inconclusive
    (they ran and proved nothing: as the map shows them, never the untested glyph). A Job deleted since is read from
    its group's record."""
    from nvcre_tui.engine.session import SimSession
    from nvcre_tui.engine.sim.scenario import Scenario
    from nvcre_tui.engine.store import CERTIFICATION, JOB

    fleet = Scenario.model_validate({"name": "small", "seed": 3, "nodes": [{"count": 4, "cliques": 1}],
                                     "faults": [{"type": "xid", "node": "gpu-node-02", "at": "2m"}]})
    session = await SimSession.open(fleet, None, history=None)
    await session.store.create(CERTIFICATION, certification_body(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: crash}\nspec:\n  target: {}\n"
        "  categories: [{domain: communication, variant: nccl-all-reduce}]\n"))
    assert session.engine is not None
    await session.engine.run_until_settled()
    if job_deleted:
        for job in (await session.store.list(JOB, "default")).items:
            await session.store.delete(JOB, job["metadata"]["name"], "default")
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.push_screen(DrilldownScreen("crash"))
        await pilot.pause()
        labels = [str(node.label) for node in DrilldownScreen._walk(app.screen.query_one(Tree).root)]
        members = sorted((label.split()[:2] for label in labels if label.split()[1].startswith("gpu-node")), key=lambda m: m[1])
        assert members == [["?", "gpu-node-01"], ["✗", "gpu-node-02"], ["?", "gpu-node-03"], ["?", "gpu-node-04"]], labels
