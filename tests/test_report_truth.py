"""What the report says is what happened: a clique failed in any iteration did not pass, a group that measured
nothing is failed rather than low, JUnit names each category once and says why it failed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.model import _low, _ran
from nvcre_tui.engine.report.text import render_text

FLAKY_FLEET = """
name: flaky-intra-rack
seed: 3
nodes: [{count: 8, cliques: 2}]
faults:
  - {type: flaky, node: gpu-node-02, probability: 0.5}
"""
TWICE_INTRA_RACK = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: ir2}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack, repeatCount: 2, thresholds: {busBandwidthGBps: "value >= 300"}}
"""


def test_a_clique_whose_group_failed_in_an_earlier_iteration_did_not_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario, cert, results = tmp_path / "fleet.yaml", tmp_path / "cert.yaml", tmp_path / "r.json"
    scenario.write_text(FLAKY_FLEET)
    cert.write_text(TWICE_INTRA_RACK)
    assert main(["certification", "run", "--sim", "--scenario", str(scenario), "--state", str(tmp_path / "sim.db"),
                 "--history", str(tmp_path / "h.db"), "--cert-file", str(cert), "--wait", "--results-file", str(results)]) == 1
    capsys.readouterr()
    [category] = json.loads(results.read_text())["categories"]
    failed = {row["groupName"] for row in category["groupBandwidth"] if row["failed"]}
    assert failed == {"group-0 (iter 1)"}, failed  # seed 3: the flaky node fails the first iteration only
    assert [(c["name"], c["passed"]) for c in category["cliques"]] == [("clique-0", False), ("clique-1", True)]
    assert all(i["durationSeconds"] is not None for i in category["iterations"])


def test_a_group_that_measured_nothing_is_not_low() -> None:
    assert _low("value >= 300", None) is None
    assert _low("value >= 300", 241.0) is True and _low("value >= 300", 400.0) is False


@pytest.mark.parametrize(("phase", "reason", "ran"), [
    ("Succeeded", None, True), ("Failed", "WorkloadFailed", True), ("Failed", "ThresholdViolated", True),
    ("Failed", "WorkloadNotStarted", False), ("Failed", "ImagePullFailed", False), ("Failed", "WorkloadNotCreated", False),
    ("Failed", "SchedulingBlocked", False), ("Failed", "NodeNotFound", False), ("Running", None, False),
])
def test_a_clique_counts_its_nodes_validated_only_when_its_workload_ran(phase: str, reason: str | None, ran: bool) -> None:
    """A group whose pods never ran (no controller made them, no image) tested no node: `✗ c1 2/2 nodes` said otherwise."""
    assert _ran({"phase": phase, "reason": reason, "nodes": ["n1", "n2"]}) is ran


def _report(categories: list[dict[str, Any]], result: str = "FAILED", **extra: Any) -> dict[str, Any]:
    return {"name": "cert", "namespace": "default", "result": result, "categories": categories, "passedCategories": 0,
            "totalCategories": len(categories), "failedNodeDetails": [], "excludedNodes": [], **extra}


def _category(status: str, **extra: Any) -> dict[str, Any]:
    return {"domain": "diagnostics", "variant": "dcgm-level4", "status": status, "runtimeSeconds": 60.0, **extra}


def test_junit_names_a_repeated_category_apart_and_counts_only_test_cases() -> None:
    report = _report([_category("Succeeded"), _category("Failed", failureReason="1 group failed")],
                     workloadFallback="ran as batch/v1 Jobs")
    suite = ET.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["dcgm-level4 #1", "dcgm-level4 #2"]
    assert suite.get("tests") == "2" and suite.get("failures") == "1"  # the properties element is no test
    assert "diagnostics/dcgm-level4 #2" in render_text(report)


def test_junit_says_why_a_category_failed_when_no_node_was_blamed() -> None:
    group = {"name": "group-0", "reason": "MeasurementUnavailable", "message": "avgStepTimeSec not evaluated: no measured value; no node blamed"}
    report = _report([_category("Failed", failureReason="1 group failed; 0 nodes blamed", failedNodes=[], failedGroups=[group])])
    failure = ET.fromstring(render_junit([report])).find("testsuite/testcase/failure")
    assert failure is not None and failure.text == f"group-0: MeasurementUnavailable: {group['message']}"


def test_junit_names_the_nodes_an_incomplete_certification_left_out() -> None:
    excluded = [{"name": "gpu-node-03", "reason": "Cordoned", "message": "cordoned (spec.unschedulable)"}]
    report = _report([_category("Succeeded")], result="INCOMPLETE", excludedNodes=excluded)
    error = ET.fromstring(render_junit([report])).find("testsuite/testcase[@name='certification']/error")
    assert error is not None
    assert error.get("message") == "certification INCOMPLETE: 1 node(s) excluded, not tested: gpu-node-03"
    assert error.text == "gpu-node-03: cordoned (spec.unschedulable)"


def test_junit_names_the_nodes_a_failed_certification_left_out_too() -> None:
    """A FAILED certification has no INCOMPLETE case: its excluded nodes are a suite property (JSON and text list them)."""
    excluded = [{"name": "gpu-node-03", "reason": "Cordoned", "message": "cordoned (spec.unschedulable)"}]
    suite = ET.fromstring(render_junit([_report([_category("Failed")], excludedNodes=excluded)])).find("testsuite")
    assert suite is not None
    assert [(p.get("name"), p.get("value")) for p in suite.findall("properties/property")] == [("excludedNodes", "gpu-node-03 (Cordoned)")]
    assert suite.get("tests") == "1"  # a property is no test case


def test_the_html_report_lists_intermittent_nodes() -> None:
    diagnose = {"stage": "complete", "round": 3, "tests": [], "faultyNodes": [], "intermittentNodes": ["gpu-node-06"],
                "suspectNodes": [], "inconclusiveNodes": [], "healthyNodes": ["gpu-node-01"]}
    html = render_html(_report([_category("Failed", diagnose=diagnose)]))
    assert "~ intermittent</td><td>gpu-node-06" in html.replace("\n", "")


def test_a_diagnose_record_gives_each_failed_test_its_own_value() -> None:
    """A crashed test has no value; a passing test's value listed beside the failures read as evidence against the node."""
    from nvcre_tui.engine.diagnose.summary import record_text

    tests = [{"group": "r0-screen-1", "passed": False}, {"group": "r2-confirm-1", "passed": False, "value": 241.1},
             {"group": "r3-confirm-0", "passed": True, "value": 399.9}]
    assert record_text(tests) == "failed 2 of 3 tests (r0-screen-1, r2-confirm-1 at 241.1); passed at 399.9"
    assert record_text(tests, limit=1) == "failed 2 of 3 tests (r0-screen-1 ...); passed at 399.9"


def test_a_diagnose_record_says_its_passes_unit_once() -> None:
    """`passed at 399.40 GB/s, 402.50 GB/s, 401.00 GB/s`: the unit after every value of one list. Said once, at its end."""
    from nvcre_tui.engine.diagnose.summary import record_text
    from nvcre_tui.engine.judging.thresholds import diagnosis_values

    tests = [{"group": "r0-screen-1", "passed": False, "value": 241.1},
             *({"group": f"r{k}-confirm-0", "passed": True, "value": v} for k, v in enumerate((399.4, 402.5, 401.0), 1))]
    shown = diagnosis_values({"busBandwidthGBps": "value >= 300"})
    assert record_text(tests, shown=shown) == "failed 1 of 4 tests (r0-screen-1 at 241.10 GB/s); passed at 399.40, 402.50 and 401.00 GB/s"
    assert record_text(tests[:2], shown=shown).endswith("; passed at 399.40 GB/s")


HOSTILE = "XID 79 \x1b]0;retitled\x07\x1b[2J\x00\x7f \ufffe\uffff <script>alert(1)</script> ]]>"


def test_junit_stays_well_formed_xml_whatever_a_pod_printed() -> None:
    group = {"name": "group-0", "reason": "WorkloadFailed", "message": HOSTILE}
    report = _report([_category("Failed", failureReason=HOSTILE, failedNodes=[], failedGroups=[group])])
    failure = ET.fromstring(render_junit([report])).find("testsuite/testcase/failure")  # expat refused U+FFFE
    assert failure is not None and "<script>" in (failure.text or "") and "\ufffe" not in (failure.text or "")


def test_the_html_report_escapes_markup_and_neutralises_control_characters() -> None:
    group = {"name": "group-0", "reason": "WorkloadFailed", "message": HOSTILE}
    html = render_html(_report([_category("Failed", failureReason=HOSTILE, failedNodes=[], failedGroups=[group])]))
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert not any(c in html for c in "\x1b\x00\x07\x7f")


def test_a_certification_the_engine_ended_before_its_summary_was_final_is_failed_not_running() -> None:
    """The engine's quarantine (ReconcileError) ends a certification whose summary still says RUNNING: its report,
    and the history record made from it, say FAILED (a history reader refuses RUNNING as no finished result)."""
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.report.model import build_report

    conditions = cond.with_phase(None, "Failed", "ReconcileError", "KeyError: 'x'", "2026-01-01T00:10:00Z")
    cert = {"metadata": {"name": "c1", "namespace": "default"}, "spec": {"categories": []},
            "status": {"conditions": conditions, "summary": {"result": "RUNNING"}}}
    assert build_report(cert, [], [])["result"] == "FAILED"


def test_a_category_that_made_no_workflow_is_not_said_to_have_no_thresholds() -> None:
    """A category that never started (its namespace being terminated, its target matching no node) has no Workflow,
    whose thresholds the report read: it said "Thresholds: none: measurements are recorded, not judged" of a category
    whose spec sets them. It shows its spec's."""
    from nvcre_tui.engine.report.model import NO_THRESHOLDS, build_report

    cert = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "c", "namespace": "team"},
            "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                     "options": {"thresholds": {"busBandwidthGBps": "value >= 300"}}}]},
            "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "NamespaceTerminating", "message": "m"}],
                       "categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Failed",
                                             "reason": "NamespaceTerminating", "message": "namespace team is being terminated"}],
                       "summary": {"result": "FAILED"}}}
    report = build_report(cert, [], [])
    assert report["categories"][0]["thresholds"] == {"busBandwidthGBps": "value >= 300"}, report["categories"]  # its spec's
    for rendered in (render_text(report), render_html(report)):
        assert NO_THRESHOLDS not in rendered and "namespace team is being terminated" in rendered
        assert "value &gt;= 300" in rendered or "busBandwidthGBps: value >= 300" in rendered, rendered
