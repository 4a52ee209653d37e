"""Every scenario case counts its nodes one way in every view: one node, one state per certification, the worst first.
The wall's states (views.node_states over the nodes the certification held) against the report (failedNodes,
suspectNodes, excludedNodes, totalNodes) and the Certification's summary (`certification list`, kubectl's columns)."""

from __future__ import annotations

from collections import Counter

import pytest

from nvcre_tui.engine.views import Snapshot, certification_nodes, node_states
from tests.scenarios.harness import case_names, run_case


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
        "excluded": (states["excluded"], len(report["excludedNodes"]), summary.get("excludedNodes", 0)),
        "held": (len(held), report["totalNodes"] + len(report["excludedNodes"])),
    }
    assert all(len(set(both)) == 1 for both in counts.values()), counts
