"""The report as JUnit XML: one testsuite per certification, one testcase per category."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from nvcre_tui.engine.report.text import node_line

Obj = dict[str, Any]


def render_junit(reports: Sequence[Obj]) -> str:
    """Failed categories are failures, unfinished ones errors; INCOMPLETE or RUNNING adds an error case."""
    suites = ET.Element("testsuites")
    for report in reports:
        suite = ET.SubElement(suites, "testsuite", name=report["name"])
        if report.get("workloadFallback"):  # the suite's header: the workloads were batch/v1 Jobs, not TrainJobs
            properties = ET.SubElement(suite, "properties")
            ET.SubElement(properties, "property", name="workloadFallback", value=report["workloadFallback"])
        failures = errors = 0
        for category in report["categories"]:
            case = ET.SubElement(suite, "testcase", name=category["variant"], classname=f"{report['name']}.{category['domain']}",
                                 time=f"{category.get('runtimeSeconds') or 0:.0f}")
            if category["status"] == "Failed":
                failures += 1
                failure = ET.SubElement(case, "failure", message=category.get("failureReason") or "category failed")
                failure.text = "\n".join(node_line(node) for node in category.get("failedNodes") or [])
            elif category["status"] != "Succeeded":
                errors += 1
                ET.SubElement(case, "error", message=f"category did not finish: {category['status']}")
        if report["result"] in ("INCOMPLETE", "RUNNING"):
            errors += 1
            case = ET.SubElement(suite, "testcase", name="certification", classname=f"{report['name']}.certification")
            ET.SubElement(case, "error", message=f"certification {report['result']}")
        suite.set("tests", str(len(suite)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
