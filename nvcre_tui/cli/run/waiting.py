"""`run --wait`'s lines on runs: groups whose pods do not run (and why, and until when), the same of the
certifications this one waits for, and the runs running, for the long-silence line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from nvcre_tui.engine.api.bodies import certification_status, group_nodes
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers.certification import held_by
from nvcre_tui.engine.controllers.iterations import job_groups
from nvcre_tui.engine.controllers.job import pending_bound, pending_message
from nvcre_tui.engine.names import controller_uid, natural_key
from nvcre_tui.engine.report.readmodel import Joined, category_titles, owner_uid
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.units import format_duration, listed

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session


WAITING_NOTE_SECONDS = 30.0  # run --wait says why a group's pods are not running once they have waited this long


STILL_WAITING_SHOWN = 3  # groups waiting for their pods named in that line


def _runs(session: Session, name: str, namespace: str) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
    """(category, group, Job, run) of each run of the certification's Jobs, joined by owner as the report joins them
    (report.readmodel: Certification -> Workflows -> the Jobs their groups ran; a run is its Job's by controller uid),
    the category titled as the report titles it and the group as its Workflow records it: a label removed by hand
    (`nvcre.nvidia.com/certification`, `/workflow`, `/group`) hid a waiting run from these lines."""
    cert = session.cache.get(CERTIFICATION, name, namespace)
    if cert is None:
        return
    runs: dict[str, list[Mapping[str, Any]]] = {}
    for each in session.cache.list(WORKLOADRUN, namespace):
        runs.setdefault(controller_uid(each) or "", []).append(each)
    for category in Joined(session.cache.list(WORKFLOW, namespace), session.cache.list(JOB, namespace)).view(cert).categories:
        groups = job_groups(category.workflow) if category.workflow is not None else {}
        for job in category.jobs:
            group = str((groups.get(job["metadata"]["name"]) or {}).get("name") or job["metadata"]["name"])
            for run in runs.get(owner_uid(job) or "-", []):
                yield category.name, group, job, run


def waiting_lines(session: Session, name: str, namespace: str, told: set[str]) -> list[str]:
    """A line for each run of the certification whose pods have not run for WAITING_NOTE_SECONDS, once: why it waits
    (the runner says: no pods made, which nodes the scheduler cannot use) and how long until it fails. An API server
    with no controller makes no pod: the user learns it now, not when the grace ends."""
    now = session.clock.now()
    # Groups of a category waiting for the same reason and bound make one line: a per-node category (DCGM on 500 nodes)
    # on a cluster with no controller printed 500 identical lines at once.
    waiting: dict[tuple[str, str, float, bool], list[tuple[str, float]]] = {}
    for category, group, job, run in _runs(session, name, namespace):
        status, uid = run.get("status") or {}, str(run["metadata"].get("uid") or run["metadata"]["name"])
        if uid in told or status.get("phase") not in ("Pending", "Scheduling") or not status.get("pendingSince"):
            continue
        waited = (now - parse_time(status["pendingSince"])).total_seconds()
        if waited < WAITING_NOTE_SECONDS:
            continue
        told.add(uid)
        grace, per_job = pending_bound(job.get("spec") or {}, status)  # as controllers/job.py waits
        waiting.setdefault((category, str(status.get("message") or "no reason given"), grace, per_job), []).append((group, waited))
    lines = []
    for (category, message, grace, per_job), groups in waiting.items():
        waited = max(seconds for _, seconds in groups)  # the longest waiting: the first to fail
        why = pending_message(message, grace, per_job=per_job, waited=waited)
        names = sorted((group for group, _ in groups), key=natural_key)  # group-2 before group-10
        who = names[0] if len(names) == 1 else f"{len(names)} groups ({listed(names, STILL_WAITING_SHOWN)})"
        lines.append(f"{category} {who}: pods not running after {format_duration(waited)}: {why}")
    return lines


def holders_waiting(session: Session, cert: Mapping[str, Any], namespace: str, told: set[str]) -> list[str]:
    """`waiting_lines` for the certifications this one's held categories wait for, each after the category it holds:
    a category that waits for a certification whose pods never come (no Job controller, no scheduler) said only that it
    waits, for the minutes until that one failed, and the user could not tell it would."""
    statuses = certification_status(cert).get("categoryStatuses") or []
    lines = []
    for key, status in zip(category_titles(statuses), statuses):
        if (holder := held_by(status)) is None:
            continue
        lines += [f"{key}: waits for certification {holder[0]}, whose {line}" for line in waiting_lines(session, holder[0], holder[1] or namespace, told)]
    return lines


def running_lines(session: Session, name: str, namespace: str) -> list[str]:
    """A line for each run of the certification whose pods run: on how many nodes, for how long, and its bound
    (timeoutPerJob), for the long-silence line: the category's own message ("partitioned into 1 group") is older news
    and does not tell a run that goes on from one that stopped moving."""
    now = session.clock.now()
    lines = []
    for category, group, job, run in _runs(session, name, namespace):
        status = run.get("status") or {}
        if status.get("phase") != "Running" or not status.get("startTime"):
            continue
        try:
            ran = format_duration(max((now - parse_time(status["startTime"])).total_seconds(), 0.0))
        except ValueError:
            continue
        bound = (job.get("spec") or {}).get("timeout")
        nodes = len(status.get("nodes") or []) or len(group_nodes(job))
        lines.append(f"{category} {group}: running" + (f" on {nodes} node(s)" if nodes else "") + f" for {ran}"
                     + (f" (timeoutPerJob {bound})" if bound else ""))
    return lines
