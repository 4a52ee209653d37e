"""Nodes as the map, the wall and the node screen show them: their states per certification (or merged), the nodes a
certification holds or targets, a node's topology domain and its history of results."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.api.bodies import creation_order, group_nodes, job_status, labels_of
from nvcre_tui.engine.api.nodes import node_labels, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GROUP, VALIDATION_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.diagnose.clearance import clearance
from nvcre_tui.engine.judging.results import job_failures
from nvcre_tui.engine.planning.discovery import matches_target
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.report.model import whole_job_names
from nvcre_tui.engine.report.readmodel import pods_pending
from nvcre_tui.engine.views.diagnosis import diagnose_state, diagnose_verdicts
from nvcre_tui.engine.views.snapshot import Obj, Snapshot


def node_states(snapshot: Snapshot, cert_name: str | None = None) -> dict[str, tuple[str, str]]:
    """(state, detail) per node for one certification, or across all when `cert_name` is None."""
    views = [view for name, view in snapshot.views.items() if cert_name in (None, name)]
    categories = [category for view in views for category in view.categories if category.workflow is not None]
    if snapshot.models is None:
        return nodestates.compute(categories, snapshot.nodes)
    return snapshot.models.of(cert_name).update(categories, snapshot.nodes)


def certification_nodes(snapshot: Snapshot, cert_name: str) -> set[str] | None:
    """The nodes a certification's categories hold (planned, grouped, tested or left out); None before any category
    has its nodes. A certification on one rack is counted on its nodes: the wall said "of 32 nodes: ... + 24 ◦
    untested" for one that targeted 8."""
    view = snapshot.views.get(cert_name)
    return (view.held_nodes() if view is not None else set()) or None


def targeted_nodes(snapshot: Snapshot, cert_name: str) -> set[str] | None:
    """The nodes a certification that has not started any category targets (its spec's target over the Nodes as they
    are: before exclusions), while every one of its categories waits (for nodes another certification or an earlier
    category holds, or for nodes to match), and once it ended without starting one; None once a category has its
    Workflow, or when its target cannot be read. The wall counted the whole fleet then, as if every node were in it."""
    view, cert = snapshot.views.get(cert_name), snapshot.certification(cert_name)
    if view is None or cert is None or not view.categories or any(c.workflow is not None for c in view.categories):
        return None
    spec = cert.get("spec")
    try:
        target = TargetSpec.model_validate((spec.get("target") if isinstance(spec, Mapping) else None) or {})
    except (ValidationError, TypeError):
        return None
    return {node_name(node) for node in snapshot.nodes if matches_target(node, target)}


def states_scope(snapshot: Snapshot, cert_name: str | None = None) -> str:
    """Which certifications `node_states(snapshot, cert_name)` reads, for the screens that show its states: "certification
    burn-in", or "across 2 certifications" where it merges them (a node shows its most urgent state in any: an old
    failure stays ✗ while the latest certification passed it)."""
    names = [cert_name] if cert_name is not None else [str(c["metadata"]["name"]) for c in snapshot.certifications]
    if not names:
        return "no certification yet"
    if len(names) == 1:
        return f"certification {names[0]}"
    return f"across {len(names)} certifications"


def node_domain(node: Obj, topology_key: str) -> str:
    """The node's value of the topology label ("(none)" when it has none)."""
    return node_labels(node).get(topology_key, "(none)")


def node_history(snapshot: Snapshot, name: str) -> list[Obj]:
    """Every result for one node across categories and certifications, newest certification first."""
    rows = []
    for cert in sorted(snapshot.certifications, key=creation_order, reverse=True):
        for view in (v for v in snapshot.views[cert["metadata"]["name"]].categories if v.workflow is not None):
            category = view.name  # `domain/variant #2` where the certification runs it twice, as the report says
            jobs = view.jobs_on(name)
            verdict = diagnose_verdicts(view).get(name) if jobs else None
            diagnosis = diagnose_state(view) if verdict is not None else None
            cleared = clearance(diagnosis, name) if diagnosis is not None else None  # why it was cleared: its passes, each failure explained
            diagnosing = nodestates.diagnosis_open(view.workflow)
            # a run cut short by a crash or a timeout measured part of a sweep: no measurement, as the report and the
            # archive read it (report.model.measured_whole)
            whole = whole_job_names(view.workflow) if jobs and view.workflow is not None else frozenset()
            for job in jobs:
                nodes = group_nodes(job)
                status = job_status(job)
                blamed = job_failures(job)
                failures = [f for f in blamed if f["name"] == name]
                state = nodestates.blamed_state(nodes, blamed, str(failures[0].get("reason") or "")) if failures else None
                rows.append({"certification": cert["metadata"]["name"], "category": category, "job": job["metadata"]["name"],
                             "group": labels_of(job).get(LABEL_GROUP) or "", "groupSize": len(nodes), "phase": cond.phase(job) or "Pending", "validationFailed": cond.is_true(job, VALIDATION_FAILED),
                             "blamedState": state,  # failed, or suspect with its whole group (as the map says); None: not blamed
                             # what this Job says of the node, as the map and the drill-down say it (nodestates.member_state)
                             "state": nodestates.member_state(nodes, blamed, name, nodestates.job_outcome(job), nodestates.failure_reason(job),
                                                              waiting=pods_pending(job) is not None, diagnosing=diagnosing),
                             "verdict": verdict,  # where the category's diagnosis left the node (healthy: cleared); None: no diagnosis
                             "clearance": cleared,  # a cleared node's passes and what explained each failure; None: not cleared
                             "measurements": (status.get("measurements") or {}) if job["metadata"]["name"] in whole else {}, "failures": failures, "evidence": status.get("evidence") or []})
    return rows
