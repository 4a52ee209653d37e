"""A category whose every run timed out (none gave a result within timeoutPerJob) fails naming the timeout and how
long its runs went, and convicts no node: that is evidence against the timeout, not against each node (its nodes are
inconclusive, as under a threshold out of reach). A Timeout beside runs of the same workload that finished in time
still blames its group."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.store import JOB
from nvcre_tui.engine.views.failures import category_unblamed, failure_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from tests.scenarios.harness import NAMESPACE, catalog, certify_to_end, run_case

ALL4 = [f"gpu-node-0{i}" for i in range(1, 5)]
SAID = "no run gave a result within timeoutPerJob 3m (1 run, stopped after 3m"


@asynccontextmanager
async def finished_case() -> AsyncIterator[tuple[SimSession, str]]:
    """The timeout-shorter-than-run case run to its end on the simulator: the session and the certification's name."""
    folder = Path("tests/cases/scenarios/timeout-shorter-than-run")
    session = await SimSession.open(load_scenario(folder / "scenario.yaml"), None, catalog())
    try:
        name, finished = await certify_to_end(session, folder / "cert.yaml", max_seconds=6 * 3600)
        assert finished
        yield session, name
    finally:
        await session.close()


def test_a_category_whose_every_run_timed_out_blames_the_timeout_not_its_nodes() -> None:
    run = run_case("timeout-shorter-than-run")
    report = run.report
    assert report["result"] == "FAILED"
    assert report["failedNodes"] == [] and report.get("suspectNodes", []) == [] and report["inconclusiveNodes"] == ALL4
    category = report["categories"][0]
    assert category["status"] == "Failed" and category["failedNodes"] == []
    assert category["failureReason"].startswith(SAID), category["failureReason"]
    assert "evidence against the timeout, not against a node (none blamed)" in category["failureReason"]
    workflow = run.objects["Workflow"][0]
    failed = next(c for c in workflow["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "TimedOutEverywhere" and failed["message"].startswith(SAID)
    certification = run.objects["Certification"][0]
    assert not certification["status"].get("failedNodes")
    configmap = next(c for c in run.objects["ConfigMap"] if c["metadata"]["name"].startswith("failed-nodes-"))
    payload = next(iter((configmap.get("binaryData") or {}).values()))
    assert json.loads(gzip.decompress(base64.b64decode(payload))) == []  # NVSentinel reads no failed node


def test_every_report_format_says_the_timeout_failed() -> None:
    report = run_case("timeout-shorter-than-run").report
    for text in (render_text(report), render_html(report), render_junit([report])):
        assert SAID in text, text[:3000]


def test_a_timeout_beside_runs_that_finished_in_time_still_blames_its_group() -> None:
    report = run_case("hang-intra-node-timeout").report
    assert [(f["name"], f["reason"]) for f in report["categories"][0]["failedNodes"]] == [("gpu-node-04", "Timeout")]
    assert "timeoutPerJob" not in (report["categories"][0].get("failureReason") or "").split(";")[0]


async def test_the_console_lists_the_timeout_among_the_failures_that_blamed_no_node() -> None:
    """The failures pane and the wall (views.failures.category_unblamed): the category, its reason and the sentence."""
    async with finished_case() as (session, name):
        snapshot = await Snapshot.read(session.store)
        view = snapshot.views[name]
        assert failure_rows(snapshot, name) == []  # no node among the failed
        [row] = [row for category in view.categories for row in category_unblamed(category)]
        assert row.reason == "no node blamed: TimedOutEverywhere" and row.message.startswith(SAID), row


async def test_a_job_deleted_by_hand_leaves_its_nodes_as_the_report_says_inconclusive() -> None:
    """Its group's record keeps blamedFor Timeout; read back (nodestates' gone-Job path) it convicts nobody either."""
    async with finished_case() as (session, name):
        [job] = (await session.store.list(JOB, NAMESPACE)).items
        before = node_states(await Snapshot.read(session.store), name)
        await session.store.delete(JOB, job["metadata"]["name"], NAMESPACE)
        snapshot = await Snapshot.read(session.store)
        [workflow] = snapshot.workflows
        assert not snapshot.jobs and [g["blamedFor"] for r in workflow["status"]["orchestration"]["iterationHistory"]
                                      for g in r["groups"]] == ["Timeout"]
        report = build_report(snapshot.certifications[0], snapshot.workflows, [])
        assert report["failedNodes"] == [] and report["inconclusiveNodes"] == ALL4
        states = node_states(snapshot, name)
        assert {node: states[node][0] for node in ALL4} == dict.fromkeys(ALL4, "inconclusive"), states
        assert "no node blamed: JobTimedOut" in states[ALL4[0]][1], states[ALL4[0]]
        assert {node: state for node, (state, _) in before.items()} == {node: state for node, (state, _) in states.items()}
