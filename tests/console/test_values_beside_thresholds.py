"""A measured value is never shown on the other side of its threshold (README: 299.99 against `value >= 300`, never
300). A review found 479.993 against `value >= 480` shown `480.0` in the drill-down, the node screen and the bandwidth
screen, where the dashboard, the CLI report and `history node` said 479.99: every screen now shows it as the report
prints it (judging.thresholds.shown_measured, through detail.shown_measurement)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.widgets import DataTable, OptionList, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.judging.thresholds import compile_threshold
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW
from nvcre_tui.engine.views.diagnosis import InfraFault
from nvcre_tui.screens.bandwidth import BandwidthScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.node import timeline_text
from nvcre_tui.widgets.bandwidth import BandwidthHistogram
from nvcre_tui.widgets.detail import evidence_text, job_detail

from .harness import intra_all_reduce, open_drilldown, open_node_screen, reopen, save_finished

EDGE = intra_all_reduce("edge").replace("value >= 400", "value >= 480")  # gpu-node-07 (264.9 GB/s) misses it
WORKFLOW_NAME = "edge-communication-nccl-all-reduce"
NODE, VALUE = "gpu-node-07", 479.993  # measured just under `value >= 480`: one decimal read 480.0, which meets it


@pytest.fixture(scope="module")
def finished_edge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert EDGE != intra_all_reduce("edge")
    return save_finished(tmp_path_factory.mktemp("edge") / "edge.json", EDGE)


def _replaced(obj: Any, old: float, new: float) -> Any:
    """`obj` with every number equal to `old` made `new`."""
    if isinstance(obj, dict):
        return {key: _replaced(value, old, new) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_replaced(value, old, new) for value in obj]
    return new if isinstance(obj, float) and obj == old else obj


async def just_under(state: Path) -> SimSession:
    """The finished session with NODE's Job (its evidence, and its Workflow's group records) measuring VALUE; still failed."""
    session = await reopen(state)
    [job] = [j for j in (await session.store.list(JOB, "default")).items if group_nodes(j) == [NODE]]
    old = job["status"]["measurements"][BUS_BANDWIDTH]
    assert not compile_threshold(BUS_BANDWIDTH, "value >= 480").evaluate(old).passed  # the verdict stays what it was
    await session.store.update_status(JOB, _replaced(job, old, VALUE))
    for wf in (await session.store.list(WORKFLOW, "default")).items:
        await session.store.update_status(WORKFLOW, _replaced(wf, old, VALUE))
    return session


async def test_the_drilldown_shows_a_value_just_under_its_threshold_under_it(finished_edge: Path) -> None:
    app = NvcreApp(session=await just_under(finished_edge), live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "edge")
        labels = [str(n.label) for n in DrilldownScreen._walk(screen.query_one(Tree).root)]
        assert any(label.endswith(" (1 node)  ThresholdViolated  479.99 GB/s") for label in labels), labels
        assert not any("480.0 GB/s" in label for label in labels), labels
        tree = screen.query_one(Tree)
        [node] = [n for n in DrilldownScreen._walk(tree.root) if (n.data or {}).get("kind") == "node" and (n.data or {}).get("node") == NODE]
        screen._reveal(node)
        await pilot.pause()
        tree.move_cursor(node)
        await pilot.pause()
        detail = str(screen.query_one("#detail", Static).render())  # its Job's measurements and evidence
        assert "busBandwidthGBps  479.99 GB/s" in detail and "measured 479.99 GB/s, expected value >= 480" in detail, detail


async def test_the_node_screen_shows_a_value_just_under_its_threshold_under_it(finished_edge: Path) -> None:
    app = NvcreApp(session=await just_under(finished_edge), live=False)
    async with app.run_test(size=(200, 40)) as pilot:
        screen = await open_node_screen(app, pilot, NODE)
        table = screen.query_one("#results", DataTable)
        measured = [str(table.get_row_at(i)[3]) for i in range(table.row_count)]
        assert measured and all(m.endswith("busBandwidthGBps 479.99") for m in measured), measured


async def test_the_bandwidth_screen_shows_a_value_just_under_its_threshold_under_it(finished_edge: Path) -> None:
    app = NvcreApp(session=await just_under(finished_edge), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.refresh_snapshot()
        await app.push_screen(BandwidthScreen(WORKFLOW_NAME))
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BandwidthScreen)
        [outlier] = [o for o in screen.outliers if o.label == NODE]
        assert outlier.shown == "479.99" and "fails threshold value >= 480" in outlier.reason
        chooser = [str(option.prompt) for option in screen.query_one(OptionList).options if option.id and NODE in str(option.prompt)]
        assert chooser and chooser[0].split()[2:] == ["479.99", "▾"], chooser
        assert f"▾ {NODE}" in (listed := str(screen.query_one("#bw-outliers", Static).render())) and " 479.99 GB/s" in listed, listed
        assert f"▾ {NODE} 479.99" in str(screen.query_one(BandwidthHistogram).render())
        # the plot's peak is the measured value too (the largest out-of-place busbw of the run's log)
        [row] = [r for r in screen._rows if r.label == NODE]
        screen._curves[row.job] = {1 << 30: 400.0, 1 << 34: VALUE}
        assert screen._plot_note([row], row).startswith(f"{NODE}: peak 479.99 GB/s at 16G;")


def test_a_diagnosis_tests_values_are_shown_on_their_side_of_the_threshold() -> None:
    """A fault's tests read `✗ r1-inter-0 ... 480.0 GB/s` against `value >= 480`; a verdict's, `480` (6 significant digits)."""
    tests = [{"group": "r1-inter-0", "stage": "inter", "nodes": ["n1", "n3"], "passed": False, "value": 479.993},
             {"group": "r2-inter-1", "stage": "inter", "nodes": ["n1", "n4"], "passed": False, "value": 479.9996}]
    state = {"domains": {"a": ["n1", "n2"], "b": ["n3", "n4"]}, "tests": tests}
    fault = InfraFault(("a", "b"), "degraded", "communication/nccl-all-reduce", "wf", "k", tests=("r1-inter-0", "r2-inter-1"),
                       values=(479.993, 479.9996), threshold="value >= 480")
    lines = DrilldownScreen._fault_detail(fault, state).plain.splitlines()
    assert "  ✗ r1-inter-0 (inter) on n1, n3  479.99 GB/s" in lines and "  ✗ r2-inter-1 (inter) on n1, n4  479.9996 GB/s" in lines, lines
    row = {"node": "n1", "verdict": "faulty", "record": "failed 2 of 2 tests"}
    lines = DrilldownScreen._verdict_detail(row, state, "value >= 480").plain.splitlines()
    assert "  ✗ r2-inter-1 (inter) with n4  479.9996 GB/s" in lines, lines
    assert fault.measured == "busBandwidthGBps 479.99-479.9996 GB/s in 2 tests (value >= 480)"  # it read 479.99-480.00
    crashed = InfraFault(("a", "b"), "degraded", "communication/nccl-all-reduce", "wf", "k", values=(481.36294811734,), threshold="value >= 480")
    assert crashed.measured == "busBandwidthGBps 481.36 GB/s (value >= 480)"  # a test that failed otherwise, judged as measured


def _evidence(expression: str, value: float) -> dict[str, Any]:
    return compile_threshold(BUS_BANDWIDTH, expression).evaluate(value).to_dict()


def test_evidence_and_a_jobs_measurements_are_shown_on_their_side_of_the_threshold() -> None:
    """Two decimals read 479.996 as 480.00 (meets `value >= 480`) and 480.004 as 480.00 (misses `value > 480`)."""
    failed, passed = _evidence("value >= 480", 479.996), _evidence("value > 480", 480.004)
    assert (failed["passed"], passed["passed"]) == (False, True)
    text = Text()
    evidence_text(text, [failed, passed])
    assert "measured 479.996 GB/s, expected value >= 480" in text.plain and "measured 480.004 GB/s, expected value > 480" in text.plain, text.plain
    job = {"metadata": {"name": "j"}, "spec": {}, "status": {"measurements": {BUS_BANDWIDTH: 479.996}, "evidence": [failed]}}
    assert "busBandwidthGBps  479.996 GB/s" in job_detail(job, whole=True).plain


def test_the_node_screens_history_shows_each_value_on_its_side_of_the_threshold() -> None:
    """Its history read `✗ 480.0` for 479.993 against `value >= 480`, where `nvcre history node` said 479.99."""
    def entry(value: float, expression: str) -> dict[str, Any]:
        evidence = _evidence(expression, value)
        state = "passed" if evidence["passed"] else "failed"
        category = {"category": "communication/nccl-all-reduce", "state": state, "reason": "" if evidence["passed"] else "ThresholdViolation",
                    "message": "", "busBW": value, "measurements": {BUS_BANDWIDTH: value}, "evidence": [evidence], "jobs": []}
        return {"certification": f"c-{value}", "completionTime": "2025-01-01T00:00:00Z", "categories": [category], "result": state}

    text = timeline_text([entry(479.993, "value >= 480"), entry(480.004, "value > 480")], {}, {}).plain
    # with its unit, as `nvcre history node` says it (parsers.measurements.with_unit)
    assert "nccl-all-reduce ✗ 479.99 GB/s (ThresholdViolation)" in text and "nccl-all-reduce ✓ 480.004 GB/s" in text, text
    assert "2025-01-01 00:00Z  c-479.993" in text  # UTC, said as the CLI says it


def test_the_node_screens_history_says_a_diagnosis_verdict() -> None:
    """An intermittent node read `✗ failed ... nccl-all-reduce ✗ (WorkloadFailed)` on the node screen, where the report
    and `nvcre history node` say intermittent."""
    category: dict[str, Any] = {"category": "communication/nccl-all-reduce", "state": "failed", "reason": "WorkloadFailed", "verdict": "intermittent",
                "message": "diagnose: intermittent, failed 4 of 5 tests", "busBW": None, "measurements": {}, "evidence": [], "jobs": []}
    entry = {"certification": "flaky", "completionTime": "2025-01-01T00:00:00Z", "categories": [category], "result": "failed",
             "resultSaid": "intermittent"}
    text = timeline_text([entry], {}, {}).plain
    assert "flaky" in text and "✗ intermittent" in text and "nccl-all-reduce ✗ intermittent (WorkloadFailed)" in text, text


def test_the_node_screens_history_aligns_names_to_the_longest_shown() -> None:
    """On 80x24 the line read `2026-01-01 01:16Z  overnight                    ✗ faulty       nccl-all-reduc…`: the name
    padded to 28 columns, the cells that say what failed and by how much cut by the line's ellipsis. Names are aligned
    to the longest one shown, two spaces after it."""
    def entry(name: str) -> dict[str, Any]:
        category: dict[str, Any] = {"category": "communication/nccl-all-reduce", "state": "failed", "reason": "ThresholdViolation", "verdict": None,
                    "message": "", "busBW": None, "measurements": {}, "evidence": [], "jobs": []}
        return {"certification": name, "completionTime": "2025-01-01T00:00:00Z", "result": "failed", "categories": [category]}

    lines = timeline_text([entry("overnight"), entry("weekly")], {}, {}).plain.splitlines()
    # the verdict too aligned to the longest shown (padded to 12, "faulty" took the first cell's value on 80 columns)
    assert lines[1] == "2025-01-01 00:00Z  weekly     ✗ failed nccl-all-reduce ✗ (ThresholdViolation)", lines
    assert lines[2] == "2025-01-01 00:00Z  overnight  ✗ failed nccl-all-reduce ✗ (ThresholdViolation)", lines


def test_the_node_screens_history_says_the_worst_verdict_beside_the_certification() -> None:
    """Faulty in one category, failed in another: the line began `✗ faulty in nccl-all-reduce, failed in ...`, the
    cells after it saying each category's verdict again; it says the worst alone."""
    from nvcre_tui.engine.history.queries import result_said, verdicts_of

    def category(name: str, verdict: str | None) -> dict[str, Any]:
        return {"category": name, "state": "failed", "reason": "ThresholdViolation", "verdict": verdict, "message": "", "busBW": None,
                "measurements": {}, "evidence": [], "jobs": []}

    entry: dict[str, Any] = {"certification": "mixed", "completionTime": "2025-01-01T00:00:00Z", "result": "failed",
                             "categories": [category("communication/nccl-all-reduce", "faulty"), category("communication/nccl-loopback", None)]}
    entry["categories"].reverse()  # the worst first whatever the order of the categories
    entry["resultSaid"], entry["verdicts"] = result_said(entry), verdicts_of(entry)
    assert entry["resultSaid"] == "faulty in nccl-all-reduce, failed in nccl-loopback"
    text = timeline_text([entry], {}, {}).plain
    assert "mixed  ✗ faulty nccl-loopback ✗ (ThresholdViolation)  nccl-all-reduce ✗ faulty" in text, text
