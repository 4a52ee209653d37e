"""Job reconciler: one group's run. Creates its WorkloadRun, watches it, and turns the outcome into
conditions and per-node attribution with evidence.

Outcomes and who is blamed:
- run failed: the node the output names (NCCL WARN host, torchrun root cause, mpirun rank; engine/judging/blame.py),
  else the node the runner saw the pod fail on (OOMKilled, evicted, node lost), else every group node: WorkloadFailed;
  a failure the measurements show (wrong elements, a NaN loss) is every group node's, whoever warned on the way;
- run never started (its workload could not be created or its image pulled, the engine failed reconciling it) or the output blames a
  cluster service: no node (the Job fails with the run's reason); a group node missing from the cluster: that
  node, SchedulingBlocked (the Job: NodeNotFound); deleted while the run ran: that node, WorkloadFailed (NodeNotFound);
- node health CEL fires: only the flagged nodes: HardwareFailureDetected (HardwareFailed condition);
- no result within timeoutPerJob (from the workload's start): every group node: Timeout;
- a training that stopped logging progress (stallMultiplier set; engine/judging/stall.py): every group node,
  WorkloadFailed (the Job: WorkloadStalled), as NVCRE;
- pods unschedulable past the grace period: the nodes whose pods the scheduler could not place: SchedulingBlocked;
  no pods made or none scheduled and no scheduler saying why: no node (WorkloadNotStarted); every pod placed but
  some still creating their containers past timeoutPerJob: no node either (WorkloadNotStarted);
- finished but missed a threshold: every group node: ThresholdViolation with the evidence
  (Succeeded stays True, ValidationFailed=True: a run that finished is not a run that crashed);
- finished but a threshold could not be evaluated on what it measured (a CEL error validation could not foresee):
  the expression is at fault, so no node for it (the Job fails: InvalidThresholdExpression, naming expression and error);
- a missing measurement never passes: ValidationFailed with reason MeasurementUnavailable, and no node for it (the
  measurement is missing, not bad: a run too short to time a step past warm-up);
- exited 0 but its output stopped short of the run's end, holds no result, or is not the tool's output: no node
  (the Job fails: RunIncomplete, NoDataCollected, WrongFormat): the command or its options are at fault; unless
  output with nothing to measure names the node it failed on (a NCCL WARN host): that node, WorkloadFailed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import partial
from typing import Any

from nvcre_tui.engine.api.bodies import WorkloadRunStatus, conditions_of, group_nodes, job_spec, job_status, labels_of, run_name, run_status
from nvcre_tui.engine.api.resources import STARTUP_STALL_SECONDS
from nvcre_tui.engine.api.vocabulary import (ANNOTATION_GROUP_NODES, AWAITING_START, FAILED, GROUP_NODES_EDITED, HARDWARE_FAILED, HARDWARE_FAILURE_DETECTED, IN_PROGRESS,
                                             NAMESPACE_TERMINATING, NEVER_RAN, NODE_NOT_FOUND, POD_DISRUPTED, SCHEDULING_BLOCKED, SUCCEEDED, THRESHOLD_VIOLATION, TIMEOUT,
                                             MEASUREMENT_REMARKS, NOT_RECONCILED, NO_JOB_CONTROLLER_SECONDS, VALIDATION_FAILED, WORKLOAD_FAILED, WORKLOAD_NOT_STARTED, WORKLOAD_PENDING,
                                             WORKLOAD_STALLED)
from nvcre_tui.engine.clock import format_time, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.judging.blame import node_at_fault, service_at_fault
from nvcre_tui.engine.judging.measure import RUN_INCOMPLETE, UNMEASURED_REASONS, Measured, MeasureFailure, measure
from nvcre_tui.engine.judging.nodehealth import DEFAULT_NODE_HEALTH, compile_node_health, flagged_nodes, is_flagged
from nvcre_tui.engine.judging.stall import Progress, standing
from nvcre_tui.engine.judging.thresholds import (INVALID_EXPRESSION, MEASUREMENT_UNAVAILABLE, THRESHOLD_VIOLATED, compile_thresholds,
                                                 evaluate_thresholds, violations)
from nvcre_tui.engine.judging.untested import SERVICE_UNAVAILABLE
from nvcre_tui.engine.store.errors import NamespaceTerminating, NotFound, StoreError
from nvcre_tui.engine.store.objects import copy_json
from nvcre_tui.engine.store.protocol import JOB, WORKLOADRUN
from nvcre_tui.engine.units import format_duration, listed, parse_duration

Obj = dict[str, Any]
TAIL_LINES = 40
THRESHOLD_TAIL_CHARS = 1024  # a threshold-violated run's failureLog tail (a crashed run's keeps 4096)
MESSAGE_CHARS = 512  # a runner's message kept in a Job's status: it may name every node a scheduler tried
NODE_MESSAGE_CHARS = 160  # ... and in each node's entry, one per group node
MAX_WATCHED_RUNS = 4096  # running trainings whose progress the engine remembers (the oldest forgotten: looked at anew)
WORKLOAD_COMPLETED = "WorkloadCompleted"  # the Job's Succeeded reason: the run finished and was measured
THRESHOLDS_MET = "ThresholdsMet"  # a Job's (and a Workflow's) ValidationFailed=False reason: every threshold passed
def is_done(job: Obj) -> bool:
    """Terminal for the Workflow: Succeeded (and validated) or Failed."""
    return cond.is_terminal(job)


def job_failed(job: Obj) -> bool:
    """Failed, hardware-failed or failed validation: the group counts as failed."""
    return cond.phase(job) == FAILED or cond.is_true(job, HARDWARE_FAILED) or cond.is_true(job, VALIDATION_FAILED)


async def reconcile_job(ctx: Context, job: Obj, world: World) -> float | None:
    """Advance one Job; returns seconds until it needs another look."""
    if is_done(job):
        return None
    runs = world.children_of(job, "WorkloadRun")
    if not runs:
        await _create_run(ctx, job)
        return None
    run = runs[0]
    if (job_status(job).get("workloadRef") or {}).get("name") != run["metadata"]["name"]:
        # An engine stopped between creating the run and writing the Job: the Job points at its run still.
        await _mark_created(ctx, job, run["metadata"]["name"])
        return 0.0
    if (edited := _group_nodes_edited(job, run)) is not None:  # whom a failure would blame is no longer who runs
        await _finish(ctx, job, run, FAILED, GROUP_NODES_EDITED, edited, [])
        return None
    state = run_status(run)
    phase = state.get("phase")
    flagged = await _unhealthy(ctx, job, world)
    if flagged and phase not in (SUCCEEDED, FAILED):
        message = f"node health check ({_health_expression(job)}) flagged {', '.join(flagged)}"
        failed = [{"name": name, "reason": HARDWARE_FAILURE_DETECTED, "message": message} for name in flagged]
        # whether its workload had started (a flag before it convicts no node of a diagnosis: controllers/unavailable.py)
        started = state.get("startTime") or job_status(job).get("workloadStartTime")
        await _finish(ctx, job, run, FAILED, HARDWARE_FAILURE_DETECTED, message, failed, hardware=True, started=started)
        return None
    gone = [name for name in group_nodes(job) if world.node(name) is None]
    if gone and phase not in (SUCCEEDED, FAILED):  # a runner may not see it (the simulator plays on regardless)
        await _node_gone(ctx, job, run, gone, running=phase == "Running")
        return None
    handler = _PHASES.get(phase or "Pending", _pending)
    return await handler(ctx, job, run, state)


def _group_nodes_edited(job: Obj, run: Obj) -> str | None:
    """Why the Job's group-nodes annotation (metadata: anyone may edit it) no longer names the nodes its run was made on
    (the run's spec, which nobody may change), or None. Blame reads the annotation: an edited one blamed a node that
    never ran, or cleared one that did."""
    spec = run.get("spec")
    target = spec.get("target") if isinstance(spec, dict) else None
    ran_on = target.get("nodeNames") if isinstance(target, dict) else None
    if not isinstance(ran_on, list) or ran_on == group_nodes(job):
        return None
    return (f"metadata.annotations[{ANNOTATION_GROUP_NODES}] of Job {job['metadata']['name']} was edited: it names "
            f"{_bounded(listed(group_nodes(job)) or 'no node')}, its run {run['metadata']['name']} runs on {_bounded(listed([str(n) for n in ran_on]))}; "
            "its result is not taken, no node blamed")


async def _create_run(ctx: Context, job: Obj) -> None:
    spec = dict(job["spec"]["workload"]["workloadRun"])
    spec["target"] = {**(spec.get("target") or {}), "nodeNames": group_nodes(job)}  # the template's taintSelectors stay
    spec["numNodes"] = len(group_nodes(job))
    name = run_name(job["metadata"]["name"])
    labels = dict(labels_of(job))
    run = {"apiVersion": job["apiVersion"], "kind": "WorkloadRun", "metadata": {"name": name, "labels": labels}, "spec": spec}
    try:
        await ctx.create_child(WORKLOADRUN, job, run)
    except NamespaceTerminating:  # never admitted again: the Job ends with its namespace's reason (not ReconcileError)
        message = (f"namespace {job['metadata'].get('namespace')} is being terminated: it admits no new object, so WorkloadRun "
                   f"{name} was not created; no node blamed")
        conditions = cond.with_phase(conditions_of(job), FAILED, NAMESPACE_TERMINATING, message, ctx.now())
        await ctx.transition(JOB, job, {"conditions": conditions, "completionTime": ctx.now()}, [("Warning", NAMESPACE_TERMINATING, message)])
        return
    await _mark_created(ctx, job, name)


async def _mark_created(ctx: Context, job: Obj, name: str) -> None:
    status = {
        "conditions": cond.with_phase(conditions_of(job), IN_PROGRESS, WORKLOAD_PENDING,
                                      f"WorkloadRun {name} created on {len(group_nodes(job))} node(s); pods not running yet", ctx.now()),
        "workloadRef": {"apiVersion": job["apiVersion"], "kind": "WorkloadRun", "name": name, "namespace": job["metadata"].get("namespace")},
    }
    # One write per state the Job really changes to (created/pending, running, finished) and one Event, for the
    # verdict: at 4,096 Jobs every extra status patch is 4,096 API writes.
    await ctx.patch_status(JOB, job, status)


async def _node_gone(ctx: Context, job: Obj, run: Obj, gone: list[str], *, running: bool) -> None:
    """Group nodes deleted from the cluster: before the run started they could not take its pods (SchedulingBlocked);
    while it ran, the run lost them (WorkloadFailed). Only they are blamed; the run is stopped."""
    # Each node's entry names itself only, and the Job's message a bounded few: a list of every node in every
    # entry grows the status with the square of the group (128 nodes outgrow the API server's 1.5 MiB).
    if running:
        reason, said = WORKLOAD_FAILED, "was deleted from the cluster while the run ran on it"
        message = f"Node {listed(gone)} {said}"
    else:
        reason, said, message = SCHEDULING_BLOCKED, "is not on the cluster", f"no Node {listed(gone)} on the cluster"
    failed = [{"name": n, "reason": reason, "message": f"Node {n} {said}"} for n in gone]
    # the log is evidence here, not the verdict: what was kept when the gone node's kubelet no longer answers
    await _finish(ctx, job, run, FAILED, NODE_NOT_FOUND, message, failed, log=await ctx.runner.logs(run, required=False) if running else None)


async def _pending(ctx: Context, job: Obj, run: Obj, state: WorkloadRunStatus) -> float | None:
    """A run whose workload is not made yet. Without a pendingSince its runner has not looked yet: the status written
    with the run says so, and the run's first change wakes this Job. With one, every try met a transient API error
    (controllers/workloadrun.py): bounded by timeoutPerJob, then the Job fails, blaming no node, and frees them."""
    if not state.get("pendingSince"):
        return None
    budget, _ = pending_bound(job.get("spec") or {}, state)
    waited = (ctx.clock.now() - parse_time(state["pendingSince"])).total_seconds()
    if waited >= budget and await _still_not_created(ctx, run):
        message = (f"not started after {format_duration(waited)} (timeoutPerJob {job['spec'].get('timeout') or format_duration(budget)}) "
                   f"on {listed(group_nodes(job))}: {_bounded(str(state.get('message') or 'its workload was never created'))}; "
                   "no node blamed")
        await _finish(ctx, job, run, FAILED, WORKLOAD_NOT_STARTED, message, [])
        return None
    await _pending_said(ctx, job, run, state, budget, per_job=True)
    return budget - waited


async def _still_not_created(ctx: Context, run: Obj) -> bool:
    """Whether the run's workload is still not made now: the runner tries once more (a server that answers again
    makes it, and the run goes on), then the run is read again. Its try gets its own copy of the run (the cache's is
    shared); an error of any kind, transient or not (a webhook's 422), leaves the run as it was: still not made."""
    try:
        await ctx.runner.reconcile_run(copy_json(run))
    except StoreError:
        pass
    try:
        fresh = await ctx.store.get(WORKLOADRUN, run["metadata"]["name"], run["metadata"].get("namespace"))
    except NotFound:
        return False
    return run_status(fresh).get("phase") in (None, "Pending")


async def _scheduling(ctx: Context, job: Obj, run: Obj, state: WorkloadRunStatus) -> float | None:
    # The stall grace is for placement; placed pods still creating their containers may be pulling a large image
    # (NeMo's is tens of GB) and get timeoutPerJob.
    grace, starting = pending_bound(job.get("spec") or {}, state)
    waited = (ctx.clock.now() - parse_time(state.get("pendingSince") or ctx.now())).total_seconds()
    blocked = state.get("blockedNodes")
    if waited >= grace and await _refreshed_still(ctx, run, "Scheduling"):
        if not blocked:  # no member's own Node refused its pod: no pods made, none placed, or they wait for a busy cluster
            bound = f" (timeoutPerJob {job['spec'].get('timeout') or format_duration(grace)})" if starting else ""  # unset: the 24h it is
            message = (f"not started after {format_duration(waited)}{bound} on {listed(group_nodes(job))}: "
                       f"{state.get('message') or 'no pods'}; no node blamed")
            await _finish(ctx, job, run, FAILED, WORKLOAD_NOT_STARTED, message, [])
            return None
        why = _bounded(state.get("message") or "no node could take them")
        message = f"pods unschedulable for {format_duration(waited)} on {listed(blocked)}: {why}"
        own = f"its pod was unschedulable for {format_duration(waited)}: {_bounded(why, NODE_MESSAGE_CHARS)}"
        failed = [{"name": name, "reason": SCHEDULING_BLOCKED, "message": own} for name in blocked]
        await _finish(ctx, job, run, FAILED, SCHEDULING_BLOCKED, message, failed)
        return None
    await _pending_said(ctx, job, run, state, grace, per_job=starting)
    return grace - waited


def _progress_seen(ctx: Context, job: Obj, run: Obj) -> Progress:
    """What the engine saw of this run's progress so far: in memory, else what the Job's status kept (an engine
    restarted or taking the Lease over), else nothing from now, its first look; the oldest are forgotten."""
    key = _run_key(run)
    if key not in ctx.progress:
        while len(ctx.progress) >= MAX_WATCHED_RUNS:
            ctx.progress.pop(next(iter(ctx.progress)))
        now = ctx.clock.now()
        ctx.progress[key] = _kept_progress(job_status(job).get("trainingProgress"), key, now) or Progress(None, now)
    return ctx.progress[key]


def _kept_progress(kept: object, key: str, now: datetime) -> Progress | None:
    """The Job status's `trainingProgress` when it is this run's (a retry's run starts again) and readable; never
    later than now would make it (a since in the future is a clock that ran ahead)."""
    if not isinstance(kept, Mapping) or kept.get("runUid") != key:
        return None
    mark = kept.get("mark")
    try:
        since = parse_time(kept.get("since"))
    except ValueError:
        return None
    return Progress(mark if isinstance(mark, str) else None, min(since, now))


def _run_key(run: Obj) -> str:
    return str(run["metadata"].get("uid") or run["metadata"]["name"])


def pending_bound(spec: Mapping[str, Any], state: Mapping[str, Any]) -> tuple[float, bool]:
    """How long a Job (its `spec`) waits for its run's pods, and whether that bound is timeoutPerJob: placed pods
    still starting (pulling a large image, or queued: AWAITING_START) get it; unplaced ones the scheduling grace."""
    if state.get("reason") in AWAITING_START or state.get("phase") == "Pending":  # Pending: no workload made yet
        return parse_duration(spec.get("timeout") or "24h"), True
    if state.get("reason") in NOT_RECONCILED:  # a batch Job, TrainJob or JobSet its controller never took up: it fails at this bound (runner)
        return NO_JOB_CONTROLLER_SECONDS, False
    grace = spec.get("schedulingStallGraceSeconds", 300)
    return (float(grace) if isinstance(grace, (int, float)) and not isinstance(grace, bool) else 300.0), False


def pending_message(said: str, grace: float, *, per_job: bool = False, waited: float | None = None) -> str:
    """Why a run's pods do not run, as its runner says it, and how long the Job waits for them (`pending_bound`); with
    `waited` (how long they have waited so far), the time left first: "it fails after 5m00s of this" read at 4m30s
    said the whole bound as if the wait had just begun."""
    return f"{said}; {_fails(grace, per_job, waited)}"


def _fails(grace: float, per_job: bool, waited: float | None = None) -> str:
    total = f"after {format_duration(grace)}{' (timeoutPerJob)' if per_job else ''} of this"
    if waited is None:
        return f"it fails {total}"
    left = grace - max(waited, 0.0)
    return f"it fails {f'in {format_duration(left)}' if left >= 1 else 'now'}, {total}"


def pending_left(message: str, grace: float, *, per_job: bool, waited: float) -> str:
    """A message `pending_message` made (as the engine wrote it on the Job, without the time left) said `waited`
    seconds into the wait: the time left in place of the bound alone; any other message as it is."""
    tail = f"; {_fails(grace, per_job)}"
    return f"{message.removesuffix(tail)}; {_fails(grace, per_job, waited)}" if message.endswith(tail) else message


async def _pending_said(ctx: Context, job: Obj, run: Obj, state: WorkloadRunStatus, grace: float, *, per_job: bool) -> None:
    """The Job says why its pods do not run yet, as the runner tells it (no pods made: which controller is missing;
    the nodes a scheduler cannot use) and when it fails, and how its run is carried out (the batch fallback, the
    simulated fleet): the console and a report read the Job, not the run. Written when that changes only."""
    said = state.get("message")
    if not said:
        return
    message = pending_message(str(said), grace, per_job=per_job)
    carried = cond.carried(conditions_of(job), cond.from_run(conditions_of(run)), ctx.now())
    conditions = cond.with_phase(carried, IN_PROGRESS, WORKLOAD_PENDING, message, ctx.now())
    if conditions != conditions_of(job):
        await ctx.patch_status(JOB, job, {"conditions": conditions})


def _bounded(text: str, most: int = MESSAGE_CHARS) -> str:
    """A runner's message at most `most` characters long (a scheduler's may name every node it tried)."""
    return text if len(text) <= most else f"{text[:most - 3]}..."


async def _running(ctx: Context, job: Obj, run: Obj, state: WorkloadRunStatus) -> float | None:
    started = state.get("startTime") or job_status(job).get("workloadStartTime") or ctx.now()
    budget = parse_duration(job["spec"].get("timeout") or "24h")
    elapsed = (ctx.clock.now() - parse_time(started)).total_seconds()
    if elapsed >= budget and await _refreshed_still(ctx, run, "Running"):
        message = f"no result within timeoutPerJob {job['spec'].get('timeout')} (ran {format_duration(elapsed)})"
        failed = [{"name": name, "reason": TIMEOUT, "message": message} for name in group_nodes(job)]
        # The log is evidence after the verdict: not required, or a hung node's kubelet that no longer answers (the API
        # server's 500 on pods/log) held the timeout, and the group's GPUs, READ_PATIENCE_SECONDS past timeoutPerJob.
        await _finish(ctx, job, run, FAILED, "JobTimedOut", message, failed, log=await ctx.runner.logs(run, required=False))
        return None
    look = budget - elapsed
    if multiplier := job["spec"].get("stallMultiplier"):
        seen = _progress_seen(ctx, job, run)
        lines = await ctx.runner.logs(run, required=True)  # the stall verdict is the log's: never judged from an outage's
        found = standing(lines, ctx.clock.now(), seen, multiplier=int(multiplier),
                         startup_seconds=float(job["spec"].get("startupStallTimeoutSeconds", STARTUP_STALL_SECONDS)))
        if found.stalled and await _refreshed_still(ctx, run, "Running"):
            # As NVCRE: the group's run stopped making progress, and the log names no node: every group node.
            failed = [{"name": name, "reason": WORKLOAD_FAILED, "message": found.stalled} for name in group_nodes(job)]
            await _finish(ctx, job, run, FAILED, WORKLOAD_STALLED, found.stalled, failed, log=lines)
            return None
        look = min(look, found.look_again)
        # written when it changes: once a step is logged, at most one patch a look
        kept = {"runUid": _run_key(run), "mark": seen.mark, "since": format_time(seen.since)}
        extra: Obj = {"workloadStartTime": started, "trainingProgress": kept}
    else:
        extra = {"workloadStartTime": started}
    await _progress(ctx, job, "WorkloadRunning", f"running since {started} (timeout {job['spec'].get('timeout')})", extra)
    return look


async def _failed(ctx: Context, job: Obj, run: Obj, state: WorkloadRunStatus) -> float | None:
    reason = state.get("reason") or ""
    if reason in NEVER_RAN or reason == WORKLOAD_NOT_STARTED:  # the latter: no Job controller made its pods (the runner)
        message = f"{state.get('message') or 'the workload was not created'}; no node blamed"
        await _finish(ctx, job, run, FAILED, reason, message, [])
        return None
    if reason == POD_DISRUPTED:  # a pod Kubernetes took from the run (a NoExecute taint, a drain): no evidence on a node
        message = _bounded(f"{state.get('message') or 'a pod of the run was deleted mid-run'}; no node blamed")
        await _finish(ctx, job, run, FAILED, POD_DISRUPTED, message, [], log=await ctx.runner.logs(run, required=False))  # evidence only
        return None
    if reason == NODE_NOT_FOUND:
        message = _bounded(state.get("message") or "a group node is gone from the cluster")
        gone = state.get("blockedNodes") or group_nodes(job)
        # A node gone from the cluster could not take its pod: SchedulingBlocked, one of the CRD's node reasons.
        failed = [{"name": n, "reason": SCHEDULING_BLOCKED, "message": f"Node {n} is not on the cluster"} for n in gone]
        await _finish(ctx, job, run, FAILED, NODE_NOT_FOUND, message, failed)
        return None
    lines = await ctx.runner.logs(run, required=True)  # whom the failure blames is read in it
    detail = measure(_parser(job), lines)
    # The node at fault: where the output names one, else where the runner saw the pod fail (OOMKilled,
    # evicted, node lost: the Kubernetes runner's failedNode), else the whole group. A failure the measurements
    # themselves show (wrong elements, a NaN loss) is the group's: a NCCL warning the run went on past names no culprit.
    shown = detail.failure is not None and detail.failure.reason not in UNMEASURED_REASONS
    named = None if shown else node_at_fault(lines, group_nodes(job))
    culprit = named.name if named else state.get("failedNode")
    exited = state.get("message") or (f"workload exited with code {state['exitCode']}" if state.get("exitCode") is not None
                                      else "the workload failed")
    # What the output says went wrong first (the parser's reading, else the line that named the node): the pod's
    # status says only that a container exited non-zero.
    why = detail.failure.message if detail.failure else named.evidence if named else None
    message = f"{why}; {exited}" if why else exited
    service = None if culprit else service_at_fault(lines)
    if service:  # a cluster service failed, not these nodes: the Job fails, no node is blamed
        await _finish(ctx, job, run, FAILED, SERVICE_UNAVAILABLE, f"{service}; no node blamed", [], log=lines, measured=detail)
        return None
    blamed = [culprit] if culprit else group_nodes(job)
    failed = [{"name": name, "reason": WORKLOAD_FAILED, "message": message} for name in blamed]
    await _finish(ctx, job, run, FAILED, WORKLOAD_FAILED, message, failed, log=lines, measured=detail)
    return None


async def _succeeded(ctx: Context, job: Obj, run: Obj, state: WorkloadRunStatus) -> float | None:
    lines = await ctx.runner.logs(run, required=True)  # measured: never from what an outage let through
    await ctx.slice.breathe()  # making a full-scale run's output and reading it (8,500 lines at 1,024 nodes): two slices
    result = measure(_parser(job), lines, job_spec(job)["workload"]["workloadRun"].get("gpusPerNode"))
    nodes = group_nodes(job)
    if failure := result.finished_failure():
        # Output that stopped short convicts no node (a NCCL WARN at start-up may name one); output with nothing to
        # measure convicts the node it names failing (NCCL failed on it), else none: the command is at fault. A
        # failure the measurements show (wrong elements, a NaN loss) is the group's, whatever host warned on the way.
        named = failure.reason in UNMEASURED_REASONS and failure.reason != RUN_INCOMPLETE
        culprit = node_at_fault(lines, nodes) if named else None
        service = None if culprit else service_at_fault(lines)
        if service:
            await _finish(ctx, job, run, FAILED, SERVICE_UNAVAILABLE, f"{service}; no node blamed", [], log=lines, measured=result)
            return None
        if failure.reason in UNMEASURED_REASONS and culprit is None:
            await _finish(ctx, job, run, FAILED, failure.reason, f"{failure.message}; no node blamed", [], log=lines, measured=result)
            return None
        if culprit is not None:  # a node named: the run failed on it, a test of that node like any other
            failure = MeasureFailure(WORKLOAD_FAILED, f"{failure.message}; {culprit.evidence}")
        blamed = [culprit.name] if culprit else nodes
        failed: list[Obj] = [{"name": n, "reason": WORKLOAD_FAILED, "message": failure.message} for n in blamed]
        await _finish(ctx, job, run, FAILED, failure.reason, failure.message, failed, log=lines, measured=result)
        return None
    thresholds = job_spec(job).get("thresholds") or {}
    # "passed, 7 of 8 tests skipped" stays visible; remarks are the MEASUREMENT_REMARKS condition's (_finish)
    completed = "; ".join(("workload completed", *(note for note in result.notes if note not in result.remarks)))
    if not thresholds and result.unmeasured:
        # A whole run that measured nothing (training of warm-up steps only: an exit duration that soon) proves nothing
        # of these nodes, and no measurement is never a pass: it fails validation, no node blamed. (Thresholds on what
        # it did not measure fail below, the same way, naming them.)
        why = "; ".join(note for note in result.notes if note not in result.remarks)
        await _finish(ctx, job, run, SUCCEEDED, WORKLOAD_COMPLETED, completed, [], measured=result,
                      validation=(MEASUREMENT_UNAVAILABLE, f"{result.unmeasured}{f' ({why})' if why else ''}; no node blamed"),
                      validation_failed=True)
        return None
    if not thresholds:
        await _finish(ctx, job, run, SUCCEEDED, WORKLOAD_COMPLETED, completed, [], measured=result)
        return None
    evidence = evaluate_thresholds(compile_thresholds(thresholds), result.measurements)
    missed = violations(evidence)
    records = [item.to_dict() for item in evidence]
    if not missed:
        await _finish(ctx, job, run, SUCCEEDED, WORKLOAD_COMPLETED, completed, [], measured=result,
                      validation=(THRESHOLDS_MET, "All performance thresholds satisfied"), evidence=records)
        return None
    convicting = [item for item in missed if item.reason not in (INVALID_EXPRESSION, MEASUREMENT_UNAVAILABLE)]
    if not any(item.reason != INVALID_EXPRESSION for item in missed):
        # only thresholds that could not be evaluated: the expression is at fault, not these nodes
        message = f"{'; '.join(item.message for item in missed)}; no node blamed"
        await _finish(ctx, job, run, FAILED, INVALID_EXPRESSION, message, [], measured=result, evidence=records)
        return None
    if not convicting:
        # A metric the output does not hold (a run too short to time a step past warm-up) fails the check, and
        # convicts no node: the measurement is missing, not bad. The parser's notes say why (only warm-up steps).
        why = "; ".join(result.notes)
        message = f"{'; '.join(item.message for item in missed)}{f' ({why})' if why else ''}; no node blamed"
        await _finish(ctx, job, run, SUCCEEDED, WORKLOAD_COMPLETED, completed, [], measured=result,
                      validation=(MEASUREMENT_UNAVAILABLE, message), evidence=records, validation_failed=True)
        return None
    if result.partial:
        # A row the output garbled (another rank's line printed into it, an inf cell) is a size not measured: it may
        # have been the fastest. A miss over what was read convicts nobody; the Job fails saying so.
        message = f"{'; '.join(item.message for item in missed)}, over part of the output ({result.partial}); no node blamed"
        await _finish(ctx, job, run, SUCCEEDED, WORKLOAD_COMPLETED, completed, [], measured=result,
                      validation=(MEASUREMENT_UNAVAILABLE, message), evidence=records, validation_failed=True)
        return None
    first = convicting[0]
    reason = THRESHOLD_VIOLATED
    message = "; ".join(item.message for item in missed)
    # The evidence is the Job's (status.evidence), once, not a copy per node (judging.results.job_failures). The
    # nodes' message names only the thresholds they missed, not one that could not be evaluated.
    blamed_for = "; ".join(item.message for item in convicting)
    failed = [{"name": n, "reason": THRESHOLD_VIOLATION, "message": blamed_for} for n in nodes]
    # The log the value was read from is named (failureLog), as a crashed run's is: the pod, and its tail (the table
    # and its average) for when the pods are gone.
    await _finish(ctx, job, run, SUCCEEDED, WORKLOAD_COMPLETED, completed, failed, measured=result,
                  validation=(reason, message), evidence=records, validation_failed=True, log=lines)
    return None


async def _refreshed_still(ctx: Context, run: Obj, phase: str) -> bool:
    """Whether the run is really still in `phase` now: let the runner bring it up to date first, so a run
    that finished in time is never blamed because the engine looked late (a slow sweep, a restart)."""
    await ctx.runner.reconcile_run(run)
    try:
        fresh = await ctx.store.get(WORKLOADRUN, run["metadata"]["name"], run["metadata"].get("namespace"))
    except NotFound:
        return False
    return run_status(fresh).get("phase") == phase


_PHASES = {"Pending": _pending, "Scheduling": _scheduling, "Running": _running, FAILED: _failed, SUCCEEDED: _succeeded}


async def _progress(ctx: Context, job: Obj, reason: str, message: str, extra: Obj | None = None) -> None:
    conditions = cond.with_phase(conditions_of(job), IN_PROGRESS, reason, message, ctx.now())
    await ctx.patch_status(JOB, job, {"conditions": conditions, **(extra or {})})


def _kept_tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text`, from a line's start: a line cut at its front read as a line of its own
    (`33       0  3625.08 ...`, a table row's end, under "the last 10 lines the engine kept"). A last line longer
    than `limit` is kept cut: some of it is better than none."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    if text[-limit - 1] == "\n" or "\n" not in cut:
        return cut
    return cut.split("\n", 1)[1]


async def _finish(
    ctx: Context, job: Obj, run: Obj, phase: str, reason: str, message: str, failed: list[Obj], *,
    hardware: bool = False, log: list[str] | None = None, measured: Measured | None = None,
    validation: tuple[str, str] | None = None, evidence: list[Obj] | None = None, validation_failed: bool = False,
    started: str | None = None,
) -> None:
    now = ctx.now()
    conditions = cond.with_phase(conditions_of(job), phase, reason, message, now)
    if hardware:
        conditions = cond.with_condition(conditions, HARDWARE_FAILED, True, reason, message, now)
    if validation:
        conditions = cond.with_condition(conditions, VALIDATION_FAILED, validation_failed, validation[0], validation[1], now)
    # how the run was carried out (batch/v1 instead of Kubeflow Trainer, the simulated fleet) and the notes on its
    # result (its fabric not rendered): the report says so, the verdict above is the same
    conditions = cond.carried(conditions, cond.from_run(conditions_of(run)), now)
    if measured is not None and measured.remarks:  # what the output says of its measurement (Socket), passed or not
        conditions = cond.with_condition(conditions, MEASUREMENT_REMARKS, True, MEASUREMENT_REMARKS, "; ".join(measured.remarks), now)
    status: Obj = {"conditions": conditions, "failedNodes": sorted(failed, key=lambda f: (f["name"], f["reason"])) or None,
                   "completionTime": _ended(run, now)}
    if measured is not None and measured.measurements:
        status["measurements"] = measured.measurements
    if evidence:
        status["evidence"] = evidence
    if started:
        status["workloadStartTime"] = started
    if log is not None and (phase == FAILED or validation_failed):
        state = run_status(run)
        # A value that missed a threshold keeps a shorter tail (its table's last rows and average: the value is in
        # the measurements): a full-scale Job of thousands of nodes stays within the API server's object size.
        tail = _kept_tail("\n".join(log[-TAIL_LINES:]), 4096 if phase == FAILED else THRESHOLD_TAIL_CHARS)
        # logRef: the pod whose log this is (the Kubernetes runner names it); the simulator's launcher otherwise.
        pod = state.get("logRef") or f"{run['metadata']['name']}-launcher"
        # The node at fault as the runner saw it, else the one node blamed; a group blamed whole (a timeout, a stall, a
        # value below threshold) names none: its first node was named, read as the culprit the evidence did not convict.
        node = (state.get("failedNode") if phase == FAILED else None) or (failed[0]["name"] if len(failed) == 1 else None)
        why = reason if phase == FAILED or validation is None else validation[0]  # ThresholdViolated, not WorkloadCompleted
        status["failureLog"] = {"podName": pod, "nodeName": node, "reason": why, "tail": tail}
        if state.get("exitCode") is not None:  # a run whose container never exited has none: left out, never null
            status["failureLog"]["exitCode"] = state["exitCode"]
    ctx.progress.pop(_run_key(run), None)
    warning = phase == FAILED or validation_failed
    await ctx.transition(JOB, job, status, [("Warning" if warning else "Normal", validation[0] if validation and validation_failed else reason, message)])
    if phase == FAILED and run_status(run).get("phase") not in (SUCCEEDED, FAILED):
        await ctx.runner.stop(run)  # the engine's sweep also stops runs of failed Jobs, should this be cut short


def _ended(run: Obj, now: str) -> str:
    """When the Job's run ended as its runner saw it (its pods' finish), else now: an engine that was down for
    minutes would otherwise lengthen the run, its diagnose round and its node-minutes by as much. Never later than
    now (a node's clock ahead of ours)."""
    state = run_status(run)
    if state.get("phase") not in (SUCCEEDED, FAILED):
        return now
    try:
        return format_time(min(parse_time(state.get("completionTime")), parse_time(now)))
    except ValueError:  # no time, or one that is not RFC 3339
        return now


def _parser(job: Obj) -> str:
    return (job_spec(job)["workload"]["workloadRun"].get("measurement") or {}).get("parser") or "none"


def _health_expression(job: Obj) -> str:
    return ((job_spec(job).get("nodeHealthMonitor") or {}).get("cel") or {}).get("expression") or DEFAULT_NODE_HEALTH


async def _unhealthy(ctx: Context, job: Obj, world: World) -> list[str]:
    """Group members the node health CEL flags (only the group's own Nodes are looked up and evaluated), node by node
    in the engine's slices of the event loop: CEL over a whole Node takes about 0.4 ms, 1,024 of them 0.3-0.5 s."""
    nodes = [node for name in group_nodes(job) if (node := world.node(name)) is not None]
    check = compile_node_health(_health_expression(job))
    verdicts = await ctx.slice.map(partial(is_flagged, check), nodes)
    return flagged_nodes(check, [node for node, flagged in zip(nodes, verdicts, strict=True) if flagged])  # remembered: not evaluated again


__all__ = ["reconcile_job", "group_nodes", "job_failed", "is_done"]
