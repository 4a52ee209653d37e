"""One node, one state per certification, the worst first, in every view: on the cordoned-mid-run fleet (gpu-node-04's
all-reduce fails by the cordon, then the loopback and DCGM exclude it; gpu-node-05 is cordoned from the start) the
wall, `certification list`, the report in every format and `nvcre history certifications` all count 2 failed nodes
and 1 excluded. The report's Excluded line (text, HTML, JSON, JUnit) and the history's EXCLUDED NODES counted
gpu-node-04 as excluded too (2). A record made before the rule (a report listing gpu-node-04 among its excluded nodes,
a summary counting it) is counted by the rule from what it stores."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli.listing import row
from nvcre_tui.engine.history import HistoryQuery, open_history
from nvcre_tui.engine.history.archive import write_record
from nvcre_tui.engine.history.record import build_record
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario, load_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, NODE, WORKFLOW

from tests.engine.test_engine_behaviour import CERT  # the same three categories, on this fleet
from tests.scenarios.harness import CASES, NAMESPACE, start_certification

from .harness import certification_body

SCENARIO = Scenario.model_validate(yaml.safe_load("""
name: cordoned-mid-run
seed: 71
nodes: [{count: 5, cliques: 1}]
faults:
  - {type: slow-gpu, node: gpu-node-02, gpu: 1, factor: 0.5}
  - {type: cordon, node: gpu-node-04, at: 4m}
  - {type: cordon, node: gpu-node-05, at: 0s}
"""))

Obj = dict[str, Any]


def report_counts(report: Obj) -> dict[str, tuple[int, int]]:
    """(failed, excluded) as each format of the report says them."""
    text = render_text(report)
    excluded = re.search(r"^  Excluded: +(\d+) \(", text, re.M)
    failed = re.search(r"Failed Nodes: +(\d+|none)", text)
    assert failed is not None, text
    html = render_html(report)
    html_failed = re.search(r"<td>Failed nodes</td><td>(\d+|none)", html)
    html_excluded = re.search(r"<td>Excluded nodes</td><td>(\d+)</td>", html)
    assert html_failed is not None and html_excluded is not None, html
    properties = {p.get("name"): str(p.get("value")) for p in ET.fromstring(render_junit([report]).split("\n", 1)[1]).iter("property")}
    return {
        "json": (len(report["failedNodes"]), len(report["excludedNodes"])),
        "text": (0 if failed.group(1) == "none" else int(failed.group(1)), int(excluded.group(1)) if excluded else 0),
        "html": (0 if html_failed.group(1) == "none" else int(html_failed.group(1)), int(html_excluded.group(1))),
        "junit": (len(properties.get("failedNodes", "").split(", ")) if "failedNodes" in properties else 0,
                  len(properties["excludedNodes"].split(", ")) if "excludedNodes" in properties else 0),
    }


def archived_as_before(tmp_path: Path, cert: Obj, workflows: list[Obj], jobs: list[Obj], nodes: list[Obj],
                       report: Obj) -> tuple[HistoryQuery, Obj]:
    """A history holding `cert` archived with `report` as an nvcre before the rule wrote it: the query and its row."""
    by_workflow = {wf["metadata"]["name"]: [j for j in jobs if j["metadata"]["labels"].get("nvcre.nvidia.com/workflow")
                                            == wf["metadata"]["name"]] for wf in workflows}
    record = build_record(cert, workflows, by_workflow, nodes)
    record.report.clear()
    record.report.update(report)
    older = tmp_path / "older.db"
    connection = open_history(older)
    try:
        assert write_record(connection, "sim", record)
    finally:
        connection.close()
    query = HistoryQuery(older)
    [row_before] = query.certifications()
    return query, row_before


async def certified(tmp_path: Path) -> tuple[SimSession, Obj, list[Obj], list[Obj], list[Obj]]:
    """The scenario run to its end, archived in tmp_path/history.db: (session, certification, Workflows, Jobs, Nodes)."""
    session = await SimSession.open(SCENARIO, None, history=tmp_path / "history.db")
    assert session.engine is not None
    await session.store.create(CERTIFICATION, certification_body(CERT))
    await session.engine.run_until_settled()
    cert = await session.store.get(CERTIFICATION, "behave", "default")
    workflows = (await session.store.list(WORKFLOW, "default")).items
    jobs = (await session.store.list(JOB, "default")).items
    nodes = (await session.store.list(NODE, None)).items
    return session, cert, workflows, jobs, nodes


async def test_wall_list_report_and_history_count_a_node_cordoned_mid_run_once(tmp_path: Path) -> None:
    session, cert, workflows, jobs, _ = await certified(tmp_path)
    listed = row(cert, session.clock.now(), workflows)
    report = build_report(cert, workflows, jobs)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
        wall_failed = int(app.screen.query_one("#count-failed", Digits).value) + int(app.screen.query_one("#count-suspect", Digits).value)
    wall_excluded = re.search(r"(\d+) ⊘ excluded", tally)
    assert wall_excluded is not None, tally
    [archived] = HistoryQuery(tmp_path / "history.db").certifications()

    counts = {"wall": (wall_failed, int(wall_excluded.group(1))), "list": (listed["failedNodes"], listed["excludedNodes"]),
              **report_counts(report), "history": (archived["failedNodes"], archived["excludedNodes"])}
    assert set(counts.values()) == {(2, 1)}, counts
    # each category still says whom it excluded: the JSON's lists, the text's cards
    assert [sorted(e["name"] for e in c["excludedNodes"]) for c in report["categories"]] == [
        ["gpu-node-05"], ["gpu-node-04", "gpu-node-05"], ["gpu-node-04", "gpu-node-05"]]
    assert render_text(report).count("│ Excluded:       gpu-node-04: cordoned (spec.unschedulable); failed in another category") == 2
    await session.close()


async def test_records_made_before_the_rule_are_counted_by_it(tmp_path: Path) -> None:
    """The report listed gpu-node-04 as excluded too, and the summary counted it (2): an archived report (its history
    row, the report it gives back, rendered again) and a finished certification's list row count from what they store."""
    session, cert, workflows, jobs, nodes = await certified(tmp_path)
    report = build_report(cert, workflows, jobs)
    listed = {e["name"]: e for e in [*report["excludedNodes"], *report["categories"][1]["excludedNodes"]]}
    old_report = {**report, "excludedNodes": sorted(listed.values(), key=lambda e: e["name"])}
    assert [e["name"] for e in old_report["excludedNodes"]] == ["gpu-node-04", "gpu-node-05"]
    rendered = {view: counted for view, counted in report_counts(old_report).items() if view != "json"}  # its JSON is as stored
    assert set(rendered.values()) == {(2, 1)}, rendered
    older, archived_before = archived_as_before(tmp_path, cert, workflows, jobs, nodes, old_report)
    assert (archived_before["failedNodes"], archived_before["excludedNodes"]) == (2, 1), archived_before
    given_back = older.report("behave")
    assert given_back is not None and report_counts(given_back)["json"] == (2, 1)
    old_cert = copy.deepcopy(cert)
    old_cert["status"]["summary"]["excludedNodes"] = 2
    assert row(old_cert, session.clock.now(), workflows)["excludedNodes"] == 1
    assert row(old_cert, session.clock.now())["excludedNodes"] == 2  # its Workflows unknown: the summary's word
    await session.close()


def test_a_report_without_failed_excluded_nodes_reads_as_before() -> None:
    """The rule changes nothing where no excluded node failed: every exclusion counts, no card names one."""
    report = {"name": "c", "result": "INCOMPLETE", "categories": [{"domain": "d", "variant": "v", "status": "Succeeded",
                                                                    "excludedNodes": [{"name": "n1", "reason": "Cordoned", "message": "cordoned"}]}],
              "excludedNodes": [{"name": "n1", "reason": "Cordoned", "message": "cordoned"}], "failedNodes": [], "failedNodeDetails": [],
              "passedCategories": 1, "totalCategories": 1, "totalNodes": 3}
    assert set(report_counts(report).values()) == {(0, 1)}
    assert "│ Excluded:" not in render_text(report)
    # archived before the report counted inconclusive nodes: unknown, not none
    assert "<td>Inconclusive nodes</td><td>-</td>" in render_html(report) and "Inconclusive" not in render_text(report)
    assert "<td>Inconclusive nodes</td><td>none</td>" in render_html({**report, "inconclusiveNodes": []})


@pytest.mark.parametrize(("case", "nodes", "excluded"), [
    # two categories, four nodes each, in parallel: the report said Nodes 4 (its largest category's), the wall 8
    ("parallel-categories-disjoint-targets", 8, 0),
    # gpu-node-04 passed the first category and left the target before the second: one node, excluded (Nodes 4 and
    # Excluded 1 counted it twice, where the wall says `of 4 nodes`)
    ("node-leaves-target-between-categories", 3, 1),
    # every node inconclusive in the training (its group failed, blaming nobody), gpu-node-02 then left the target
    # before the loopback: inconclusive, not excluded too (the report and the history said Excluded 1, the wall 0)
    ("inconclusive-then-leaves-target", 4, 0),
])
async def test_the_nodes_a_certification_held_are_counted_once_by_the_wall_the_report_and_the_history(
        tmp_path: Path, case: str, nodes: int, excluded: int) -> None:
    history = tmp_path / "history.db"
    session = await SimSession.open(load_scenario(CASES / case / "scenario.yaml"), None, history=history)
    assert session.engine is not None
    name = await start_certification(session.store, CASES / case / "cert.yaml")
    await session.engine.run_until_settled()
    cert = await session.store.get(CERTIFICATION, name, NAMESPACE)
    report = build_report(cert, (await session.store.list(WORKFLOW, NAMESPACE)).items, (await session.store.list(JOB, NAMESPACE)).items)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        tally = str(app.screen.query_one("#tally", Static).render())
    held = re.search(r"of (\d+) nodes", tally)
    assert held is not None, tally
    text = re.search(r"^  Nodes: +(\d+)$", render_text(report), re.M)
    html = re.search(r"<td>Nodes</td><td>(\d+)</td>", render_html(report))
    assert text is not None and html is not None
    [archived] = HistoryQuery(history).certifications()
    assert (report["totalNodes"], len(report["excludedNodes"])) == (nodes, excluded)
    assert int(text.group(1)) == int(html.group(1)) == archived["nodes"] == nodes and archived["excludedNodes"] == excluded
    assert archived["inconclusiveNodes"] == len(report["inconclusiveNodes"])  # `history certifications`' INCONCLUSIVE NODES
    assert int(held.group(1)) == nodes + excluded, tally
    assert row(cert, session.clock.now())["excludedNodes"] == excluded  # `certification list`, kubectl: the summary
    older_summary = copy.deepcopy(cert)  # an engine before the rule counted every node a category excluded
    older_summary["status"]["summary"]["excludedNodes"] = len({e["name"] for c in report["categories"] for e in c.get("excludedNodes") or []})
    assert row(older_summary, session.clock.now(), (await session.store.list(WORKFLOW, NAMESPACE)).items)["excludedNodes"] == excluded
    # archived before: its report's totalNodes said the eligible nodes of its largest category; the history counts
    # from the node results it keeps
    workflows = (await session.store.list(WORKFLOW, NAMESPACE)).items
    jobs = (await session.store.list(JOB, NAMESPACE)).items
    as_before = {**report, "totalNodes": max(c.get("totalNodes") or 0 for c in report["categories"]),
                 "excludedNodes": list({e["name"]: e for c in report["categories"] for e in c.get("excludedNodes") or []}.values())}
    assert (as_before["totalNodes"], len(as_before["excludedNodes"])) != (nodes, excluded)
    _, archived_before = archived_as_before(tmp_path, cert, workflows, jobs, (await session.store.list(NODE, None)).items, as_before)
    assert (archived_before["nodes"], archived_before["excludedNodes"]) == (nodes, excluded)
    await session.close()
