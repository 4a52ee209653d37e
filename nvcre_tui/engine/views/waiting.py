"""What a certification, a category or a run waits for: pods not running yet (and the time left before it fails),
nodes to match its target, a Workflow on its nodes; why a run's log holds no line."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nvcre_tui.engine.api.bodies import run_status
from nvcre_tui.engine.api.vocabulary import (
    FAILED, IN_PROGRESS, NOTHING_STARTED, SIMULATED_OUTPUT, SUCCEEDED, WAITING_FOR_LEFTOVERS, WAITING_FOR_NODES,
)
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import HELD, is_held
from nvcre_tui.engine.controllers.job import pending_bound, pending_left
from nvcre_tui.engine.report.logtail import played_elsewhere
from nvcre_tui.engine.report.readmodel import CategoryView, pods_pending
from nvcre_tui.engine.units import format_duration
from nvcre_tui.engine.views.snapshot import Obj, Snapshot


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


def no_output(job: Obj | None, run: Obj | None, now: datetime, *, fleet_here: bool) -> tuple[str, str | None]:
    """Why a run's log holds no line, as the logs pane and `certification logs` say it: the sentence, and for a run
    whose pods have not started why, as its Job says it (no pods made and which controller would make them, a
    scheduler's refusal, and the time left before it fails), else as the run does; None when nothing says.
    `fleet_here`: this process plays the simulated fleet (session.plays_the_fleet), the only maker of a simulated
    run's output."""
    if run is None:
        # A Job that ended without one (its namespace being deleted when it would have made it, or its run gone) will
        # never have one: "yet" told the operator to wait for output that cannot come.
        if job is not None and (ended := cond.phase(job)) in (SUCCEEDED, FAILED):
            reason = (cond.find(cond.status_of(job).get("conditions"), str(ended)) or {}).get("reason")
            return f"No output: the job {str(ended).lower()}{f' ({reason})' if reason else ''} with no WorkloadRun, so it has no log.", None
        return "No output yet: the job has no WorkloadRun yet.", None
    phase = str(run_status(run).get("phase") or "Pending")
    if phase in (SUCCEEDED, FAILED, "Running") and played_elsewhere(run, fleet_here=fleet_here):
        # No pod ever holds it: "neither its pods nor its Job hold any line" read as a log lost.
        said = "is running" if phase == "Running" else phase.lower()
        return f"No output here: the run {said}: {SIMULATED_OUTPUT}; give --sim-runner with the fleet's --scenario to read it.", None
    reason = run_status(run).get("reason")
    if phase == FAILED and reason in NOTHING_STARTED:
        # "neither its pods nor its Job hold any line" read as a log lost, where no pod of it ever ran (an API server
        # without the Trainer's or Job controller, a scheduler or a kubelet; an image that cannot be pulled)
        message = run_status(run).get("message")
        return f"No output: the run failed before its workload started ({reason}), so it printed nothing.", (str(message) if message else None)
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


def _waits_for_nodes(category: CategoryView) -> bool:
    """Whether a category waits for nodes: to match its target before its Workflow is made (discovery: none eligible
    yet, e.g. every one cordoned), or, its Workflow made, for one of its nodes to be available (every one busy with
    others' pods as it started: its Workflow InProgress WaitingForNodes, mirrored); not held by another Workflow."""
    status = category.status
    if status.get("reason") != WAITING_FOR_NODES or is_held(status):
        return False
    return status.get("status") == IN_PROGRESS if category.workflow is not None else status.get("status") == "Pending"


def categories_waiting_for_nodes(snapshot: Snapshot, cert_name: str) -> list[tuple[str, str]]:
    """(category, why) for each category of the certification that waits for nodes (_waits_for_nodes), not held by
    another Workflow (categories_held says those)."""
    view = snapshot.views.get(cert_name)
    return [(category.name, str(category.status.get("message"))) for category in (view.categories if view is not None else [])
            if _waits_for_nodes(category)]


def waiting_to_start(snapshot: Snapshot, cert_name: str) -> str | None:
    """Why a certification none of whose categories has started waits, as a title says it after WAITING: "for
    certification first" (another certification holds, or is queued first for, its first waiting category's nodes),
    "for nodes to match its target", "for a leftover Workflow of its name to go", "for a node of its target to be
    available" (its Workflow made, every node it found busy with others' pods: discovery.NODE_WAIT), else "to start";
    None once a category has its Workflow planned (or failed), when it is finished, or when it has no categories. Its summary says RUNNING then: the
    wall's title read RUNNING above "nothing runs yet"."""
    view, cert = snapshot.views.get(cert_name), snapshot.certification(cert_name)
    if view is None or cert is None or cond.is_terminal(cert) or not view.categories:
        return None
    if any(not _waits_for_nodes(c) and (c.workflow is not None or c.status.get("status") != "Pending") for c in view.categories):
        return None
    if any(c.workflow is not None for c in view.categories):  # its Workflow made, every node it found unavailable
        return "for a node of its target to be available"
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
