"""The history tells a certification's story as its report does: every category its own row (two of one
domain/variant as the report numbers them), a value that missed its threshold never printed as one that meets it,
the reason the report gives for every node that did not pass or was left out, the nodes the report counts; and an
archive that fails for nvcre's own fault says so."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.history import HistoryQuery, archive, open_history
from nvcre_tui.engine.history.archive import write_record
from nvcre_tui.engine.api.vocabulary import THRESHOLD_OUT_OF_REACH
from nvcre_tui.engine.history.record import CertRecord, NodeResult
from nvcre_tui.engine.session import SimSession
from tests.history.helpers import certify, fleet

CASES = Path(__file__).parents[1] / "cases" / "scenarios"
Obj = dict[str, Any]


def run(tmp_path: Path, cert: Path, scenario: Path) -> Path:
    """`nvcre certification run --sim --wait` of `cert` on `scenario`'s fleet: its history."""
    history = tmp_path / "history.db"
    main(["certification", "run", "--sim", "--scenario", str(scenario), "--cert-file", str(cert), "--wait",
          "--state", str(tmp_path / "state.db"), "--history", str(history)])
    return history


def run_case(tmp_path: Path, case: str) -> Path:
    return run(tmp_path, CASES / case / "cert.yaml", CASES / case / "scenario.yaml")


def write(tmp_path: Path, name: str, body: Obj) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body))
    return path


def history_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    assert main(["history", *args, "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


# ----- two categories of one domain/variant ----------------------------------------------------------------------

def test_two_categories_of_one_domain_variant_keep_a_row_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report fails gpu-node-02 in category #1 (>= 300) and passes it in #2 (>= 100): the history must not keep
    #2's pass in place of #1's failure."""
    def category(threshold: str) -> Obj:
        return {"domain": "communication", "variant": "nccl-all-reduce",
                "options": {"testScale": "intra-node", "thresholds": {"busBandwidthGBps": threshold}}}
    cert = write(tmp_path, "dup.cert.yaml", {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "dup"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [category("value >= 300"), category("value >= 100")]}})
    scenario = write(tmp_path, "dup.scn.yaml", {"name": "dup", "seed": 4, "nodes": [{"count": 4, "cliques": 1}],
                                                 "faults": [{"type": "slow-gpu", "node": "gpu-node-02", "gpu": 1, "factor": 0.5}]})
    history = run(tmp_path, cert, scenario)
    report = HistoryQuery(history).report("dup")
    assert report is not None and report["failedNodes"] == ["gpu-node-02"]
    [entry] = history_json(capsys, "node", "gpu-node-02", "--history", str(history))["certifications"]
    assert [(c["category"], c["state"], c["reason"]) for c in entry["categories"]] == [
        ("communication/nccl-all-reduce #1", "failed", "ThresholdViolation"), ("communication/nccl-all-reduce #2", "passed", "")]
    [row] = history_json(capsys, "certifications", "--history", str(history))
    assert (row["result"], row["failedNodes"]) == ("FAILED", 1)
    nodes = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}
    assert (nodes["gpu-node-02"]["lastResult"], nodes["gpu-node-02"]["failures"]) == ("failed", 1)


def test_two_results_of_one_node_under_one_category_are_refused_not_one_kept(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    connection = open_history(history)
    results = [NodeResult("gpu-node-02", "communication/nccl-all-reduce", "failed", "ThresholdViolation"),
               NodeResult("gpu-node-02", "communication/nccl-all-reduce", "passed")]
    record = CertRecord("uid-1", "dup", "default", "FAILED", None, "2026-01-01T00:00:00Z", {}, results, {})
    with pytest.raises(sqlite3.IntegrityError):
        write_record(connection, "sim", record)
    connection.close()
    assert HistoryQuery(history).certifications() == []  # nothing of it written


# ----- a value near its threshold ---------------------------------------------------------------------------------

def near_history(path: Path, measured: float, passed: bool) -> Path:
    """One certification where gpu-node-07 measured `measured` against `value >= 300` (`passed`, as judged)."""
    connection = open_history(path)
    connection.execute("INSERT INTO certifications (id, source, uid, name, namespace, result, start_time, completion_time, archived_at, report) "
                       "VALUES (1, 'sim', 'uid-1', 'near', 'default', ?, NULL, '2026-01-01T01:00:00Z', '2026-01-01T01:00:00Z', '{}')",
                       ("PASSED" if passed else "FAILED",))
    evidence = [{"metric": "busBandwidthGBps", "measured": measured, "expression": "value >= 300", "passed": passed,
                 "reason": "ThresholdMet" if passed else "ThresholdViolated", "message": ""}]
    connection.execute("INSERT INTO node_results (cert_id, node, category, state, reason, message, bus_bw, measurements, evidence, jobs) "
                       "VALUES (1, 'gpu-node-07', 'communication/nccl-all-reduce', ?, ?, '', ?, ?, ?, '[]')",
                       ("passed" if passed else "failed", "" if passed else "ThresholdViolation", measured,
                        json.dumps({"busBandwidthGBps": measured}), json.dumps(evidence)))
    connection.close()
    return path


@pytest.mark.parametrize(("measured", "passed", "shown"), [(299.99, False, "299.99"), (299.996, False, "299.996"), (300.004, True, "300.00")])
def test_a_value_is_shown_on_its_side_of_the_threshold(tmp_path: Path, capsys: pytest.CaptureFixture[str], measured: float,
                                                      passed: bool, shown: str) -> None:
    history = near_history(tmp_path / "history.db", measured, passed)
    capsys.readouterr()
    assert main(["history", "node", "gpu-node-07", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert f"busBandwidthGBps {shown}" in out and f"bus bandwidth trend: nccl-all-reduce ▄ {shown}" in out
    assert main(["history", "nodes", "--history", str(history)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu-node-07"))
    assert row.endswith(f"nccl-all-reduce ▄ {shown}"), row


# ----- reasons ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("case", "node", "state", "reason", "said"), [
    ("missing-measurement-short-training", "gpu-node-01", "inconclusive", "MeasurementUnavailable", 'not evaluated: no measured value'),
    ("diagnose-threshold-out-of-reach", "gpu-node-01", "inconclusive", THRESHOLD_OUT_OF_REACH,
     "threshold value >= 900 is above anything measured on this fleet"),
    ("node-leaves-target-between-categories", "gpu-node-04", "excluded", "LeftTarget", "no longer matches the target"),
    ("cordoned-before-run", "gpu-node-04", "excluded", "Cordoned", "cordoned"),
])
def test_every_node_that_did_not_pass_keeps_the_reason_the_report_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                                                                        node: str, state: str, reason: str, said: str) -> None:
    history = run_case(tmp_path, case)
    summary = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}[node]
    assert (summary["lastResult"], summary["lastReason"]) == (state, reason)
    [entry] = history_json(capsys, "node", node, "--history", str(history))["certifications"]
    [why] = [c for c in entry["categories"] if c["state"] == state]
    assert why["reason"] == reason and said in why["message"], why["message"]


def test_an_expression_that_cannot_be_evaluated_is_the_reason_of_the_node_it_left_unjudged(tmp_path: Path,
                                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """gpu-node-02 measures about 240.3 GB/s, where the expression indexes out of its list (no probe value lies there:
    the expression is accepted); the other nodes measure about 480 and pass."""
    cert = write(tmp_path, "cel.cert.yaml", {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "cel"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}],
                 "options": {"thresholds": {"busBandwidthGBps": "value > 240.05 && value < 260.0 ? [1][int(value)] == 1 : value >= 100"}}}})
    scenario = write(tmp_path, "cel.scn.yaml", {"name": "cel", "seed": 4, "nodes": [{"count": 4, "cliques": 1}],
                                                 "faults": [{"type": "slow-gpu", "node": "gpu-node-02", "gpu": 1, "factor": 0.5}]})
    history = run(tmp_path, cert, scenario)
    nodes = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}
    assert (nodes["gpu-node-02"]["lastResult"], nodes["gpu-node-02"]["lastReason"]) == ("inconclusive", "InvalidThresholdExpression")
    assert main(["history", "nodes", "--history", str(history)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu-node-02"))
    assert " InvalidThresholdExpression " in row


# ----- counts -----------------------------------------------------------------------------------------------------

def test_certifications_count_the_nodes_the_report_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cordoned-before-run: the report says Nodes: 3 and Excluded: 1 (the cordoned one); so does the history."""
    history = run_case(tmp_path, "cordoned-before-run")
    report = HistoryQuery(history).report("cordoned-before-run")
    assert report is not None and (report["totalNodes"], len(report["excludedNodes"])) == (3, 1)
    [row] = history_json(capsys, "certifications", "--history", str(history))
    assert (row["nodes"], row["excludedNodes"]) == (3, 1)
    assert main(["history", "certifications", "--history", str(history)]) == 0
    head, line = capsys.readouterr().out.splitlines()[:2]
    cells = dict(zip([h.strip() for h in head.split("  ") if h.strip()], [c.strip() for c in line.split("  ") if c.strip()], strict=False))
    assert (cells["NODES"], cells["EXCLUDED NODES"]) == ("3", "1")


# ----- an archive that fails for nvcre's own fault ---------------------------------------------------------------

def test_a_dcgm_category_with_skipped_tests_is_archived(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The kind of certification whose archive once failed `too many values to unpack (expected 3)` (nodestates.py
    edited part-way: its compute giving (category, marks) pairs to a resolve still reading plain marks) archives
    cleanly, and as its report tells it."""
    history = run_case(tmp_path, "dcgm-skipped-tests-marked")
    assert "could not archive" not in capsys.readouterr().err
    report = HistoryQuery(history).report("dcgm-skipped-tests-marked")
    [row] = HistoryQuery(history).certifications()
    assert report is not None and (row["result"], row["failedNodes"]) == (report["result"], len(report["failedNodes"]))
    # It runs dcgm-level4 twice: gpu-node-02 passes #1 with its tests skipped and fails #2, which allows none.
    [entry] = HistoryQuery(history).node("gpu-node-02")
    assert [(c["category"], c["state"]) for c in entry["categories"]] == [("diagnostics/dcgm-level4 #1", "passed"),
                                                                         ("diagnostics/dcgm-level4 #2", "failed")]


async def test_an_archive_that_fails_for_nvcres_own_fault_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> CertRecord:
        raise ValueError("too many values to unpack (expected 3)")

    monkeypatch.setattr(archive, "build_record", broken)
    history = tmp_path / "history.db"
    session = await SimSession.open(fleet(), None, history=history)
    try:
        await certify(session, "weekly")
        assert session.archiver is not None
        session.archiver.flush(force=True)
        assert session.notices == [f"history: could not archive default/weekly: {history}: a bug in nvcre, not a problem of the history "
                                   "file (ValueError: too many values to unpack (expected 3))"]
    finally:
        await session.close()


# ----- a diagnosis's verdict --------------------------------------------------------------------------------------

def test_a_diagnosis_verdict_is_the_result_the_history_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """diagnose-flaky-and-fabric: the report's diagnosis says gpu-node-06 is intermittent; `history nodes` and `history
    node` said `failed WorkloadFailed`, the word intermittent only inside the JSON message."""
    history = run_case(tmp_path, "diagnose-flaky-and-fabric")
    report = HistoryQuery(history).report("diagnose-flaky-and-fabric")
    assert report is not None
    assert [(v["node"], v["verdict"]) for v in report["categories"][0]["diagnose"]["verdicts"]] == [("gpu-node-06", "intermittent")]
    capsys.readouterr()
    assert main(["history", "nodes", "--history", str(history)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu-node-06"))
    assert " intermittent  WorkloadFailed " in row, row
    assert main(["history", "node", "gpu-node-06", "--history", str(history)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "communication/nccl-all-reduce" in line)
    assert " intermittent  WorkloadFailed " in line, line
    summary = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}
    assert (summary["gpu-node-06"]["lastResult"], summary["gpu-node-06"]["lastResultSaid"]) == ("failed", "intermittent")
    assert summary["gpu-node-05"]["lastResultSaid"] == "passed"  # cleared by the diagnosis: no verdict said
    [entry] = history_json(capsys, "node", "gpu-node-06", "--history", str(history))["certifications"]
    assert [(c["state"], c["verdict"]) for c in entry["categories"]] == [("failed", "intermittent")]


def test_verdicts_that_differ_by_category_are_said_worst_first_with_their_categories(tmp_path: Path,
                                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """gpu-node-06 (a slow GPU) fails the loopback's threshold and is convicted faulty by the all-reduce's diagnosis:
    `history nodes` said LAST `faulty, failed`, leaving which category said which, and which counts more, to guess."""
    loopback = {"domain": "communication", "variant": "nccl-loopback", "options": {"thresholds": {"busBandwidthGBps": "value >= 300"}}}
    cert = yaml.safe_load((CASES / "diagnose-slow-gpu" / "cert.yaml").read_text())
    cert["spec"]["categories"].append(loopback)
    history = run(tmp_path, write(tmp_path, "cert.yaml", cert), CASES / "diagnose-slow-gpu" / "scenario.yaml")
    capsys.readouterr()
    assert main(["history", "nodes", "--history", str(history)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu-node-06"))
    assert "  faulty in nccl-all-reduce, failed in nccl-loopback  ThresholdViolation  " in row, row
    summary = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}["gpu-node-06"]
    assert summary["lastResult"] == "failed" and summary["lastResultSaid"] == "faulty in nccl-all-reduce, failed in nccl-loopback"
    assert summary["lastVerdicts"] == [{"category": "communication/nccl-all-reduce", "verdict": "faulty"},
                                       {"category": "communication/nccl-loopback", "verdict": "failed"}]
    [entry] = history_json(capsys, "node", "gpu-node-06", "--history", str(history))["certifications"]
    assert entry["verdicts"] == summary["lastVerdicts"]
    assert [(c["category"], c["state"], c["verdict"]) for c in entry["categories"]] == [
        ("communication/nccl-all-reduce", "failed", "faulty"), ("communication/nccl-loopback", "failed", None)]


def test_many_verdicts_and_series_are_cut_in_the_nodes_table_and_said_whole_elsewhere(tmp_path: Path,
                                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """gpu-node-06 convicted faulty by the all-reduce's diagnosis, failing both loopbacks' thresholds (and suspect in
    two more categories): `history nodes`' LAST was as wide as every deciding category's verdict and BUS BW TREND as five
    sparklines, so the table could fit no terminal. LAST is cut at 50 characters, worst first, then `+N more`; the trend at two series; `history
    node` and the JSON still say them all."""
    cert = yaml.safe_load((CASES / "diagnose-slow-gpu" / "cert.yaml").read_text())
    for variant in ("nccl-loopback", "nccl-loopback-nvswitch", "nccl-all-gather", "nccl-alltoall"):
        cert["spec"]["categories"].append({"domain": "communication", "variant": variant,
                                           "options": {"thresholds": {"busBandwidthGBps": "value >= 3000"}}})
    history = run(tmp_path, write(tmp_path, "cert.yaml", cert), CASES / "diagnose-slow-gpu" / "scenario.yaml")
    capsys.readouterr()
    assert main(["history", "nodes", "--history", str(history)]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("gpu-node-06"))
    assert "  faulty in nccl-all-reduce, +2 more  ThresholdViolation  " in row, row
    assert row.endswith("; +3 more") and row.count(" GB/s") == 0 and row.count(";") == 2, row
    assert max(len(line) for line in lines) < 200, lines
    summary = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}["gpu-node-06"]
    assert summary["lastResultSaid"] == "faulty in nccl-all-reduce, failed in nccl-loopback and nccl-loopback-nvswitch"
    assert len(summary["lastVerdicts"]) == 3 and len(summary["trend"]) == 5
    assert main(["history", "node", "gpu-node-06", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert [line.split()[3] for line in out.splitlines() if line.startswith("diagnose-slow-gpu")] == [
        "suspect", "faulty", "suspect", "failed", "failed"]
    assert out.count("+") == 0 and "nccl-alltoall ▄" in out  # every series in its trend line


def test_many_reasons_are_cut_in_the_nodes_table_and_said_whole_in_the_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mixed-failures-three-categories: gpu-node-01 failed the loopback's threshold and was left inconclusive by the
    all-reduce, whose message is long: REASON was as wide as every reason; it is cut as LAST is, the JSON whole."""
    history = run_case(tmp_path, "mixed-failures-three-categories")
    capsys.readouterr()
    assert main(["history", "nodes", "--history", str(history)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu-node-01"))
    assert re.search(r"  failed +ThresholdViolation, \+1 more  +never passed  ", row), row
    summary = {n["node"]: n for n in history_json(capsys, "nodes", "--history", str(history))}["gpu-node-01"]
    assert summary["lastReason"] == "ThresholdViolation, communication/nccl-all-reduce: in failed group group-0, not blamed"
    assert "lastReasons" not in summary
