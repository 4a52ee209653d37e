"""The report as JUnit XML: one testsuite per certification, one testcase per category.

Kept to the schema Jenkins and GitLab read: a testsuite's `properties` before its testcases; in a testcase its
`failure` or `error`, then `system-out` (what a passing category passed with: skipped DCGM tests, skipped nccl-tests
rows; a run's notes, whatever its verdict: its fabric not rendered)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.vocabulary import FAILED, NOT_RUN, RESULT_INCOMPLETE, RESULT_RUNNING, SUCCEEDED
from nvcre_tui.engine.report.model import HOW_RUN_FIELDS, excluded_counted, excluded_elsewhere_counted
from nvcre_tui.engine.report.readmodel import category_titles
from nvcre_tui.engine.report.text import (SUSPECT_NOTE, excluded_elsewhere_said, failure_text, run_note_lines, skipped_row_lines,
                                         skipped_test_lines)

Obj = dict[str, Any]
# What XML 1.0 cannot hold at all, escaped or not (its Char production): a CI system's parser refuses the whole file.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render_junit(reports: Sequence[Obj]) -> str:
    """Failed categories are failures, unfinished ones errors; INCOMPLETE or RUNNING adds an error case."""
    suites = ET.Element("testsuites")
    for report in reports:
        suite = ET.SubElement(suites, "testsuite", name=report["name"])
        # the suite's header: how the workloads ran, when not as a reader assumes (batch/v1 Jobs, the simulated fleet)
        told = [(key, report[key]) for key, _ in HOW_RUN_FIELDS.values() if report.get(key)]
        # the nodes left out of the test, whatever the result (a FAILED certification has no INCOMPLETE case to say it)
        # (one node, one state: a failed node excluded from another category is named with that category, not here)
        excluded = ", ".join(f"{e['name']} ({e.get('reason') or 'excluded'})" for e in excluded_counted(report))
        if excluded:
            told.append(("excludedNodes", excluded))
        told += _blamed(report)
        if report.get("underSuspicion"):  # while a diagnosis runs: not failed nodes, names only
            told.append(("underSuspicionNodes", ", ".join(str(name) for name in report["underSuspicion"])))
        if report.get("inconclusiveNodes"):  # ran, proved nothing, blamed nowhere: names only, as failedNodes
            told.append(("inconclusiveNodes", ", ".join(str(name) for name in report["inconclusiveNodes"])))
        if told:
            properties = ET.SubElement(suite, "properties")
            for key, value in told:
                ET.SubElement(properties, "property", name=key, value=value)
        failures = errors = 0
        for category, title in zip(report["categories"], category_titles(report["categories"]), strict=True):
            case = ET.SubElement(suite, "testcase", name=title.split("/", 1)[1], classname=f"{report['name']}.{category['domain']}",
                                 time=f"{category.get('runtimeSeconds') or 0:.0f}")
            never_ran = category.get("notRun") or _never_ran(category)
            if category["status"] == FAILED and never_ran:  # it tested nothing: an error of the run, not a failed check
                errors += 1
                error = ET.SubElement(case, "error", message=f"category did not run: {never_ran}")
                error.text = failure_text(category) or None
            elif category["status"] == FAILED:
                failures += 1
                failure = ET.SubElement(case, "failure", message=category.get("failureReason") or "category failed")
                failure.text = failure_text(category)
            elif category["status"] != SUCCEEDED:
                errors += 1
                why = f" ({category['failureReason']})" if category.get("failureReason") else ""  # what it waits for, as the text says
                error = ET.SubElement(case, "error", message=f"category did not finish: {category['status']}{why}")
                so_far = failure_text(category)  # what it blamed before it ended (or so far, while it runs)
                # running with its pods not yet: why, as the text and HTML say (a CI job's JUnit said only InProgress)
                said = [f"waiting: {category['waitingForPods']}"] if category.get("waitingForPods") else []
                said += [f"failed so far:\n{so_far}"] if so_far else []
                if said:
                    error.text = "\n".join(said)
            warnings = [f"passed with skipped tests: {line}" for line in skipped_test_lines(category)]
            warnings += [f"passed with skipped rows: {line}" for line in skipped_row_lines(category)]
            warnings += [f"note: {line}" for line in run_note_lines(category)]  # failed or not: it judges nothing
            also = excluded_elsewhere_said(excluded_elsewhere_counted(report, category))
            if also:  # its excluded nodes counted in a worse state (not in the suite's excludedNodes), as the text's card says
                warnings.append(f"excluded: {also}")
            if warnings:  # not a clean pass (or nodes left out), as the other formats mark it
                ET.SubElement(case, "system-out").text = "\n".join(warnings)
        if report["result"] in (RESULT_INCOMPLETE, RESULT_RUNNING):
            errors += 1
            case = ET.SubElement(suite, "testcase", name="certification", classname=f"{report['name']}.certification")
            error = ET.SubElement(case, "error", message=f"certification {report['result']}{_why(report)}")
            error.text = "\n".join(f"{e['name']}: {e.get('message') or e.get('reason', '')}" for e in excluded_counted(report))
        suite.set("tests", str(len(suite.findall("testcase"))))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    ET.indent(suites)
    return _NOT_XML.sub("\ufffd", ET.tostring(suites, encoding="unicode", xml_declaration=True)) + "\n"


def _blamed(report: Obj) -> list[tuple[str, str]]:
    """The suite's properties naming the nodes the report blames (whatever the result: a RUNNING certification's
    category errors too): every one, as the JSON's failedNodes, and the suspects among them (a group that failed as
    a whole)."""
    details = report.get("failedNodeDetails") or []
    suspects = [str(node["name"]) for node in details if node.get("suspect")]
    told = []
    if details:
        told.append(("failedNodes", ", ".join(str(node["name"]) for node in details)))
    if suspects:  # names only, as failedNodes (a tool splits them on commas); what a suspect is goes beside them
        told += [("suspectNodes", ", ".join(suspects)), ("suspectNodesNote", SUSPECT_NOTE)]
    return told


def _why(report: Obj) -> str:
    """INCOMPLETE: which nodes were left out of the test (RUNNING says itself)."""
    excluded = [str(e["name"]) for e in excluded_counted(report)]
    if report["result"] != RESULT_INCOMPLETE or not excluded:
        return ""
    return f": {len(excluded)} node(s) excluded, not tested: {', '.join(excluded[:8])}{' ...' if len(excluded) > 8 else ''}"


def _never_ran(category: Mapping[str, Any]) -> str | None:
    """The reasons, when every failed group of a failed category never ran its workload (NOT_RUN: nobody made its
    pods, none could be placed) and no node was blamed: JUnit's error, as for a test that could not run."""
    groups = category.get("failedGroups") or []
    reasons = sorted({str(g.get("reason") or "") for g in groups})
    if not groups or category.get("failedNodes") or not all(reason in NOT_RUN for reason in reasons):
        return None
    return ", ".join(reasons)
