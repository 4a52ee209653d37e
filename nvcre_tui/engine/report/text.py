"""The report as text for a terminal: a banner, one card per category, a summary card."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.vocabulary import PHASE_GLYPHS
from nvcre_tui.engine.diagnose import VERDICT_PREFIX
from nvcre_tui.engine.diagnose.summary import progress_text, test_sizes, verdict_line
from nvcre_tui.engine.judging.thresholds import THRESHOLD_VIOLATED, shown_measured
from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT, BUS_BANDWIDTH, GOODPUT, STEP_TIME, TFLOPS_PER_GPU, with_unit
from nvcre_tui.engine.report.logtail import nccl_average_note
from nvcre_tui.engine.report.model import (NO_MEASUREMENT, NO_THRESHOLDS, excluded_counted, excluded_elsewhere_counted, failed_nodes_said, fault_said,
                                          faults_said, inconclusive_said, nodes_said, result_said, under_suspicion_said)
from nvcre_tui.engine.report.readmodel import category_titles
from nvcre_tui.engine.units import count, format_duration

Obj = dict[str, Any]
# A node blamed only with its whole multi-node group (the report's `suspect`, the map's word): no evidence convicts it.
SUSPECT_NOTE = "suspect: its whole group failed together, no node named"
WIDTH = 66
MAX_GROUP_ROWS = 12
MAX_TAIL_LINES = 12


def _evidence_text(evidence: list[Obj] | None) -> str:
    parts = []
    for item in evidence or []:
        value = item.get("measured")
        measured = ("unavailable" if value is None else str(value) if isinstance(value, bool) or not isinstance(value, int | float)
                    else with_unit(str(item["metric"]), shown_measured(str(item["metric"]), str(item["expression"]), float(value), bool(item.get("passed")))))
        parts.append(f"{item['metric']} measured {measured}, expected {item['expression']}")
    return "; ".join(parts)


# What a diagnosis decided of a member of a failed test, said beside that test's blame of it: it supersedes the
# suspicion of a whole-group blame (a row read "(suspect: its whole group failed together ...)" above "cleared by the
# diagnosis (healthy)"). One place for the report's text and HTML and the console's detail pane.
DIAGNOSED = {
    "healthy": "cleared by the diagnosis: healthy",
    "inconclusive": "left inconclusive by the diagnosis: not blamed",
    "faulty": "convicted by the diagnosis: faulty",
    "intermittent": "convicted by the diagnosis: intermittent",
}


def blame_text(reason: str, suspect: bool, verdict: str | None = None) -> str:
    """A blame's reason, qualified by the diagnosis's verdict on the node where one decided it, else when it convicts no
    node (SUSPECT_NOTE)."""
    note = DIAGNOSED.get(verdict or "") or (SUSPECT_NOTE if suspect else None)
    return f"{reason} ({note})" if note else reason


def failure_blame(failure: Obj) -> str:
    """A failed-node entry's blame as every format says it (blame_text of its reason, `suspect` and `verdict`)."""
    return blame_text(str(failure.get("reason") or ""), bool(failure.get("suspect")), failure.get("verdict"))


def node_line(node: Obj) -> str:
    detail = failure_detail(node)
    return f"{node['name']}: {failure_blame(node)}" + (f" — {detail}" if detail else "")


def failure_detail(node: Obj) -> str:
    """What is said beside a failed node: a diagnosis's verdict with its record (its message holds the check that
    failed too), else the checks that failed, else the message."""
    message = str(node.get("message") or "")
    if message.startswith(VERDICT_PREFIX):
        return message
    return _evidence_text(node.get("evidence")) or message


def _names(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" ... ({len(names)} nodes)" if len(names) > limit else "")


def failure_lines(failures: list[Obj], indent: str) -> list[str]:
    """Failed nodes, one line per distinct (reason, detail): identical failures of many nodes read once."""
    by_kind: dict[tuple[str, str, str], list[str]] = {}
    for node in failures:
        by_kind.setdefault((failure_blame(node), failure_detail(node), node.get("category", "")), []).append(node["name"])
    lines = []
    for (blame, detail, category), names in by_kind.items():
        where = f" [{category}]" if category else ""
        lines.append(f"{indent}{_names(names)}: {blame}{' — ' + detail if detail else ''}{where}")
    return lines


def skipped_test_lines(category: Obj) -> list[str]:
    """DCGM runs that passed with tests skipped (not a clean pass), one line each."""
    marked = (category.get("diagnostics") or {}).get("passedWithSkippedTests") or []
    return [f"{_names(item['nodes'])}: {item['verdict']} ({item['message'].split(': ', 1)[-1]})" for item in marked]


def skipped_row_lines(category: Obj) -> list[str]:
    """nccl-tests runs that passed with rows left out of their averages (not a clean pass), one line each."""
    return [f"{_names(item['nodes'])}: {item['note']}" for item in category.get("passedWithSkippedRows") or []]


def run_note_lines(category: Obj) -> list[str]:
    """Runs whose result a note qualifies (their fabric not rendered, NCCL over Socket), one line each: the same in every format."""
    return [f"{_names(item['nodes'])}: {item['note']}" for item in category.get("runNotes") or []]


def failure_text(category: Obj) -> str:
    """Why a failed category failed, in lines: a threshold out of reach of the whole fleet (the threshold, not the
    nodes), a diagnosis's link faults, its failed nodes, then every failed group's message (a group that blamed no
    node, an expression or a missing measurement, says why only there)."""
    reach = [f"out of reach: {category['thresholdOutOfReach']}"] if category.get("thresholdOutOfReach") else []
    links = [f"infrastructure fault: {fault_said(fault)}" for fault in (category.get("diagnose") or {}).get("infrastructureFaults") or []]
    lines = [*reach, *links, *(node_line(node) for node in category.get("failedNodes") or [])]
    lines += [f"{group['name']}: {group['reason']}: {group['message']}" for group in category.get("failedGroups") or [] if group.get("message")]
    return "\n".join(lines)


def _card(title: str, rows: list[str]) -> list[str]:
    head = f"┌─ {title} "
    return [head + "─" * max(WIDTH - len(head), 2), *[f"│ {row}" for row in rows], "└" + "─" * (WIDTH - 1)]


def _field(label: str, value: Any) -> str:
    return f"{label + ':':<16}{value}"


def category_runtime(category: Obj) -> str | None:
    """A category's runtime as the reports say it ("1h04m", "12m30s (across 3 iterations)"); None before it ran."""
    if category.get("runtimeSeconds") is None:
        return None
    iterations = category.get("iterations") or []
    rounds = sum(1 for i in iterations if "round" in i)
    spans = [count(n, word) for n, word in ((len(iterations) - rounds, "iteration"), (rounds, "round")) if n]
    return format_duration(category["runtimeSeconds"]) + (f" (across {' and '.join(spans)})" if len(iterations) > 1 else "")


def iteration_lines(category: Obj) -> list[str]:
    """Each iteration (or diagnosis round) of a category that ran several, as the reports list it under its runtime:
    "✓ #1 Succeeded 4m10s", "✗ round 2 Failed 3m"; none when it ran once."""
    iterations = category.get("iterations") or []
    if category.get("runtimeSeconds") is None or len(iterations) < 2:
        return []
    return [f"{PHASE_GLYPHS.get(i['status'], '?')} " + (f"round {i['round']}" if "round" in i else f"#{i['number']}") + f" {i['status']}"
            + (f" {format_duration(i['durationSeconds'])}" if i.get("durationSeconds") is not None else "") for i in iterations]


def _category_rows(category: Obj) -> list[str]:
    rows = [_field("Status", f"{PHASE_GLYPHS.get(category['status'], '?')} {category['status']}")]
    if category.get("failureReason"):
        rows.append(_field("Reason", category["failureReason"]))
    if category.get("waitingForPods"):
        rows.append(_field("Waiting", f"{category['waitingForPods']}"))
    if category.get("thresholdOutOfReach"):
        rows.append(_field("Out of reach", category["thresholdOutOfReach"]))
    runtime = category_runtime(category)
    if runtime is not None:
        rows.append(_field("Runtime", runtime))
        rows += [f"  {line}" for line in iteration_lines(category)]
    if category.get("testScale"):
        per_job = test_sizes(category["diagnose"]) if category.get("diagnose") else None  # a diagnosis's tests vary in size
        rows.append(_field("Scale", f"{category['testScale']}   Nodes/Job: {per_job or category.get('nodesPerJob')}   Jobs: {category.get('jobs')}   MNNVL: {'on' if category.get('mnnvl') else 'off'}"))
    for key, expression in sorted((category.get("thresholds") or {}).items()):
        rows.append(_field("Threshold", f"{key}: {expression}"))
    if "thresholds" in category and not category["thresholds"]:  # absent until its Workflow is made (it waits): not known yet
        rows.append(_field("Thresholds", NO_THRESHOLDS))
    if category.get("failedGroups"):
        rows.append("Failed Groups:")
        for group in category["failedGroups"][:MAX_GROUP_ROWS]:
            rows.append(f"  ✗ {group['name']} ({count(group['nodeCount'], 'node')}): {group['reason']}")
            rows += failure_lines(group.get("failedNodes") or [], "      ")  # each with the diagnosis's verdict, where it decided
            if not group.get("failedNodes") and group.get("message"):  # blames no node: why the group failed is the Job's
                rows.append(f"      {group['message']}")
            log = group.get("failureLog") or {}
            if log.get("tail") and group.get("reason") == THRESHOLD_VIOLATED:  # the run went well: its value is said above
                where = f" on {log['nodeName']}" if log.get("nodeName") else ""
                rows.append(f"      Log: pod {log.get('podName')}{where}, the output the value was read from (its last lines: -o json, failureLog)")
            elif log.get("tail"):
                where = f" on {log['nodeName']}" if log.get("nodeName") else ""
                rows.append(f"      Failure Log: pod {log.get('podName')}{where}" + (f", exit {log['exitCode']}" if log.get("exitCode") is not None else "") + f" ({log.get('reason')})")
                rows += [f"        {line.encode('unicode_escape').decode()[:120]}" for line in log["tail"].splitlines()[-MAX_TAIL_LINES:]]
            if note := nccl_average_note(log.get("tail")):  # beside the value measured above, the tail's own average
                rows.append(f"      ({note})")
        if len(category["failedGroups"]) > MAX_GROUP_ROWS:
            rows.append(f"  ... and {count(len(category['failedGroups']) - MAX_GROUP_ROWS, 'more failed group')}")
    if category.get("cliques"):
        rows.append("Cliques:")
        # a crashed clique's reason, not the partial value of its sweep (report.model.measured_whole)
        rows += [f"  {'✓' if c['passed'] else '✗'} {c['name']}  {c['validated']}/{c['total']} nodes"
                 + (f"  {c['busBW']:.2f} {BANDWIDTH_UNIT}" if c.get("busBW") is not None else f"  {c['reason']}" if c.get("reason") else "")
                 for c in category["cliques"]]
    if category.get("diagnose"):
        rows += _diagnose_rows(category["diagnose"])
    elif category.get("diagnoseNotStarted"):
        rows.append(_field("Diagnosis", f"not started: {category['diagnoseNotStarted']}"))
    training = category.get("training")
    if training:
        if GOODPUT in training:
            rows.append(_field("Goodput", f"{training[GOODPUT]:.2f} ({training[GOODPUT] * 100:.0f}%)"))
        if TFLOPS_PER_GPU in training:
            rows.append(_field("TFLOPs/GPU", f"{training[TFLOPS_PER_GPU]:.1f}"))
        if STEP_TIME in training:
            rows.append(_field("Step Time", f"{training[STEP_TIME]:.2f}s"))
    diagnostics = category.get("diagnostics")
    if diagnostics:
        marked = diagnostics["passedWithSkippedTests"]
        rows.append(_field("Diagnostics", f"{count(diagnostics['samples'], 'run')}, {len(marked)} passed with skipped tests"))
        rows += _capped([f"  ! {line}" for line in skipped_test_lines(category)], "run")
    marked_rows = category.get("passedWithSkippedRows") or []
    if marked_rows:
        rows.append(_field("nccl-tests", f"{count(len(marked_rows), 'run')} passed with skipped rows"))
        rows += _capped([f"  ! {line}" for line in skipped_row_lines(category)], "run")
    noted = run_note_lines(category)
    if noted:
        rows.append(_field("Run notes", count(len(noted), "run")))
        rows += _capped([f"  ! {line}" for line in noted], "run")
    low = [g for g in category.get("groupBandwidth") or [] if g.get("belowMin") or g.get("failed")]
    if low and any(g["busBW"] is not None or g.get("partialBusBW") is not None for g in category.get("groupBandwidth") or []):  # a category that measures bandwidth
        rows.append("Bandwidth by group (below threshold or failed):")
        # In columns: `group-6` above `group-11` put their values one place apart, hard to scan down
        names = max(len(str(group["groupName"])) for group in low)
        values = [_group_bandwidth(category, group) for group in low]
        width = max(len(value) for value in values)
        whys = [_why_failed(group) for group in low]  # LOW, WorkloadFailed ...: a column too, so the node lists line up
        why_width = max(len(why) for why in whys)
        rows += _capped([f"  ✗ {str(group['groupName']):<{names}}  {value:>{width}}{why:<{why_width}}  "
                         f"[{', '.join(group['nodes'][:4])}{' ...' if len(group['nodes']) > 4 else ''}]"
                         for group, value, why in zip(low, values, whys, strict=True)],
                        "group")
    if category.get("bandwidth"):
        bw = category["bandwidth"]
        spread = f" (min {bw['minBusBW']:.2f}, max {bw['maxBusBW']:.2f} over {bw['samples']} jobs)" if bw["samples"] > 1 else ""
        rows.append(_field("Bandwidth", f"busBW {bw['busBW']:.2f} {BANDWIDTH_UNIT}{spread}"))
    return rows


def group_value(category: Obj, group: Obj) -> str:
    """A groupBandwidth row's busBW as shown beside its verdict: never on the other side of the threshold
    (shown_measured) when the threshold judged it (belowMin true or false), else with two decimals."""
    threshold = (category.get("thresholds") or {}).get(BUS_BANDWIDTH)
    if threshold and group.get("belowMin") is not None:
        return shown_measured(BUS_BANDWIDTH, str(threshold), float(group["busBW"]), not group["belowMin"])
    return f"{group['busBW']:.2f}"


def _diagnose_rows(state: Obj) -> list[str]:
    rows = [
        _field("Diagnosis", progress_text(state)),
        _field("  Healthy", len(state.get("healthyNodes") or [])),
        _field("  Faulty", ", ".join(state.get("faultyNodes") or []) or "none"),
        _field("  Intermittent", ", ".join(state.get("intermittentNodes") or []) or "none"),
        _field("  Inconclusive", ", ".join(state.get("inconclusiveNodes") or []) or "none"),
    ]
    rows += [f"  Infra fault:  {fault_said(note)}" for note in state.get("infrastructureFaults") or []]
    verdicts = state.get("verdicts") or []
    if verdicts:
        rows.append("  Verdicts:")
        rows += _capped([f"    {verdict_line(row)}" for row in verdicts], "verdict")
    rows += _capped([f"  Note:         {note.get('message', '')}" for note in state.get("notes") or []], "note")
    return rows


def _capped(lines: list[str], noun: str) -> list[str]:
    """At most MAX_GROUP_ROWS of `lines`, then how many more there are (the JSON report holds them all): `noun` is
    singular ("... and 1 more group", never "1 more groups")."""
    if len(lines) <= MAX_GROUP_ROWS:
        return lines
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    return [*lines[:MAX_GROUP_ROWS], f"{indent}... and {count(len(lines) - MAX_GROUP_ROWS, 'more ' + noun)} (the JSON report lists them all)"]


def _why_failed(group: Obj) -> str:
    """The reason a group failed for anything but its threshold (a run that crashed after measuring 400.69 GB/s read as
    if that value had failed it; one that crashed part-way, at 235.97 GB/s, read LOW, the crash's XID unsaid), else
    "  LOW" for a value that missed the threshold."""
    reason = group.get("reason") if group.get("failed") else None
    if group.get("belowMin") and reason in (None, "", THRESHOLD_VIOLATED):
        return "  LOW"
    return f"  {reason}" if reason else ""


def _group_bandwidth(category: Obj, group: Obj) -> str:
    """Its value; where it has none (a run that crashed or timed out part-way: its partial sweep is no measurement,
    report.model.measured_whole), NO_MEASUREMENT, its reason in the next column."""
    return NO_MEASUREMENT if group["busBW"] is None else f"{group_value(category, group)} {BANDWIDTH_UNIT}"


# The header line of each report/model.HOW_RUN_FIELDS field present.
HOW_RUN_SHOWN = {"workloadFallback": "batch/v1 fallback (no Kubeflow Trainer)",
                 "simulated": "simulated (no GPU ran them: made-up measurements)"}


EXCLUDED_NAMED = 4  # nodes named beside each exclusion reason
WAITED = "for nodes, nothing of it running (another certification held them, or none matched its target)"


def timing(report: Obj) -> list[tuple[str, str]]:
    """(label, value) of its runtime (while a category ran) and, apart, of the time it waited for nodes: none until it ends."""
    rows = []
    if isinstance(report.get("runtimeSeconds"), int | float):
        rows.append(("Runtime", format_duration(report["runtimeSeconds"])))
    if isinstance(report.get("waitedSeconds"), int | float) and report["waitedSeconds"] > 0:
        rows.append(("Waited", f"{format_duration(report['waitedSeconds'])} {WAITED}"))
    return rows


def excluded_elsewhere_said(entries: list[tuple[Obj, str]]) -> str:
    """A category's excluded nodes the report counts in a worse state (model.excluded_elsewhere_counted), each reason
    with its nodes: "gpu-node-04: cordoned (spec.unschedulable); failed in another category, so counted under Failed
    Nodes" ("" for none)."""
    why = {"failed": "failed in another category, so counted under Failed Nodes",
           "inconclusive": "inconclusive in another category, so not counted as excluded"}
    by_reason: dict[tuple[str, str], list[str]] = {}
    for entry, state in entries:
        by_reason.setdefault((state, str(entry.get("message") or entry.get("reason") or "excluded")), []).append(str(entry.get("name")))
    return "; ".join(f"{_names(names, EXCLUDED_NAMED)}: {reason}; {why[state]}" for (state, reason), names in sorted(by_reason.items()))


def render_text(report: Obj) -> str:
    """The full report."""
    lines = ["╔" + "═" * (WIDTH - 2) + "╗", "║" + "Certification Report".center(WIDTH - 2) + "║", "╚" + "═" * (WIDTH - 2) + "╝"]
    lines += [f"  {_field('Name', report['name'])}", f"  {_field('Platform', report.get('platform') or 'unknown')}",
              f"  {_field('GPU', report.get('gpu') or 'unknown')}", f"  {_field('Nodes', nodes_said(report))}"]
    lines += [f"  {_field('Workloads', shown)}" for key, shown in HOW_RUN_SHOWN.items() if report.get(key)]
    lines += [f"  {_field(label, value)}" for label, value in timing(report)]
    excluded = excluded_counted(report)  # a node failed in one category, excluded from another, counts as failed
    if excluded:
        lines.append(f"  {_field('Excluded', f'{len(excluded)} (' + ', '.join(e['name'] for e in excluded[:8]) + (' ...' if len(excluded) > 8 else '') + ')')}")
        # Each reason with the nodes it excluded (a bare list of reasons read as a mapping onto the names above).
        by_reason: dict[str, list[str]] = {}
        for entry in excluded:
            by_reason.setdefault(str(entry.get("message") or entry["reason"]), []).append(str(entry["name"]))
        for reason, names in sorted(by_reason.items()):
            shown = ", ".join(names[:EXCLUDED_NAMED]) + (f" (+{len(names) - EXCLUDED_NAMED} more)" if len(names) > EXCLUDED_NAMED else "")
            lines.append(f"  {'':16}{shown}: {reason}")
    lines.append("")
    for category, title in zip(report["categories"], category_titles(report["categories"]), strict=True):
        also = excluded_elsewhere_said(excluded_elsewhere_counted(report, category))
        lines += _card(title, _category_rows(category) + ([_field("Excluded", also)] if also else []))
        lines.append("")
    summary = [_field("Categories", f"{report['passedCategories']}/{report['totalCategories']} passed")]
    details = report.get("failedNodeDetails") or []
    summary.append(_field("Failed Nodes", failed_nodes_said(report)))
    summary += failure_lines([failure for node in details for failure in node["failures"]], "  - ")
    faults = faults_said(report)
    if faults:  # what failed beside (or instead of) the nodes: only then
        summary.append(_field("Infra Faults", str(len(faults))))
        summary += [f"  - {fault}" for fault in faults]
    if report.get("underSuspicion"):  # only while a diagnosis runs
        summary.append(_field("Suspicion", under_suspicion_said(report)))
    if report.get("inconclusiveNodes"):  # only then: a report without any reads as it did
        summary.append(_field("Inconclusive", inconclusive_said(report)))
    summary.append(_field("Result", result_said(report)))
    lines += _card("Summary", summary)
    return "\n".join(lines) + "\n"
