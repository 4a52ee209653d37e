"""BandwidthScreen and its text pictures: the slow GPU node stands out of an intra-node all-reduce, the
curves come from the real parser over each run's log, and the pure plot/histogram/outlier functions."""

from __future__ import annotations

import asyncio
import copy
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.style import Style
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.judging.measure import stored_value
from nvcre_tui.engine.parsers import parse_nccl
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.bandwidth import BandwidthScreen, job_rows, median_curve
from nvcre_tui.widgets.bandwidth import (
    MEDIAN_GLYPH,
    SERIES_GLYPHS,
    BandwidthHistogram,
    BandwidthPlot,
    Outlier,
    Series,
    find_outliers,
    histogram_text,
    plot_text,
    size_label,
    spread,
)

from .harness import intra_all_reduce, reopen, save_finished

INTRA_ALL_REDUCE = intra_all_reduce("bw")
WORKFLOW = "bw-communication-nccl-all-reduce"


@pytest.fixture(scope="module")
def finished_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The settled simulator saved once; each test reopens a private copy. Beside it, `pristine.json`, a copy no test
    opens in place: a session on it holds the engine itself, where one on the file other tests opened may be a viewer
    (its header says who holds the engine, a process id)."""
    saved = save_finished(tmp_path_factory.mktemp("bandwidth") / "state.json", INTRA_ALL_REDUCE)
    shutil.copyfile(saved, saved.with_name("pristine.json"))
    return saved



async def open_bandwidth(state: Path, pilot_size: tuple[int, int] = (120, 40)) -> NvcreApp:
    session = await SimSession.open(default_scenario(), state)
    session.path = None
    return NvcreApp(session=session, live=False)


async def push(app: NvcreApp, pilot: Pilot[None]) -> BandwidthScreen:
    await app.push_screen(BandwidthScreen(WORKFLOW))
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, BandwidthScreen)
    return app.screen


def measured(snapshot: Snapshot) -> dict[str, float]:
    """busBandwidthGBps per node, straight from the Jobs (single-node jobs: the group is one node)."""
    return {row.label: row.value for row in job_rows(snapshot, WORKFLOW) if row.value is not None}


# ---- the screen on the default scenario ---------------------------------------------------------------


async def test_the_slow_gpu_node_is_the_only_outlier_with_its_value(finished_state: Path) -> None:
    app = await open_bandwidth(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await push(app, pilot)
        assert app.snapshot is not None
        values = measured(app.snapshot)
        assert len(values) == 32 and all(label.startswith("gpu-node-") for label in values)
        assert [(o.label, o.value) for o in screen.outliers] == [("gpu-node-07", values["gpu-node-07"])]
        assert "threshold value >= 400" in screen.outliers[0].reason and "below the median" in screen.outliers[0].reason
        listed = str(screen.query_one("#bw-outliers", Static).render())
        assert "▾ gpu-node-07" in listed and f"{values['gpu-node-07']:.2f} GB/s" in listed
        histogram = str(screen.query_one(BandwidthHistogram).render())
        assert f"▾ gpu-node-07 {values['gpu-node-07']:.2f}" in histogram and "GB/s (busBandwidthGBps)" in histogram
        rows = [line for line in histogram.splitlines() if "│" in line]
        assert sum(int(line.split()[-1]) for line in rows if line.rstrip()[-1:].isdigit() and "▾" not in line) == 31


async def test_the_chooser_marks_each_job_by_its_own_verdict_and_outliers_apart(finished_state: Path) -> None:
    """The chooser's ✓/✗ was the spread's outlier flag: a group that crashed with a fine value read ✓, and a low one
    above the threshold ✗ (a review found both). It is the Job's verdict now, as every other screen says it; a low
    outlier is marked ▾ beside it."""
    app = await open_bandwidth(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await push(app, pilot)
        assert app.snapshot is not None
        snapshot = copy.deepcopy(app.snapshot)
        jobs = {j["metadata"]["name"]: j for j in snapshot.jobs}
        slow, crashed = jobs[f"{WORKFLOW}-group-6-iter-1"], jobs[f"{WORKFLOW}-group-7-iter-1"]  # gpu-node-07, gpu-node-08
        slow["status"]["conditions"], crashed["status"]["conditions"] = crashed["status"]["conditions"], slow["status"]["conditions"]
        screen.show(snapshot)
        await pilot.pause()
        chooser = screen.query_one(OptionList)
        prompts = {str(chooser.get_option_at_index(i).prompt).split()[1]: str(chooser.get_option_at_index(i).prompt)
                   for i in range(chooser.option_count)}
        assert prompts["gpu-node-07"].startswith("✓ gpu-node-07") and prompts["gpu-node-07"].endswith(" ▾")
        assert prompts["gpu-node-08"].startswith("✗ gpu-node-08") and not prompts["gpu-node-08"].endswith("▾")
        assert sum(p.startswith("✓ ") for p in prompts.values()) == 31 and all(len(p) <= 30 for p in prompts.values())
        assert "busBandwidthGBps per node (32 measured of 32 jobs)" in str(screen.query_one("#bw-histogram-title", Static).render())


async def test_plot_shows_the_chosen_node_against_the_median_and_follows_the_chooser(finished_state: Path) -> None:
    app = await open_bandwidth(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await push(app, pilot)
        assert app.snapshot is not None and isinstance(app.session, SimSession)
        plot = screen.query_one(BandwidthPlot)
        median, chosen = plot.series
        assert (median.name, median.glyph, chosen.name, chosen.glyph) == ("median of 32 groups", MEDIAN_GLYPH, "gpu-node-07", SERIES_GLYPHS[0])
        job = f"{WORKFLOW}-group-6-iter-1"
        run = app.snapshot.run_of(job)
        assert run is not None
        parsed = parse_nccl(await app.session.runner.logs(run))
        # Each curve's peak is its Job's measured value exactly, as stored (12 digits): the raw average's float noise
        # printed "peak 183.73" beside the chooser's and the report's 183.74.
        assert all(max(screen._curves[row.job].values()) == row.value for row in job_rows(app.snapshot, WORKFLOW))
        assert dict(chosen.points) == {s.size: stored_value(s.out_of_place.busbw) for s in parsed.sizes}  # the real parser's averages
        text = str(plot.render())
        assert text.splitlines()[0].strip() == "GB/s"
        assert all(label in text for label in ("8B", "1K", "1M", "1G", "16G", "○ median of 32 groups", "● gpu-node-07"))
        assert "gpu-node-07: peak" in str(screen.query_one("#bw-plot-note", Static).render())
        chooser = screen.query_one(OptionList)
        assert chooser.highlighted is not None and chooser.get_option_at_index(chooser.highlighted).id == job
        await pilot.press("down")
        await pilot.pause()
        assert plot.series[1].name == "gpu-node-08"


async def test_few_groups_are_all_drawn_and_missing_or_other_kinds_are_said(finished_state: Path) -> None:
    app = await open_bandwidth(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await push(app, pilot)
        assert app.snapshot is not None
        few = [f"{WORKFLOW}-group-{g}-iter-1" for g in (5, 6, 7)]  # gpu-node-06, -07, -08
        screen.show(Snapshot(workflows=app.snapshot.workflows, runs=app.snapshot.runs,
                             jobs=[j for j in app.snapshot.jobs if j["metadata"]["name"] in few]))
        await pilot.pause()
        series = screen.query_one(BandwidthPlot).series
        assert [(s.name, s.role) for s in series] == [("gpu-node-06", "other"), ("gpu-node-08", "other"), ("gpu-node-07", "selected")]
        assert len({s.glyph for s in series}) == 3  # one glyph per group, the chosen one drawn last
        assert "(3 measured of 3 jobs)" in str(screen.query_one("#bw-histogram-title", Static).render())
        snapshot = copy.deepcopy(app.snapshot)
        job = next(j for j in snapshot.jobs if j["metadata"]["name"] == f"{WORKFLOW}-group-0-iter-1")
        del job["status"]["measurements"]
        screen.show(snapshot)
        await pilot.pause()
        assert "✗ gpu-node-01" in str(screen.query_one("#bw-outliers", Static).render())
        assert "no busBandwidthGBps measured" in str(screen.query_one("#bw-outliers", Static).render())
        wf = copy.deepcopy(next(w for w in snapshot.workflows if w["metadata"]["name"] == WORKFLOW))
        wf["spec"]["jobTemplate"]["spec"]["workload"]["workloadRun"]["measurement"]["parser"] = "dcgm"
        screen.show(Snapshot(workflows=[wf]))
        assert "not an nccl-tests category (parser dcgm)" in str(screen.query_one("#bw-title", Static).render())
        screen.show(Snapshot())  # shown, then gone: said deleted, its curves gone with it (test_drilldown_deleted_elsewhere.py)
        assert "was deleted" in str(screen.query_one("#bw-title", Static).render())


# ---- pure functions -------------------------------------------------------------------------------------


def test_outliers_are_low_values_beyond_three_mads_or_failing_the_threshold() -> None:
    rng = random.Random(11)
    values = {f"n{i:02d}": 480 + rng.gauss(0, 1.0) for i in range(40)}
    assert find_outliers(values) == []  # a tight healthy fleet: 1 GB/s noise is never flagged
    values["slow"] = 300.0
    values["fast"] = 700.0  # higher is better: never an outlier
    cut = spread(list(values.values()))
    assert cut.cutoff == pytest.approx(cut.median - max(3 * cut.mad, 0.05 * cut.median))
    assert [o.label for o in find_outliers(values)] == ["slow"]
    flagged = find_outliers(values, lambda v: v >= 479.0, "threshold value >= 479")
    assert flagged[0].label == "slow" and flagged[0].reason.startswith("fails threshold value >= 479; ")
    assert {o.label for o in flagged[1:]} == {k for k, v in values.items() if v < 479.0 and k != "slow"}
    assert all("below the median" not in o.reason for o in flagged[1:])
    assert [o.value for o in flagged] == sorted(o.value for o in flagged)


def test_histogram_counts_every_value_once_and_names_outliers() -> None:
    values = {"a": 10.0, "b": 10.5, "c": 19.9, "d": 20.0, "low": 1.0}
    text = histogram_text(values, [Outlier("low", 1.0, "given", "1.00")], {}, bins=4, bar_width=8).plain
    rows = text.splitlines()[:-1]
    assert len(rows) == 4 and rows[0].startswith("     1.0–5.8")
    counts = [int(row.split("│")[1].split()[1]) if row.split("│")[1].strip() else 0 for row in rows]
    assert counts == [1, 1, 1, 2] and "▾ low 1.00" in rows[0]  # bins of 4.75 from 1.0: 10.0 | 10.5 | 19.9 20.0
    assert histogram_text({}, [], {}).plain.startswith("no busBandwidthGBps")


def test_plot_places_each_glyph_by_size_and_value() -> None:
    series = [Series("a", {8: 0.0, 1024: 50.0, 1 << 20: 100.0}, "●", "selected"), Series("b", {8: 100.0}, "▲")]
    text = plot_text(series, {"selected": Style(bold=True)}, width=60, height=5).plain
    lines = text.splitlines()
    top, bottom = lines[1], lines[5]  # title line, then rows from 100 down to 0
    assert top.startswith("  100 ┤") and bottom.startswith("    0 ┤")
    assert "▲" in top and "●" in bottom and "●" in top  # b at 8B top-left, a's 1M point at the top too
    assert lines[3].startswith("   50 ┤") and "●" in lines[3]
    assert lines[7].split() == ["8B", "1K", "1M"] and lines[8].split() == ["●", "a", "▲", "b"]
    assert plot_text([], {}, 60).plain.startswith("no nccl-tests rows")


def test_sizes_and_median_curves() -> None:
    assert [size_label(s) for s in (8, 1000, 1024, 3 << 20, 16 << 30)] == ["8B", "1000B", "1K", "3M", "16G"]
    assert median_curve([{8: 1.0, 16: 4.0}, {8: 3.0}, {8: 2.0, 16: 6.0}]) == {8: 2.0, 16: 5.0}


async def test_b_on_a_category_without_nccl_curves_says_so_instead_of_opening_an_empty_screen() -> None:
    """`b` on a DCGM category opened the bandwidth screen to say it had nothing to show (a review found it)."""
    from textual.widgets import Tree

    from .harness import open_drilldown, session_run_for

    dcgm = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: diag}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories: [{domain: diagnostics, variant: dcgm-level4, options: {maxConcurrent: 8}}]
"""
    app = NvcreApp(session=await session_run_for(dcgm, 60), live=False)  # its Workflow made, its runs going
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "diag")
        tree = screen.query_one(Tree)
        tree.move_cursor(tree.root.children[0])
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
        assert app.screen is screen  # stayed
        said = [n.message for n in app._notifications]
        assert any("bandwidth curves are for nccl-tests categories" in m and "has parser dcgm" in m for m in said), said


# ---- snapshot -------------------------------------------------------------------------------------------


def test_snapshot_bandwidth_screen(snap_compare: Any, finished_state: Path) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.pause()
        await pilot.app.push_screen(BandwidthScreen(WORKFLOW))
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    session = asyncio.run(reopen(finished_state.with_name("pristine.json")))
    assert session.engine is not None  # not a viewer: the header says no process id
    assert snap_compare(NvcreApp(session=session, live=False), terminal_size=(120, 40), run_before=run_before)


def test_a_groups_repeated_runs_are_numbered_and_a_diagnose_test_is_not() -> None:
    """intra-rack twice, then onFailure: diagnose: `group-0 #1` and `group-0 #2`, but `r1-part-0` alone (its Job
    carries the last iteration's label; `#2` read as if the test were an iteration's)."""
    from nvcre_tui.engine.views.snapshot import Snapshot
    from tests.scenarios.harness import run_case

    objects = run_case("repeat-on-failure-every-iteration").objects
    [workflow] = objects["Workflow"]
    snapshot = Snapshot(workflows=objects["Workflow"], jobs=objects["Job"], runs=objects.get("WorkloadRun", []))
    labels = [row.label for row in job_rows(snapshot, workflow["metadata"]["name"])]
    assert any(label.endswith(" #1") for label in labels) and any(label.endswith(" #2") for label in labels)
    tests = [label for label in labels if label.startswith("r")]
    assert tests and not any("#" in label for label in tests), labels
