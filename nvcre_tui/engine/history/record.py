"""What one finished certification leaves in the archive, computed from its objects: pure data.

Per node and category the verdict is the map's (engine/views.node_states over that one Workflow), so the
archive never blames a node the console would not: a whole multi-node group that missed a threshold is
`suspect`, not `failed`. Measurements are those of the node's last measured Job in the category (after a
diagnose bisection, the smallest group it was measured in); a Job whose run crashed or timed out part-way measured
nothing (report.model.measured_whole, as the report reads it): its row keeps no measurements.

A category is keyed by its title as the report names it (report.readmodel.category_titles: `domain/variant`, numbered
`#2` where a certification runs the same one again), so two categories of one domain/variant keep a row each. A node
that did not pass and that no blame names keeps the reason the report gives for it: its failed group's (a missing
measurement, an expression that cannot be evaluated), its diagnosis's verdict (the threshold out of reach).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nvcre_tui.engine.api.bodies import certification_status, group_nodes, job_status, labels_of, orchestration_of, workflow_status
from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.api.provenance import foreign_status
from nvcre_tui.engine.api.vocabulary import FAILED, LABEL_DOMAIN, LABEL_ITERATION, LABEL_VARIANT, REFUSED, RESULT_FAILED, THRESHOLD_OUT_OF_REACH
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import blamed_nodes, current_groups, jobs_run
from nvcre_tui.engine.history.baseline import Baseline, baseline_of
from nvcre_tui.engine.judging.results import job_failures
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.report.model import category_report, how_run_fields, report_of, whole_job_names
from nvcre_tui.engine.report.readmodel import CategoryView, CertificationView, category_titles
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot

Obj = dict[str, Any]


@dataclass(frozen=True)
class NodeResult:
    """One node in one category of one certification."""

    node: str
    category: str
    state: str
    reason: str = ""
    message: str = ""
    measurements: dict[str, float] = field(default_factory=dict)
    evidence: list[Mapping[str, Any]] = field(default_factory=list)
    jobs: list[Obj] = field(default_factory=list)

    @property
    def bus_bw(self) -> float | None:
        value = self.measurements.get(BUS_BANDWIDTH)
        return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class CertRecord:
    """Everything archived about one certification."""

    uid: str
    name: str
    namespace: str
    result: str
    start_time: str | None
    completion_time: str | None
    report: Obj
    results: list[NodeResult]
    baselines: dict[str, Baseline]


def _job_order(job: Obj) -> tuple[int, str, str]:
    labels = labels_of(job)
    iteration = labels.get(LABEL_ITERATION) or "0"
    return (int(iteration) if iteration.isdigit() else 0, job["metadata"].get("creationTimestamp") or "", job["metadata"]["name"])


def unblamed_reason(name: str, section: Obj) -> tuple[str, str] | None:
    """(reason, message) the report's section of a category gives for a node that did not pass and that no blame
    names, None when it gives none: a diagnosis's verdict (the threshold out of reach, else what its failed tests
    said), else the group it sat in that failed and blamed no node (MeasurementUnavailable, InvalidThresholdExpression)."""
    failed_groups = [g for g in section.get("failedGroups") or [] if name in (g.get("nodes") or [])]
    diagnose = section.get("diagnose")
    verdict = next((row for row in diagnose.get("verdicts") or [] if row["node"] == name), None) if diagnose else None
    if verdict is not None:
        reach = section.get("thresholdOutOfReach")
        notes = [str(n.get("message")) for n in (diagnose or {}).get("notes") or [] if name in (n.get("nodes") or []) and n.get("message")]
        reason = THRESHOLD_OUT_OF_REACH if reach else str(failed_groups[-1].get("reason") or "") if failed_groups else ""
        message = "; ".join([*([str(reach)] if reach else []), f"diagnosis: {verdict['verdict']}, {verdict['record']}", *notes])
        return reason, message
    unblamed = [g for g in failed_groups if not g.get("failedNodes") and g.get("reason")]
    if unblamed:
        group = unblamed[-1]
        return str(group["reason"]), f"in failed group {group['name']}: {group.get('message') or group['reason']}"
    return None


def category_results(cert: Obj, workflow: Obj, jobs: Sequence[Obj], nodes: Sequence[Obj], title: str | None = None,
                     section: Obj | None = None) -> list[NodeResult]:
    """Every node that took part in (or was excluded from) one category, keyed `title` and explained by `section`, the
    report's title and section of the category (see build_record; when not given, `domain/variant` and the section
    report.model.category_report makes of the Workflow and its Jobs)."""
    labels = labels_of(workflow)
    domain, variant = labels.get(LABEL_DOMAIN), labels.get(LABEL_VARIANT)
    category = title or f"{domain}/{variant}"
    status, orch = workflow_status(workflow), orchestration_of(workflow)
    jobs = sorted(jobs_run(workflow, jobs), key=_job_order)
    if section is None:
        section = category_report(CategoryView({"domain": domain, "variant": variant}, workflow, list(jobs)))
    involved: dict[str, None] = {}
    for group in current_groups(workflow):
        involved.update(dict.fromkeys(group.get("nodes") or []))
    for job in jobs:
        involved.update(dict.fromkeys(group_nodes(job)))
    excluded = {item["name"]: item for item in orch.get("excludedNodes") or []}
    failed = {item["name"]: item for item in blamed_nodes(workflow, jobs)}
    involved.update(dict.fromkeys(excluded))
    involved.update(dict.fromkeys(failed))
    known = {node_name(n) for n in nodes}
    stand_ins = [{"metadata": {"name": name}} for name in involved if name not in known]  # a Node gone meanwhile
    snapshot = Snapshot(nodes=[*nodes, *stand_ins], certifications=[cert], workflows=[workflow], jobs=list(jobs))
    states = node_states(snapshot, cert["metadata"]["name"])
    jobs_of: dict[str, list[Obj]] = {}  # each node's Jobs in `jobs` order (one pass, not a pass over every Job per node)
    # Each Job's row and its failures by node, made once per Job: a full-scale Job's 1,024 failed nodes were read (and
    # copied) again for each of its members, 1.5-3.6 s of the console's event loop as a 1,024-node certification finished.
    job_rows: dict[str, tuple[Obj, dict[str, list[Obj]]]] = {}
    # The Jobs whose values are a whole run's, as the report reads its groups (report.model.measured_whole): a run that
    # crashed or timed out part-way measured part of a sweep (362.98 GB/s of one an XID stopped), no measurement of
    # any node, neither in a Job's row nor as a node's value and trend.
    whole = whole_job_names(workflow)
    for job in jobs:
        members = group_nodes(job)
        for member in dict.fromkeys(members):
            jobs_of.setdefault(member, []).append(job)
        failures_of: dict[str, list[Obj]] = {}
        for failure in job_failures(job):
            failures_of.setdefault(str(failure.get("name")), []).append(failure)
        job_rows[job["metadata"]["name"]] = ({"job": job["metadata"]["name"], "phase": cond.phase(job) or "Pending", "groupSize": len(members),
                                              "measurements": (job_status(job).get("measurements") or {}) if job["metadata"]["name"] in whole else {}},
                                             failures_of)
    results = []
    for name in involved:
        state, detail = states.get(name, ("untested", ""))
        mine = jobs_of.get(name, [])
        rows = [{**row, "failures": by_node.get(name, [])} for row, by_node in (job_rows[job["metadata"]["name"]] for job in mine)]
        # What the category blamed it for, else why it was left out; not a Job's blame the category did not
        # uphold (a diagnosis's screening group, whose healthy members it cleared).
        blame: Mapping[str, Any] = failed.get(name) or excluded.get(name) or {}
        # Evidence and measurements come from one Job. Blamed: its last Job that blamed it for that reason (the
        # blame's own evidence first: a diagnosis's verdict is stored shortened). Unblamed: its last Job that blamed
        # nobody (a diagnosis's partner also sat in failed tests, whose values are another node's), else none.
        if blame:
            source = next((row for row in reversed(rows) if any(f.get("reason") == blame.get("reason") for f in row["failures"])), None)
            same = [f["evidence"] for f in (source or {}).get("failures") or [] if f.get("reason") == blame.get("reason") and f.get("evidence")]
            evidence = blame.get("evidence") or (same[-1] if same else [])
        else:
            # None when every Job it sat in blamed another node (their values are that node's) or was cut short (a sweep
            # a crash or timeout stopped: 235.97 GB/s of a run an XID stopped, archived as this node's and drawn in its trend).
            last = next((job for job in reversed(mine) if not job_status(job).get("failedNodes") and job["metadata"]["name"] in whole), None)
            source = next((row for row in rows if last is not None and row["job"] == last["metadata"]["name"]), None)
            evidence = (job_status(last).get("evidence") if last else None) or []
        measured = dict(source["measurements"]) if source else {}
        reason, message = str(blame.get("reason") or ""), str(blame.get("message") or detail or "")
        if not blame and state not in ("passed", "running", "waiting"):
            reason, message = unblamed_reason(name, section) or (reason, message)
        results.append(NodeResult(name, category, state, reason, message, measured, list(evidence), rows))
    return results


def build_record(cert: Obj, workflows: Sequence[Obj], jobs_by_workflow: dict[str, list[Obj]], nodes: Sequence[Obj]) -> CertRecord:
    """The archive record of a terminal certification, from its objects and the Nodes as they are now: the
    categories the report holds, each keyed by the title the report gives it (distinct within a certification: the
    archive refuses two results of one node under one title rather than keep one of them)."""
    all_jobs = [job for wf in workflows for job in jobs_by_workflow.get(wf["metadata"]["name"], [])]
    view = CertificationView.of(cert, workflows, all_jobs)
    report = report_of(view)
    titles = category_titles(report["categories"])
    results = [r for category, title, section in zip(view.categories, titles, report["categories"], strict=True) if category.workflow is not None
               for r in category_results(cert, category.workflow, jobs_by_workflow.get(category.workflow["metadata"]["name"], []), nodes,
                                         title, section)]
    involved = {r.node for r in results}
    baselines = {node_name(n): baseline_of(n) for n in nodes if node_name(n) in involved}
    status = certification_status(cert)
    return CertRecord(cert["metadata"].get("uid") or "", cert["metadata"]["name"], cert["metadata"].get("namespace") or "",
                      report["result"], status.get("startTime"), status.get("completionTime"), report, results, baselines)


def refusal_of(cert: Obj) -> str | None:
    """Why nvcre refused a Certification whose status someone other than nvcre wrote (api/provenance.py): the engine's
    refusal (its Failed condition, which stands once the engine's own writes took the hand's fields over), else what
    of it the hand wrote; None: not refused."""
    failed = cond.find(certification_status(cert).get("conditions"), FAILED)
    if failed is not None and failed.get("status") == "True" and failed.get("reason") in REFUSED:
        return str(failed.get("message") or failed["reason"])
    return foreign_status(str(cert.get("kind") or "Certification"), cert)


def refused_record(cert: Obj, refusal: str, jobs: Sequence[Obj]) -> CertRecord:
    """The record of a refused Certification (`refusal`: refusal_of's why; `jobs`: its Workflows') as nvcre reads it: FAILED, marked `refused`
    in its report with why, and no node result: its status is not (all) nvcre's, so no node passed or was blamed by it.
    Completed when the engine refused it (its condition's time; unknown before), never at a time the hand wrote."""
    failed = cond.find(certification_status(cert).get("conditions"), FAILED)
    refused = failed if failed is not None and failed.get("status") == "True" and failed.get("reason") in REFUSED else None
    read = {**cert, "status": {"conditions": [refused] if refused else [], "summary": {"result": RESULT_FAILED}}}
    record = build_record(read, [], {}, [])
    # how it was run, from its Jobs too (a run the simulated fleet played stays marked so: its measurements made up)
    return replace(record, result=RESULT_FAILED, completion_time=refused.get("lastTransitionTime") if refused else None,
                   report={**record.report, **how_run_fields([cert, *jobs]), "result": RESULT_FAILED, "refused": refusal})
