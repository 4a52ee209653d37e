"""A diagnosis whose only findings are degraded links (diagnose.infrastructureFaults[]): every node passes and the
certification FAILED, so the console must say why where it lists failures. The dashboard's failures pane and the
wall list each fault with its category, the maps mark its cliques, and the drill-down opens on the first one.

Reads a finished diagnosis saved once per session (conftest's finished_link_faults), never the engine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.diagnosis import InfraFault, infrastructure_faults
from nvcre_tui.engine.views.failures import fault_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.failures_pane import FailuresPane
from nvcre_tui.widgets.fitted_list import Entry, FittedList
from nvcre_tui.widgets.rack_map import RackMap

from .harness import LINK_FAULTS, reopen

PAIR, UPLINK = "fabric clique-0 ↔ clique-1 degraded", "uplink of clique-3 degraded"
CATEGORY = "communication/nccl-all-reduce"
WORKFLOW = "isolate-communication-nccl-all-reduce"
MARKS = {"clique-0": "✗link", "clique-1": "✗link", "clique-3": "✗uplink"}


def screen_text(app: NvcreApp) -> str:
    return "\n".join(strip.text.rstrip() for strip in app.screen._compositor.render_strips())


async def test_the_faults_are_read_with_their_category_tests_and_last_test_job(finished_link_faults: Path) -> None:
    snapshot = await Snapshot.read((await reopen(finished_link_faults, scenario=LINK_FAULTS)).store)
    assert {state for state, _ in node_states(snapshot, "isolate").values()} == {"passed"}  # no node is at fault
    faults = infrastructure_faults(snapshot, "isolate")
    assert [(f.subject, f.cliques, f.category, f.workflow) for f in faults] == [
        (PAIR, ("clique-0", "clique-1"), CATEGORY, WORKFLOW), (UPLINK, ("clique-3",), CATEGORY, WORKFLOW)]
    for fault in faults:
        assert fault.tests and len(fault.values) == len(fault.tests) and all(v < 300 for v in fault.values)
        assert fault.job == f"{WORKFLOW}-{fault.tests[-1]}" and fault.measured.startswith("busBandwidthGBps ")
        assert fault.measured.endswith(f"in {len(fault.tests)} tests (value >= 300)")
    rows = fault_rows(snapshot, "isolate")
    assert [(r.node, r.category, r.reason, r.state, r.cliques) for r in rows] == [
        (PAIR, CATEGORY, "infrastructure fault", "failed", ("clique-0", "clique-1")),
        (UPLINK, CATEGORY, "infrastructure fault", "failed", ("clique-3",))]
    assert rows[0].message.startswith("degraded fabric between clique-0 and clique-1") and rows[0].job == faults[0].job
    assert fault_rows(snapshot, "no-such-certification") == []


def test_a_fault_names_its_link_or_uplink() -> None:
    fault = InfraFault(("a", "b"), "m", "c/v", "wf", "k")
    assert fault.subject == "fabric a ↔ b degraded" and fault.measured == "-"
    assert InfraFault(("a",), "m", "c/v", "wf", "k", values=(184.0,)).subject == "uplink of a degraded"
    assert InfraFault(("a",), "m", "c/v", "wf", "k", values=(184.0,)).measured == "busBandwidthGBps 184.00 GB/s"


async def test_the_dashboard_lists_each_fault_and_opens_its_evidence_and_log(finished_link_faults: Path) -> None:
    app = NvcreApp(session=await reopen(finished_link_faults, scenario=LINK_FAULTS), live=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        dashboard = app.screen
        assert isinstance(dashboard, DashboardScreen)
        assert "isolate: 2 infrastructure faults" in str(dashboard.query_one("#failures-title", Static).visual)
        pane = dashboard.query_one(FailuresPane)
        assert pane.display and [(r.node, r.category) for r in pane.failures] == [(PAIR, CATEGORY), (UPLINK, CATEGORY)]
        assert f"✗ {PAIR}" in screen_text(app)
        await pilot.press("f", "down", "enter")  # the uplink's evidence
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        cursor = app.screen.query_one(Tree).cursor_node
        assert cursor is not None and cursor.data is not None and cursor.data["kind"] == "fault" and cursor.data["subject"] == UPLINK
        detail = str(app.screen.query_one("#detail", Static).render())
        assert "degraded uplink of clique-3" in detail and "Tests that are its evidence" in detail
        await pilot.press("escape", "l")  # its last failed test's log
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen) and app.screen.job_name == pane.failures[1].job


async def test_the_drilldown_opens_on_the_first_fault_and_next_failure_visits_only_the_faults(finished_link_faults: Path) -> None:
    app = NvcreApp(session=await reopen(finished_link_faults, scenario=LINK_FAULTS), live=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)

        def cursor() -> str:
            node = tree.cursor_node
            assert node is not None and node.data is not None
            return str(node.data.get("subject") or node.data.get("node"))

        assert cursor() == PAIR, "the first selection is not the first infrastructure fault"
        assert "degraded fabric between clique-0 and clique-1" in str(app.screen.query_one("#detail", Static).render())
        seen = []
        for _ in range(3):  # every failure, then round again: the nodes the diagnosis cleared are not failures
            await pilot.press("f")
            await pilot.pause()
            seen.append(cursor())
        assert seen == [UPLINK, PAIR, UPLINK]
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen) and "-link-" in app.screen.job_name  # a test of the uplink


async def test_the_wall_lists_each_fault_and_marks_its_cliques(finished_link_faults: Path) -> None:
    app = NvcreApp(session=await reopen(finished_link_faults, scenario=LINK_FAULTS), live=False, wall=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        failures = app.screen.query_one("#failures", FittedList).entries
        assert Entry("✗", PAIR, CATEGORY) in failures and Entry("✗", UPLINK, CATEGORY) in failures
        assert app.screen.query_one(RackMap).domain_marks == MARKS
        shown = screen_text(app)
        assert "clique-0 ✗link ✓8" in shown and "clique-3 ✗uplink ✓8" in shown and "clique-2 ✓8" in shown
        # A second category naming the same links (all-gather beside all-reduce): each link is one entry, with the other
        # category counted as in the failures pane; it was listed once per category.
        snapshot = app.snapshot
        assert snapshot is not None
        [category] = snapshot.views["isolate"].categories
        snapshot.views["isolate"].categories.append(replace(category, status={**category.status, "variant": "nccl-all-gather"}))
        app.screen.refresh_now()
        failures = app.screen.query_one("#failures", FittedList).entries
        assert list(failures[:2]) == [Entry("✗", PAIR, f"{CATEGORY} +1"), Entry("✗", UPLINK, f"{CATEGORY} +1")], failures
        assert not any(entry.subject in (PAIR, UPLINK) for entry in failures[2:]), failures


async def test_the_topology_map_marks_the_cliques_while_it_groups_by_them(finished_link_faults: Path) -> None:
    app = NvcreApp(session=await reopen(finished_link_faults, scenario=LINK_FAULTS), live=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        assert app.screen.query_one(RackMap).domain_marks == MARKS
        assert "clique-1 ✗link ✓8" in screen_text(app)
        # a node of a marked clique says what its header's mark is; one of an unmarked clique says nothing of links
        rack_map = app.screen.query_one(RackMap)
        for node, said in (("gpu-node-25", "clique-3: uplink of clique-3 degraded"), ("gpu-node-17", None)):
            rack_map.highlighted = node
            await pilot.pause()
            explained = str(app.screen.query_one("#explain", Static).render())
            assert (said in explained) if said else ("degraded" not in explained), explained


def _faults_of(state: Any) -> list[Any]:
    from nvcre_tui.engine.report.readmodel import CategoryView
    from nvcre_tui.engine.views.diagnosis import category_faults

    workflow = {"metadata": {"name": "wf"}, "spec": {"orchestration": {"diagnose": {}}, "jobTemplate": {"spec": {}}},
                "status": {"orchestration": {"diagnose": state.to_dict()}}}
    return category_faults(CategoryView({"domain": "communication", "variant": "nccl-all-reduce"}, workflow))


def test_links_that_failed_without_one_being_named_are_listed_too() -> None:
    """Tests across cliques failed and no one link could be named (a note, not an infrastructure fault): the wall and
    dashboard said nothing, as if no fault had been found."""
    from dataclasses import replace

    from nvcre_tui.engine.diagnose import Note
    from nvcre_tui.engine.views.diagnosis import clique_marks
    from tests.engine.test_diagnose import _oracle, simulate

    domains = {f"clique-{c}": [f"clique-{c}-n{i}" for i in range(4)] for c in "abcd"}
    state = simulate(domains, 2, _oracle(domains, links=(("clique-a", "clique-b"),)))
    [named] = state.infrastructure_faults
    unresolved = Note(named.round, "fabric-unresolved", "2 tests across clique-a, clique-b, clique-c, clique-d failed although their "
                      "nodes are healthy; the degraded link could not be localised (3 candidate links left)",
                      cliques=("clique-a", "clique-b", "clique-c", "clique-d"), tests=named.tests)
    faults = _faults_of(replace(state, infrastructure_faults=(), notes=(unresolved,)))
    assert len(faults) == 1 and not faults[0].localised
    assert faults[0].subject == "links between clique-a, clique-b, clique-c, clique-d degraded (not localised)"
    assert clique_marks(faults, "nvidia.com/gpu.clique") == {}  # no one clique to mark


def test_a_fault_of_the_whole_fabric_marks_every_clique() -> None:
    """Every link failed its tests: one fault naming every clique, each marked on the map."""
    from nvcre_tui.engine.views.diagnosis import clique_marks
    from tests.engine.test_diagnose import _oracle, simulate

    domains = {f"clique-{c}": [f"clique-{c}-n{i}" for i in range(4)] for c in "abcd"}
    faults = _faults_of(simulate(domains, 2, _oracle(domains, fabric_fault=True)))
    assert len(faults) == 1 and faults[0].localised and faults[0].subject == "links between 4 cliques degraded"
    assert clique_marks(faults, "nvidia.com/gpu.clique") == dict.fromkeys(domains, "✗link")
