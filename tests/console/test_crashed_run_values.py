"""A run that crashed part-way measured part of a sweep (report.model.measured_whole): the console showed its partial
value as a measurement in the drill-down's group line (`✗ group-0 (4 nodes)  WorkloadFailed  362.98 GB/s`), its Job
detail (`busBandwidthGBps  362.98 GB/s`) and the bandwidth screen (the chooser's value, the spread, the plot's peak).
Each now says its reason and that it is no measurement."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.bandwidth import BandwidthScreen, job_rows
from nvcre_tui.screens.drilldown import DrilldownScreen
from tests.test_report_crashed_partial import CERTIFICATION, SCENARIO

from .harness import open_drilldown, reopen, save_finished

# An XID 51 s into a 4-node full-scale all-reduce: the sweep stops at 362.98 GB/s (128 MiB), short of a whole run's
# (the report's test's fleet and certification, judged by 420 GB/s).
WORKFLOW = "crash-communication-nccl-all-reduce"
PARTIAL = "362.98"


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("crashed")
    (folder / "scenario.yaml").write_text(SCENARIO)
    return save_finished(folder / "state.json", CERTIFICATION, scenario=load_scenario(folder / "scenario.yaml"))


async def _reopened(state: Path) -> SimSession:
    return await reopen(state, scenario=load_scenario(state.parent / "scenario.yaml"))


async def test_the_drilldown_says_the_crashed_groups_reason_not_its_partial_value(crashed: Path) -> None:
    app = NvcreApp(session=await _reopened(crashed), live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "crash")
        tree = screen.query_one(Tree)
        [group] = [n for n in DrilldownScreen._walk(tree.root) if (n.data or {}).get("kind") == "group"]
        # the premise: its Job holds the partial value its crash cut short
        assert (group.data or {})["job"]["status"]["measurements"][BUS_BANDWIDTH] == float(PARTIAL)
        assert str(group.label) == "✗ group-0 (4 nodes)  WorkloadFailed", group.label
        screen._reveal(group)
        await pilot.pause()
        tree.move_cursor(group)
        await pilot.pause()
        detail = str(screen.query_one("#detail", Static).render())
        assert PARTIAL not in detail.replace("\n", " ").split("Failure log")[0], detail  # its log's rows may show it
        assert "Measured          WorkloadFailed: no measurement (what it read is part of a sweep" in detail, detail


async def test_the_bandwidth_screen_says_the_crashed_runs_reason_not_its_partial_value(crashed: Path) -> None:
    session = await _reopened(crashed)
    [row] = job_rows(await Snapshot.read(session.store), WORKFLOW)
    assert row.finished and row.value is None and row.shown == "" and row.cut_short == "WorkloadFailed", row
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.refresh_snapshot()
        await app.push_screen(BandwidthScreen(WORKFLOW))
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BandwidthScreen)
        listed = str(screen.query_one("#bw-outliers", Static).render())
        assert "✗ group-0" in listed and "WorkloadFailed: no measurement" in listed and PARTIAL not in listed, listed
        screen.query_one(OptionList).highlighted = 0  # the chooser starts on the lowest value: it has none
        await pilot.pause()
        note = str(screen.query_one("#bw-plot-note", Static).render())
        assert note == "group-0 (4 nodes): WorkloadFailed: no measurement (what it read is part of a sweep, not a whole run's); its sweep stops at 128M", note
