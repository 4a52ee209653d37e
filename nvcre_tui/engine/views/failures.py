"""The failures pane's rows: each node a certification blamed (and the Job whose log convicts it), the failures that
blamed no node, and the infrastructure faults its diagnoses named."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from nvcre_tui.engine.api.bodies import group_nodes, job_status, meta_of
from nvcre_tui.engine.api.vocabulary import FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import group_failures
from nvcre_tui.engine.judging.thresholds import shown_measured
from nvcre_tui.engine.names import natural_key
from nvcre_tui.engine.parsers.measurements import with_unit
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.report.model import measured_whole, threshold_out_of_reach
from nvcre_tui.engine.report.readmodel import CategoryView, Iteration
from nvcre_tui.engine.views.diagnosis import category_faults, diagnose_state, infrastructure_faults
from nvcre_tui.engine.views.snapshot import Obj, Snapshot


@dataclass(frozen=True)
class FailureRow:
    """One node the engine blamed (the dashboard's failures pane): its first failure in category order,
    and how many other categories blamed it too."""

    node: str  # for an infrastructure fault, what it names ("fabric clique-0 ↔ clique-1 degraded")
    category: str
    reason: str
    measured: str  # the failed threshold checks, e.g. "busBandwidthGBps 264.8 (value >= 400)"; "-" when none
    message: str
    workflow: str
    job: str | None  # the Job whose run convicted it (its log is the evidence); None when no Job did
    also: tuple[str, ...] = ()  # the other categories that blamed it
    state: str = "failed"  # `suspect` when its whole multi-node group was blamed together (nodestates.blamed_state)
    cliques: tuple[str, ...] = ()  # an infrastructure fault's cliques (fault_rows); () for a node

    @property
    def categories_said(self) -> str:
        """Its category and how many others blamed it (or named the fault) too: "communication/nccl-all-gather +1"."""
        return self.category + (f" +{len(self.also)}" if self.also else "")


def _measured(failure: Mapping[str, Any], *, whole: bool = True) -> str:
    """The failed checks of `failure`'s evidence: "busBandwidthGBps 264.80 GB/s (value >= 400)"; each value "unavailable" where
    none was measured, or where the run's were not a whole run's (`whole` false: report.model.measured_whole)."""
    checks = [e for e in failure.get("evidence") or [] if not e.get("passed", True)]
    parts = []
    for check in checks:
        value = check.get("measured") if whole else None
        metric = str(check.get("metric"))
        shown = (with_unit(metric, shown_measured(metric, str(check.get("expression")), float(value), False))
                 if isinstance(value, (int, float)) and not isinstance(value, bool) else "unavailable" if value is None else str(value))
        parts.append(f"{check.get('metric', '?')} {shown}" + (f" ({check['expression']})" if check.get("expression") else ""))
    return "; ".join(parts) or "-"


def convicting_job(jobs: list[Obj], node: str) -> str | None:
    """The Job whose log is the evidence against `node`: the last Job that blamed `node`, else the last failed Job it ran in (a diagnose test)."""
    return JobIndex.of(jobs).convicting(node)


@dataclass(frozen=True)
class JobIndex:
    """A category's Jobs by name, and per node the last that blamed it and the last failed one it ran in: the
    failures pane asks for each failed node, and a scan of every Job per node took seconds at 1,200 failed nodes."""

    by_name: dict[str, Obj]
    blamed: dict[str, str]
    ran_failed: dict[str, str]

    @classmethod
    def of(cls, jobs: Iterable[Obj]) -> JobIndex:
        by_name: dict[str, Obj] = {}
        blamed: dict[str, str] = {}
        ran_failed: dict[str, str] = {}
        for job in jobs:  # in order: a later Job replaces an earlier one
            name = str(job["metadata"]["name"])
            by_name[name] = job
            blamed.update((str(f["name"]), name) for f in job_status(job).get("failedNodes") or [])
            if cond.phase(job) == FAILED:
                ran_failed.update((node, name) for node in group_nodes(job))
        return cls(by_name, blamed, ran_failed)

    def convicting(self, node: str) -> str | None:
        return self.blamed.get(node) or self.ran_failed.get(node)


def _blamed_state(index: JobIndex, job_name: str | None, failure: Mapping[str, Any], orchestration: Mapping[str, Any],
                  memo: dict[tuple[str, str], str]) -> str:
    """`failed`, or `suspect` where the Job that blamed the node blamed its whole group with it (as the map says).
    `memo`: the word per (Job, reason), the same for every member it blamed: weighed per member, a group of 1024 nodes
    blamed together took 0.4 s a redraw (each member scanned the Job's 1024 blames and group)."""
    job = index.by_name.get(job_name) if job_name is not None else None
    # the Job convicting it blamed it (JobIndex.blamed: the last Job that blamed each node), or only ran it and failed
    if orchestration.get("diagnose") is not None or job is None or index.blamed.get(failure["name"]) != job_name:
        return "failed"  # a diagnosis's verdict, or a blame whose Job is gone
    reason = str(failure.get("reason") or "")
    key = (str(job_name), reason)
    if key not in memo:
        memo[key] = nodestates.blamed_state(group_nodes(job), job_status(job).get("failedNodes") or [], reason)
    return memo[key]


def failure_rows(snapshot: Snapshot, cert_name: str) -> list[FailureRow]:
    """Every node a certification's categories blamed (each category's failed nodes, as the report lists
    them), one row per node: the reason, the measured values that failed and the Job to read the log of, from the
    first category that convicted it (else the first that blamed it with its group). Convicted nodes first, then
    suspects, each by name: the worst node is the first the operator reaches."""
    rows: dict[str, FailureRow] = {}
    view = snapshot.views.get(cert_name)
    for entry in view.categories if view is not None else []:
        wf, category = entry.workflow, entry.name  # `domain/variant #2` where it runs twice
        if wf is None:
            continue
        index = JobIndex.of(entry.jobs)
        memo: dict[tuple[str, str], str] = {}
        for failure in entry.failed_nodes:
            job = index.convicting(failure["name"])
            merge_blame(rows, FailureRow(failure["name"], category, failure.get("reason") or "", _measured(failure),
                                    failure.get("message") or "", wf["metadata"]["name"], job,
                                    state=_blamed_state(index, job, failure, entry.orchestration, memo)))
    return sorted(rows.values(), key=lambda row: (row.state != "failed", natural_key(row.node)))  # gpu-node-100 after gpu-node-99


def merge_blame(rows: dict[str, FailureRow], row: FailureRow) -> None:
    """Add a category's blame of a node: a conviction outranks a blame shared with a group (the row then shows the
    convicting category, and the earlier one among the others)."""
    known = rows.get(row.node)
    if known is None:
        rows[row.node] = row
    elif known.state != "failed" and row.state == "failed":
        rows[row.node] = replace(row, also=(known.category, *known.also))
    else:
        rows[row.node] = replace(known, also=(*known.also, row.category))


UNBLAMED = "no node blamed"  # the reason's prefix of a failure that convicted nobody
OUT_OF_REACH = "threshold out of reach"  # why a diagnosing category that convicted nobody failed, when it is (its message says it first)


def reach_rows(snapshot: Snapshot, cert_name: str) -> list[FailureRow]:
    """A failed category that blamed nodes against a threshold no test came near (every test failed, the best value far
    from it: GB200 figures on H100s), one row named by the category (`#2` where it runs twice) with the reach as its
    measured value, said before its nodes by the failures pane and the wall, as the drill-down says it first under the
    category: 32 ✗ nodes, "busBandwidthGBps 479.58 …" each, read as a fleet-wide failure, the threshold unsaid. One
    that blamed nobody is among the failures that blamed no node, its reach first (category_unblamed)."""
    view = snapshot.views.get(cert_name)
    return [FailureRow(category.name, category.name, OUT_OF_REACH, reach, reach, str(meta_of(category.workflow or {}).get("name") or ""), None)
            for category in (view.categories if view is not None else [])
            if category.status.get("status") == FAILED and category.failed_nodes and (reach := threshold_out_of_reach(category))]


def unblamed_failures(snapshot: Snapshot, cert_name: str) -> list[FailureRow]:
    """A certification's failures that blamed no node (`category_unblamed`), in category order, so that the operator
    can reach them: the failures pane, `f` and `enter` in the drill-down, the wall."""
    view = snapshot.views.get(cert_name)
    return [row for entry in (view.categories if view is not None else []) for row in category_unblamed(entry)]


def category_unblamed(entry: CategoryView) -> list[FailureRow]:
    """A category's failures that blamed no node: each failed group whose Job blamed nobody (a measurement missing, a
    run cut short, output not the tool's, a workload that never started), named by `unblamed_subject`; else, when
    the category failed with nothing else to show for it (no such group, no blamed node, no infrastructure fault),
    the category itself, named by its key. A diagnosing category's failed tests are its diagnosis's evidence (its
    verdicts speak), not failures of their own. `reason` is "no node blamed: <why>"."""
    wf = entry.workflow
    rows = [] if diagnose_state(entry) is not None else _unblamed_groups(entry)
    if not rows and entry.status.get("status") == FAILED and not entry.failed_nodes and not category_faults(entry):
        # a threshold out of reach is why, before the diagnosis's "32 nodes inconclusive": the threshold, not the nodes
        reach = threshold_out_of_reach(entry)
        reason = OUT_OF_REACH if reach else entry.status.get("reason") or "failed"
        message = str(entry.status.get("message") or "")
        rows = [FailureRow(entry.key, entry.key, f"{UNBLAMED}: {reason}", "-", f"{reach}; {message}" if reach else message,
                           str(meta_of(wf or {}).get("name") or ""), None)]
    return rows


def _unblamed_groups(entry: CategoryView) -> list[FailureRow]:
    wf = entry.workflow
    if wf is None:
        return []
    rows = []
    for record in entry.timeline:
        for group in record.groups:
            job = entry.job_of(group)
            if group.get("phase") != FAILED or group_failures(group, group.get("nodes") or [], job):
                continue
            status = job_status(job) if job is not None else {}
            message = nodestates.failure_condition(job).get("message") if job is not None else group.get("message")
            rows.append(FailureRow(unblamed_subject(entry, record, group), entry.key, f"{UNBLAMED}: {nodestates.failure_reason(job, group)}",
                                   # a value read over part of the output, or before the run stopped, is no
                                   # measurement (measured_whole): which checks it failed, never that value
                                   _measured(status, whole=measured_whole(group)), str(message or ""), str(wf["metadata"]["name"]),
                                   job["metadata"]["name"] if job is not None else None))
    return rows


def unblamed_subject(entry: CategoryView, record: Iteration, group: Mapping[str, Any]) -> str:
    """How a failed group that blamed nobody is named in the failures pane and on the wall (and found again by the
    drill-down): its category and name, and its iteration when the category ran several."""
    several = len(entry.timeline) > 1
    return f"{entry.key} {group.get('name')}" + (f" iteration {record.number}" if several and record.number is not None else "")


def fault_rows(snapshot: Snapshot, cert_name: str) -> list[FailureRow]:
    """The failures pane's rows for a certification's infrastructure faults, one per fault (a link two categories
    named once, with the other category in `also`)."""
    rows: dict[str, FailureRow] = {}
    for fault in infrastructure_faults(snapshot, cert_name):
        subject = fault.subject
        if subject in rows:
            rows[subject] = replace(rows[subject], also=(*rows[subject].also, fault.category))
            continue
        rows[subject] = FailureRow(subject, fault.category, "infrastructure fault", fault.measured, fault.message, fault.workflow,
                                   fault.job, cliques=fault.cliques)
    return list(rows.values())
