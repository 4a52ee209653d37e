"""A run whose fabric was not rendered (its FabricNotRendered condition, as the Kubernetes runner sets it:
tests/runner/test_fabric_note.py) carries the note to its Job: every report format and the console's Job detail say
why it ran over TCP, and its verdict is what its output and thresholds make it (a pass stays a pass, a missed
threshold still fails)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.api.vocabulary import FABRIC_NOT_RENDERED
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.controllers.conditions import with_condition
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.store.protocol import WORKLOADRUN
from nvcre_tui.widgets.detail import job_detail
from tests.engine.memory_engine import ScriptedRunner
from tests.engine.memory_engine import certify as run_certification
from tests.engine.test_nccl_skipped_rows_report import CERT, E1  # two nodes' loopback runs and E.1's log

Obj = dict[str, Any]
NOTE = ("GPUDirect-TCPXO not rendered: node gpu-node-02's allocatable lists 4 GKE networks (networking.gke.io.networks/*: "
        "gpu-nic0, gpu-nic1, gpu-nic2, gpu-nic3), not the 8 it attaches to eth1..eth8; NCCL between the nodes goes over TCP on eth0")


class NotRenderedRunner(ScriptedRunner):
    """Every run succeeds at once with E.1's log; gpu-node-02's run was not given its fabric, and says so."""

    async def reconcile_run(self, run: Obj) -> float | None:
        if "gpu-node-02" in str(run["spec"]) and not (run.get("status") or {}).get("conditions"):
            now = format_time(self.clock.now())
            conditions = with_condition([], FABRIC_NOT_RENDERED, True, FABRIC_NOT_RENDERED, NOTE, now)
            meta = run["metadata"]
            run = await self.store.patch_status(WORKLOADRUN, meta["name"], meta.get("namespace"), {"conditions": conditions})
        return await super().reconcile_run(run)


def _runner(store: Any, clock: Any) -> NotRenderedRunner:
    log: Callable[[Obj], list[str]] = lambda run: E1.splitlines()
    return NotRenderedRunner(store, clock, "Succeeded", 0, log)


def _certify(cert_text: str = CERT) -> tuple[Obj, list[Obj]]:
    return asyncio.run(run_certification(cert_text, _runner))


def test_a_pass_over_tcp_says_why_in_every_report_and_the_job_detail() -> None:
    report, jobs = _certify()
    [category] = report["categories"]
    assert category["status"] == "Succeeded" and report["result"] == "PASSED"
    assert category["runNotes"] == [{"nodes": ["gpu-node-02"], "note": NOTE}]
    text = render_text(report)
    assert "Run notes:      1 run" in text and f"! gpu-node-02: {NOTE}" in text
    assert f"<td>gpu-node-02</td><td>{NOTE}</td>" in render_html(report).replace("&#x27;", "'")
    assert f"note: gpu-node-02: {NOTE}" in render_junit([report]).replace("&#x27;", "'")
    [noted] = [job for job in jobs if group_nodes(job) == ["gpu-node-02"]]
    [clean] = [job for job in jobs if group_nodes(job) == ["gpu-node-01"]]
    assert f"Note              {NOTE}" in job_detail(noted, whole=True).plain
    assert "Note " not in job_detail(clean, whole=True).plain


def test_the_note_fails_nothing_and_a_missed_threshold_still_fails_with_it() -> None:
    missed = CERT.replace("variant: nccl-loopback}", "variant: nccl-loopback, options: {thresholds: {busBandwidthGBps: 'value >= 9999'}}}")
    report, _ = _certify(missed)
    [category] = report["categories"]
    assert category["status"] == "Failed" and report["result"] == "FAILED"
    assert sorted(node["name"] for node in category["failedNodes"]) == ["gpu-node-01", "gpu-node-02"]
    assert category["runNotes"] == [{"nodes": ["gpu-node-02"], "note": NOTE}]
    assert f"! gpu-node-02: {NOTE}" in render_text(report)
