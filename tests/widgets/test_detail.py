"""The detail panes show what pods and users wrote into objects: their control characters never reach the terminal."""

from __future__ import annotations

from rich.text import Text

from nvcre_tui.widgets.detail import job_detail, label

HOSTILE = "xid 79 \x1b]0;retitled\x07\x1b[2J\x00\x01\x7f [bold red]not markup[/]"


def test_a_jobs_reason_failures_and_log_tail_are_shown_without_control_characters() -> None:
    job = {"metadata": {"name": "j"}, "spec": {},
           "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "WorkloadFailed", "message": HOSTILE}],
                      "failedNodes": [{"name": "gpu-node-01", "reason": "WorkloadFailed", "message": HOSTILE}],
                      "failureLog": {"podName": "p", "nodeName": "gpu-node-01", "exitCode": 134, "tail": f"{HOSTILE}\n{HOSTILE}"}}}
    text = job_detail(job, whole=True).plain
    assert text.count("[bold red]not markup[/]") == 4  # reason, failure, two log lines: shown, as written
    assert not any(c in text for c in "\x1b\x00\x01\x07\x7f")


def test_a_label_keeps_its_value_on_one_line() -> None:
    text = Text()
    label(text, "Reason", "two\nlines")
    assert text.plain.count("\n") == 1


def test_a_value_written_as_a_yaml_block_scalar_shows_without_a_replacement_character() -> None:
    text = Text()
    label(text, "Threshold", "busBandwidthGBps: value >= 300\n")
    assert text.plain.endswith("busBandwidthGBps: value >= 300\n") and "\ufffd" not in text.plain


def test_a_running_object_is_timed_until_now_as_the_lists_time_it() -> None:
    """The drill-down said `Runtime 0s+ (running)` for a run the list showed at 3m59s."""
    from datetime import datetime, timezone

    from nvcre_tui.widgets.detail import runtime

    now = datetime(2026, 1, 1, 0, 3, 59, tzinfo=timezone.utc)
    assert runtime("2026-01-01T00:00:00Z", None, now) == "3m59s (running)"
    assert runtime("2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", now) == "1m00s"
    assert runtime(None, None, now) == "-"


def test_a_job_that_ran_and_missed_a_threshold_leads_with_the_validation_failure() -> None:
    """It led with `Status Succeeded (ValidationFailed)` and `Reason WorkloadCompleted: workload completed`."""
    job = {"metadata": {"name": "j"}, "spec": {},
           "status": {"conditions": [
               {"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted", "message": "workload completed"},
               {"type": "ValidationFailed", "status": "True", "reason": "MeasurementUnavailable",
                "message": "Threshold \"avgStepTimeSec\" not evaluated: no measured value; no node blamed"}]}}
    lines = job_detail(job, whole=True).plain.splitlines()
    assert lines[1].split(None, 1) == ["Status", "✗ ValidationFailed"], lines
    assert lines[2].startswith("Reason") and "MeasurementUnavailable: Threshold \"avgStepTimeSec\" not evaluated" in lines[2], lines
    assert lines[3].split(None, 1) == ["Run", "Succeeded: WorkloadCompleted"], lines


def test_a_groups_nodes_are_listed_with_spaces_so_they_wrap_between_names() -> None:
    """"gpu-node-01,gpu-node-02,g" / "pu-node-03" at 80 columns: the list had no space to wrap at."""
    job = {"metadata": {"name": "j", "annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-01,gpu-node-02,gpu-node-03"}}, "spec": {}, "status": {}}
    [nodes] = [line for line in job_detail(job, whole=True).plain.splitlines() if line.startswith("Nodes")]
    assert nodes.split(None, 1)[1] == "gpu-node-01, gpu-node-02, gpu-node-03"


def test_a_log_of_a_group_below_threshold_names_no_node() -> None:
    """A multi-node group's value below threshold keeps its log (failureLog) with no node: the detail said `on None`."""
    job = {"metadata": {"name": "j"}, "spec": {},
           "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted", "message": ""}],
                      "failureLog": {"podName": "r0-screen-1-run-launcher", "exitCode": 0, "reason": "ThresholdViolated",
                                     "tail": "# Avg bus bandwidth    : 103.76"}}}
    text = job_detail(job, whole=True).plain
    assert "Failure log (r0-screen-1-run-launcher, exit 0)" in text and "None" not in text, text


def test_a_failure_the_diagnosis_decided_says_its_verdict_not_the_groups_suspicion() -> None:
    """A screening test that missed the threshold blamed both members together: the diagnosis then cleared one and
    convicted the other. Each failure row says the verdict (as the report's failed groups do, report.text.blame_text);
    a member it has not decided yet is still a suspect of its whole group's blame."""
    failed = [{"name": name, "reason": "ThresholdViolation", "message": "measured 162.36"} for name in ("gpu-node-01", "gpu-node-02", "gpu-node-03")]
    job = {"metadata": {"name": "r0-screen-0", "annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-01,gpu-node-02,gpu-node-03"}}, "spec": {},
           "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted", "message": ""}],
                      "failedNodes": failed}}
    verdicts = {"gpu-node-01": "healthy", "gpu-node-02": "faulty", "gpu-node-03": "suspect"}
    rows = [line.strip() for line in job_detail(job, verdicts=verdicts, whole=True).plain.splitlines() if line.startswith("  gpu-node")]
    assert rows == ["gpu-node-01: ThresholdViolation (cleared by the diagnosis: healthy) — measured 162.36",
                    "gpu-node-02: ThresholdViolation (convicted by the diagnosis: faulty) — measured 162.36",
                    "gpu-node-03: ThresholdViolation (suspect: its whole group failed together, no node named) — measured 162.36"], rows
    focused = job_detail(job, "gpu-node-01", verdicts=verdicts, whole=True).plain
    assert "cleared by the diagnosis: healthy" in focused and "suspect" not in focused, focused


def test_a_failure_logs_kubelet_times_are_said_once_not_on_every_line() -> None:
    """Each line of the tail began with its kubelet timestamp (31 characters): in the drill-down's detail pane a row of
    nccl-tests wrapped onto three lines. The lines show without it, the times they span once above them (an offset
    read as UTC); a line without one is shown as it is, one whose stamp is no time (month 13) is not timed."""
    tail = "\n".join([
        "2026-03-02T10:15:04.925456789Z      8388608       2097152     float     sum      -1    58.91  142.40  249.20       0",
        "2026-03-02T03:15:05.147456789-07:00     33554432       8388608     float     sum      -1   150.87  222.41  389.21       0",
        "# Out of bounds values : 0 OK",
        "2026-13-45T10:15:05.3Z # Avg bus bandwidth    : 387.038",
    ])
    conditions = [{"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted", "message": ""}]
    job = {"metadata": {"name": "j"}, "spec": {},
           "status": {"conditions": conditions, "failureLog": {"podName": "launcher", "nodeName": "gpu-n01", "exitCode": 0, "tail": tail}}}
    lines = job_detail(job, whole=True).plain.splitlines()
    shown = lines[lines.index("Failure log (launcher on gpu-n01, exit 0)") + 1:]
    assert shown[:5] == ["  from 2026-03-02T10:15:04Z to 10:15:05Z",
                         "  8388608       2097152     float     sum      -1    58.91  142.40  249.20       0",
                         "  33554432       8388608     float     sum      -1   150.87  222.41  389.21       0",
                         "  # Out of bounds values : 0 OK",
                         "  # Avg bus bandwidth    : 387.038"], shown
    unstamped = {**job, "status": {"conditions": conditions, "failureLog": {"podName": "launcher", "tail": "# Out of bounds values : 0 OK"}}}
    assert job_detail(unstamped, whole=True).plain.splitlines()[-1] == "  # Out of bounds values : 0 OK"


def test_a_job_that_measured_no_whole_run_shows_no_value_judged() -> None:
    """A run whose output lost a row (MeasurementUnavailable) kept the evidence of its partial value: the Job detail read
    `Thresholds  busBandwidthGBps: measured 20.97, expected value >= 22  ✗ ThresholdViolated` and its measurements, as if
    that value had been judged (its group measured no whole run: report.model.measured_whole). The Reason says it."""
    evidence = [{"metric": "busBandwidthGBps", "measured": 20.97, "expression": "value >= 22", "passed": False, "reason": "ThresholdViolated"}]
    why = "busBandwidthGBps 20.97 is below 22, over part of the output (1 row skipped); no node blamed"
    job = {"metadata": {"name": "j"}, "spec": {},
           "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "WorkloadCompleted", "message": ""},
                                     {"type": "ValidationFailed", "status": "True", "reason": "MeasurementUnavailable", "message": why}],
                      "measurements": {"busBandwidthGBps": 20.97}, "evidence": evidence}}
    text = job_detail(job, whole=False).plain
    assert "measured 20.97" not in text and "Thresholds" not in text and "busBandwidthGBps  20.97" not in text, text
    assert f"MeasurementUnavailable: {why}" in text and "Measured          MeasurementUnavailable: no measurement" in text, text
    assert "measured 20.97 GB/s, expected value >= 22" in job_detail(job, whole=True).plain
