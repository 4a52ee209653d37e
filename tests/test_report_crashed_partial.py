"""A run that crashed part-way through its sweep measured part of a run: the report neither calls its partial value
LOW (it failed for the crash, not the threshold) nor reads a threshold out of reach from it (a walkthrough's report
said "threshold value >= 300 is above anything measured on this fleet: best 235.97 GB/s" of a run an XID stopped at
512 MiB, and told the reader the threshold, not the node, was wrong)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.views.nodes import node_history
from nvcre_tui.engine.views.snapshot import Snapshot

# An XID 51 s into a 4-node full-scale all-reduce: the sweep stops at 362.98 GB/s, short of the ~400 a whole run
# measures. 420 is within 10% of a whole run (not out of reach) and more than 10% above the partial value.
SCENARIO = """\
name: crash-part-way
seed: 7
nodes: [{count: 4, cliques: 1}]
faults:
  - {type: xid, node: gpu-node-03, gpu: 5, xid: 79, at: 51s}
"""
CERTIFICATION = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: crash
spec:
  target:
    nodeSelector: {nvidia.com/gpu.present: "true"}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: full-scale, thresholds: {busBandwidthGBps: "value >= 420"}}
"""


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], Path]:
    folder: Path = tmp_path_factory.mktemp("crash")
    (folder / "scenario.yaml").write_text(SCENARIO)
    (folder / "cert.yaml").write_text(CERTIFICATION)
    store = ["--state", str(folder / "sim.db"), "--history", str(folder / "h.db")]
    code, text = _run("certification", "run", "--sim", *store, "--scenario", str(folder / "scenario.yaml"),
                      "--cert-file", str(folder / "cert.yaml"), "--wait")
    assert code == 1, text
    code, raw = _run("certification", "report", "crash", *store, "-o", "json")
    assert code == 1, raw
    return text, json.loads(raw), folder / "h.db"


def test_the_run_crashed_after_measuring_below_the_threshold(reports: tuple[str, dict[str, Any], Path]) -> None:
    """The premise: the group crashed (WorkloadFailed, gpu-node-03 blamed) after measuring a value under 420."""
    _, report, _ = reports
    [category] = report["categories"]
    [group] = category["groupBandwidth"]
    assert group["failed"] and group["reason"] == "WorkloadFailed" and group["partialBusBW"] < 420 * 0.9, group
    assert [node["name"] for node in category["failedNodes"]] == ["gpu-node-03"]


def test_a_crashed_group_is_not_called_low(reports: tuple[str, dict[str, Any], Path]) -> None:
    text, _, _ = reports
    [row] = [line for line in text.splitlines() if line.startswith("│   ✗ group-0  ")]
    assert "WorkloadFailed" in row and "LOW" not in row, row


def test_a_crashed_groups_bandwidth_row_says_its_reason_not_its_partial_value(reports: tuple[str, dict[str, Any], Path]) -> None:
    """"Bandwidth by group" read `✗ group-0  362.98 GB/s  WorkloadFailed`, and JSON groupBandwidth busBW 362.98 (the HTML
    report's bar too): a sweep an XID cut short, read as the group's measurement. It is kept apart (partialBusBW)."""
    text, report, _ = reports
    [row] = [line for line in text.splitlines() if line.startswith("│   ✗ group-0  ")]
    assert row.startswith("│   ✗ group-0  no measurement  WorkloadFailed  [gpu-node-01,") and "GB/s" not in row, row
    [group] = report["categories"][0]["groupBandwidth"]
    assert group["busBW"] is None and group["partialBusBW"] == 362.98, group


def test_no_threshold_is_out_of_reach_by_a_crashed_run(reports: tuple[str, dict[str, Any], Path]) -> None:
    text, report, _ = reports
    assert "Out of reach" not in text and "above anything measured" not in text, text
    assert not report["categories"][0].get("thresholdOutOfReach"), report["categories"][0].get("thresholdOutOfReach")


def test_the_history_keeps_no_value_of_the_crashed_run_for_the_nodes_it_did_not_blame(reports: tuple[str, dict[str, Any], Path]) -> None:
    """gpu-node-01 sat in the run gpu-node-03's XID stopped: the archive gave it that run's 362.98 GB/s (MEASURED, and
    a point of its bus bandwidth trend, read as the node slowing down), a value of a sweep cut short by another node."""
    code, raw = _run("history", "node", "gpu-node-01", "--history", str(reports[2]), "-o", "json")
    assert code == 0, raw
    said = json.loads(raw)
    [certification] = said["certifications"]
    [row] = certification["categories"]
    assert row["state"] == "inconclusive" and row["measurements"] == {} and row["busBW"] is None, row
    assert said["trend"] == {}, said["trend"]


def test_the_categorys_bandwidth_is_not_the_partial_sweep_of_a_crashed_run(reports: tuple[str, dict[str, Any], Path]) -> None:
    """`Bandwidth: busBW 362.98 GB/s` stood for the category's bandwidth: the one run had crashed part-way."""
    text, report, _ = reports
    assert report["categories"][0]["bandwidth"] is None, report["categories"][0]["bandwidth"]
    assert not re.search(r"│ Bandwidth: ", text), text


TRAINING_CRASH = """\
name: training-crash
seed: 7
nodes: [{count: 2, cliques: 1}]
faults:
  - {type: xid, node: gpu-node-02, gpu: 1, xid: 79, at: 2m30s}
"""
TRAINING = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: tcrash}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: training, variant: nemotron5-8b}
"""


def test_a_training_run_that_crashed_reports_no_goodput(tmp_path: Path) -> None:
    """A training an XID stopped after a few steps said `Goodput: 1.00 (100%)`, TFLOP/s and step time (JSON training)
    beside its WorkloadFailed: the steps before the crash, as if the run had trained to its end."""
    (tmp_path / "scenario.yaml").write_text(TRAINING_CRASH)
    (tmp_path / "cert.yaml").write_text(TRAINING)
    code, text = _run("certification", "run", "--sim", "--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db"),
                      "--scenario", str(tmp_path / "scenario.yaml"), "--cert-file", str(tmp_path / "cert.yaml"), "--wait",
                      "--results-file", str(tmp_path / "r.json"))
    assert code == 1, text
    [category] = json.loads((tmp_path / "r.json").read_text())["categories"]
    assert category["failedGroups"][0]["reason"] == "WorkloadFailed", category["failedGroups"]
    assert category["training"] is None, category["training"]
    assert "Goodput" not in text and "TFLOPs/GPU" not in text, text


def test_a_crashed_groups_partial_value_is_not_judged_below_its_threshold(reports: tuple[str, dict[str, Any], Path]) -> None:
    """JSON belowMin said true of the crashed group's 362.98 GB/s: the threshold never judged that partial sweep."""
    _, report, _ = reports
    [group] = report["categories"][0]["groupBandwidth"]
    assert group["belowMin"] is None and group["reason"] == "WorkloadFailed", group


def test_a_crashed_clique_says_its_reason_not_its_partial_value(tmp_path: Path) -> None:
    """The Cliques row read `✗ clique-0  4/4 nodes  362.98 GB/s` (JSON cliques busBW too) of the sweep an XID cut short."""
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "cert.yaml").write_text(CERTIFICATION.replace("full-scale", "intra-rack"))
    store = ["--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db")]
    code, text = _run("certification", "run", "--sim", *store, "--scenario", str(tmp_path / "scenario.yaml"),
                      "--cert-file", str(tmp_path / "cert.yaml"), "--wait")
    assert code == 1, text
    code, text = _run("certification", "report", "crash", *store)
    assert code == 1 and "│   ✗ clique-0  4/4 nodes  WorkloadFailed\n" in text, text
    code, raw = _run("certification", "report", "crash", *store, "-o", "json")
    [clique] = json.loads(raw)["categories"][0]["cliques"]
    assert clique["busBW"] is None and clique["reason"] == "WorkloadFailed", clique


def test_the_history_keeps_no_value_of_the_crashed_run_for_the_node_it_blamed_nor_in_its_job_rows(
        reports: tuple[str, dict[str, Any], Path]) -> None:
    """gpu-node-03, blamed for the XID, was archived with the 362.98 GB/s its crash cut short (busBW, measurements and
    trend), and every node's `jobs` row of the crashed Job carried it: the report reads it as no measurement
    (report.model.measured_whole), and so does the history."""
    for node, state in (("gpu-node-03", "failed"), ("gpu-node-01", "inconclusive")):
        code, raw = _run("history", "node", node, "--history", str(reports[2]), "-o", "json")
        assert code == 0, raw
        said = json.loads(raw)
        [row] = said["certifications"][0]["categories"]
        assert row["state"] == state and row["measurements"] == {} and row["busBW"] is None, row
        assert [job["measurements"] for job in row["jobs"]] == [{}], row["jobs"]
        assert said["trend"] == {}, said["trend"]


async def test_the_node_screen_shows_no_value_of_the_crashed_run(reports: tuple[str, dict[str, Any], Path]) -> None:
    """The node screen's Jobs (views.nodes.node_history) read the crashed Job's 362.98 GB/s as each member's value."""
    folder = reports[2].parent
    session = await SimSession.open(load_scenario(folder / "scenario.yaml"), folder / "sim.db", history=None, want_engine=False)
    try:
        snapshot = await Snapshot.read(session.store)
        for node in ("gpu-node-03", "gpu-node-01"):
            [row] = node_history(snapshot, node)
            assert row["phase"] == "Failed" and row["measurements"] == {}, row
    finally:
        await session.close()


def test_the_html_report_draws_no_curve_of_the_crashed_run(reports: tuple[str, dict[str, Any], Path]) -> None:
    """The HTML report drew the crashed run's curve, cut at 128 MiB, beside whole runs' (and took such a curve for one
    of the lowest groups): its note says the reason instead."""
    folder = reports[2].parent
    code, html = _run("certification", "report", "crash", "--state", str(folder / "sim.db"), "--history", str(folder / "h.db"), "-o", "html")
    assert code == 1 and "<figcaption>Bus bandwidth vs message size" not in html, html
    assert "Size curves: group-0 (4 nodes): WorkloadFailed: no measurement (what it read is part of a sweep" in html, html


def test_a_run_failed_for_a_threshold_that_could_not_be_evaluated_measured_a_whole_sweep() -> None:
    """A group failed InvalidThresholdExpression finished its sweep (the expression is at fault, not the run): its value
    showed as "no measurement (what it read is part of a sweep)" and apart, as partialBusBW. It is a whole run's."""
    from nvcre_tui.engine.judging.thresholds import INVALID_EXPRESSION
    from nvcre_tui.engine.report.model import cut_short, measured_whole, whole_job_names

    group = {"name": "group-0", "phase": "Failed", "reason": INVALID_EXPRESSION, "jobRef": "c-nccl-group-0-iter-1",
             "measurements": {"busBandwidthGBps": 240.3}}
    crashed = {**group, "name": "group-1", "reason": "WorkloadFailed", "jobRef": "c-nccl-group-1-iter-1"}
    assert measured_whole(group) and cut_short(group) is None
    assert not measured_whole(crashed) and cut_short(crashed) == "WorkloadFailed"
    workflow = {"status": {"orchestration": {"currentIteration": 1, "groups": [group, crashed]}}}
    assert whole_job_names(workflow) == {"c-nccl-group-0-iter-1"}
