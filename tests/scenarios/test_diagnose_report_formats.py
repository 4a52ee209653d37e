"""A diagnosis's verdicts read the same in every report format: a test's suspects the diagnosis left inconclusive are
said so beside the test (they are not blamed), the JSON lists each verdict with the tests that decided it (the text
report's cut list points there), JUnit says a threshold is out of reach, and the HTML lists the verdicts."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from nvcre_tui.engine.report.html import _legend, render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.text import render_text
from tests.scenarios.harness import run_case

OUT_OF_REACH = "threshold value >= 900 is above anything measured on this fleet: best"


def test_suspects_the_diagnosis_left_inconclusive_are_said_so_beside_their_test() -> None:
    report = run_case("diagnose-threshold-out-of-reach").report
    (category,) = report["categories"]
    inconclusive = set(category["diagnose"]["inconclusiveNodes"])
    assert inconclusive and not category["failedNodes"] and report.get("failedNodeDetails", []) == []
    for group in category["failedGroups"]:
        suspects = {node["name"] for node in group["failedNodes"] if node.get("suspect")}
        assert suspects and set(group["inconclusiveNodes"]) == suspects & inconclusive, group["name"]
    text = render_text(report)
    # Said in the test's row, instead of the whole-group suspicion the diagnosis's verdict supersedes.
    rows = [line for line in text.splitlines() if "ThresholdViolation (" in line]
    assert rows and all("(left inconclusive by the diagnosis: not blamed)" in line for line in rows), rows
    assert "its whole group failed together" not in text


def test_each_member_of_a_failed_test_says_the_verdict_the_diagnosis_gave_it() -> None:
    """A failed group's row said "(suspect: its whole group failed together, no node named)" just before "cleared by
    the diagnosis (healthy)": the diagnosis had decided, and the row still gave the suspicion it superseded."""
    report = run_case("diagnose-degraded-nic").report
    (category,) = report["categories"]
    verdicts = {node: verdict for verdict in ("healthy", "faulty") for node in category["diagnose"][f"{verdict}Nodes"]}
    assert {"healthy", "faulty"} <= set(verdicts.values())
    for group in category["failedGroups"]:
        assert all(node["verdict"] == verdicts[node["name"]] for node in group["failedNodes"]), group
    text = render_text(report)
    said = {"healthy": "cleared by the diagnosis: healthy", "faulty": "convicted by the diagnosis: faulty"}
    for group in category["failedGroups"]:
        for node in group["failedNodes"]:
            assert re.search(rf"\b{node['name']}(, [^:]*)?: ThresholdViolation \({said[verdicts[node['name']]]}\) — ", text), (node, text)
    assert "its whole group failed together" not in text


def test_the_json_lists_every_verdict_with_the_tests_that_decided_it() -> None:
    (category,) = run_case("diagnose-threshold-out-of-reach").report["categories"]
    verdicts = category["diagnose"]["verdicts"]
    assert sorted(row["node"] for row in verdicts) == sorted(category["diagnose"]["inconclusiveNodes"])
    for row in verdicts:
        assert row["verdict"] == "inconclusive" and row["failed"] == row["tests"] > 0
        assert row["record"].startswith(f"failed {row['failed']} of {row['tests']} tests (") and row["failedTests"]


def test_junit_and_html_say_the_threshold_is_out_of_reach_and_html_lists_the_verdicts() -> None:
    report = run_case("diagnose-threshold-out-of-reach").report
    (failure,) = ET.fromstring(render_junit([report]).split("?>", 1)[1]).iter("failure")
    assert (failure.text or "").startswith(f"out of reach: {OUT_OF_REACH}")
    html = render_html(report)
    assert OUT_OF_REACH.replace(">", "&gt;") in html and "<th>the tests that decided it</th>" in html
    node = report["categories"][0]["diagnose"]["verdicts"][0]["node"]
    assert re.search(rf"<td>{node}</td><td>inconclusive</td><td>failed \d+ of \d+ tests \(", html)


def test_a_legend_cuts_a_curve_name_at_its_node_count_then_with_an_ellipsis() -> None:
    """The chart's legend cut "r3-confirm-2 (2 nodes)" to "r3-confirm-2 (2 no"."""
    assert _legend("r0-screen-0") == "r0-screen-0"
    assert _legend("r3-confirm-2 (2 nodes)") == "r3-confirm-2"
    assert _legend("a-very-long-group-name-0 (2 nodes)") == "a-very-long-group…"


def test_the_text_report_gives_the_sizes_a_diagnosis_tested_at() -> None:
    """It gave nodesPerJob, the largest screening group's size, though most tests ran on two nodes."""
    report = run_case("diagnose-flaky-and-fabric").report
    (category,) = report["categories"]
    sizes = sorted({len(test["nodes"]) for test in category["diagnose"]["tests"]})
    assert len(sizes) > 1 and sizes[-1] == category["nodesPerJob"]
    assert f"Nodes/Job: {sizes[0]} to {sizes[-1]}   Jobs: " in render_text(report)


def test_a_link_fault_carries_its_measured_evidence_in_every_format() -> None:
    """Issue 10's `{cliques: [A, B], evidence}`: the JSON said which tests failed but not what they measured (only the
    console showed the span against the threshold)."""
    report = run_case("diagnose-flaky-and-fabric").report
    [fault] = [f for c in report["categories"] for f in (c.get("diagnose") or {}).get("infrastructureFaults") or []]
    evidence = fault["evidence"]
    tests = {t["group"]: t for c in report["categories"] for t in (c.get("diagnose") or {}).get("tests") or []}
    assert fault["cliques"] == ["clique-1", "clique-2"] and evidence["threshold"] == "value >= 300"
    assert [m["test"] for m in evidence["failedTests"]] == [t for t in fault["tests"] if tests[t]["passed"] is False]
    assert all(m["value"] == tests[m["test"]]["value"] < 300 for m in evidence["failedTests"])
    values = [m["value"] for m in evidence["failedTests"]]
    span = f"busBandwidthGBps {min(values):.2f}-{max(values):.2f} GB/s in {len(values)} tests (value >= 300)"
    assert evidence["measured"] == span
    assert f"Infra fault:  {fault['message']}; {span}" in render_text(report)
    failures = "".join(f.text or "" for f in ET.fromstring(render_junit([report]).split("?>", 1)[1]).iter("failure"))
    assert f"infrastructure fault: {fault['message']}; {span}" in failures
    assert span.replace(">", "&gt;") in render_html(report)


def test_a_verdicts_values_are_printed_as_the_report_prints_them() -> None:
    """`r0-screen-4 at 161.2` beside the group line's `161.20 GB/s`, `passed at 400.929`: six significant digits where
    the report prints two. Each value is shown on its side of the threshold (two decimals unless they would cross it)."""
    for case in ("diagnose-flaky-and-fabric", "diagnose-slow-gpu"):
        report = run_case(case).report
        records = [v["record"] for c in report["categories"] for v in (c.get("diagnose") or {}).get("verdicts") or []]
        messages = [f["message"] for c in report["categories"] for f in c.get("failedNodes") or [] if f.get("message")]
        values = re.findall(r"(?:at|passed at|,) (\d+\.\d+)", " ".join(records + messages))
        assert values, case
        assert all(len(v.split(".")[1]) == 2 for v in values), (case, values)


def test_a_verdicts_values_carry_their_unit_in_the_record_and_the_conviction() -> None:
    """`failed 3 of 3 tests (r0-screen-0 at 243.18, r1-confirm-2 at 241.82 ...)`: the record, the conviction message
    (failed-nodes ConfigMap, text summary, console) and the fault's span gave a bandwidth with no unit, beside the
    group rows' `243.18 GB/s`."""
    report = run_case("diagnose-slow-gpu").report
    records = [v["record"] for c in report["categories"] for v in (c.get("diagnose") or {}).get("verdicts") or []]
    messages = [f["message"] for c in report["categories"] for f in c.get("failedNodes") or [] if str(f.get("message")).startswith("diagnose: ")]
    said = " ".join(records + messages)
    values = re.findall(r"(?:at|,) \d+\.\d+( GB/s)?", said)
    assert records and messages and values and all(values), said
    assert re.search(r"failed \d+ of \d+ tests \([^)]* at \d+\.\d+ GB/s", render_text(report))


def test_the_summary_names_the_infrastructure_faults_that_failed_it() -> None:
    """Two degraded links failed the certification and convicted no node: the text summary said 'Failed Nodes: none',
    'Result: FAILED' and nothing else (the faults were in the category's card only); the HTML's likewise."""
    report = run_case("diagnose-two-degraded-links").report
    faults = [str(fault["message"]) for category in report["categories"] for fault in category["diagnose"]["infrastructureFaults"]]
    assert len(faults) == 2 and not report["failedNodes"]
    summary = render_text(report).split("─ Summary ─", 1)[1]
    assert re.search(r"│ Infra Faults: +2\n", summary), summary
    assert all(f"  - {fault} [communication/nccl-all-reduce]" in summary for fault in faults), summary
    row = re.search(r"<td>Infrastructure faults</td><td>([^<]*)</td>", render_html(report))
    assert row is not None and all(fault in row.group(1) for fault in faults)
    clean = run_case("diagnose-slow-gpu").report  # a node convicted, no fault: no such line
    assert "Infra Faults" not in render_text(clean) and "Infrastructure faults" not in render_html(clean)
