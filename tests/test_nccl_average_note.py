"""A kept nccl-tests tail ends with `# Avg bus bandwidth : 103.76` while the value measured beside it is 264.81:
nccl-tests averages every message size there, nvcre reads the best size. Where the report and the console's job detail
show such a tail next to the measured value, one note (report/logtail.py) says what the measured value is."""

from __future__ import annotations

from nvcre_tui.engine.report.logtail import nccl_average_note
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.widgets.detail import job_detail
from tests.scenarios.harness import run_case

NOTE = "busBandwidthGBps is the bus bandwidth at the best message size; the log's Avg bus bandwidth, {} GB/s, averages all sizes"


def _threshold_groups(report: dict) -> list[dict]:
    return [g for c in report["categories"] for g in c.get("failedGroups") or [] if g["reason"] == "ThresholdViolated"]


def test_the_report_says_what_the_measured_value_is_under_the_log_it_was_read_from() -> None:
    report = run_case("slow-gpu-intra-node").report
    groups = _threshold_groups(report)
    assert groups
    rows = render_text(report).splitlines()
    for group in groups:
        log = group["failureLog"]
        average = next(line for line in log["tail"].splitlines() if "Avg bus bandwidth" in line).split(":")[-1].strip()
        [at] = [i for i, row in enumerate(rows) if row.startswith(f"│       Log: pod {log['podName']}")]
        assert rows[at + 1] == f"│       ({NOTE.format(f'{float(average):g}')})"


def test_the_consoles_job_detail_says_it_after_the_tail() -> None:
    tail = "\n".join([
        "2026-01-01T00:08:28.253341000Z  17179869184    4294967296     float     sum   113213  151.75  265.56  0e+00   114128  150.53  263.43  0e+00",
        "2026-01-01T00:08:29.500000000Z # Out of bounds values : 0 OK",
        "2026-01-01T00:08:29.500000000Z # Avg bus bandwidth    : 103.76 ",
        "2026-01-01T00:08:29.500000000Z #"])
    job = {"metadata": {"name": "j"}, "spec": {},
           "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted", "message": ""}],
                      "measurements": {"busBandwidthGBps": 264.814},
                      "failureLog": {"podName": "j-run-launcher", "nodeName": "gpu-node-07", "exitCode": 0, "reason": "ThresholdViolated",
                                     "tail": tail}}}
    lines = job_detail(job, whole=True).plain.splitlines()
    assert "264.81" in "\n".join(lines)
    assert lines[-1] == f"  {NOTE.format('103.76')}" and lines[-2].endswith("#")


def test_no_note_without_that_line() -> None:
    assert nccl_average_note(None) is None and nccl_average_note("") is None
    assert nccl_average_note("2026-01-01T00:00:00Z NCCL WARN Net : Connection closed by remote peer") is None
    assert nccl_average_note("# Avg bus bandwidth    : 103.76") is None  # no row to be nccl-tests output: not said
