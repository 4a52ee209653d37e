"""Every report format tells the console's story: a node blamed only with its whole multi-node group is a suspect, not
a failed node; a measured value is never printed on the passing side of the threshold it failed; JUnit carries the
warnings and the blamed nodes the other formats show; an expression that could not be evaluated marks no group LOW;
two categories of one domain/variant are named apart everywhere."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import unescape
from typing import Any

import pytest

from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.api.vocabulary import NOT_RUN
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.report.html import bars_svg, render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.model import _low
from nvcre_tui.engine.report.readmodel import CertificationView
from nvcre_tui.engine.report.text import render_text
from tests.scenarios.harness import case_names, run_case

Obj = dict[str, Any]
# Multi-node groups that missed a threshold as a whole (no node named), and cases that convict nodes alone.
# (A multi-node group whose every run timed out convicts nobody, not even as a suspect: tests/engine/test_timeout_everywhere.py.)
GROUP_FAILED = ["slow-gpu-full-scale-blames-group", "training-slow-gpu-tflops", "threshold-range-fail-above"]
CONVICTED = ["slow-gpu-intra-node", "xid-mid-run-full-scale", "diagnose-slow-gpu"]


def _view(case: str) -> CertificationView:
    run = run_case(case)
    [cert] = run.objects["Certification"]
    return CertificationView.of(cert, run.objects["Workflow"], run.objects["Job"])


def _text(markup: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", markup, flags=re.S))))


@pytest.mark.parametrize("case", case_names())
def test_the_report_calls_suspect_exactly_the_nodes_the_map_calls_suspect(case: str) -> None:
    """Per category, a blamed node is `suspect` in the report when the console's node states (nodestates) say so."""
    report, view = run_case(case).report, _view(case)
    for category, section in zip(view.categories, report["categories"], strict=True):
        blamed: dict[str, list[bool]] = {}
        for entry in section.get("failedNodes") or []:
            blamed.setdefault(entry["name"], []).append(entry["suspect"])
        if not blamed or category.workflow is None:
            continue
        states = nodestates.compute([category], [{"metadata": {"name": name}} for name in blamed])
        assert {n: all(s) for n, s in blamed.items()} == {n: states[n][0] == "suspect" for n in blamed}, case
    suspects = sorted(d["name"] for d in report["failedNodeDetails"] if d["suspect"])
    assert report["suspectNodes"] == suspects
    assert report["failedNodeCounts"] == {"convicted": len(report["failedNodes"]) - len(suspects), "suspect": len(suspects)}


@pytest.mark.parametrize("case", GROUP_FAILED + CONVICTED)
def test_a_group_that_failed_as_a_whole_names_suspects_and_a_node_alone_is_convicted(case: str) -> None:
    assert bool(run_case(case).report["suspectNodes"]) is (case in GROUP_FAILED), case


@pytest.mark.parametrize("case", GROUP_FAILED)
def test_every_format_counts_the_suspects_of_a_group_that_failed_as_a_whole_apart(case: str) -> None:
    """Failed nodes are every node a category blamed (as the Certification's status and the failed-nodes ConfigMap
    count them); each format says how many of them are suspects, blamed only with their whole group."""
    report = run_case(case).report
    suspects = report["suspectNodes"]
    assert suspects and report["failedNodeCounts"]["convicted"] == 0 and set(report["failedNodes"]) == set(suspects)  # backward compatible
    said = f"{len(suspects)} (all suspect: blamed only with their whole group, no node named)"
    text = render_text(report)
    assert f"│ Failed Nodes:   {said}" in text
    assert all("(suspect: its whole group failed together, no node named)" in line for line in text.splitlines() if " — " in line and "gpu-node" in line)
    suite = ET.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") or "" for p in suite.findall("properties/property")}
    assert properties["failedNodes"] == ", ".join(report["failedNodes"]) and properties["suspectNodes"] == ", ".join(suspects)
    assert "suspect" in properties["suspectNodesNote"]  # what a suspect is, apart from the names a tool splits
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.text is not None
    node_lines = [line for line in failure.text.splitlines() if line.startswith("gpu-node")]
    assert node_lines and all("suspect" in line for line in node_lines)
    html = _text(render_html(report))
    assert f"Failed nodes {said} " in html
    assert all(f"! {name} " in html and f"✗ {name} " not in html for name in suspects)


def test_a_convicted_node_stays_failed_in_every_format() -> None:
    report = run_case("slow-gpu-intra-node").report
    assert report["failedNodes"] and not report["suspectNodes"]
    assert f"│ Failed Nodes:   {len(report['failedNodes'])}" in render_text(report) and "Suspect Nodes" not in render_text(report)
    suite = ET.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None
    assert ("failedNodes", ", ".join(report["failedNodes"])) in [(p.get("name"), p.get("value")) for p in suite.findall("properties/property")]
    assert f"Failed nodes {len(report['failedNodes'])} " in _text(render_html(report))


def test_an_html_bar_never_prints_a_failed_value_as_passing() -> None:
    rows = [{"groupName": "group-1", "nodes": ["gpu-node-02"], "busBW": 299.99, "belowMin": True, "failed": True},
            {"groupName": "group-2", "nodes": ["gpu-node-03"], "busBW": 299.999, "belowMin": True, "failed": True},
            {"groupName": "group-0", "nodes": ["gpu-node-01"], "busBW": 479.81, "belowMin": False, "failed": False}]
    labels = re.findall(r"<text [^>]*>(✗ )?([0-9.]+)</text>", bars_svg(rows, threshold="value >= 300"))
    assert labels == [("✗ ", "299.99"), ("✗ ", "299.999"), ("", "479.81")]
    category = {"domain": "communication", "variant": "nccl-all-reduce", "status": "Failed", "thresholds": {"busBandwidthGBps": "value >= 300"},
                "groupBandwidth": rows}
    evidence = [{"metric": "busBandwidthGBps", "measured": 299.999, "expression": "value >= 300", "passed": False}]
    report = {"name": "near", "result": "FAILED", "categories": [category], "passedCategories": 0, "totalCategories": 1,
              "failedNodes": ["gpu-node-03"], "failedNodeDetails": [{"name": "gpu-node-03", "failures": [
                  {"name": "gpu-node-03", "reason": "ThresholdViolation", "evidence": evidence, "category": "communication/nccl-all-reduce"}]}]}
    html = render_html(report)
    assert "✗ 300.0" not in html and "✗ 299.999" in html
    assert "measured 299.999 GB/s, value &gt;= 300 → failed" in html
    assert "group-2  299.999 GB/s  LOW" in render_text(report)


def _category(status: str, **extra: Any) -> Obj:
    return {"domain": "diagnostics", "variant": "dcgm-level4", "status": status, "runtimeSeconds": 60.0, **extra}


def _report(categories: list[Obj], result: str = "PASSED", **extra: Any) -> Obj:
    return {"name": "cert", "namespace": "default", "result": result, "categories": categories, "passedCategories": 0,
            "totalCategories": len(categories), "failedNodes": [], "failedNodeDetails": [], "excludedNodes": [], **extra}


def test_junit_marks_a_pass_with_skipped_tests_or_rows_as_the_other_formats_do() -> None:
    skipped = {"nodes": ["gpu-node-02"], "skipped": 9, "tests": 10, "verdict": "passed, 9 of 10 tests skipped",
               "message": "workload completed: pcie, memory"}
    rows = {"nodes": ["gpu-node-05"], "note": "2 rows skipped: busbw inf at size 1048576 B (line 57)"}
    report = _report([_category("Succeeded", diagnostics={"samples": 2, "passedWithSkippedTests": [skipped]}),
                      {**_category("Succeeded"), "domain": "communication", "variant": "nccl-all-reduce", "passedWithSkippedRows": [rows]},
                      _category("Succeeded", diagnostics={"samples": 2, "passedWithSkippedTests": []})])
    suite = ET.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None
    outs = [case.findtext("system-out") for case in suite.findall("testcase")]
    assert outs == ["passed with skipped tests: gpu-node-02: passed, 9 of 10 tests skipped (pcie, memory)",
                    f"passed with skipped rows: gpu-node-05: {rows['note']}", None]
    assert suite.get("tests") == "3" and suite.get("failures") == "0" and suite.get("errors") == "0"  # still passes


def test_junit_of_the_dcgm_case_says_which_pass_skipped_tests() -> None:
    report = run_case("dcgm-skipped-tests-marked").report
    suite = ET.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None
    [first, second] = suite.findall("testcase")
    assert "gpu-node-02: passed, 9 of 10 tests skipped" in (first.findtext("system-out") or "") and first.find("failure") is None
    assert second.find("failure") is not None


def test_a_repeated_category_is_named_by_its_title_in_the_summary_too() -> None:
    """The second dcgm-level4 category blamed gpu-node-02: every part of the report says which one, by its title."""
    report = run_case("dcgm-skipped-tests-marked").report
    assert [f["category"] for d in report["failedNodeDetails"] for f in d["failures"]] == ["diagnostics/dcgm-level4 #2"]
    assert "[diagnostics/dcgm-level4 #2]" in render_text(report)
    assert "diagnostics/dcgm-level4 #2" in _text(render_html(report)).split("Failed nodes", 2)[-1]


def test_junit_of_a_running_certification_names_the_nodes_blamed_so_far() -> None:
    blamed = {"name": "gpu-node-07", "reason": "ThresholdViolation", "message": "measured 264.8", "suspect": False}
    report = _report([{**_category("InProgress"), "failedNodes": [blamed]}, _category("Pending")], result="RUNNING",
                     failedNodes=["gpu-node-07"], failedNodeDetails=[{"name": "gpu-node-07", "suspect": False, "failures": [blamed]}])
    suite = ET.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None
    assert ("failedNodes", "gpu-node-07") in [(p.get("name"), p.get("value")) for p in suite.findall("properties/property")]
    error = suite.find("testcase/error")
    assert error is not None and "gpu-node-07: ThresholdViolation" in (error.text or "")
    assert suite.get("errors") == "3"  # two unfinished categories and the RUNNING case


def test_a_group_whose_threshold_could_not_be_evaluated_is_not_low() -> None:
    expression = "value > 261.0 && value < 269.0 ? [1][int(value) - 260] == 1 : value >= 250"
    assert _low(expression, 263.98) is None  # index out of range: InvalidThresholdExpression, neither low nor ok
    assert _low(expression, 240.0) is True and _low(expression, 255.0) is False


def test_the_unblamed_members_of_a_group_that_never_ran_are_untested_on_the_map_as_in_their_job_rows() -> None:
    """A node that could not take its pod kept its whole group from running: the map (and the node screen's header)
    called the others `inconclusive`, "in failed group ..., not blamed", while their Job rows said `untested` (a
    review found the node screen contradicting itself). Both read what the group's outcome says of them."""
    run = run_case("unschedulable-full-scale")
    view = _view("unschedulable-full-scale")
    [job] = [j for j in run.objects["Job"] if j["status"].get("failedNodes")]
    members = group_nodes(job)
    blamed = {f["name"] for f in job["status"]["failedNodes"]}
    assert nodestates.failure_reason(job) in NOT_RUN and blamed and set(members) - blamed
    marks = nodestates.job_marks(job, judging=nodestates.AS_SAID)
    for node in set(members) - blamed:
        [(state, detail, _)] = marks[node]
        row = nodestates.member_state(members, job["status"]["failedNodes"], node, nodestates.job_outcome(job), nodestates.failure_reason(job))
        assert state == row == "untested" and "which never ran" in detail, (node, state, row, detail)
        # its test named as every other line names it (`group-0-iter-1`), not by its Job's full name
        workflow = job["metadata"]["labels"]["nvcre.nvidia.com/workflow"]
        assert workflow not in detail and f"in group {job['metadata']['labels']['nvcre.nvidia.com/group']}," in detail, detail
    states = nodestates.compute(view.categories, [{"metadata": {"name": n}} for n in members])
    assert {states[n][0] for n in set(members) - blamed} == {"untested"}


def test_the_text_report_names_the_nodes_each_exclusion_reason_excluded() -> None:
    """"Excluded: 2 (dgx-03, dgx-04)" over the reasons "Ready condition Unknown" and "cordoned" read as dgx-03 not
    Ready (a walkthrough found it: the reasons were sorted apart from the names). Each reason names its nodes."""
    report = run_case("cordoned-before-run").report
    excluded = [{"name": f"dgx-{i:02d}", "reason": "Cordoned", "message": "cordoned (spec.unschedulable)"} for i in (3, 5, 6, 7, 8, 9)]
    excluded.insert(1, {"name": "dgx-04", "reason": "NotReady", "message": "Ready condition Unknown"})
    lines = render_text({**report, "excludedNodes": excluded}).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  Excluded:"))
    assert lines[at:at + 3] == ["  Excluded:       7 (dgx-03, dgx-04, dgx-05, dgx-06, dgx-07, dgx-08, dgx-09)",
                                "                  dgx-04: Ready condition Unknown",
                                "                  dgx-03, dgx-05, dgx-06, dgx-07 (+2 more): cordoned (spec.unschedulable)"], lines[at:at + 3]


def test_junit_calls_a_category_whose_runs_never_started_an_error_not_a_failure() -> None:
    """A run no pod was made for (an API server without the Trainer's controllers) checked nothing: JUnit's error, as a
    test that could not run, not a failure (a walkthrough found CI listing it among the failed checks)."""
    report = run_case("all-pass-full-scale").report
    category = report["categories"][0]
    never = {**category, "status": "Failed", "failureReason": "1 group failed", "failedNodes": [],
             "failedGroups": [{"name": "group-0", "nodeCount": 2, "nodes": ["a", "b"], "reason": "WorkloadNotStarted", "failedNodes": []}]}
    blamed = {**never, "failedGroups": [{**never["failedGroups"][0], "reason": "SchedulingBlocked"}],
              "failedNodes": [{"name": "a", "reason": "SchedulingBlocked", "message": "m"}]}
    for shown, (tag, message) in ((never, ("error", "category did not run: WorkloadNotStarted")), (blamed, ("failure", None))):
        suite = ET.fromstring(render_junit([{**report, "categories": [shown]}])).find("testsuite")
        assert suite is not None
        [case] = suite.findall("testcase")
        [verdict] = [e for e in case if e.tag in ("error", "failure")]
        assert verdict.tag == tag and (message is None or verdict.get("message") == message), (verdict.tag, verdict.attrib)
        assert suite.get("errors" if tag == "error" else "failures") == "1"


@pytest.mark.parametrize("case", case_names())
def test_a_category_without_thresholds_says_its_measurements_were_not_judged(case: str) -> None:
    """A walkthrough's `run --category` PASSED a node at 161 GB/s beside 400 GB/s ones with no word that nothing was
    judged: the text and HTML reports say it where the thresholds would be, and only there."""
    from nvcre_tui.engine.report.model import NO_THRESHOLDS

    report = run_case(case).report
    text, html = render_text(report), _text(render_html(report))
    unjudged = [c for c in report["categories"] if "thresholds" in c and not c["thresholds"]]  # known once its Workflow is made
    assert text.count(NO_THRESHOLDS) == len(unjudged), case
    assert html.count(NO_THRESHOLDS) == len(unjudged), case


def test_a_category_that_has_not_started_is_not_said_to_have_no_thresholds(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A certification queued behind another: its report said `Thresholds: none: measurements are recorded, not
    judged` for each waiting category of burn-in, whose spec judges busBandwidthGBps >= 300, and `Nodes: 0`. Until a
    category's Workflow is made its thresholds and nodes are not known here: not said to be none."""
    from pathlib import Path

    from nvcre_tui.cli import main
    from nvcre_tui.engine.report.model import NO_THRESHOLDS

    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    state = ["--sim", "--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", *state, "--cert-file", burn_in]) == 0
    assert main(["certification", "run", *state, "--cert-file", burn_in, "--name", "second"]) == 0
    capsys.readouterr()
    for output in ("text", "html"):
        assert main(["certification", "report", "second", *state, "-o", output]) == 3
        out = capsys.readouterr().out
        assert "waits for certification burn-in" in unescape(out) and NO_THRESHOLDS not in unescape(out), output
        # nor to have 0 nodes (read as a target that matched none): not known yet
        assert "not known yet: no category has started" in out, output
    assert main(["certification", "report", "burn-in", *state]) == 3  # running, its nodes known
    out = capsys.readouterr().out
    assert "Nodes:          32" in out and "not known yet" not in out


def test_a_junit_error_of_a_waiting_category_says_what_it_waits_for(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """JUnit said `category did not finish: Pending` where the text report says why: it waits for another certification
    (or an earlier category, or nodes). A CI reading the JUnit file got no hint."""
    from pathlib import Path

    from nvcre_tui.cli import main

    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    state = ["--sim", "--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", *state, "--cert-file", burn_in]) == 0
    assert main(["certification", "run", *state, "--cert-file", burn_in, "--name", "second"]) == 0
    capsys.readouterr()
    assert main(["certification", "report", "second", *state, "-o", "junit"]) == 3
    suite = ET.fromstring(capsys.readouterr().out).find("testsuite")
    assert suite is not None
    said = [error.get("message") for error in suite.iter("error")]
    assert said == ["category did not finish: Pending (waits for certification burn-in, which runs on all 32 of this category's nodes)",
                    "category did not finish: Pending (waits for an earlier category on the same nodes)", "certification RUNNING"], said



def test_a_group_that_failed_after_measuring_says_why_beside_its_value() -> None:
    """A walkthrough read `✗ group-2  479.48 GB/s` as if 479.48 had failed the group: it crashed (WorkloadFailed)
    after measuring. The reason stands where LOW would (JSON: groupBandwidth[].reason), and the value it read before
    the crash is no measurement (report.model.measured_whole): kept apart in JSON partialBusBW, not shown as one."""
    report = run_case("mixed-failures-three-categories").report
    text = render_text(report)
    rows = [g for c in report["categories"] for g in c.get("groupBandwidth") or [] if g["failed"] and g.get("partialBusBW") is not None]
    assert rows and all(g["reason"] == "WorkloadFailed" and g["busBW"] is None and g["belowMin"] is None for g in rows)
    for group in rows:
        assert re.search(rf"✗ {re.escape(group['groupName'])}  no measurement  WorkloadFailed  \[", text), text
    assert all("reason" not in g for c in report["categories"] for g in c.get("groupBandwidth") or [] if not g["failed"])


def test_the_groups_below_threshold_are_in_columns(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """burn-in's loopback: `✗ group-6  263.16 GB/s` above `✗ group-11  160.59 GB/s` put the values one place apart,
    hard to scan down a long list. The names and values are in columns."""
    from pathlib import Path

    from nvcre_tui.cli import main

    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    assert main(["certification", "run", "--sim", "--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db"),
                 "--cert-file", burn_in, "--wait"]) == 1
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"│   ✗ group-\d+ +\d", line)]
    assert len(rows) == 3 and any("group-11" in row for row in rows), rows
    loopback = rows[1:]  # the all-reduce's one row, then the loopback's two
    assert len({row.index("GB/s") for row in loopback}) == 1, loopback


def test_the_node_lists_of_groups_below_threshold_line_up_whatever_their_reason() -> None:
    """`✗ g  263.16 GB/s  LOW  [node]` above `✗ g  400.69 GB/s  WorkloadFailed  [node]`: the reasons differ in length,
    and the node lists began at different places. The reason is a column too."""
    text = render_text(run_case("mixed-failures-three-categories").report)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Bandwidth by group" in line and "nccl-loopback-nvswitch" in "\n".join(lines[:i])
                 and "✗" in lines[i + 1])
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("│   ✗ "):
            break
        rows.append(line)
    assert {"LOW", "WorkloadFailed"} <= {word for row in rows for word in row.split()}, rows
    assert len({row.index("[") for row in rows}) == 1, rows
    assert len({row.index("GB/s") for row in rows if "GB/s" in row}) == 1, rows


def test_a_group_below_threshold_names_the_log_its_value_was_read_from() -> None:
    """A ThresholdViolated group had no failureLog (only a crashed run's was kept): the report gave the node, the test
    and the value against the threshold, but no log to check it in. It names the pod (a node only for a group of one:
    a group's log convicts none of its nodes) and keeps its last lines in the JSON."""
    report = run_case("slow-gpu-intra-node").report
    groups = [g for c in report["categories"] for g in c.get("failedGroups") or [] if g["reason"] == "ThresholdViolated"]
    assert groups
    text = render_text(report)
    for group in groups:
        log = group["failureLog"]
        assert log["podName"].endswith("-launcher") and log["reason"] == "ThresholdViolated" and "Avg bus bandwidth" in log["tail"]
        assert log.get("nodeName") == (group["nodes"][0] if group["nodeCount"] == 1 else None)
        where = f" on {log['nodeName']}" if log.get("nodeName") else ""
        assert f"      Log: pod {log['podName']}{where}, the output the value was read from" in text, text
    multi = [g for c in run_case("diagnose-slow-gpu").report["categories"] for g in c.get("failedGroups") or []
             if g["reason"] == "ThresholdViolated" and g["nodeCount"] > 1]
    assert multi and all(g["failureLog"].get("nodeName") is None and g["failureLog"]["tail"] for g in multi)


@pytest.mark.parametrize("case", ["hang-full-scale-timeout", "hang-training-stalled", "timeout-shorter-than-run"])
def test_the_log_of_a_group_blamed_whole_names_no_node(case: str) -> None:
    """A 4-node group that timed out or stalled, no node convicted: its failureLog said `on gpu-node-01` (the group's
    first node), read at 3 a.m. as the node at fault. Only a node the evidence names is given."""
    report = run_case(case).report
    groups = [g for c in report["categories"] for g in c.get("failedGroups") or [] if g.get("failureLog") and g["nodeCount"] > 1
              and all(f.get("suspect") for f in g["failedNodes"])]
    assert groups, case
    text = render_text(report)
    for group in groups:
        assert group["failureLog"].get("nodeName") is None, group["failureLog"]
        assert f"Failure Log: pod {group['failureLog']['podName']} (" in text, text
