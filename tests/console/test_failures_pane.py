"""The dashboard's failures pane: every blamed node of the highlighted certification with its reason and
measured value; enter opens its evidence, l its log, and the next faulty node is one key away.

Reads a finished certification saved once per session (conftest), never the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from textual.widgets import DataTable, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.views.diagnosis import diagnose_verdicts
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.widgets.failures_pane import FailuresPane

from .harness import DIAGNOSE, FLAKY_AND_FABRIC, INTRA_NODE, intra_all_reduce, open_drilldown, reopen, session_with

ALL_REDUCE = "burn-in-communication-nccl-all-reduce"
LOOPBACK = "burn-in-communication-nccl-loopback"


async def test_failure_rows_are_the_blamed_nodes_with_reason_value_and_convicting_job(finished_intra_node: Path) -> None:
    session = await reopen(finished_intra_node)
    rows = failure_rows(await Snapshot.read(session.store), "burn-in")
    assert [(r.node, r.category, r.also) for r in rows] == [
        ("gpu-node-07", "communication/nccl-all-reduce", ("communication/nccl-loopback",)),
        ("gpu-node-12", "communication/nccl-loopback", ()),
    ]
    assert [r.reason for r in rows] == ["ThresholdViolation", "ThresholdViolation"]
    assert [r.state for r in rows] == ["failed", "failed"]  # one-node groups: convicted alone
    assert rows[0].measured == "busBandwidthGBps 264.81 GB/s (value >= 400)" and rows[1].measured == "busBandwidthGBps 160.59 GB/s (value >= 300)"
    assert (rows[0].workflow, rows[0].job) == (ALL_REDUCE, f"{ALL_REDUCE}-group-6-iter-1")
    assert (rows[1].workflow, rows[1].job) == (LOOPBACK, f"{LOOPBACK}-group-11-iter-1")
    assert failure_rows(await Snapshot.read(session.store), "no-such-certification") == []


async def test_both_faulty_nodes_evidence_and_logs_are_one_key_apart(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        dashboard = app.screen
        assert isinstance(dashboard, DashboardScreen)
        title = str(dashboard.query_one("#failures-title", Static).visual)
        assert "burn-in: 2 nodes blamed" in title
        await pilot.press("f", "enter")  # from an empty dashboard: 2 keys to the first faulty node's evidence
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        cursor = app.screen.query_one(Tree).cursor_node
        assert cursor is not None and cursor.data is not None
        assert cursor.data["node"] == "gpu-node-07" and cursor.data["workflow"]["metadata"]["name"] == ALL_REDUCE
        assert "busBandwidthGBps: measured 264.8" in str(app.screen.query_one("#detail").render())
        await pilot.press("escape", "down", "enter")  # the next faulty node: one key away
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        cursor = app.screen.query_one(Tree).cursor_node
        assert cursor is not None and cursor.data is not None
        assert cursor.data["node"] == "gpu-node-12" and cursor.data["workflow"]["metadata"]["name"] == LOOPBACK
        await pilot.press("escape", "l")  # its log
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen) and app.screen.job_name == f"{LOOPBACK}-group-11-iter-1"
        await pilot.press("escape", "up", "l")  # and the other's
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen) and app.screen.job_name == f"{ALL_REDUCE}-group-6-iter-1"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is dashboard


async def test_the_pane_follows_the_highlighted_certification_and_keeps_its_cursor(finished_intra_node: Path) -> None:
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    from .harness import certification_body

    session = await reopen(finished_intra_node)
    await session.store.create(CERTIFICATION, certification_body(intra_all_reduce("only-all-reduce")))
    assert session.engine is not None
    await session.engine.run_until_settled()
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        certs = app.screen.query_one("#certs", DataTable)
        pane = app.screen.query_one(FailuresPane)
        first = str(certs.coordinate_to_cell_key(certs.cursor_coordinate).row_key.value)
        assert first == "only-all-reduce" and [r.node for r in pane.failures] == ["gpu-node-07"]
        await pilot.press("down")
        await pilot.pause()
        assert [r.node for r in pane.failures] == ["gpu-node-07", "gpu-node-12"]
        await pilot.press("f", "down")
        await pilot.pause()
        await app.refresh_snapshot()
        app.snapshot = app.snapshot  # a refresh with nothing new: rows kept, the cursor stays on gpu-node-12
        await pilot.pause()
        assert pane.current() is not None and pane.current().node == "gpu-node-12"  # type: ignore[union-attr]


async def test_a_certification_that_blamed_nobody_shows_no_rows() -> None:
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.screen.query_one(FailuresPane)
        assert not pane.display and pane.failures == []
        await pilot.press("f")  # nothing to focus: says so
        await pilot.pause()
        assert app.focused is not pane


async def test_read_only_reaches_evidence_and_logs_too(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f", "l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)


async def test_cells_are_plain_text_never_markup() -> None:
    from nvcre_tui.engine.views.failures import FailureRow

    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.screen.query_one(FailuresPane)
        pane.show_rows([FailureRow("gpu-[b]x[/b]", "c/v", "Reason[red]", "\x1b]0;pwned\x07", "", "wf", None)])
        await pilot.pause()
        cells = [str(cell) for cell in pane.get_row_at(0)]
        assert cells[0] == "✗ gpu-[b]x[/b]" and cells[1] == "Reason[red]" and "\x1b" not in cells[3] and cells[4] == "-"


async def test_a_node_a_running_diagnosis_convicted_is_listed_before_the_run_ends() -> None:
    """The Workflow lists a diagnosis's convictions among its failed nodes only at its end; the fleet line and the map
    count them at once, so the pane titled failures listed only the link fault meanwhile (a review found it). The
    read model's failed nodes hold them (controllers.iterations.blamed_nodes), as the report's."""
    case = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-flaky-and-fabric"
    session = await session_with((case / "cert.yaml").read_text(), settle=False, scenario=load_scenario(case / "scenario.yaml"))
    assert session.engine is not None
    for _ in range(200):
        await session.engine.run_until_settled(max_seconds=60)
        snapshot = await Snapshot.read(session.store)
        [category] = snapshot.views["diagnose-flaky-and-fabric"].categories
        verdicts = diagnose_verdicts(category)
        convicted = sorted(n for n, v in verdicts.items() if v in ("faulty", "intermittent"))
        if convicted and category.workflow is not None and not cond.is_terminal(category.workflow):
            break
    else:
        raise AssertionError("no conviction while the diagnosis ran")
    rows = {row.node: row for row in failure_rows(snapshot, "diagnose-flaky-and-fabric")}
    assert convicted == ["gpu-node-06"] and set(convicted) <= set(rows)
    row = rows["gpu-node-06"]
    assert row.message.startswith(f"diagnose: {verdicts['gpu-node-06']}, failed ") and row.job is not None
    assert row.state == "failed" and {f["name"] for f in category.failed_nodes} == {"gpu-node-06"}  # as the report lists it
    assert category.workflow is not None and row.workflow == category.workflow["metadata"]["name"]


async def test_a_category_run_twice_is_named_by_its_number_in_the_pane_and_the_node_screen() -> None:
    """A certification running nccl-all-reduce twice: the pane's Category and the node screen's Jobs said
    "communication/nccl-all-reduce" for both, where the report and the wall say #1 and #2."""
    from nvcre_tui.engine.views.nodes import node_history

    session = await session_with(INTRA_NODE_TWICE)
    snapshot = await Snapshot.read(session.store)
    rows = failure_rows(snapshot, "twice")
    assert rows and {r.category for r in rows} == {"communication/nccl-all-reduce #2"}, rows
    categories = [row["category"] for row in node_history(snapshot, rows[0].node)]
    assert sorted(categories) == ["communication/nccl-all-reduce #1", "communication/nccl-all-reduce #2"], categories


# The harness's two categories, the second made a second all-reduce that no node passes.
INTRA_NODE_TWICE = (INTRA_NODE.replace("name: burn-in", "name: twice").replace('"value >= 400"', '"value >= 1"')
                    .replace("variant: nccl-loopback\n      options: {", "variant: nccl-all-reduce\n      options: {testScale: intra-node, ")
                    .replace('"value >= 300"', '"value >= 100000"'))


async def test_convicted_nodes_come_first_and_a_conviction_outranks_a_group_blame(finished_diagnose_and_train: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The diagnosis convicted gpu-node-07 and gpu-node-12; training blamed all 32 with their groups. The pane listed
    the 30 suspects from gpu-node-01 on by name, the convicted two below the fold; and a node a later category
    convicted showed the earlier category's group blame (`!`, its reason, its log)."""
    from dataclasses import replace

    from nvcre_tui.engine.report import nodestates
    from nvcre_tui.engine.views.failures import merge_blame

    # One group's blame is weighed once, not once per member: a group of 1024 blamed together took 0.9 s a redraw.
    weighed: list[str] = []
    blamed_state = nodestates.blamed_state

    def counted(members: Any, blamed: Any, reason: str) -> str:
        weighed.append(reason)
        return blamed_state(members, blamed, reason)

    monkeypatch.setattr(nodestates, "blamed_state", counted)
    session = await reopen(finished_diagnose_and_train)
    rows = failure_rows(await Snapshot.read(session.store), "diagnose-and-train")
    assert len(weighed) == 1, weighed  # the training's one group of 32
    assert [(r.node, r.state) for r in rows[:3]] == [("gpu-node-07", "failed"), ("gpu-node-12", "failed"), ("gpu-node-01", "suspect")]
    assert all(r.state == "suspect" for r in rows[2:])
    suspect = replace(rows[2], category="training/nemotron5-8b", reason="WorkloadFailed")
    convicted = replace(rows[2], category="communication/nccl-loopback", reason="Timeout", state="failed", job="loopback-job")
    merged: dict = {}
    merge_blame(merged, suspect)
    merge_blame(merged, convicted)
    (row,) = merged.values()
    assert (row.state, row.category, row.reason, row.job, row.also) == ("failed", "communication/nccl-loopback", "Timeout",
                                                                         "loopback-job", ("training/nemotron5-8b",))
    merge_blame(merged, replace(suspect, category="diagnostics/dcgm-level4"))  # a later group blame only adds a category
    assert merged[row.node].category == "communication/nccl-loopback" and merged[row.node].also[-1] == "diagnostics/dcgm-level4"


async def test_a_node_convicted_for_crashing_its_tests_shows_its_conviction_where_no_value_failed() -> None:
    """A flaky node crashes the tests it runs in (WorkloadFailed): no measured value failed, so its Measured cell read
    "-" at 80 and 120 columns, its verdict nowhere on the dashboard, while the wall said "intermittent, failed 3 of 5
    tests". The pane says it too, in that cell."""
    app = NvcreApp(session=await session_with(DIAGNOSE, scenario=FLAKY_AND_FABRIC), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        pane = app.screen.query_one(FailuresPane)
        row = next(i for i, failure in enumerate(pane.failures) if failure.node == "gpu-node-11")
        assert pane.failures[row].measured == "-" and pane.failures[row].reason == "WorkloadFailed"
        cells = [" ".join(str(cell).split()) for cell in pane.get_row_at(row)]
        assert "intermittent, failed 3 of 5 tests" in cells, cells
        # A node whose value failed keeps its value there: the link fault's row.
        assert any(cell.startswith("busBandwidthGBps ") for cell in [" ".join(str(c).split()) for c in pane.get_row_at(0)]), pane.get_row_at(0)


async def test_nodes_are_listed_in_natural_order_in_the_pane_and_on_the_wall() -> None:
    """gpu-node-10 before gpu-node-2 (a fleet of 1024 listed gpu-node-100 after gpu-node-10): the map's order."""
    from nvcre_tui.engine.sim.scenario import Scenario
    from nvcre_tui.screens.wall import urgent_nodes

    from .harness import intra_all_reduce

    fleet = Scenario.model_validate({"name": "twelve", "seed": 3, "nodes": [{"count": 12, "nameDigits": 1, "cliques": 1}]})
    whole = intra_all_reduce("whole").replace("{testScale: intra-node}", "{testScale: full-scale}").replace("value >= 400", "value >= 100000")
    session = await session_with(intra_all_reduce("all").replace("value >= 400", "value >= 100000"), whole, scenario=fleet)
    snapshot = await Snapshot.read(session.store)
    names = [f"gpu-node-{i}" for i in range(1, 13)]
    assert [row.node for row in failure_rows(snapshot, "all")] == names  # every node misses 100000 GB/s
    assert [entry.subject for entry in urgent_nodes({name: ("failed", "") for name in reversed(names)}, set())] == names
    # Each name's key is made once, not at every sort of every redraw (1024 failed nodes: 25 ms a sort).
    from nvcre_tui.engine.names import natural_key

    assert natural_key("gpu-node-10") is natural_key("gpu-node-10") and natural_key("gpu-node-9") < natural_key("gpu-node-10")
    # The drill-down's members of a group (one group of all 12, blamed together), likewise.
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "whole")
        members = [(n.data or {})["node"] for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "node"]
        assert members == names, members
