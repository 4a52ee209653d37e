"""What the console shows, computed from a snapshot of the store: pure functions, no Textual.

Screens render these; they never read Kubernetes or the store themselves.
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.api.bodies import (certification_status, creation_order, group_nodes, job_status, job_template_spec, labels_of, meta_of, run_name,
                                         run_status, workflow_spec)
from nvcre_tui.engine.api.damage import DamageChecks, DamagedObject
from nvcre_tui.engine.names import natural_key
from nvcre_tui.engine.api.nodes import is_cordoned, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import (FAILED, IN_PROGRESS, LABEL_CERTIFICATION, LABEL_GPU_CLIQUE, LABEL_GROUP, LABEL_WORKFLOW, PHASE_GLYPHS,
                                             RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED, RESULT_RUNNING, STATE_PRECEDENCE,
                                             VALIDATION_FAILED, SUCCEEDED, WAITING_FOR_LEFTOVERS, WAITING_FOR_NODES, WORKLOAD_FAILED)
from nvcre_tui.engine.api.vocabulary import TESTED_NOW as TESTED_NOW, UNDER_SUSPICION as UNDER_SUSPICION  # the screens read them here
from nvcre_tui.engine.clock import format_time, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import HELD, is_held
from nvcre_tui.engine.controllers.job import pending_bound, pending_left
from nvcre_tui.engine.controllers.iterations import group_failures, job_refs
from nvcre_tui.engine.diagnose import readable
from nvcre_tui.engine.diagnose.state import STATUS_KEYS
from nvcre_tui.engine.diagnose.clearance import clearance
from nvcre_tui.engine.diagnose.summary import crossing, progress_line, record_text, rounds_weighed
from nvcre_tui.engine.judging.results import job_failures
from nvcre_tui.engine.kube.held import deletion_held
from nvcre_tui.engine.judging.thresholds import shown_measured
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.planning.discovery import matches_target
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.report.model import measured_span, threshold_out_of_reach, waited_and_ran
from nvcre_tui.engine.report.readmodel import (CategoryView, CertificationView, Iteration, Join, Joined, join_view, namespace_of,
                                                pods_pending)
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.cacheview import CacheView, LabelGroup
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN, ResourceKind, ResourceStore
from nvcre_tui.engine.units import count, format_age, format_duration

Obj = dict[str, Any]
SNAPSHOT_KINDS = (NODE, CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)  # Snapshot's field order


class NodeStateModels:
    """One incremental node-state model per certification filter (None: all), for one informer's snapshots."""

    LIMIT = 8  # filters kept (the map's, the wall's, the dashboard's); the least recently asked goes first

    def __init__(self) -> None:
        self._models: dict[str | None, nodestates.NodeStateModel] = {}

    def of(self, cert_name: str | None) -> nodestates.NodeStateModel:
        model = self._models.pop(cert_name, None) or nodestates.NodeStateModel()
        self._models[cert_name] = model
        while len(self._models) > self.LIMIT:
            del self._models[next(iter(self._models))]
        return model


@dataclass(frozen=True)
class _RanJobs:
    """What `CachedJoin.jobs_of` last answered for one Workflow, and what from."""

    workflow: tuple[object, ...]  # (id, resourceVersion) of the Workflow
    refs: frozenset[str]          # the names of the Jobs its groups ran
    group: LabelGroup | None      # its Jobs' group, at `stamp`
    stamp: int
    names: list[str]              # the answer's names, sorted
    jobs: list[Obj]               # the answer (shared with the views that took it: never changed)


class CachedJoin:
    """The same join read from the cache's Workflows and Jobs grouped by label (store/cacheview.py), kept across
    snapshots: a certification's view is rebuilt only when the Certification, one of its Workflows or one of their
    Jobs changed since it was built, and a Workflow's Jobs are patched with the Jobs that changed since (taken whole
    only when its groups ran other Jobs). Each group is of one namespace, so a namesake elsewhere is never joined;
    the informer's views leave out the objects their models refuse (those built here leave out none: tests of the join)."""

    def __init__(self, cache: WatchCache, workflows: CacheView | None = None, jobs: CacheView | None = None) -> None:
        self.cache = cache
        self.workflows = workflows or CacheView(cache, WORKFLOW, group_by=LABEL_CERTIFICATION)
        self.jobs = jobs or CacheView(cache, JOB, group_by=LABEL_WORKFLOW)
        if self.workflows.group_by != LABEL_CERTIFICATION or self.jobs.group_by != LABEL_WORKFLOW:
            raise ValueError("the join takes Workflows grouped by certification and Jobs grouped by Workflow")
        self._views: dict[tuple[str, str], tuple[tuple[object, ...], CertificationView]] = {}
        self._jobs: dict[tuple[str, str], _RanJobs] = {}

    def workflows_of(self, cert: Obj) -> list[Obj]:
        group = self.workflows.group(namespace_of(cert), str(cert["metadata"]["name"]))
        return group.objects() if group is not None else []

    def jobs_of(self, workflow: Obj) -> list[Obj]:
        """Kept until the Workflow or one of the Jobs labelled with its name changes; then patched with the Jobs that
        changed, or taken whole from the group when its groups ran other Jobs (or the group's journal no longer
        reaches back): a refresh after one Job changed costs that Job, not the Workflow's thousands."""
        at = (namespace_of(workflow), str(workflow["metadata"]["name"]))
        workflow_key = (id(workflow), workflow["metadata"].get("resourceVersion"))
        group = self.jobs.group(*at)
        stamp = group.stamp if group is not None else 0
        found = self._jobs.get(at)
        refs = found.refs if found is not None and found.workflow == workflow_key else job_refs(workflow)
        if found is not None and found.group is group and (found.refs is refs or found.refs == refs):
            if found.stamp == stamp:
                if found.workflow != workflow_key:
                    self._jobs[at] = replace(found, workflow=workflow_key)
                return found.jobs
            changed = group.changed_since(found.stamp) if group is not None else None
            if changed is not None:
                names, jobs = list(found.names), list(found.jobs)
                for name in changed:
                    where = bisect_left(names, name)
                    if where < len(names) and names[where] == name:
                        del names[where], jobs[where]
                    job = group.by_name.get(name) if group is not None else None
                    if job is not None and name in refs:
                        names.insert(where, name)
                        jobs.insert(where, job)
                self._jobs[at] = _RanJobs(workflow_key, refs, group, stamp, names, jobs)
                return jobs
        names = [name for name in group.names if name in refs] if group is not None else []
        jobs = [group.by_name[name] for name in names] if group is not None else []
        self._jobs[at] = _RanJobs(workflow_key, refs, group, stamp, names, jobs)
        return jobs

    def view(self, cert: Obj) -> CertificationView:
        at = (namespace_of(cert), str(cert["metadata"]["name"]))
        key = self._key(cert)
        found = self._views.get(at)
        if found is None or found[0] != key:
            found = (key, join_view(self, cert))
            self._views[at] = found
        return found[1]

    def forget_except(self, certifications: Iterable[Obj]) -> None:
        """Drop the views of certifications that are gone, and their Workflows' Jobs."""
        kept = list(certifications)
        certs = {(namespace_of(cert), str(cert["metadata"]["name"])) for cert in kept}
        for at in [at for at in self._views if at not in certs]:
            del self._views[at]
        workflows = {(namespace_of(wf), str(wf["metadata"]["name"])) for cert in kept for wf in self.workflows_of(cert)}
        for at in [at for at in self._jobs if at not in workflows]:
            del self._jobs[at]

    def _key(self, cert: Obj) -> tuple[object, ...]:
        """What the view is built from: the Certification, its Workflows' group and each one's Jobs' group (their
        stamps never come back, even for a group gone and made again)."""
        namespace, name = namespace_of(cert), str(cert["metadata"]["name"])
        workflows = self.workflows.group(namespace, name)
        stamps = [workflows.stamp if workflows is not None else 0]
        for wf in workflows.objects() if workflows is not None else []:
            jobs = self.jobs.group(namespace, str(wf["metadata"]["name"]))
            stamps.append(jobs.stamp if jobs is not None else 0)
        return (id(cert), cert["metadata"].get("resourceVersion"), *stamps)


@dataclass(frozen=True)
class Snapshot:
    """Every object the console needs, read at one resourceVersion: the Nodes and one namespace's certifications
    with their objects (the console's -n), so a name names one certification. Damaged objects (api/damage.py) are
    left out of the lists and named in `damaged`."""

    nodes: list[Obj] = field(default_factory=list)
    certifications: list[Obj] = field(default_factory=list)
    workflows: list[Obj] = field(default_factory=list)
    jobs: list[Obj] = field(default_factory=list)
    runs: list[Obj] = field(default_factory=list)
    resource_version: str = "0"
    # The informer's node-state models, shared by its successive snapshots (None: compute in full).
    models: NodeStateModels | None = field(default=None, compare=False, repr=False)
    # The informer's join over the cache, shared likewise (None: join these lists once).
    join: Join | None = field(default=None, compare=False, repr=False)
    damaged: tuple[DamagedObject, ...] = ()  # the objects left out, in SNAPSHOT_KINDS order

    def __deepcopy__(self, memo: dict[int, Any]) -> Snapshot:
        """A detached copy: its own objects, joined from its own lists (not the informer's cache and models)."""
        lists = {name: copy.deepcopy(getattr(self, name), memo) for name in ("nodes", "certifications", "workflows", "jobs", "runs")}
        return Snapshot(**lists, resource_version=self.resource_version, damaged=self.damaged)

    @classmethod
    async def read(cls, store: ResourceStore, namespace: str | None = None) -> Snapshot:
        """List each kind once (of one namespace, when given; Nodes have none), less the damaged objects."""
        lists = [await store.list(kind, namespace) for kind in SNAPSHOT_KINDS]
        damage = DamageChecks()
        split = [damage.split(kind.kind, result.items) for kind, result in zip(SNAPSHOT_KINDS, lists, strict=True)]
        nodes, certifications, workflows, jobs, runs = (kept for kept, _ in split)
        return cls(nodes, certifications, workflows, jobs, runs, resource_version=max((r.resource_version for r in lists), key=int),
                   damaged=tuple(found for _, damaged in split for found in damaged))

    @cached_property
    def joined(self) -> Join:
        """Workflows by certification and Jobs by Workflow: the informer's cache join, or these lists joined once."""
        return self.join or Joined(self.workflows, self.jobs)

    @cached_property
    def views(self) -> dict[str, CertificationView]:
        """Every certification's read model, by name."""
        return {cert["metadata"]["name"]: self.joined.view(cert) for cert in self.certifications}

    def workflows_of(self, cert_name: str) -> list[Obj]:
        """The certification's Workflows, in category order."""
        cert = self.certification(cert_name)
        return self.joined.workflows_of(cert) if cert is not None else []

    def jobs_of(self, workflow_name: str) -> list[Obj]:
        """The Jobs a Workflow's groups ran, by name."""
        workflow = next((wf for wf in self.workflows if wf["metadata"]["name"] == workflow_name), None)
        return self.joined.jobs_of(workflow) if workflow is not None else []

    def run_of(self, job_name: str) -> Obj | None:
        """The WorkloadRun of a Job."""
        return next((r for r in self.runs if r["metadata"]["name"] == run_name(job_name)), None)

    def certification(self, name: str) -> Obj | None:
        """A certification by name."""
        return next((c for c in self.certifications if c["metadata"]["name"] == name), None)


@dataclass(frozen=True)
class PodsWaiting:
    """A category whose Jobs in progress wait for their pods: how many, and why, as the first of them says it."""

    category: str
    waiting: int        # its Jobs in progress whose pods do not run yet
    in_progress: int    # its Jobs in progress, those included
    why: str            # the first waiting Job's message, as the engine wrote it
    job: str            # that Job
    since: str | None   # when that Job's run began to wait (its WorkloadRun's pendingSince), if known
    bound: tuple[float, bool] | None = None  # how long that Job waits for its pods, and whether that is timeoutPerJob

    @property
    def nothing_runs(self) -> bool:
        """Nothing of the category runs: every Job in progress waits for its pods."""
        return self.waiting == self.in_progress

    def said(self, now: datetime | None = None) -> str:
        """`waiting 1m20s for pods: no pods yet (0/5): ...` (`2 of 4 groups waiting ...` while others run); the
        time only with `now` and a known start (never below 0s: a viewer's clock may be behind the engine's), and then
        the time left before the Job fails in place of its whole bound (`it fails in 30s, after 5m00s of this`)."""
        share = "" if self.nothing_runs else f"{self.waiting} of the {self.in_progress} groups in progress "
        if not (now and self.since):
            return f"{share}waiting for pods: {self.why}"
        seconds = max(0.0, (now - parse_time(self.since)).total_seconds())
        why = self.why if self.bound is None else pending_left(self.why, self.bound[0], per_job=self.bound[1], waited=seconds)
        return f"{share}waiting {format_duration(seconds)} for pods: {why}"


def pods_pending_left(job: Obj, run: Obj, now: datetime) -> str | None:
    """`pods_pending` said at `now`: the time left before the Job fails in place of its whole bound, from its run's
    pendingSince (`it fails in 30s, after 5m00s of this`); None as there."""
    why = pods_pending(job)
    since = run_status(run).get("pendingSince")
    if why is None or not since:
        return why
    grace, per_job = pending_bound(job.get("spec") or {}, run_status(run))  # as controllers/job.py waits
    return pending_left(why, grace, per_job=per_job, waited=max(0.0, (now - parse_time(str(since))).total_seconds()))


def no_output(job: Obj | None, run: Obj | None, now: datetime) -> tuple[str, str | None]:
    """Why a run's log holds no line, as the logs pane and `certification logs` say it: the sentence, and for a run
    whose pods have not started why, as its Job says it (no pods made and which controller would make them, a
    scheduler's refusal, and the time left before it fails), else as the run does; None when nothing says."""
    if run is None:
        # A Job that ended without one (its namespace being deleted when it would have made it, or its run gone) will
        # never have one: "yet" told the operator to wait for output that cannot come.
        if job is not None and (ended := cond.phase(job)) in (SUCCEEDED, FAILED):
            reason = (cond.find(cond.status_of(job).get("conditions"), str(ended)) or {}).get("reason")
            return f"No output: the job {str(ended).lower()}{f' ({reason})' if reason else ''} with no WorkloadRun, so it has no log.", None
        return "No output yet: the job has no WorkloadRun yet.", None
    phase = str(run_status(run).get("phase") or "Pending")
    if phase in (SUCCEEDED, FAILED):  # on a cluster a failed run's pods are deleted (to free the GPUs): either may be
        return f"No output: the run {phase.lower()}, and neither its pods nor its Job hold any line of its log.", None
    if phase == "Running":
        return "No output yet: the run is Running and has printed nothing so far.", None
    why = (pods_pending_left(job, run, now) if job is not None else None) or run_status(run).get("message")
    return f"No output yet: the run is {phase}; its pods have not started.", (str(why) if why else None)


def pods_waiting(snapshot: Snapshot, category: CategoryView) -> PodsWaiting | None:
    """The category's Jobs in progress whose pods do not run yet (`pods_pending`); None when none waits."""
    in_progress = [job for job in category.jobs if cond.phase(job) == IN_PROGRESS]
    waiting = [(job, why) for job in in_progress if (why := pods_pending(job)) is not None]
    if not waiting:
        return None
    job, why = waiting[0]
    name = str(job["metadata"]["name"])
    run = snapshot.run_of(name)
    since = run_status(run).get("pendingSince") if run is not None else None
    bound = pending_bound(job.get("spec") or {}, run_status(run)) if run is not None else None  # as controllers/job.py waits
    return PodsWaiting(category.name, len(waiting), len(in_progress), why, name, str(since) if since else None, bound)


def categories_waiting_for_nodes(snapshot: Snapshot, cert_name: str) -> list[tuple[str, str]]:
    """(category, why) for each category of the certification that waits for nodes to match its target (discovery: none
    eligible yet, e.g. every one cordoned), not held by another Workflow (categories_held says those)."""
    view = snapshot.views.get(cert_name)
    return [(category.name, str(category.status.get("message"))) for category in (view.categories if view is not None else [])
            if category.workflow is None and category.status.get("status") == "Pending" and category.status.get("reason") == WAITING_FOR_NODES
            and not is_held(category.status)]


def waiting_to_start(snapshot: Snapshot, cert_name: str) -> str | None:
    """Why a certification none of whose categories has started waits, as a title says it after WAITING: "for
    certification first" (another certification holds, or is queued first for, its first waiting category's nodes),
    "for nodes to match its target", "for a leftover Workflow of its name to go", else "to start"; None once a category
    has its Workflow (or failed), when it is finished, or when it has no categories. Its summary says RUNNING then: the
    wall's title read RUNNING above "nothing runs yet"."""
    view, cert = snapshot.views.get(cert_name), snapshot.certification(cert_name)
    if view is None or cert is None or cond.is_terminal(cert) or not view.categories:
        return None
    if any(c.workflow is not None or c.status.get("status") != "Pending" for c in view.categories):
        return None
    first = next((c.status for c in view.categories if c.status.get("reason")), view.categories[0].status)
    if is_held(first):  # "waits for certification first, running on 1 node of this category's"
        return "for " + str(first.get("message")).removeprefix(HELD).split(", ", 1)[0]
    if first.get("reason") == WAITING_FOR_NODES:
        return "for nodes to match its target"
    if first.get("reason") == WAITING_FOR_LEFTOVERS:
        return "for a leftover Workflow of its name to go"
    return "to start"


def categories_held(snapshot: Snapshot, cert_name: str) -> list[tuple[str, str]]:
    """(category, why) for each category of the certification that waits for a Workflow on its nodes (another
    certification's, or an earlier category's): its Workflow is not made yet, so nothing else shows the wait."""
    view = snapshot.views.get(cert_name)
    return [(category.name, str(category.status.get("message"))) for category in (view.categories if view is not None else [])
            if is_held(category.status)]


@dataclass(frozen=True)
class CertRow:
    """One dashboard row."""

    name: str
    result: str
    passed: str
    failed_nodes: int
    runtime: str
    age: str
    running: str  # the variants of the categories running now ("nccl-all-reduce"; "· nccl-all-reduce": none of its pods runs)


def _age(created: str | None, now: datetime) -> str:
    return format_age(max(0.0, (now - parse_time(created)).total_seconds())) if created else "-"


def _running_variants(snapshot: Snapshot, cert: Obj) -> list[str]:
    """The variants of the certification's categories in progress, the pending glyph before one whose Jobs in progress
    all wait for their pods (nothing of it runs: `pods_waiting`; the dashboard says why under the table)."""
    statuses = certification_status(cert).get("categoryStatuses") or []
    running = [index for index, entry in enumerate(statuses) if entry.get("status") == IN_PROGRESS]
    if not running:
        return []
    view = snapshot.views.get(str(cert["metadata"]["name"]))
    categories = view.categories if view is not None and len(view.categories) == len(statuses) else []
    shown = []
    for index in running:
        waiting = pods_waiting(snapshot, categories[index]) if categories else None
        shown.append((f"{PHASE_GLYPHS['Pending']} " if waiting is not None and waiting.nothing_runs else "") + str(statuses[index]["variant"]))
    return shown


def certification_rows(snapshot: Snapshot, now: datetime) -> list[CertRow]:
    """Dashboard rows: unfinished first, then failed, then the rest; newest first within each."""
    # Never a negative duration: a viewer's clock (the wall clock) may be behind the times an engine playing
    # simulated time wrote (startTime, creationTimestamp), so a time "since" may come out below zero: 0s then.
    rows = []
    for cert in snapshot.certifications:
        status = certification_status(cert)
        summary = status.get("summary") or {}
        start, end = status.get("startTime"), status.get("completionTime")
        # While one of its categories ran; the time it waited for nodes (another certification held them) said apart, as
        # the report and `list` say it: the wait read as runtime here.
        timing = waited_and_ran(start, end or format_time(now), snapshot.workflows_of(str(cert["metadata"]["name"]))) if start else None
        runtime = "-" if timing is None else format_duration(timing[1]) + (f" (+{format_duration(timing[0])} waited)" if timing[0] >= 1 else "")
        # The variant only (a category's last path part): whole in the dashboard's last column on 80 columns.
        running = _running_variants(snapshot, cert)
        rows.append(CertRow(cert["metadata"]["name"], summary.get("result") or (RESULT_RUNNING if not cond.is_terminal(cert) else RESULT_FAILED),
                            summary.get("passedCategories") or f"0/{len(cert['spec'].get('categories') or [])}", int(summary.get("failedNodes") or 0),
                            runtime, _age(cert["metadata"].get("creationTimestamp"), now), ", ".join(running)))
    order = {RESULT_RUNNING: 0, RESULT_FAILED: 1, RESULT_INCOMPLETE: 2, RESULT_PASSED: 3}
    created = {c["metadata"]["name"]: creation_order(c) for c in snapshot.certifications}
    newest_first = sorted(rows, key=lambda r: created[r.name], reverse=True)
    return sorted(newest_first, key=lambda r: order.get(r.result, 4))  # stable: newest first within a result


DELETING = "DELETING"  # in place of its result, for a certification being deleted that a finalizer holds (deletion_said)


def deleting_result(snapshot: Snapshot, cert_name: str) -> str | None:
    """How the console shows the result of a certification being deleted that a finalizer holds (deletion_said): DELETING,
    its finished result kept beside it ("DELETING (was FAILED)": the verdict stood hidden while it was held, though the
    run was over); plain DELETING for one that had not finished (RUNNING for good, nothing advances it) or had no status
    yet. None when it is not being deleted."""
    cert = snapshot.certification(cert_name)
    if cert is None or deletion_held(cert_name, cert) is None:
        return None
    result = (certification_status(cert).get("summary") or {}).get("result")
    return f"{DELETING} (was {result})" if cond.is_terminal(cert) and result else DELETING


def deletion_said(snapshot: Snapshot, cert_name: str) -> str | None:
    """What holds the deletion of a certification being deleted, as `report` and `list` say it (its status stays as
    it was: RUNNING for good where no garbage collector removes kubectl --cascade=foreground's finalizer); None when
    it is not being deleted."""
    cert = snapshot.certification(cert_name)
    return deletion_held(cert_name, cert) if cert is not None else None


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


def fleet_summary(snapshot: Snapshot, states: dict[str, tuple[str, str]], cert_name: str | None = None) -> dict[str, int]:
    """Node counts by map state, plus totals; `suspect` as the wall's SUSPECT counts it (blamed only with the whole
    group), `under suspicion` the running diagnoses' narrowing set drawn suspect, and `under test` those of it the
    current round tests (drawn running)."""
    counts = Counter(state for state, _ in states.values())
    blamed = {row.node for view in snapshot.views.values() if cert_name in (None, view.name) for row in failure_rows(snapshot, view.name)}
    suspicion = len(under_suspicion(states, blamed))
    by_state = {s.value: counts.get(s, 0) for s in STATE_PRECEDENCE}
    by_state["suspect"] -= suspicion
    return {"nodes": len(snapshot.nodes), "cordoned": sum(1 for n in snapshot.nodes if is_cordoned(n)), **by_state,
            UNDER_SUSPICION: suspicion, UNDER_TEST: len(suspects_under_test(snapshot, states, cert_name)),
            RUNNING_AGAIN: len(blamed_and_running(snapshot, states, cert_name))}


# UNDER_SUSPICION (api/vocabulary) is also fleet_summary's key of the narrowing set's count drawn suspect.
UNDER_TEST = "under test"  # fleet_summary's key of the count of suspects a diagnosis tests this round
RUNNING_AGAIN = "more with a failure on record"  # fleet_summary's count of nodes drawn ✗, ! or ? that a test runs on now


def diagnosis_progress(state: Mapping[str, Any], *, stage: bool = True) -> str:
    """Where a running diagnosis stands on the drill-down's category line (readable state), its narrowing set in the
    words the dashboard and the wall use: "2 under suspicion · round 1 (confirmation), 16 tests" (progress_line
    said "2 suspects", the word the report keeps for a node blamed with its whole group); without `stage`, the
    shortest: "2 under suspicion · round 1, 16 tests"."""
    if state.get("stage") == "complete":
        return progress_line(state)
    narrowing = len(state.get("suspectNodes") or [])
    rest = progress_line({**state, "suspectNodes": []}) if stage else \
        f"round {rounds_weighed(state)}, {count(len(state.get('tests') or []), 'test')}"
    return f"{narrowing} {UNDER_SUSPICION} · {rest}" if narrowing else rest


def suspect_legend(states: Mapping[str, tuple[str, str]], narrowing: Collection[str]) -> str:
    """What the map's ! stands for among `states`, for its legend: `suspect` (blamed only with its whole group),
    UNDER_SUSPICION where every node drawn so is in a running diagnosis's narrowing set (`narrowing`:
    under_suspicion), or both."""
    drawn = {node for node, (state, _) in states.items() if state == "suspect"}
    held = drawn & set(narrowing)
    if not held:
        return "suspect"
    return UNDER_SUSPICION if held == drawn else f"suspect / {UNDER_SUSPICION}"


def state_word(state: str, node: str, narrowing: Collection[str]) -> str:
    """A node's state as a line about it says it: a running diagnosis's narrowing set (`narrowing`: narrowing_set),
    drawn ! as suspects are, is UNDER_SUSPICION, never `suspect` (a node blamed with its whole group, among the failed
    nodes), as the map's legend and the wall say it."""
    return UNDER_SUSPICION if state == "suspect" and node in narrowing else state


def narrowing_set(snapshot: Snapshot, states: Mapping[str, tuple[str, str]], cert_name: str | None = None) -> list[str]:
    """under_suspicion of the certification's node states (every certification's when None), blamed meaning what any
    of them blamed."""
    names = [cert_name] if cert_name is not None else [str(c["metadata"]["name"]) for c in snapshot.certifications]
    return under_suspicion(states, {row.node for name in names for row in failure_rows(snapshot, name)})


def suspicion_said(nodes: int) -> str:
    """The narrowing set as the failures title names it: "2 nodes under suspicion"."""
    return f"{count(nodes, 'node')} {UNDER_SUSPICION}"


def blamed_and_running(snapshot: Snapshot, states: Mapping[str, tuple[str, str]], cert_name: str | None = None) -> list[str]:
    """Nodes a failure marks (failed, suspect, inconclusive: it outranks running on the map) that a group runs on now:
    an hour of a second iteration or of the next category on them read "0 running" on the wall and the fleet line,
    a frozen certification to the room."""
    busy = {str(node) for view in snapshot.views.values() if cert_name in (None, view.name) for category in view.categories
            if category.workflow is not None and not cond.is_terminal(category.workflow)
            for group in category.groups if group.get("phase") == "Running" for node in group.get("nodes") or []}
    return sorted(node for node in busy if states.get(node, ("",))[0] in ("failed", "suspect", "inconclusive"))


def suspects_under_test(snapshot: Snapshot, states: Mapping[str, tuple[str, str]], cert_name: str | None = None) -> list[str]:
    """The diagnosis's suspects its current round tests: the map draws them running, or waiting while their test's
    pods are not placed yet (what they do now), so the counters name them apart, or they would read "0 suspect"
    beside a drill-down's "4 suspects"."""
    return sorted(node for node in diagnosis_suspects(snapshot, cert_name) if states.get(node, ("",))[0] in UNDER_TEST_STATES)


def under_suspicion(states: Mapping[str, tuple[str, str]], blamed: Collection[str]) -> list[str]:
    """The nodes drawn suspect that no category blamed (`blamed`: failure_rows' nodes): a running diagnosis's narrowing
    set (the members of its failed tests not cleared, its suspects), which the report, `certification list` and the
    certification's summary do not count among its failed nodes. A suspect is otherwise a node blamed only with its
    whole group, which they do count; the wall counts the narrowing set apart ("2 ! under suspicion"), so its FAILED
    and SUSPECT counters add up to the list's FAILED NODES while the map still narrows round by round."""
    return sorted(node for node, (state, _) in states.items() if state == "suspect" and node not in blamed)


def diagnosis_suspects(snapshot: Snapshot, cert_name: str | None = None) -> set[str]:
    """The nodes the certification's running diagnoses (every certification's when None) hold suspect now."""
    return {str(node) for view in snapshot.views.values() if cert_name in (None, view.name) for category in view.categories
            for node in (category.orchestration.get("diagnose") or {}).get("suspectNodes") or []}


UNDER_TEST_STATES = ("running", "waiting")


def same_objects(objects: Sequence[Obj], seen: Sequence[Obj] | None) -> bool:
    """The very same objects, in the same order (the watch cache replaces an object when it changes and shares it
    otherwise, so identity is enough): what a screen laid out from `seen` needs no new layout for."""
    return seen is not None and len(objects) == len(seen) and all(a is b for a, b in zip(objects, seen, strict=True))


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
                             "measurements": status.get("measurements") or {}, "failures": failures, "evidence": status.get("evidence") or []})
    return rows


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


def _measured(failure: Mapping[str, Any]) -> str:
    checks = [e for e in failure.get("evidence") or [] if not e.get("passed", True)]
    parts = []
    for check in checks:
        value = check.get("measured")
        shown = (shown_measured(str(check.get("metric")), str(check.get("expression")), float(value), False)
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
            _merge(rows, FailureRow(failure["name"], category, failure.get("reason") or "", _measured(failure),
                                    failure.get("message") or "", wf["metadata"]["name"], job,
                                    state=_blamed_state(index, job, failure, entry.orchestration, memo)))
    return sorted(rows.values(), key=lambda row: (row.state != "failed", natural_key(row.node)))  # gpu-node-100 after gpu-node-99


def _merge(rows: dict[str, FailureRow], row: FailureRow) -> None:
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
                                   _measured(status), str(message or ""), str(wf["metadata"]["name"]),
                                   job["metadata"]["name"] if job is not None else None))
    return rows


def unblamed_subject(entry: CategoryView, record: Iteration, group: Mapping[str, Any]) -> str:
    """How a failed group that blamed nobody is named in the failures pane and on the wall (and found again by the
    drill-down): its category and name, and its iteration when the category ran several."""
    several = len(entry.timeline) > 1
    return f"{entry.key} {group.get('name')}" + (f" iteration {record.number}" if several and record.number is not None else "")


# ----- diagnose: verdicts and infrastructure faults ---------------------------------------------------------------

_READ_LIMIT = 64  # diagnose states kept read (one per diagnosing category of the certifications shown)
_read: dict[int, tuple[object, Obj, dict[str, str]]] = {}  # id(stored) -> (stored, readable, verdicts)


def _diagnosis(category: CategoryView) -> tuple[Obj, dict[str, str]] | None:
    """The category's diagnose state as `diagnose.readable` spells it out, and each node's status in it; read once
    per stored state (the watch cache shares an unchanged object between snapshots; the entry keeps it, so its id
    is not reused while kept)."""
    stored = category.orchestration.get("diagnose")
    if stored is None:
        return None
    found = _read.get(id(stored))
    if found is None or found[0] is not stored:
        state = readable(stored)
        verdicts: dict[str, str] = {str(node): status for status, key in STATUS_KEYS.items() for node in state.get(key) or []}
        found = _read[id(stored)] = (stored, state, verdicts)
        while len(_read) > _READ_LIMIT:
            del _read[next(iter(_read))]
    return found[1], found[2]


def diagnose_state(category: CategoryView) -> Obj | None:
    """The category's readable diagnose state (`diagnose.readable`), None when it does not diagnose. Shared: never change it."""
    found = _diagnosis(category)
    return found[0] if found is not None else None


def diagnose_verdicts(category: CategoryView) -> dict[str, str]:
    """Node -> where the category's diagnosis left it (healthy, faulty, intermittent, inconclusive, suspect,
    untested); {} without a diagnosis. Shared: never change it."""
    found = _diagnosis(category)
    return found[1] if found is not None else {}


@dataclass(frozen=True)
class InfraFault:
    """An infrastructure fault a diagnosis named (`diagnose.infrastructureFaults[]`): a degraded link between two
    cliques, or one clique's uplink, with the category that named it and the failed tests that are its evidence."""

    cliques: tuple[str, ...]
    message: str
    category: str
    workflow: str
    topology_key: str  # the Node label whose values the cliques are
    tests: tuple[str, ...] = ()
    values: tuple[float, ...] = ()  # the measured values of its failed tests
    threshold: str = ""  # the category's busBandwidthGBps expression
    job: str | None = None  # the Job of its last failed test (its log is the evidence)
    localised: bool = True  # False: tests across these cliques failed, but no one link could be named (a note)

    @property
    def subject(self) -> str:
        """What it names: "fabric clique-0 ↔ clique-1 degraded", "uplink of clique-3 degraded", "links between 8
        cliques degraded" (a fabric fault), "links between clique-0, clique-1, clique-2 degraded (not localised)"."""
        if not self.localised:
            return f"links between {', '.join(self.cliques) or 'cliques'} degraded (not localised)"
        if len(self.cliques) == 1:
            return f"uplink of {self.cliques[0]} degraded"
        if len(self.cliques) > 2:
            return f"links between {len(self.cliques)} cliques degraded"
        return f"fabric {' ↔ '.join(self.cliques) or 'between cliques'} degraded"

    @property
    def measured(self) -> str:
        """The failed tests' values: "busBandwidthGBps 184.28-186.11 in 4 tests (value >= 300)"; "-" when none."""
        return measured_span(self.values, self.threshold or None)


def _topology_key(workflow: Obj) -> str:
    """The label naming the cliques the Workflow's diagnosis localised links between."""
    spec = workflow_spec(workflow).get("orchestration") or {}
    chosen = spec.get("diagnose") or (spec.get("onFailure") or {}).get("diagnose") or {}
    return str(chosen.get("topologyKey") or LABEL_GPU_CLIQUE)


# Diagnose notes saying links between cliques failed without one being named: shown beside the named faults.
UNLOCALISED_NOTES = ("fabric-unresolved",)


def category_faults(category: CategoryView) -> list[InfraFault]:
    """The infrastructure faults the category's diagnosis named, as it named them (none without a diagnosis)."""
    stored = category.orchestration.get("diagnose") or {}
    if not stored.get("infrastructureFaults") and not stored.get("notes"):
        return []  # most diagnoses name none: not worth reading the state for
    state, wf = diagnose_state(category), category.workflow
    if state is None or wf is None:
        return []
    tests = {str(t.get("group")): t for t in state.get("tests") or [] if isinstance(t, Mapping)}
    job_refs_by_group = {g["name"]: g.get("jobRef") for record in category.timeline for g in record.groups}
    threshold = str((job_template_spec(wf).get("thresholds") or {}).get(BUS_BANDWIDTH) or "")
    faults = []
    unresolved: dict[tuple[str, ...], Mapping[str, Any]] = {}  # one per set of cliques
    for note in state.get("notes") or []:
        if isinstance(note, Mapping) and note.get("kind") in UNLOCALISED_NOTES:
            unresolved.setdefault(tuple(str(c) for c in note.get("cliques") or []), note)
    for note in [*(state.get("infrastructureFaults") or []), *unresolved.values()]:
        failed = [str(name) for name in note.get("tests") or [] if tests.get(str(name), {}).get("passed") is False]
        values = tuple(float(v) for name in failed if isinstance(v := tests[name].get("value"), int | float) and not isinstance(v, bool))
        refs = [ref for name in failed if (ref := job_refs_by_group.get(name)) and ref in category.jobs_by_name]
        faults.append(InfraFault(tuple(str(c) for c in note.get("cliques") or []), str(note.get("message") or ""), category.key,
                                 str(wf["metadata"]["name"]), _topology_key(wf), tuple(str(t) for t in note.get("tests") or []),
                                 values, threshold, refs[-1] if refs else None, note.get("kind") not in UNLOCALISED_NOTES))
    return faults


def infrastructure_faults(snapshot: Snapshot, cert_name: str | None = None) -> list[InfraFault]:
    """Every infrastructure fault one certification's diagnoses named (all certifications' when None), in category order."""
    return [fault for name, view in snapshot.views.items() if cert_name in (None, name)
            for category in view.categories for fault in category_faults(category)]


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


def clique_marks(faults: Iterable[InfraFault], topology_key: str) -> dict[str, str]:
    """Clique -> a map header's mark for the faults touching it: "✗link" (a degraded link to another clique),
    "✗uplink" (its own uplink); only faults whose cliques are values of `topology_key` (the map's grouping)."""
    marks: dict[str, str] = {}
    for fault in faults:
        if fault.topology_key != topology_key or not fault.localised:
            continue
        for clique in fault.cliques:
            if marks.get(clique) != "✗uplink":
                marks[clique] = "✗uplink" if len(fault.cliques) == 1 else "✗link"
    return marks
