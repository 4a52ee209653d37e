"""Every scenario case counts its nodes one way in every view: one node, one state per certification, the worst first.
The wall's states (views.node_states over the nodes the certification held) against the report (failedNodes,
suspectNodes, inconclusiveNodes, excludedNodes, totalNodes; its inconclusive count in text, HTML and JUnit too, and `certification list`'s) and the
Certification's summary (`certification list`, kubectl's columns)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone
from typing import Any

import pytest

from nvcre_tui.cli.listing import row
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.views import Snapshot, certification_nodes, node_states
from tests.scenarios.harness import case_names, run_case


def inconclusive_in_every_format(report: dict[str, Any]) -> tuple[int, ...]:
    """The report's inconclusive count as its JSON, text, HTML and JUnit say it (text and JUnit name none when 0)."""
    text = re.search(r"Inconclusive: +(\d+) \(", render_text(report))
    html = re.search(r"<td>Inconclusive nodes</td><td>(\d+|none)", render_html(report))
    assert html is not None
    properties = {p.get("name"): str(p.get("value")) for p in ET.fromstring(render_junit([report]).split("\n", 1)[1]).iter("property")}
    junit = properties.get("inconclusiveNodes")
    return (len(report["inconclusiveNodes"]), int(text.group(1)) if text else 0, 0 if html.group(1) == "none" else int(html.group(1)),
            len(junit.split(", ")) if junit else 0)


@pytest.mark.parametrize("case", case_names())
def test_the_wall_the_report_and_the_summary_count_each_node_once(case: str) -> None:
    run = run_case(case)
    [cert] = run.objects["Certification"]
    name = cert["metadata"]["name"]
    bare = Snapshot(certifications=[cert], workflows=run.objects["Workflow"], jobs=run.objects["Job"])
    held = certification_nodes(bare, name) or set()
    snapshot = Snapshot(nodes=[{"metadata": {"name": node}} for node in sorted(held)], certifications=[cert],
                        workflows=run.objects["Workflow"], jobs=run.objects["Job"])
    states = Counter(state for state, _ in node_states(snapshot, name).values())
    report, summary = run.report, cert["status"].get("summary") or {}
    counts = {
        "failed": (states["failed"] + states["suspect"], len(report["failedNodes"]), summary.get("failedNodes", 0)),
        "suspect": (states["suspect"], len(report["suspectNodes"])),
        "inconclusive": (states["inconclusive"], *inconclusive_in_every_format(report),
                         row(cert, datetime.now(timezone.utc), run.objects["Workflow"])["inconclusiveNodes"]),
        "excluded": (states["excluded"], len(report["excludedNodes"]), summary.get("excludedNodes", 0)),
        "held": (len(held), report["totalNodes"] + len(report["excludedNodes"])),
    }
    assert all(len(set(both)) == 1 for both in counts.values()), counts
