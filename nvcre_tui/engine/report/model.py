"""Certification -> report: one plain dict (the JSON schema documented in README), built from the
objects alone, so a report can be rebuilt from an exported snapshot after the cluster objects are gone.

Better than NVCRE's: the header covers every category (not the first); every failed node carries its
reason and threshold evidence; the LOW marker evaluates the real CEL threshold; failed groups of every
iteration are listed.
"""

from __future__ import annotations

import functools
from datetime import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.bodies import certification_status, conditions_of, group_nodes, job_status, workflow_spec, workflow_status
from nvcre_tui.engine.api.vocabulary import (FAILED, HARDWARE_FAILED, NODES_UNAVAILABLE, NOT_RUN, RESULT_FAILED, RESULT_RUNNING, SUCCEEDED,
                                             VALIDATION_FAILED, NodeState)
from nvcre_tui.engine.clock import format_time, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import excluded_counted as excluded_counted_of
from nvcre_tui.engine.controllers.iterations import inconclusive_counted, open_suspects
from nvcre_tui.engine.controllers.iterations import group_failures, job_groups
from nvcre_tui.engine.diagnose import readable
from nvcre_tui.engine.diagnose.state import STATUS_KEYS, VERDICTS
from nvcre_tui.engine.diagnose.summary import out_of_reach, verdict_rows
from nvcre_tui.engine.judging.fabric_fault import best_said, fault_message
from nvcre_tui.engine.judging.untested import tested_nothing
from nvcre_tui.engine.judging.thresholds import INVALID_EXPRESSION, THRESHOLD_VIOLATED, ThresholdError, compile_threshold, shown_judged, value_shower
from nvcre_tui.engine.parsers.measurements import (
    ALG_BANDWIDTH, BUS_BANDWIDTH, DIAG_TESTS_RUN, DIAG_TESTS_SKIPPED, GOODPUT, STEP_TIME, TFLOPS_PER_GPU, with_unit,
)
from nvcre_tui.engine.parsers.nccl_model import NOTE_PREFIX as NCCL_NOTE
from nvcre_tui.engine.report.nodestates import blamed_state, compute, diagnosis_open
from nvcre_tui.engine.report.readmodel import CategoryView, CertificationView, category_titles, pods_pending
from nvcre_tui.engine.units import count

Obj = dict[str, Any]
REPORT_SCHEMA_VERSION = 1
# A category without thresholds passes on completing with its measurements: said where its thresholds would be, so a
# PASSED on a 161 GB/s node beside 400 GB/s ones is not read as judged (NVCRE sets none by default, neither do we).
NO_THRESHOLDS = "none: measurements are recorded, not judged (spec.options.thresholds judges them)"
SUSPECT = NodeState.SUSPECT.value  # nodestates.blamed_state's word for a node blamed only with its whole group


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return max((parse_time(end) - parse_time(start)).total_seconds(), 0.0)


def waited_and_ran_so_far(status: Mapping[str, Any], created: str | None, workflows: Sequence[Mapping[str, Any]], now: datetime,
                          stamped_now: datetime) -> tuple[float, float] | None:
    """waited_and_ran to its completion, else (running) to `now`: what `list` and the dashboard say as RUNTIME. A
    running one whose start lies ahead of `now` was stamped on another clock (a --sim-runner engine's simulated time,
    read without --sim-runner): it read 0s; it has run the API server's time since it was created instead (to
    `stamped_now`, the clock its AGE counts on: session.store_now), its wait for nodes unknown there."""
    start, end = status.get("startTime"), status.get("completionTime")
    try:
        ahead = not end and parse_time(start) > now
        made = parse_time(created)
    except (TypeError, ValueError):
        ahead, made = False, now
    if ahead:
        return 0.0, max((stamped_now - made).total_seconds(), 0.0)
    return waited_and_ran(start, end or format_time(now), workflows)


def waited_and_ran(start: str | None, end: str | None, workflows: Sequence[Mapping[str, Any]]) -> tuple[float, float] | None:
    """(seconds the certification waited, seconds it ran) between its start and its end: it ran while one of its
    categories' Workflows ran (their start to completion, or to its end), and waited the rest (for nodes another
    certification held, or for nodes to match its target); None until it ends, or when its times are unreadable. Its
    runtime counted the wait: a certification queued 6 minutes behind another read as running twice as long."""
    try:
        begin, finish = parse_time(start), parse_time(end)
    except (TypeError, ValueError):
        return None
    spans = []
    for wf in workflows:
        status = workflow_status(dict(wf))
        try:
            ran_from = max(parse_time(status.get("startTime")), begin)
        except (TypeError, ValueError):
            continue  # never started
        try:
            ran_to = min(parse_time(status.get("completionTime")), finish)
        except (TypeError, ValueError):
            ran_to = finish
        if ran_to > ran_from:
            spans.append((ran_from, ran_to))
    ran, reached = 0.0, begin
    for ran_from, ran_to in sorted(spans):
        if ran_to > reached:
            ran += (ran_to - max(ran_from, reached)).total_seconds()
            reached = ran_to
    total = max((finish - begin).total_seconds(), 0.0)
    if total - ran <= TIMESTAMP_GRAIN:  # the rounding of whole-second times, not a wait
        return 0.0, total
    return max(total - ran, 0.0), min(ran, total)


# The API's times are whole seconds: a certification whose first Workflow the engine made in its first reconcile can read
# a second apart from it, and one whose category failed at once ran "0s"; that second was no wait for nodes (the report
# said "Waited: 1s for nodes, nothing of it running (another certification held them, or none matched its target)").
TIMESTAMP_GRAIN = 1.0


@functools.lru_cache(maxsize=8192)  # every report of a category (the console's at each refresh) asks again per group
def _low(threshold: str | None, busbw: float | None) -> bool | None:
    """Whether a group's busbw fails the busBandwidthGBps threshold (None when there is no threshold or no value:
    a group that measured nothing is failed, not low; None too when the expression cannot be evaluated on it,
    InvalidThresholdExpression: the expression is at fault, the value is neither low nor ok). One CEL run per value:
    the evidence's message took one more or several, 256 or more for an intra-rack report of 1,024 nodes, at each
    report (the archive's as the certification finished held the console's loop with them)."""
    if not threshold or busbw is None:
        return None
    try:
        passed = compile_threshold(BUS_BANDWIDTH, threshold).passes(busbw)
    except ThresholdError:
        return None
    return None if passed is None else not passed


NODES_NOT_KNOWN = "not known yet: no category has started"


def nodes_said(report: Obj) -> str:
    """The report's Nodes as its text and HTML say it: its count, but not 0 for a running certification none of whose
    categories has a Workflow yet (it waits for another certification, or for nodes): their nodes are not known yet, and
    `Nodes: 0` read as a target that matched none."""
    if report.get("result") == RESULT_RUNNING and not any("totalNodes" in c for c in report.get("categories") or []):
        return NODES_NOT_KNOWN
    return str(report.get("totalNodes"))


def result_said(report: Obj) -> str:
    """The report's Result as its text and HTML say it: its result, but WAITING and what for while none of its categories
    has started (`phase` and `waiting`, as `certification list` gives them, where the command that built it read them)."""
    if report.get("phase") == NodeState.WAITING.value.upper() and report.get("result") == RESULT_RUNNING:
        return f"WAITING {report['waiting']}" if report.get("waiting") else "WAITING"
    return str(report.get("result"))


def failed_nodes_said(report: Obj) -> str:
    """The report's failed-node count as its summaries say it: every node a category blamed (as the Certification's
    status and its failed-nodes ConfigMap count them), and how many of them are suspects, blamed only with their
    whole group ("5 (4 suspect: ...)"), whom the console's map shows `!`."""
    details = report.get("failedNodeDetails") or []
    if not details:
        return "none"
    suspects = sum(1 for node in details if node.get("suspect"))
    if not suspects:
        return str(len(details))
    which = "all" if suspects == len(details) else str(suspects)
    return f"{len(details)} ({which} suspect: blamed only with their whole group, no node named)"


def excluded_counted(report: Obj) -> list[Obj]:
    """The report's excluded nodes as its summaries count them: one node, one state per certification, the worst
    first, so a node it also lists among failedNodes (blamed in one category, excluded from a later one: cordoned
    mid-run) counts as failed only. report_of leaves such a node out of excludedNodes already; a report archived
    before it did (the history's, rendered again) listed it, and would count it twice."""
    worse = {str(name) for name in [*(report.get("failedNodes") or []), *(report.get("inconclusiveNodes") or [])]}
    return [e for e in report.get("excludedNodes") or [] if isinstance(e, dict) and str(e.get("name")) not in worse]


def faults_said(report: Obj) -> list[str]:
    """Each infrastructure fault a category's diagnosis named, with that category, as the text and HTML summaries list
    them beside the failed nodes: "degraded fabric between clique-0 and clique-2 (failed: r0-inter-0, r2-link-1)
    [communication/nccl-all-reduce]" (its card says what its tests measured). A certification a degraded link failed
    said 'Failed Nodes: none' and 'Result: FAILED' and nothing else."""
    categories = [c for c in report.get("categories") or [] if isinstance(c, dict)]
    return [f"{fault.get('message') or fault.get('kind') or 'infrastructure fault'} [{title}]"
            for category, title in zip(categories, category_titles(categories), strict=True)
            for fault in (category.get("diagnose") or {}).get("infrastructureFaults") or [] if isinstance(fault, Mapping)]


def under_suspicion_said(report: Obj) -> str:
    """A running diagnosis's suspects as the text and HTML summaries say them ("" for none): "7 (gpu-node-05, ...): a
    running diagnosis narrows them; not failed nodes"."""
    names = [str(name) for name in report.get("underSuspicion") or []]
    if not names:
        return ""
    return f"{len(names)} ({', '.join(names[:8])}{' ...' if len(names) > 8 else ''}): a running diagnosis narrows them; not failed nodes"


def inconclusive_said(report: Obj) -> str:
    """The report's inconclusive nodes as its text and HTML summaries say them, beside Failed Nodes and Excluded: "4
    (gpu-node-01, ...): not blamed, not certified: ..."; "none"; "-" for a report archived before it counted them
    (it has no such list: unknown, not none)."""
    if not isinstance(report.get("inconclusiveNodes"), list):
        return "-"
    names = [str(name) for name in report["inconclusiveNodes"]]
    if not names:
        return "none"
    shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
    return f"{len(names)} ({shown}): not blamed, not certified: a failed test or a diagnosis proved nothing of them"


def excluded_elsewhere_counted(report: Obj, category: Mapping[str, Any]) -> list[tuple[Obj, str]]:
    """The category's excluded nodes that the report counts in a worse state (excluded_counted leaves them out of its
    Excluded line), each with that state: `failed` where a category blamed it (its Failed Nodes count it), else
    `inconclusive` (another category's group failed with it and blamed nobody)."""
    failed = {str(name) for name in report.get("failedNodes") or []}
    counted = {str(e.get("name")) for e in excluded_counted(report)}
    return [(e, "failed" if str(e.get("name")) in failed else "inconclusive") for e in category.get("excludedNodes") or []
            if isinstance(e, dict) and str(e.get("name")) not in counted]


def with_blame(members: Sequence[str], failures: Sequence[Obj]) -> list[Obj]:
    """A group's failed-node entries, each with `suspect`: true where its Job blamed the whole multi-node group
    together (nodestates.blamed_state, the word the console shows), which convicts none of them."""
    words: dict[str, bool] = {}  # per reason: the same for every failure of that reason (weighed per failure: O(n²))
    for f in failures:
        reason = str(f.get("reason") or "")
        if reason not in words:
            words[reason] = blamed_state(members, failures, reason) == SUSPECT
    return [{**f, "suspect": words[str(f.get("reason") or "")]} for f in failures]


def category_failed_nodes(category: CategoryView) -> list[Obj]:
    """The category's blamed nodes (readmodel.failed_nodes), each with `suspect`: true where every group that blamed
    it for that reason blamed its whole group together (with_blame: the map's `suspect`); a diagnosis's verdicts,
    and a blame no group record explains, convict (`suspect` false)."""
    states: dict[tuple[str, str], set[bool]] = {}
    if category.orchestration.get("diagnose") is None:
        groups = [*(g for record in category.timeline for g in record.groups), *category.groups]
        for group in groups:
            for failure in with_blame(group["nodes"], group_failures(group, group["nodes"], category.job_of(group))):
                states.setdefault((failure["name"], str(failure.get("reason") or "")), set()).add(failure["suspect"])
    return [{**f, "suspect": states.get((f["name"], str(f.get("reason") or ""))) == {True}} for f in category.failed_nodes]


def _group_rows(category: CategoryView, threshold: str | None) -> tuple[list[Obj], list[Obj], list[Obj]]:
    """(groupBandwidth, failedGroups, iterations) over every recorded iteration of a category."""
    bandwidth, failed_groups, iterations = [], [], []
    recorded = category.iterations
    for record in recorded:
        groups = record.groups
        states = {g.get("phase") for g in groups}
        starts = [g["startTime"] for g in groups if g.get("startTime")]
        ends = [g["completionTime"] for g in groups if g.get("completionTime")]
        iterations.append({
            "number": record.number,
            **({"round": record.round} if record.round is not None else {}),  # a diagnose round's, as its tests name it
            "status": FAILED if FAILED in states else "Running" if states & {"Running", "Pending"} else SUCCEEDED,
            # a running iteration's span is not known yet (its finished groups' span is not it)
            "durationSeconds": _seconds_between(min(starts), max(ends)) if starts and ends and not record.current else None,
        })
        for group in groups:
            job = category.job_of(group) or {}
            busbw = (group.get("measurements") or {}).get(BUS_BANDWIDTH)
            # a diagnose round's tests are named for it (r2-...); an iteration's groups repeat their names
            label = f"{group['name']} (iter {record.number})" if len(recorded) > 1 and record.round is None else group["name"]
            failed = group.get("phase") == FAILED
            if busbw is not None or failed:
                # A failed group's reason: one that crashed after measuring failed for the crash. Only a whole run's value
                # is its busBW (belowMin judges it): a run cut short measured part of a sweep, kept apart as partialBusBW.
                whole = measured_whole(group)
                bandwidth.append({"groupName": label, "nodes": group["nodes"], "busBW": busbw if whole else None,
                                  "belowMin": _low(threshold, busbw) if whole else None, "failed": failed,
                                  **({"reason": group.get("reason") or ""} if failed else {}),
                                  **({"partialBusBW": busbw} if not whole and busbw is not None else {})})
            if failed:
                status = job_status(job)
                failed_groups.append({
                    "name": label, "nodeCount": len(group["nodes"]), "nodes": group["nodes"], "reason": group.get("reason") or "",
                    # the group's own word where its Job is not read (deleted, or refused: another hand's spec or status)
                    "message": _failure_message(job) or str(group.get("message") or ""),
                    "failedNodes": with_blame(group["nodes"], group_failures(group, group["nodes"], category.job_of(group))),
                    "failureLog": status.get("failureLog"),
                })
    return bandwidth, failed_groups, iterations


def _failure_message(job: Obj) -> str:
    """The Job's Failed message, then HardwareFailed, then ValidationFailed (ADR-071's order)."""
    conditions = conditions_of(job)
    for type_ in (FAILED, HARDWARE_FAILED, VALIDATION_FAILED):
        found = cond.find(conditions, type_)
        if found and found.get("status") == "True":
            return found.get("message", "")
    return ""


def _cliques(category: CategoryView) -> list[Obj]:
    # the running iteration, else the last one recorded, else the groups of a Workflow stopped before recording one
    # A clique passed when its group passed in every iteration: one that failed in an earlier one did not.
    latest = category.timeline[-1].groups if category.timeline else category.groups
    if category.orchestration.get("diagnose") is not None or not any(g.get("domains") for g in latest):
        return []
    failed_before = {g["domains"][0] for record in category.timeline[:-1] for g in record.groups
                     if g.get("domains") and g.get("phase") == FAILED}
    return [
        {"name": g["domains"][0], "total": len(g["nodes"]), "validated": len(g["nodes"]) if _ran(g) else 0,
         "passed": g.get("phase") == SUCCEEDED and g["domains"][0] not in failed_before,
         "busBW": (g.get("measurements") or {}).get(BUS_BANDWIDTH) if measured_whole(g) else None,
         **({"reason": g.get("reason") or ""} if g.get("phase") == FAILED else {})}
        for g in latest if g.get("domains")
    ]


# Said in place of the value of a group or run that did not measure a whole run (measured_whole), beside its reason.
NO_MEASUREMENT = "no measurement"


def not_measured_said(reason: str) -> str:
    """Why a run shows no value though it may have read some (measured_whole false): "WorkloadFailed: no measurement
    (what it read is part of a sweep, not a whole run's)"."""
    return f"{reason or 'failed'}: {NO_MEASUREMENT} (what it read is part of a sweep, not a whole run's)"


def cut_short(group: Mapping[str, Any]) -> str | None:
    """The reason of a finished group whose run measured no whole one (measured_whole: a crash, a timeout, output that
    lost rows), said in place of what it read; None for a whole run's, or a group not finished."""
    return str(group.get("reason") or FAILED) if group.get("phase") == FAILED and not measured_whole(group) else None


# The reasons a group fails for after its run finished its sweep: what it measured was judged, missed (ThresholdViolated)
# or not evaluable (InvalidThresholdExpression: the expression is at fault; the value is the whole run's all the same).
JUDGED_AFTER_A_WHOLE_RUN = frozenset({THRESHOLD_VIOLATED, INVALID_EXPRESSION})


def measured_whole(group: Mapping[str, Any]) -> bool:
    """Whether a group's measurements are those of a whole run, the ones its thresholds judged: it succeeded, or its
    run finished its sweep and the thresholds failed it (JUDGED_AFTER_A_WHOLE_RUN). A run that crashed or timed out
    part-way measured part of a sweep (an XID at 512 MiB: 235.97 GB/s, short of what the whole run reaches): that value
    is no measurement, its reason is said."""
    return group.get("phase") == SUCCEEDED or (group.get("phase") == FAILED and group.get("reason") in JUDGED_AFTER_A_WHOLE_RUN)


def _ran(group: Mapping[str, Any]) -> bool:
    """Whether a finished group's workload ran on its nodes (a group that failed before any pod ran tested none)."""
    return group.get("phase") == SUCCEEDED or (group.get("phase") == FAILED and group.get("reason") not in NOT_RUN)


def whole_runs(category: CategoryView) -> list[Obj]:
    """The category's Jobs whose measurements are a whole run's, as its groups read them (measured_whole): not one that
    crashed or timed out part-way, nor one whose output lost rows (MeasurementUnavailable: the fastest size may be the
    one missing)."""
    whole = whole_job_names(category.workflow) if category.workflow is not None else frozenset()
    return [job for job in category.jobs if job["metadata"]["name"] in whole]


def whole_job_names(workflow: Mapping[str, Any]) -> frozenset[str]:
    """The names of the Workflow's Jobs whose groups measured a whole run (measured_whole): the values the report, the
    history and the console read as measurements."""
    return frozenset(ref for ref, group in job_groups(workflow).items() if measured_whole(group))


def _bandwidth_summary(jobs: Sequence[Obj]) -> Obj | None:
    """The category's bus bandwidth over its runs that ran to the end (whole_runs, a missed threshold included): a run that
    crashed or timed out part-way measured part of a sweep (an XID at 512 MiB: 235.97 GB/s), no bandwidth of the fleet."""
    values = [j["status"]["measurements"] for j in jobs if job_status(j).get("measurements", {}).get(BUS_BANDWIDTH) is not None]
    if not values:
        return None
    bus = [v[BUS_BANDWIDTH] for v in values]
    alg = [v.get(ALG_BANDWIDTH) for v in values if v.get(ALG_BANDWIDTH) is not None]
    return {"busBW": round(sum(bus) / len(bus), 2), "minBusBW": min(bus), "maxBusBW": max(bus), "algBW": round(sum(alg) / len(alg), 2) if alg else None, "samples": len(bus)}


def _training(jobs: Sequence[Obj]) -> Obj | None:
    """The category's training measurements over its runs that ran to the end (whole_runs, as _bandwidth_summary)."""
    keys = (GOODPUT, TFLOPS_PER_GPU, STEP_TIME)
    values = [j["status"]["measurements"] for j in jobs if any(k in (job_status(j).get("measurements") or {}) for k in keys)]
    if not values:
        return None
    return {k: round(sum(v[k] for v in values if k in v) / max(1, sum(1 for v in values if k in v)), 4) for k in keys if any(k in v for v in values)}


def _passed(job: Obj) -> bool:
    """Succeeded and met its thresholds: a run that missed one keeps Succeeded but did not pass."""
    return cond.phase(job) == SUCCEEDED and not cond.is_true(job, VALIDATION_FAILED)


def _diagnostics(jobs: Sequence[Obj]) -> Obj | None:
    """DCGM runs: how many nodes ran the suite, and every pass that skipped tests (not a clean pass)."""
    ran = [j for j in jobs if DIAG_TESTS_RUN in (job_status(j).get("measurements") or {})]
    if not ran:
        return None
    marked = []
    for job in sorted(ran, key=lambda j: j["metadata"]["name"]):
        status = job_status(job)
        values = status["measurements"]
        skipped = int(values.get(DIAG_TESTS_SKIPPED) or 0)
        if skipped and _passed(job):
            total = skipped + int(values[DIAG_TESTS_RUN])
            completed = cond.find(status.get("conditions"), SUCCEEDED) or {}
            marked.append({"nodes": group_nodes(job), "skipped": skipped, "tests": total,
                           "verdict": f"passed, {skipped} of {total} tests skipped", "message": completed.get("message", "")})
    return {"samples": len(ran), "passedWithSkippedTests": marked}


def _skipped_rows(jobs: Sequence[Obj]) -> list[Obj]:
    """nccl-tests runs that passed with rows left out of their averages (not a clean pass), each with the note
    its completion message carries ("workload completed; nccl: 2 rows skipped: ...")."""
    marked = []
    for job in sorted(jobs, key=lambda j: j["metadata"]["name"]):
        if _passed(job):
            message = (cond.find(conditions_of(job), SUCCEEDED) or {}).get("message", "")
            _, found, note = message.partition(f"; {NCCL_NOTE}")
            if found:
                marked.append({"nodes": group_nodes(job), "note": note})
    return marked


def _run_notes(jobs: Sequence[Obj]) -> list[Obj]:
    """Runs whose result a note qualifies (RESULT_NOTES: their fabric not rendered, their output's remarks such as NCCL over TCP), each
    with its note, whatever their verdict (the note judges nothing)."""
    return [{"nodes": group_nodes(job), "note": str(condition.get("message") or condition.get("reason") or "")}
            for job in sorted(jobs, key=lambda j: j["metadata"]["name"]) for condition in cond.noted(conditions_of(job))]


def category_report(category: CategoryView) -> Obj:
    """One category's section."""
    status, workflow, jobs = category.status, category.workflow, category.jobs
    row: Obj = {"domain": status["domain"], "variant": status["variant"], "status": status.get("status", "Pending")}
    if status.get("status") == FAILED or (status.get("reason") and status.get("status") == "Pending"):
        row["failureReason"] = status.get("message") or status.get("reason")
    if status.get("status") == FAILED and status.get("reason") == NODES_UNAVAILABLE:  # tested nothing, none at fault: not a failed check
        row["notRun"] = NODES_UNAVAILABLE
    if workflow is None:
        return row
    wf_status = workflow_status(workflow)
    orch = category.orchestration
    spec = workflow_spec(workflow)
    thresholds = (spec["jobTemplate"]["spec"].get("thresholds")) or {}
    bandwidth, failed_groups, iterations = _group_rows(category, thresholds.get(BUS_BANDWIDTH))
    row.update({
        "runtimeSeconds": _seconds_between(wf_status.get("startTime"), wf_status.get("completionTime")),
        "testScale": spec["orchestration"].get("testScale"), "nodesPerJob": orch.get("nodesPerJob"), "jobs": len(jobs),
        "mnnvl": bool(spec["jobTemplate"]["spec"]["workload"]["workloadRun"].get("enableMNNVL")),
        "platform": orch.get("detectedPlatform"), "gpu": orch.get("detectedGPUArchitecture"), "totalNodes": orch.get("totalNodes"),
        "excludedNodes": orch.get("excludedNodes") or [], "thresholds": thresholds, "failedGroups": failed_groups,
        "failedNodes": category_failed_nodes(category), "cliques": _cliques(category), "groupBandwidth": bandwidth,
        "bandwidth": _bandwidth_summary(whole := whole_runs(category)), "training": _training(whole), "iterations": iterations,
    })
    waiting = [why for job in jobs if (why := pods_pending(job)) is not None]
    if waiting:  # only while some do: what blocks a running category (no controller, nothing schedulable)
        row["waitingForPods"] = f"{count(len(waiting), 'group')} of {len(jobs)}: {waiting[0]}"
    diagnostics = _diagnostics(jobs)
    if diagnostics is not None:
        row["diagnostics"] = diagnostics
    skipped_rows = _skipped_rows(jobs)
    if skipped_rows:  # only then: a clean category's report is what it always was
        row["passedWithSkippedRows"] = skipped_rows
    run_notes = _run_notes(jobs)
    if run_notes:  # only then, as above
        row["runNotes"] = run_notes
    if orch.get("diagnose") is not None:
        row["diagnose"] = readable(orch["diagnose"])
        row["diagnose"]["verdicts"] = verdict_rows(row["diagnose"], value_shower(BUS_BANDWIDTH, thresholds.get(BUS_BANDWIDTH)))  # each node not plainly healthy, with its record
        # {cliques, evidence}: what its tests measured (new dicts: readable's faults are the stored object's own)
        row["diagnose"]["infrastructureFaults"] = [
            {**fault, "message": fault_message(fault, row["diagnose"], thresholds),
             "evidence": fault_evidence(fault, row["diagnose"].get("tests") or [], thresholds.get(BUS_BANDWIDTH))}
            for fault in row["diagnose"].get("infrastructureFaults") or [] if isinstance(fault, Mapping)]
        decided = {str(node): verdict for verdict, key in STATUS_KEYS.items() if verdict in VERDICTS for node in row["diagnose"].get(key) or []}
        for group in failed_groups:  # a test's blame the diagnosis did not uphold, or could not decide: its verdict
            for key, verdict in (("clearedNodes", "healthy"), ("inconclusiveNodes", "inconclusive")):
                found = sorted(f["name"] for f in group["failedNodes"] if decided.get(f["name"]) == verdict)
                if found:
                    group[key] = found
            # Each member's verdict beside the test's blame of it: it supersedes a whole-group blame's suspicion.
            group["failedNodes"] = [{**f, "verdict": decided[f["name"]]} if f["name"] in decided else f for f in group["failedNodes"]]
    elif status.get("status") == FAILED and (spec["orchestration"].get("onFailure") or {}).get("diagnose") is not None:
        # the engine skips it where a failed group tested nothing (controllers/workflow.py: a Warning Event alone), and
        # the report showed no diagnosis and no word why, as if onFailure had been ignored
        untested = [group for group in failed_groups if tested_nothing({"phase": FAILED, "reason": group.get("reason")})]
        if untested:
            first, more = untested[0], f" (and {count(len(untested) - 1, 'more group')})" if len(untested) > 1 else ""
            row["diagnoseNotStarted"] = (f"group {first.get('name')} was not tested ({first.get('reason')}){more}; onFailure "
                                         "diagnose narrows down only groups a test measured")
    reach = _reach(thresholds, category)
    if reach:
        row["thresholdOutOfReach"] = reach
    return row


def measured_span(values: Sequence[float], threshold: str | None) -> str:
    """Failed tests' values against the threshold: "busBandwidthGBps 184.28-186.11 GB/s in 4 tests (value >= 300)"; "-"
    when none measured. Each value judged and shown on its side (a test that failed otherwise may have measured a pass)."""
    if not values:
        return "-"
    low, high = min(values), max(values)

    def shown(value: float) -> str:
        return shown_judged(BUS_BANDWIDTH, threshold, value) if threshold else f"{value:.2f}"

    span = shown(low) if low == high else f"{shown(low)}-{shown(high)}"
    tests = f" in {len(values)} tests" if len(values) > 1 else ""
    return f"{BUS_BANDWIDTH} {with_unit(BUS_BANDWIDTH, span)}{tests}" + (f" ({threshold})" if threshold else "")


def fault_evidence(fault: Mapping[str, Any], tests: Sequence[Mapping[str, Any]], threshold: str | None) -> Obj:
    """An infrastructure fault's evidence: each of its failed tests with the value it measured, against the threshold,
    and the span as the console says it."""
    by_group = {str(t.get("group")): t for t in tests if isinstance(t, Mapping)}
    failed = [by_group[name] for name in (str(n) for n in fault.get("tests") or []) if by_group.get(name, {}).get("passed") is False]
    measured = [{"test": str(t["group"]), "value": t["value"]} for t in failed
                if isinstance(t.get("value"), int | float) and not isinstance(t.get("value"), bool)]
    return {"metric": BUS_BANDWIDTH, "threshold": threshold, "failedTests": measured,
            "measured": measured_span([float(m["value"]) for m in measured], threshold)}


def fault_said(fault: Mapping[str, Any]) -> str:
    """An infrastructure fault's message and what its failed tests measured: "degraded fabric between clique-1 and
    clique-2 (failed: r1-inter-0, r2-link-6); busBandwidthGBps 185.05-186.23 GB/s in 2 tests (value >= 300)". A message
    that already says those tests' best value against the threshold (a fabric-wide fault's, judging.fabric_fault) has
    no span after it: the line said the best value twice."""
    message = str(fault.get("message") or "")
    evidence = fault.get("evidence") or {}
    measured = evidence.get("measured")
    values = [float(m["value"]) for m in evidence.get("failedTests") or () if isinstance(m, Mapping) and isinstance(m.get("value"), int | float)]
    threshold = evidence.get("threshold")
    best = best_said(values, threshold if isinstance(threshold, str) else None)
    if best is not None and best in message:
        return message
    return message + (f"; {measured}" if measured and measured != "-" else "")


def _reach(thresholds: Mapping[str, str], category: CategoryView) -> str | None:
    """Each threshold no test came near, when every test of the category failed ("threshold value >= 900 is above
    anything measured on this fleet: best 409.98 GB/s"), joined; None when there is none. Only the values of runs the
    thresholds judged count: a run that crashed or timed out part-way measured part of a sweep (an XID at 512 MiB:
    235.97 GB/s, short of what the whole run reaches), which says nothing of what the fleet can reach."""
    finished = [g for record in category.iterations for g in record.groups if g.get("phase") in (FAILED, SUCCEEDED)]
    every_failed = bool(finished) and all(g["phase"] == FAILED for g in finished)
    judged = [g for g in finished if measured_whole(g)]
    said = [out_of_reach(metric, str(expression), [float(v) for g in judged if isinstance(v := (g.get("measurements") or {}).get(metric), int | float)],
                         every_failed) for metric, expression in sorted(thresholds.items())]
    return "; ".join(s for s in said if s) or None


def threshold_out_of_reach(category: CategoryView) -> str | None:
    """The report's thresholdOutOfReach for one category (the console shows it too): every test failed and even the
    best measurement of a threshold's metric is far from it."""
    if category.workflow is None:
        return None
    return _reach(workflow_spec(category.workflow)["jobTemplate"]["spec"].get("thresholds") or {}, category)


# The report field each HOW_RUN condition fills (additive and optional: absent when the runs went as a reader assumes),
# and what it says when the condition has no message.
HOW_RUN_FIELDS = {cond.BATCH_FALLBACK: ("workloadFallback", "ran as batch/v1 Jobs: Kubeflow Trainer is not installed"),
                  cond.SIMULATED: ("simulated", "played by nvcre's simulated fleet: no GPU ran it, its measurements are made up")}


def how_run_fields(objects: Sequence[Obj]) -> Obj:
    """The report fields of the HOW_RUN conditions the objects (Certification, Jobs) carry, first found wins."""
    fields: Obj = {}
    for obj in objects:
        for condition in cond.how_run(conditions_of(obj)):
            key, default = HOW_RUN_FIELDS[condition["type"]]
            fields.setdefault(key, str(condition.get("message") or default))
    return fields


def build_report(cert: Obj, workflows: Sequence[Obj], jobs: Sequence[Obj]) -> Obj:
    """The whole report of one Certification from its objects."""
    return report_of(CertificationView.of(cert, workflows, jobs))


def _own_thresholds(cert: Obj) -> list[Obj | None]:
    """Each spec category's own thresholds, in spec order: None where it sets none of its own (the certification's
    then reach it filtered by what its catalog entry measures, which the report cannot know without the Workflow)."""
    spec = cert.get("spec")
    written = spec.get("categories") if isinstance(spec, dict) else None
    rows: list[Obj | None] = []
    for category in written if isinstance(written, list) else []:
        options = category.get("options") if isinstance(category, dict) else None
        thresholds = options.get("thresholds") if isinstance(options, dict) else None
        rows.append({str(k): str(v) for k, v in thresholds.items()} if isinstance(thresholds, dict) else None)
    return rows


def report_of(view: CertificationView) -> Obj:
    """The whole report of one Certification from the read model."""
    cert = view.cert
    status = certification_status(cert)
    categories = [category_report(category) for category in view.categories]
    for row, own in zip(categories, _own_thresholds(cert), strict=False):
        if own is not None:  # no Workflow (yet, or ever): its own are exactly what it judges; else left unsaid
            row.setdefault("thresholds", own)
    failed: dict[str, list[Obj]] = {}
    for category, title in zip(categories, category_titles(categories), strict=True):
        for node in category.get("failedNodes") or []:
            failed.setdefault(node["name"], []).append({**node, "category": title})
    # One node, one state per certification, the worst first (the wall, `certification list`, the history): a node a
    # category blamed and another excluded (cordoned mid-run) is a failed node, not an excluded one too, and one left
    # inconclusive an inconclusive one (controllers.iterations.excluded_counted); each category's own excludedNodes
    # still names it (excluded_elsewhere_counted).
    workflows = [c.workflow for c in view.categories if c.workflow is not None]
    counted = excluded_counted_of(workflows, failed)
    excluded = {e["name"]: e for c in categories for e in c.get("excludedNodes") or [] if e["name"] in counted}
    # A node is suspect when every category that blamed it blamed its whole group with it (the console's map, the
    # history archive: failed outranks suspect); failedNodes keeps listing both, as it always did.
    suspects = sorted(n for n, failures in failed.items() if all(f.get("suspect") for f in failures))
    # A running diagnosis's narrowing set: the nodes the map draws suspect that no category blamed (views.under_suspicion,
    # the wall's "2 ! under suspicion"), and its suspects a round tests now (drawn running; the wall's "2 running are
    # under suspicion"): no failed nodes, but a report made meanwhile said "Failed Nodes: none" alone.
    started = [c for c in view.categories if c.workflow is not None]
    under: list[str] = []
    if any(diagnosis_open(c.workflow) for c in started):  # only then: every other report skips the node states
        states = compute(started, [{"metadata": {"name": node}} for node in sorted(view.held_nodes())])
        suspected = {node for node, (state, _) in states.items() if state == "suspect"}
        suspected |= {node for c in started if c.workflow is not None for node in open_suspects(c.workflow)}
        under = sorted(suspected - set(failed))
    timing = waited_and_ran(status.get("startTime"), status.get("completionTime"),
                            [category.workflow for category in view.categories if category.workflow is not None])
    summary = status.get("summary") or {}
    result = summary.get("result") or (RESULT_RUNNING if not cond.is_terminal(cert) else RESULT_FAILED)
    if result == RESULT_RUNNING and cond.is_terminal(cert):  # ended by the engine (quarantined) before its summary was final
        result = RESULT_FAILED
    report: Obj = {
        "schemaVersion": REPORT_SCHEMA_VERSION,
        "name": cert["metadata"]["name"], "namespace": cert["metadata"].get("namespace"),
        "platform": ", ".join(sorted({c["platform"] for c in categories if c.get("platform")})) or None,
        "gpu": ", ".join(sorted({c["gpu"] for c in categories if c.get("gpu")})) or None,
        # a node once, as the wall counts it: every node its categories held, less those counted excluded (both: the
        # wall's `of N nodes`); "eligible nodes of the largest category" said 4 of two disjoint categories of 4 each
        "totalNodes": len(view.held_nodes() - set(excluded)) if any(c.workflow is not None for c in view.categories) else 0,
        "excludedNodes": sorted(excluded.values(), key=lambda e: e["name"]),
        "categories": categories,
        "passedCategories": sum(1 for c in categories if c["status"] == SUCCEEDED), "totalCategories": len(categories),
        "failedNodes": sorted(failed),
        "failedNodeDetails": [{"name": n, "suspect": n in suspects, "failures": failed[n]} for n in sorted(failed)],
        "suspectNodes": suspects, "failedNodeCounts": {"convicted": len(failed) - len(suspects), "suspect": len(suspects)},
        # ran and proved nothing, blamed nowhere (a group failed on no node's account, a diagnosis left them undecided)
        "inconclusiveNodes": sorted(inconclusive_counted(workflows, failed)),
        "underSuspicion": under,  # while a diagnosis runs: the suspects it narrows, not failed nodes (empty once it ends)
        "startTime": status.get("startTime"), "completionTime": status.get("completionTime"),
        # runtimeSeconds: while a category ran; waitedSeconds: the rest, waiting for nodes (waited_and_ran)
        "runtimeSeconds": timing[1] if timing else None, "waitedSeconds": timing[0] if timing else None,
        "result": result,
    }
    report.update(how_run_fields([cert, *(job for category in view.categories for job in category.jobs)]))
    return report
