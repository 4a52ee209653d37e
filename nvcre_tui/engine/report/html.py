"""The report as one self-contained HTML file: inline CSS and SVG, no script, no network.

Sections: the summary; per category its threshold, a bus bandwidth vs message size curve per group (from
the runs' nccl-tests logs, when the session can read them) and a bar per node or group (the Jobs'
busBandwidthGBps, those below the threshold marked ✗); failed nodes with their evidence; diagnose verdicts.
Every text from the objects goes through `html.escape`; colours always come with a word or a glyph.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from nvcre_tui.engine.api.bodies import job_label, labels_of, measurement_of, run_name, run_status
from nvcre_tui.engine.api.vocabulary import FAILED, LABEL_DOMAIN, LABEL_VARIANT, NOT_RUN, PHASE_GLYPHS, RESULT_GLYPHS, SIMULATED_OUTPUT, SUCCEEDED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import job_groups
from nvcre_tui.engine.judging.thresholds import shown_measured
from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT, BUS_BANDWIDTH, with_unit
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.model import (NO_THRESHOLDS, cut_short, excluded_counted, excluded_elsewhere_counted, failed_nodes_said, fault_said,
                                          faults_said, inconclusive_said, nodes_said, not_measured_said, result_said, under_suspicion_said)
from nvcre_tui.engine.report.readmodel import category_titles
from nvcre_tui.engine.report.readmodel import Joined
from nvcre_tui.engine.diagnose.summary import progress_text
from nvcre_tui.engine.report.text import category_runtime, excluded_elsewhere_said, failure_blame, iteration_lines, timing

Obj = dict[str, Any]
Curves = Mapping[str, Mapping[str, Mapping[int, float]]]  # category -> group label -> size -> busbw GB/s
SERIES_COLOURS = ("#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2")
CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #111; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { text-align: left; padding: 0.2em 0.8em; border-bottom: 1px solid #eee; vertical-align: top; }
.verdict { font-weight: bold; padding: 0.1em 0.5em; border-radius: 0.3em; }
.PASSED, .Succeeded { background: #dcfce7; } .FAILED, .Failed { background: #fee2e2; } .INCOMPLETE, .RUNNING, .InProgress, .Pending { background: #fef9c3; }
.note { color: #555; } .reach { font-weight: bold; } figure { margin: 0.8em 0; } figcaption { color: #444; font-size: 0.9em; }
svg text { font: 11px system-ui, sans-serif; fill: #333; } .evidence { font-family: ui-monospace, monospace; font-size: 0.9em; }
"""


def _size(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def _number(value: Any, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else "-"


def _judged(metric: str, expression: Any, value: Any, passed: bool | None, digits: int = 1) -> str:
    """A measured value beside its verdict: never on the other side of the threshold (shown_measured) when the
    threshold judged it (`passed` true or false), else `_number`."""
    if expression and passed is not None and _number(value) != "-":
        return shown_measured(metric, str(expression), float(value), passed)
    return _number(value, digits)


def _ceiling(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    return next(step * magnitude for step in (1, 2, 2.5, 5, 10) if step * magnitude >= value)


LEGEND_CHARS = 18  # what the legend's 120 pixels hold


def curve_svg(series: Mapping[str, Mapping[int, float]], width: int = 640, height: int = 260) -> str:
    """Bus bandwidth against message size (log2 x axis), one polyline per group, a legend naming each."""
    sizes = sorted({size for curve in series.values() for size in curve if size > 0})
    if not sizes:
        return ""
    left, right, top, bottom = 52, 150, 12, 34
    top_value = _ceiling(max(v for curve in series.values() for v in curve.values()))
    lo, hi = math.log2(sizes[0]), math.log2(sizes[-1]) if sizes[-1] > sizes[0] else math.log2(sizes[0]) + 1

    def x(size: int) -> float:
        return left + (math.log2(size) - lo) / (hi - lo) * (width - left - right)

    def y(value: float) -> float:
        return top + (1 - value / top_value) * (height - top - bottom)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f'<title>bus bandwidth by message size</title><rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" fill="none" stroke="#999"/>']
    for tick in range(5):
        value = top_value * tick / 4
        parts.append(f'<text x="{left - 4}" y="{y(value) + 4:.1f}" text-anchor="end">{value:g}</text>')
    step = max(1, len(sizes) // 8)
    for size in sizes[::step]:
        parts.append(f'<text x="{x(size):.1f}" y="{height - bottom + 14}" text-anchor="middle">{escape(_size(size))}</text>')
    parts.append(f'<text x="{left}" y="{height - 4}">message size (bytes, log scale) · busbw {BANDWIDTH_UNIT}</text>')
    for index, (label, curve) in enumerate(sorted(series.items())):
        colour = SERIES_COLOURS[index % len(SERIES_COLOURS)]
        points = " ".join(f"{x(size):.1f},{y(value):.1f}" for size, value in sorted(curve.items()) if size > 0)
        dash = ' stroke-dasharray="5,3"' if index >= len(SERIES_COLOURS) else ""
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.8"{dash} points="{points}"><title>{escape(label)}</title></polyline>')
        if index < 12:
            ly = top + 14 + index * 15
            parts.append(f'<line x1="{width - right + 8}" y1="{ly - 4}" x2="{width - right + 26}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dash}/>'
                         f'<text x="{width - right + 30}" y="{ly}"><title>{escape(label)}</title>{escape(_legend(label))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _legend(label: str, most: int = LEGEND_CHARS) -> str:
    """A curve's name as its legend has room for: whole, else without its node count ("r3-confirm-2 (2 nodes)"),
    else cut with "…" (the full name shows on hover)."""
    if len(label) <= most:
        return label
    name = label.split(" (", 1)[0]
    return name if len(name) <= most else f"{name[:most - 1]}…"


def bars_svg(rows: Sequence[Obj], width: int = 640, threshold: str | None = None) -> str:
    """One horizontal bar per node or group (busBW), low or failed ones marked ✗ as well as coloured; the value
    as the busBandwidthGBps `threshold` judged it (a failed 299.999 never reads 300.0 against `value >= 300`)."""
    measured = [r for r in rows if isinstance(r.get("busBW"), int | float)]
    if not measured:
        return ""
    bar, left, right = 16, 170, 90
    height = bar * len(measured) + 24
    top_value = _ceiling(max(r["busBW"] for r in measured))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             "<title>bus bandwidth per node or group</title>"]
    for index, row in enumerate(sorted(measured, key=lambda r: r["busBW"])):
        low = bool(row.get("belowMin")) or bool(row.get("failed"))
        y = index * bar + 4
        length = row["busBW"] / top_value * (width - left - right)
        label = row["nodes"][0] if len(row.get("nodes") or []) == 1 else f"{row['groupName']} ({len(row.get('nodes') or [])} nodes)"
        parts.append(f'<text x="{left - 6}" y="{y + 11}" text-anchor="end">{escape(label)}</text>'
                     f'<rect x="{left}" y="{y}" width="{length:.1f}" height="{bar - 4}" fill="{"#dc2626" if low else "#16a34a"}"/>'
                     f'<text x="{left + length + 4:.1f}" y="{y + 11}">{"✗ " if low else ""}{escape(_bar_value(row, threshold))}</text>')
    parts.append(f'<text x="{left}" y="{height - 4}">busbw {BANDWIDTH_UNIT} (0 – {top_value:g})</text></svg>')
    return "".join(parts)


def _bar_value(row: Obj, threshold: str | None) -> str:
    below = row.get("belowMin")
    return _judged(BUS_BANDWIDTH, threshold, row["busBW"], None if below is None else not below)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _evidence(items: Sequence[Obj]) -> str:
    lines = [f"{e.get('metric', '?')}: measured {_measured(e)}, "
             f"{e.get('expression', '')} → {'passed' if e.get('passed') else 'failed'}"
             + (f" ({e['message']})" if e.get("message") else "") for e in items]
    return "<br>".join(escape(line) for line in lines) or "no threshold evidence"


def _measured(check: Obj) -> str:
    """A check's measured value on its side of its threshold, with its unit ("243.18 GB/s"); "-" where none was."""
    shown = _judged(str(check.get("metric")), check.get("expression"), check.get("measured"), bool(check.get("passed")), 2)
    return shown if shown == "-" else with_unit(str(check.get("metric")), shown)


def _diagnose(state: Obj) -> str:
    rows = [(title, ", ".join(state.get(key) or []) or "none") for title, key in
            (("✗ faulty", "faultyNodes"), ("~ intermittent", "intermittentNodes"), ("! suspect", "suspectNodes"), ("? inconclusive", "inconclusiveNodes"), ("✓ healthy", "healthyNodes"))]
    notes = [fault_said(n) for n in state.get("infrastructureFaults") or []] + [n.get("message", "") for n in state.get("notes") or []]
    decided = [(row["node"], row["verdict"], row["record"]) for row in state.get("verdicts") or []]
    return (f"<h4>Diagnose verdicts</h4><p>{escape(progress_text(state))}</p>" + _table(("verdict", "nodes"), rows)
            + "".join(f'<p class="note">{escape(note)}</p>' for note in notes)
            + (_table(("node", "verdict", "the tests that decided it"), decided) if decided else ""))


def _category(category: Obj, title: str, curves: Mapping[str, Mapping[int, float]] | None, curve_note: str | None,
              excluded_elsewhere: str = "") -> str:
    status = category.get("status", "Pending")
    out = [f'<section class="category"><h3>{escape(title)} <span class="verdict {escape(status)}">{PHASE_GLYPHS.get(status, "")} {escape(status)}</span></h3>']
    if category.get("failureReason"):
        out.append(f"<p>{escape(str(category['failureReason']))}</p>")
    if excluded_elsewhere:  # its excluded nodes the report counts in a worse state (text.excluded_elsewhere_said), as the text's card says
        out.append(f"<p>Excluded: {escape(excluded_elsewhere)}</p>")
    if category.get("waitingForPods"):  # running, its pods not yet: as the text report's Waiting
        out.append(f"<p>Waiting: {escape(str(category['waitingForPods']))}</p>")
    if category.get("thresholdOutOfReach"):  # the threshold, not the nodes: said before any verdict
        out.append(f'<p class="reach">Out of reach: {escape(str(category["thresholdOutOfReach"]))}</p>')
    runtime = category_runtime(category)  # as the text report says it, each iteration (round) under it
    if runtime is not None:
        out.append(f"<p>Runtime: {escape(runtime)}</p>")
        iterations = iteration_lines(category)
        if iterations:
            out.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in iterations) + "</ul>")
    thresholds = category.get("thresholds") or {}
    if thresholds:
        out.append(_table(("metric", "threshold"), sorted(thresholds.items())))
    elif "thresholds" in category:  # absent until its Workflow is made: not known yet, so not said to be none
        out.append(f"<p>Thresholds: {escape(NO_THRESHOLDS)}</p>")
    bw = category.get("bandwidth")
    if bw:
        out.append(f"<p>busBW {_number(bw['busBW'], 2)} {BANDWIDTH_UNIT} (min {_number(bw['minBusBW'], 2)}, max {_number(bw['maxBusBW'], 2)} over {bw['samples']} jobs)</p>")
    if category.get("training"):
        out.append(_table(("metric", "value"), [(k, _number(v, 3)) for k, v in sorted(category["training"].items())]))
    diagnostics = category.get("diagnostics")
    if diagnostics and diagnostics["passedWithSkippedTests"]:
        out.append(_table(("nodes", "DCGM verdict"), [(", ".join(item["nodes"]), item["verdict"]) for item in diagnostics["passedWithSkippedTests"]]))
    if category.get("passedWithSkippedRows"):
        out.append(_table(("nodes", "nccl-tests: passed with skipped rows"),
                          [(", ".join(item["nodes"]), item["note"]) for item in category["passedWithSkippedRows"]]))
    if category.get("runNotes"):
        out.append(_table(("nodes", "run notes"), [(", ".join(item["nodes"]), item["note"]) for item in category["runNotes"]]))
    if curves:
        out.append(f"<figure>{curve_svg(curves)}<figcaption>Bus bandwidth vs message size, per group (out-of-place busbw from each run's nccl-tests log).</figcaption></figure>")
    elif curve_note:
        out.append(f'<p class="note">Size curves: {escape(curve_note)}</p>')
    bars = bars_svg(category.get("groupBandwidth") or [], threshold=thresholds.get(BUS_BANDWIDTH))
    if bars:
        out.append(f"<figure>{bars}<figcaption>Bus bandwidth per node (single-node jobs) or group; ✗ marks a group below the threshold or failed.</figcaption></figure>")
    if category.get("diagnose") is not None:
        out.append(_diagnose(category["diagnose"]))
    elif category.get("diagnoseNotStarted"):  # as the text report's `Diagnosis: not started: ...`
        out.append(f'<p class="note">Diagnosis: not started: {escape(str(category["diagnoseNotStarted"]))}</p>')
    out.append("</section>")
    return "".join(out)


def render_html(report: Obj, curves: Curves | None = None, curve_notes: Mapping[str, str] | None = None) -> str:
    """The whole report as one HTML document."""
    curves, curve_notes = curves or {}, curve_notes or {}
    result = str(report.get("result"))
    details = report.get("failedNodeDetails") or []
    said = result_said(report)  # WAITING for what, while none of its categories has started
    summary = [("Result", f"{RESULT_GLYPHS.get(result, '')} {said}"), ("Categories", f"{report.get('passedCategories')}/{report.get('totalCategories')} passed"),
               ("Nodes", nodes_said(report)), ("Failed nodes", failed_nodes_said(report)),
               ("Inconclusive nodes", inconclusive_said(report)),
               ("Excluded nodes", len(excluded_counted(report))), ("Platform", report.get("platform") or "unknown"),
               ("GPU", report.get("gpu") or "unknown"), ("Started", report.get("startTime") or "-"), ("Completed", report.get("completionTime") or "-")]
    summary += timing(report)  # Runtime, and apart the time it Waited for nodes
    if report.get("workloadFallback"):
        summary.insert(8, ("Workloads", f"batch/v1 fallback: {report['workloadFallback']}"))
    if report.get("simulated"):
        summary.insert(1, ("Workloads", f"simulated: {report['simulated']}"))
    if report.get("underSuspicion"):  # only while a diagnosis runs, beside the failed nodes
        summary.insert(next(i for i, (label, _) in enumerate(summary) if label == "Failed nodes") + 1, ("Under suspicion", under_suspicion_said(report)))
    faults = faults_said(report)
    if faults:  # beside the failed nodes, as the text's summary lists them
        summary.insert(next(i for i, (label, _) in enumerate(summary) if label == "Failed nodes") + 1, ("Infrastructure faults", "; ".join(faults)))
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
             f"<title>Certification report: {escape(str(report.get('name')))}</title><style>{CSS}</style></head><body>",
             f"<h1>Certification report: {escape(str(report.get('name')))}</h1>",
             f'<p>namespace {escape(str(report.get("namespace") or "-"))} · <span class="verdict {escape(result)}">{RESULT_GLYPHS.get(result, "")} {escape(said)}</span></p>',
             '<h2 id="summary">Summary</h2>', _table(("", ""), summary), '<h2 id="categories">Categories</h2>']
    categories = report.get("categories") or []
    for category, title in zip(categories, category_titles(categories), strict=True):
        key = f"{category['domain']}/{category['variant']}"
        parts.append(_category(category, title, curves.get(key), curve_notes.get(key), excluded_elsewhere_said(excluded_elsewhere_counted(report, category))))
    parts.append('<h2 id="failed-nodes">Failed nodes</h2>')  # suspects among them marked !
    if not details:
        parts.append("<p>none</p>")
    else:
        rows = [(f"{'!' if failure.get('suspect') else '✗'} {node['name']}", failure.get("category", ""),
                 failure_blame(failure), failure.get("message", ""))
                for node in details for failure in node["failures"]]
        parts.append(_table(("node", "category", "reason", "message"), rows))
        for node in details:
            for failure in node["failures"]:
                parts.append(f'<h4>{escape(node["name"])} · {escape(str(failure.get("category", "")))}</h4>'
                             f'<p class="evidence">{_evidence(failure.get("evidence") or [])}</p>')
    excluded = excluded_counted(report)  # a failed node excluded from another category is a failed node (its category says it)
    if excluded:
        parts.append('<h2 id="excluded">Excluded nodes</h2>' + _table(("node", "reason", "message"), [(e["name"], e.get("reason", ""), e.get("message", "")) for e in excluded]))
    parts.append("</body></html>\n")
    # Escaped for HTML; control characters (an ESC a pod printed) neutralised too, CRLF line ends read as line ends.
    return printable("".join(parts).replace("\r\n", "\n"))


MAX_CURVES = 6


async def size_curves(logs: Any, workflows: Sequence[Obj], jobs: Sequence[Obj], runs: Sequence[Obj]) -> tuple[dict[str, dict[str, dict[int, float]]], dict[str, str]]:
    """Per nccl category, busbw by message size of each group's run log (`logs`: the session's LogSource).
    With more than MAX_CURVES groups: the lowest ones and the median of all. Notes say why a curve is missing."""
    import statistics

    from nvcre_tui.engine.parsers import ParseError, parse_nccl

    by_run = {r["metadata"]["name"]: r for r in runs}
    joined = Joined(workflows, jobs)
    curves: dict[str, dict[str, dict[int, float]]] = {}
    notes: dict[str, str] = {}
    for wf in workflows:
        labels = labels_of(wf)
        key = f"{labels.get(LABEL_DOMAIN)}/{labels.get(LABEL_VARIANT)}"
        if measurement_of(wf).get("parser") != "nccl":
            continue
        found: dict[str, dict[int, float]] = {}
        problems: dict[str, list[str]] = {}  # why -> the groups it says it of: one sentence said once, not per group
        groups = job_groups(wf)
        for job in joined.jobs_of(wf):
            run = by_run.get(run_name(job["metadata"]["name"]))
            if run is None or run_status(run).get("phase") not in (SUCCEEDED, FAILED):
                continue
            label = job_label(job)
            if (reason := run_status(run).get("reason")) in NOT_RUN:
                problems.setdefault(f"no pod ran ({reason})", []).append(label)
                continue
            # a run cut short (a crash, a timeout) read part of a sweep: no curve of the group, and no lowest one
            if (cut := cut_short(groups.get(job["metadata"]["name"]) or {})) is not None:
                problems.setdefault(not_measured_said(cut), []).append(label)
                continue
            try:
                lines = await logs.lines(run)
                result = parse_nccl(lines)
            except ParseError as error:
                # No pod holds a simulated run's output: only the simulated fleet makes it (a report with --sim-runner).
                simulated = not lines and cond.is_true(run, cond.SIMULATED)
                problems.setdefault(SIMULATED_OUTPUT if simulated else error.reason, []).append(label)
                continue
            except Exception as error:  # noqa: BLE001 - a log source that cannot answer is a note, not a traceback
                problems.setdefault(f"cannot read the log ({error})", []).append(label)
                continue
            found[label] = {size.size: size.out_of_place.busbw for size in result.sizes}
        if len(found) > MAX_CURVES:
            sizes = sorted({s for c in found.values() for s in c})
            median = {s: statistics.median(c[s] for c in found.values() if s in c) for s in sizes}
            lowest = sorted(found, key=lambda label: statistics.median(found[label].values()) if found[label] else 0)[:MAX_CURVES - 1]
            found = {**{label: found[label] for label in lowest}, f"median of {len(found)}": median}
        if found:
            curves[key] = found
        if problems:
            notes[key] = "; ".join(f"{_groups_said(labels)}: {why}" for why, labels in problems.items())
    return curves, notes


def _groups_said(labels: Sequence[str]) -> str:
    """`r1-g0, r1-g1, r1-g2 (and 5 more)`: the groups one note is about, the first three named."""
    return ", ".join(labels[:3]) + (f" (and {len(labels) - 3} more)" if len(labels) > 3 else "")
