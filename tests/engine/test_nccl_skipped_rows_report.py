"""A Job whose nccl-tests log passed with rows skipped says so in the report (JSON, text and HTML), as a DCGM
pass with skipped tests does; a clean log's report has no such entry."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.text import render_text
from tests.engine.memory_engine import ScriptedRunner
from tests.engine.memory_engine import certify as run_certification
from tests.parsers.golden import fixture_text

Obj = dict[str, Any]
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: nccl-two, namespace: default}
spec:
  target: {nodeNames: [gpu-node-01, gpu-node-02]}
  categories: [{domain: communication, variant: nccl-loopback}]
"""
E1 = fixture_text("nccl_e1_modern.txt")  # reference E.1: a real all_reduce_perf log, 11 sizes, 8 GPUs of one node
ROW_2M = "     2097152        524288     float     sum      -1    25.77   81.39  142.43       0    26.08   80.42  140.74       0\n"
ROW_4M = "     4194304       1048576     float     sum      -1    33.53  125.07  218.88       0    33.94  123.59  216.28       0\n"
DAMAGED = E1.replace(ROW_2M, ROW_2M.replace(" 142.43 ", " inf ")).replace(ROW_4M, ROW_4M.replace(" 1048576 ", " 1_048_576 "))


def _log_by_node(logs: dict[str, str]) -> Callable[[Obj], list[str]]:
    """Every run succeeds at once, its pod log the text given for its node."""
    return lambda run: logs[next(name for name in logs if name in str(run["spec"]))].splitlines()


async def certify(logs: dict[str, str], cert_text: str = CERT) -> Obj:
    report, _ = await run_certification(cert_text, lambda store, clock: ScriptedRunner(store, clock, "Succeeded", 0, _log_by_node(logs)))
    return report


def test_a_pass_with_skipped_nccl_rows_is_marked_in_every_report() -> None:
    report = asyncio.run(certify({"gpu-node-01": E1, "gpu-node-02": DAMAGED}))
    [category] = report["categories"]
    assert category["status"] == "Succeeded" and report["result"] == "PASSED"
    note = ("2 rows skipped: busbw inf at size 2097152 B (line 19); "
            "count 1_048_576 at size 4194304 B (line 20)")
    assert category["passedWithSkippedRows"] == [{"nodes": ["gpu-node-02"], "note": note}]
    assert f"! gpu-node-02: {note}" in render_text(report)
    assert "1 run passed with skipped rows" in render_text(report)
    assert f"<td>gpu-node-02</td><td>{note}</td>" in render_html(report)


def test_clean_nccl_logs_give_no_such_entry() -> None:
    report = asyncio.run(certify({"gpu-node-01": E1, "gpu-node-02": E1}))
    [category] = report["categories"]
    assert category["status"] == "Succeeded" and "passedWithSkippedRows" not in category
    assert "skipped rows" not in render_text(report) and "skipped rows" not in render_html(report)


def test_a_run_with_skipped_rows_that_missed_its_threshold_is_not_called_a_pass() -> None:
    missed = CERT.replace("variant: nccl-loopback}", "variant: nccl-loopback, options: {thresholds: {busBandwidthGBps: 'value >= 9999'}}}")
    report = asyncio.run(certify({"gpu-node-01": E1, "gpu-node-02": DAMAGED}, missed))
    [category] = report["categories"]
    assert category["status"] == "Failed" and "passedWithSkippedRows" not in category
    assert "passed with skipped rows" not in render_text(report)


SOCKET = E1.replace("#\n#                                                              out-of-place",
                    "gpu-node-02:4101:4101 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n#\n"
                    "#                                                              out-of-place", 1)


def test_a_run_over_the_socket_transport_is_a_run_note_whatever_its_verdict_not_a_skipped_row() -> None:
    """NCCL over TCP is a remark on what was measured: the report listed it as "passed with skipped rows" (any nccl
    note was), and a run that missed its threshold, slow for that very reason, lost it."""
    assert SOCKET != E1
    for cert, status in ((CERT, "Succeeded"),
                         (CERT.replace("variant: nccl-loopback}", "variant: nccl-loopback, options: {thresholds: {busBandwidthGBps: 'value >= 9999'}}}"),
                          "Failed")):
        report = asyncio.run(certify({"gpu-node-01": E1, "gpu-node-02": SOCKET}, cert))
        [category] = report["categories"]
        assert category["status"] == status and "passedWithSkippedRows" not in category
        [noted] = category["runNotes"]
        assert noted["nodes"] == ["gpu-node-02"] and noted["note"].startswith("nccl: NCCL's network transport was Socket")
        assert "skipped rows" not in render_text(report) and "Run notes" in render_text(report)
