"""Detail text for the drill-down: status, reason, runtime, measurements, evidence, failure-log tail.

Pure functions from objects to rich Text, so the same words appear on every screen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.style import Style
from rich.text import Text

from nvcre_tui.badges import SIM_TIME_SAID
from nvcre_tui.engine.api.bodies import conditions_of, group_nodes, job_status
from nvcre_tui.engine.api.vocabulary import FAILED, PHASE_GLYPHS, VALIDATION_FAILED
from nvcre_tui.engine.clock import format_time, parse_time
from nvcre_tui.engine.report.runtime import run_runtime
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.history import queries
from nvcre_tui.engine.judging.results import job_failures
from nvcre_tui.engine.parsers.base import split_kubelet_prefix
from nvcre_tui.engine.parsers.measurements import with_unit
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.logtail import nccl_average_note
from nvcre_tui.engine.report.model import not_measured_said, with_blame
from nvcre_tui.engine.report.text import failure_blame
from nvcre_tui.engine.units import format_duration

Obj = dict[str, Any]

LABEL_WIDTH = 18  # a `label` line's key column: its value's wrapped lines start under the value, not at the edge
LABEL_STYLE = Style(bold=True, meta={"hang": LABEL_WIDTH})  # marks a label's key for widgets.hanging


def status_said(phase: str, word: str | None = None) -> str:
    """A Status line's value, its glyph from PHASE_GLYPHS (the one table): `✗ Failed` as `✗ ValidationFailed` (`word`:
    what the status is called where it is no phase). A WorkloadFailed Job's read a bare "Failed"."""
    return f"{PHASE_GLYPHS.get(phase, '·')} {word or phase}"


def runtime(start: str | None, end: str | None, now: datetime | None = None) -> str:
    """Elapsed time between two timestamps ("-" when not started); running: until `now`, as the lists say it."""
    if not start:
        return "-"
    if end:
        return format_duration((parse_time(end) - parse_time(start)).total_seconds())
    so_far = max((now - parse_time(start)).total_seconds(), 0.0) if now is not None else 0.0
    return f"{format_duration(so_far)}{'' if now is not None else '+'} (running)"


def label(text: Text, key: str, value: Any) -> None:
    """Append `key: value` on its own line; the value comes from objects pods and users wrote, so its control
    characters are neutralised (an ESC would reach the operator's terminal)."""
    text.append(f"{key:<{LABEL_WIDTH}}", style=LABEL_STYLE)
    text.append(f"{shown(str(value))}\n")


def shown(value: str) -> str:
    """Object text on one line (its line breaks as spaces: a YAML block scalar ends in one), control characters
    neutralised."""
    return printable(" ".join(value.strip().splitlines()), newlines=False)


def shown_measurement(key: str, value: float, evidence: Sequence[Mapping[str, Any]] | None = None, threshold: str | None = None) -> str:
    """A measured value as every screen shows it: as the report prints it (history.queries.shown_value, on
    judging.thresholds.shown_measured), on its side of the threshold its `evidence` judged it by, else of `threshold`
    (a value no evidence speaks for: a diagnosis's test); two decimals when none judged it. A whole count stays whole
    ("diagTestsRun 10"): exact, it is on its side of any threshold."""
    checks = [item for item in evidence or () if isinstance(item, Mapping)]
    if threshold and not any(item.get("metric") == key for item in checks):
        checks.append({"metric": key, "expression": threshold})  # judged here, as shown_value judges another run's value
    return queries.shown_value({"evidence": checks}, key, float(value))


def measurements_text(text: Text, measurements: Mapping[str, float] | None, evidence: Sequence[Mapping[str, Any]] | None = None) -> None:
    """Append every measurement with its unit, each on its side of the threshold in `evidence` that judged it."""
    for key, value in sorted((measurements or {}).items()):
        label(text, key, with_unit(key, shown_measurement(key, value, evidence)))


def evidence_text(text: Text, evidence: Sequence[Mapping[str, Any]] | None) -> None:
    """Append threshold evidence: metric, measured, expression, verdict."""
    for item in evidence or []:
        measured = "unavailable" if item.get("measured") is None else with_unit(str(item["metric"]), shown_measurement(str(item["metric"]), item["measured"], [item]))
        verdict = "✓ met" if item.get("passed") else f"✗ {item.get('reason')}"
        text.append(f"  {shown(str(item['metric']))}: measured {measured}, expected {shown(str(item['expression']))}  {verdict}\n",
                    style="" if item.get("passed") else "bold")


def conditions_line(obj: Obj) -> tuple[str, str, str]:
    """(phase, reason, message) of an object's exclusive condition."""
    phase = cond.phase(obj) or "Pending"
    found = cond.find(conditions_of(obj), phase) or {}
    return phase, found.get("reason", ""), found.get("message", "")


def log_tail_lines(lines: Sequence[str], *, simulated: bool = False) -> tuple[list[str], str]:
    """A failure log's lines for the detail pane, without their kubelet timestamps, and the times they span said
    once ("from 2026-01-01T00:07:44Z to 00:07:48Z"; "" when none carries one): each line's own 31-character stamp
    wrapped a row of nccl-tests onto three lines of the pane. The log pane (`l`, `t`) has every line's time.
    `simulated`: the stamps are a simulated clock's, said as such, their day left out within one ("sim time 00:07:44Z
    to 00:07:48Z"): a simulated fleet's date read as a real one."""
    split = [split_kubelet_prefix(line) for line in lines]  # a stamp's shape that is no time (month 13): cut, not timed
    times = [stamp for stamp, _ in split if stamp is not None]
    stripped = [rest for _, rest in split]
    if not times:
        return stripped, ""
    first, last = format_time(min(times)), format_time(max(times))
    one_day = last[:10] == first[:10]
    if simulated:
        first, last = (first.split("T", 1)[1], last.split("T", 1)[1]) if one_day else (first, last)
        return stripped, f"at {SIM_TIME_SAID} {first}" if first == last else f"{SIM_TIME_SAID} {first} to {last}"
    if first == last:
        return stripped, f"at {first}"
    return stripped, f"from {first} to {last.split('T', 1)[1] if one_day else last}"


def job_detail(job: Obj, node: str | None = None, now: datetime | None = None, verdicts: Mapping[str, str] | None = None, *,
               whole: bool, simulated: bool = False, stamped_now: datetime | None = None) -> Text:
    """A Job (optionally focused on one node of it); `now` times a running one (`stamped_now`, the API server's now, one
    stamped on a clock ahead: report.runtime); `simulated`: its times are a simulated clock's (log_tail_lines says so).
    `verdicts`: its category's diagnosis's
    (node -> verdict): each failure says it where one decided the node, as the report's failed groups do, else that a
    whole-group blame convicts no node (report.text.blame_text). `whole`: its group measured a whole run
    (report.model.measured_whole); else its values (a sweep a crash cut short) are no measurement: its reason instead."""
    status = job_status(job)
    phase, reason, message = conditions_line(job)
    text = Text()
    label(text, "Job", job["metadata"]["name"])
    validation = cond.find(conditions_of(job), VALIDATION_FAILED) if cond.is_true(job, VALIDATION_FAILED) else None
    if validation is not None:  # it ran to its end and missed a threshold (or measured nothing to check): that first
        label(text, "Status", status_said(FAILED, VALIDATION_FAILED))
        label(text, "Reason", ": ".join(filter(None, (validation.get("reason"), validation.get("message")))))
        label(text, "Run", f"{phase}: {reason}" if reason else phase)
    else:
        label(text, "Status", status_said(phase))
        label(text, "Reason", f"{reason}: {message}" if message else reason)
    for noted in cond.noted(conditions_of(job)):  # what qualifies its result, whatever it is (its fabric not rendered)
        label(text, "Note", noted.get("message") or noted.get("reason", ""))
    label(text, "Runtime", run_runtime(job, now, stamped_now))  # as the logs pane says it
    label(text, "Nodes", ", ".join(group_nodes(job)))  # wraps between names, never inside one
    if whole:
        measurements_text(text, status.get("measurements"), status.get("evidence"))
    elif status.get("measurements"):  # why, in the words of the Status line's reason
        label(text, "Measured", not_measured_said(str(validation.get("reason") or "") if validation is not None else reason))
    blamed = with_blame(group_nodes(job), job_failures(job))  # `suspect`: blamed with its whole group
    failures = [{**f, "verdict": (verdicts or {}).get(f["name"])} for f in blamed if node in (None, f["name"])]
    if failures:
        text.append("Failures\n", style="bold")
        for failure in failures:
            text.append(f"  {shown(failure['name'])}: {shown(failure_blame(failure))} — {shown(failure.get('message', ''))}\n")
            evidence_text(text, failure.get("evidence"))
    elif status.get("evidence") and whole:  # a partial value's check judged no whole run: the Reason says why it failed
        text.append("Thresholds\n", style="bold")
        evidence_text(text, status.get("evidence"))
    log = status.get("failureLog") or {}
    if log.get("tail"):
        code = f", exit {log['exitCode']}" if log.get("exitCode") is not None else ""
        where = f" on {log['nodeName']}" if log.get("nodeName") else ""  # a group's value below threshold names no node
        text.append(shown(f"Failure log ({log.get('podName')}{where}{code})") + "\n", style="bold")
        lines, span = log_tail_lines(log["tail"].splitlines()[-15:], simulated=simulated)
        if span:
            text.append(f"  {span}\n", style="dim")
        for line in lines:
            text.append(f"  {shown(line)}\n", style="dim")
        if note := nccl_average_note(log["tail"]):  # the measurement above is not the tail's own average
            text.append(f"  {shown(note)}\n", style="italic")
    return text
