"""Every scenario case counts its nodes one way in every view: one node, one state per certification, the worst first.
The wall's states (views.node_states over the nodes the certification held) against the report (failedNodes,
suspectNodes, inconclusiveNodes, excludedNodes, totalNodes; its inconclusive count in text, HTML and JUnit too, and `certification list`'s) and the
Certification's summary (`certification list`, kubectl's columns)."""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone
from typing import Any

import pytest

from nvcre_tui.cli.listing import row
from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import inconclusive_names
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.views.nodes import certification_nodes, node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from tests.scenarios.harness import CASES, RUN_LIMIT_SECONDS, case_names, catalog, run_case, snapshot, start_certification


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


# Cases whose certification, mid-way, holds a node an earlier iteration or category left inconclusive, blamed or
# excluded while later ones run.
_MID_WAY = ["flaky-every-iteration", "on-failure-decided-by-iterations",
            "inconclusive-then-leaves-target", "mixed-failures-three-categories", "cordon-persists-into-next-iteration",
            "repeat-on-failure-every-iteration"]


@pytest.mark.parametrize("case", _MID_WAY)
def test_certification_list_counts_each_node_once_while_the_certification_runs(case: str) -> None:
    """`certification list` counts a running certification from its Workflows alone (not its Jobs): after every step of
    the engine, no node it counts inconclusive is one the wall shows failed, suspect or excluded (a node inconclusive
    in an earlier iteration and blamed now counted twice), and its EXCLUDED is the wall's. A node inconclusive so far
    and under test again is counted where the wall shows it running (iterations.inconclusive_counted)."""
    asyncio.run(_check_mid_way(case))


async def _check_mid_way(case: str) -> None:
    folder = CASES / case
    session = await SimSession.open(load_scenario(folder / "scenario.yaml"), None, catalog())
    name = await start_certification(session.store, folder / "cert.yaml")
    seen: list[str] = []

    async def agree() -> bool:
        objects = await snapshot(session.store)
        cert = next(c for c in objects["Certification"] if c["metadata"]["name"] == name)
        if cond.is_terminal(cert):
            return True
        workflows = [wf for wf in objects["Workflow"] if wf["metadata"]["labels"].get(LABEL_CERTIFICATION) == name]
        bare = Snapshot(certifications=[cert], workflows=workflows, jobs=objects["Job"])
        held = certification_nodes(bare, name) or set()
        states = node_states(Snapshot(nodes=[{"metadata": {"name": node}} for node in sorted(held)], certifications=[cert],
                                      workflows=workflows, jobs=objects["Job"]), name)
        listed = row(cert, datetime.now(timezone.utc), workflows)
        earlier = set().union(*(inconclusive_names(wf) for wf in workflows))
        counted = {node for node, (state, _) in states.items()
                   if state == "inconclusive" or (state in ("running", "waiting") and node in earlier)}
        by_state = Counter(state for state, _ in states.values())
        assert (listed["inconclusiveNodes"], listed["excludedNodes"]) == (len(counted), by_state["excluded"]), (states, listed)
        seen.extend(state for state, _ in states.values())
        return False

    assert session.engine is not None
    assert await session.engine.run_until_settled(until=agree, max_seconds=RUN_LIMIT_SECONDS)
    assert "failed" in seen or "inconclusive" in seen or "excluded" in seen, "the case never shows a counted node mid-way"
