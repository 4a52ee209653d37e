"""Workflow reconciler: discover and partition nodes once, run groups as Jobs (never two groups on one
node at once, at most maxConcurrent), repeat for each iteration, then write the verdict and the
NVCRE result ConfigMaps. testScale diagnose (and onFailure: diagnose) hands the rounds to the pure core in engine/diagnose/."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, cast

from pydantic import ValidationError

from nvcre_tui.engine import diagnose
from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.api.bodies import group_nodes, job_status, job_template_spec, labels_of, orchestration_of, workflow_status
from nvcre_tui.engine.api.nodes import node_labels
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.api.vocabulary import (ANNOTATION_FITTED_SHARE, ANNOTATION_GROUP_NODES, FAILED, HARDWARE_FAILED, HARDWARE_FAILURE_DETECTED, IN_PROGRESS, LABEL_GROUP,
                                             LABEL_ITERATION, LABEL_WORKFLOW, NAMESPACE_TERMINATING, NODE_BUSY, NODES_UNAVAILABLE, REFUSED, SUCCEEDED, VALIDATION_FAILED, WAITING_FOR_NODES,
                                             WORKLOAD_FAILED, WORKLOAD_NOT_STARTED, group_nodes_value)
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.busy import asked_of, busy_members, record_busy
from nvcre_tui.engine.controllers.context import DISOWNED, Context, World
from nvcre_tui.engine.controllers.disowned import end_disowned_job
from nvcre_tui.engine.controllers.foreign import as_nvcre_reads_it
from nvcre_tui.engine.controllers.iterations import (TIMED_OUT_EVERYWHERE, blamed_members, blamed_nodes, timed_out_said, current_groups, diagnose_convictions, finished_iterations,
                                                     group_failures, history_record, iterated_name, nodes_by_group, settled_groups, stored_orchestration)
from nvcre_tui.engine.controllers.job import THRESHOLDS_MET, is_done, job_failed
from nvcre_tui.engine.controllers.unavailable import cordoned_before_start, cordoned_now, exclude, excluded_cordoned
from nvcre_tui.engine.judging.blame import blamed_together
from nvcre_tui.engine.names import job_name
from nvcre_tui.engine.judging.results import failed_nodes_configmap, job_failures, result_configmap_names, succeeded_nodes_configmap, within_room
from nvcre_tui.engine.judging.fabric_fault import fabric_wide, fault_message
from nvcre_tui.engine.judging.thresholds import THRESHOLD_VIOLATED, diagnosis_values
from nvcre_tui.engine.judging.untested import JOB_DELETED, JOB_DISOWNED, UNBLAMED_REASONS, tested_nothing
from nvcre_tui.engine.planning.discovery import LEFT_TARGET, NODE_WAIT, discover, excluded_text, leave_out_busy, unavailable_said, unmatched_reason
from nvcre_tui.engine.planning.fitting import fitted_shares
from nvcre_tui.engine.planning.grouping import Group, PartitionError
from nvcre_tui.engine.planning.partition import partition, topology_key
from nvcre_tui.engine.planning.platform import PlatformError
from nvcre_tui.engine.planning.render import OBJECT_HEADROOM, OBJECT_LIMIT
from nvcre_tui.engine.errors import BadValue
from nvcre_tui.engine.store.errors import NamespaceTerminating, describe
from nvcre_tui.engine.store.protocol import CONFIGMAP, JOB, WORKFLOW
from nvcre_tui.engine.units import count

# How often a Workflow none of whose nodes is available looks again while it waits (discovery.NODE_WAIT): others' pods
# ending wake no Workflow (the engine watches nvcre's pods only), so it reads the pods bound to its nodes again that often
# (one list, or one a node up to 8: ten looks in the five minutes); a Node change (uncordoned) wakes it at once.
NODE_LOOK_SECONDS = 30.0
NOTE_ROOM = 160  # bytes kept for saying, in the Workflow's condition, that its verdicts were stored shortened

Obj = dict[str, Any]


async def reconcile_workflow(ctx: Context, wf: Obj, world: World) -> float | None:
    """Advance one Workflow; returns seconds until it needs another look."""
    if cond.is_terminal(wf):
        return None
    orch: Obj = dict(orchestration_of(wf))
    if not orch.get("groups"):
        return await _partition(ctx, wf, world)
    jobs = {job["metadata"]["name"]: job for job in world.children_of(wf, "Job")}
    groups: list[Obj] = [dict(group) for group in current_groups(wf)]
    diagnosing = orch.get("diagnose") is not None
    lost = next((g["name"] for g in groups if not g["nodes"]), None) if diagnosing else None
    if lost is not None:  # a Job on no nodes would test nothing; the engine fails the Workflow with this
        raise diagnose.DiagnoseError(f"diagnose state: group {lost} is not in its plan (status.orchestration.diagnose is damaged)")
    for group in groups:
        job = jobs.get(group.get("jobRef") or "")
        if group["phase"] == "Running" and job is None and (lost := await ctx.lost_child(JOB, group["jobRef"], wf)) is not None:
            if lost == DISOWNED:
                message = (f"Job {group['jobRef']}'s metadata.ownerReferences no longer name Workflow {wf['metadata']['name']} as "
                           "its controller (edited): its run is stopped, its result not taken; no node blamed")
                # the garbage collector no longer reaches it: its run, and the group's GPUs, are given back here
                await end_disowned_job(ctx, world, group["jobRef"], wf["metadata"].get("namespace"), JOB_DISOWNED, message)
                group.update(phase=FAILED, completionTime=ctx.now(), reason=JOB_DISOWNED, message=message)
            else:
                group.update(phase=FAILED, completionTime=ctx.now(), reason=JOB_DELETED,
                             message=f"Job {group['jobRef']} was deleted before the engine saw it finish; no node blamed")
            continue
        if group["phase"] == "Running" and job is not None and is_done(job):
            done = job_status(job)
            group.update(
                phase=FAILED if job_failed(job) else SUCCEEDED, completionTime=done.get("completionTime"),
                reason=_job_reason(job), measurements=done.get("measurements"),
            )
            if group["reason"] in UNBLAMED_REASONS:  # why no node is blamed, for the diagnosis that stops on it
                group["message"] = _job_message(job)
            group.update(_blame(job, group["nodes"]))
            # its pods never placed: members others' pods took after planning are named and excluded, the group untested
            if group["reason"] == WORKLOAD_NOT_STARTED and not diagnosing and (busy := await busy_members(ctx, wf, group["nodes"], world)):
                record_busy(orch, group, busy)
    orch["groups"] = groups
    if all(group["phase"] in (SUCCEEDED, FAILED) for group in groups):
        return await _round_complete(ctx, wf, orch, jobs, world)
    ended = await _launch(ctx, wf, orch, jobs)
    await ctx.patch_status(WORKFLOW, wf, {"orchestration": stored_orchestration(orch)})
    # none launched: its end next; or one launched on a Job that ended already (refused), whose change woke nobody
    return 0.0 if ended or all(group["phase"] in (SUCCEEDED, FAILED) for group in groups) else None


def _untested(groups: Sequence[Mapping[str, Any]]) -> list[str]:
    """The failed groups that tested no node (deleted, never created, a cluster service down), one line each."""
    return [f"group {g['name']} was not tested ({g.get('reason')}: {g.get('message') or 'no message'})"
            for g in groups if tested_nothing(g)]


def _blame(job: Obj, nodes: Sequence[str]) -> Obj:
    """Whom a finished Job blamed, as its group records it (GroupOutcome.blamedFor, blamedMembers). A Job blames
    only its group's nodes (controllers/job.py), with one reason."""
    failed = job_status(job).get("failedNodes") or []
    if not failed:
        return {}
    position = {name: index for index, name in enumerate(nodes)}
    members = sorted({position[f["name"]] for f in failed if f["name"] in position})
    return {"blamedFor": failed[0]["reason"], **({} if len(members) == len(nodes) else {"blamedMembers": members})}


def _job_message(job: Obj) -> str:
    return str((cond.find(job_status(job).get("conditions"), cond.phase(job) or "") or {}).get("message") or "")


def _job_reason(job: Obj) -> str:
    for type_ in (HARDWARE_FAILED, VALIDATION_FAILED):
        found = cond.find(job_status(job).get("conditions"), type_)
        if found is not None and found.get("status") == "True":
            return str(found.get("reason") or "")
    return (cond.find(job_status(job).get("conditions"), cond.phase(job) or "") or {}).get("reason", "")


async def _fail(ctx: Context, wf: Obj, reason: str, message: str, extra: Obj | None = None) -> None:
    conditions = cond.with_phase(workflow_status(wf).get("conditions"), FAILED, reason, message, ctx.now())
    await ctx.transition(WORKFLOW, wf, {"conditions": conditions, "completionTime": ctx.now(), **(extra or {})}, [("Warning", reason, message)])


def _left_target(wf: Obj, world: World, found: Sequence[str]) -> list[Obj]:
    """Nodes a sibling category (the same certification and target) ran on that this discovery no longer finds: their
    labels or taints changed (GPU feature discovery sets nvidia.com/gpu.present=false when a GPU falls off the bus),
    or the Node is gone. Excluded and named, so the certification is INCOMPLETE rather than pass them untested."""
    owner = next((ref for ref in wf["metadata"].get("ownerReferences") or []
                  if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") == "Certification"), None)
    if owner is None or not owner.get("uid"):
        return []
    target = wf["spec"]["orchestration"].get("target")
    siblings = [other for other in world.children_of({"metadata": {"uid": owner["uid"]}}, "Workflow")
                if other["metadata"]["name"] != wf["metadata"]["name"] and other["spec"]["orchestration"].get("target") == target]
    here = set(found)
    ran = {node for other in siblings for nodes in nodes_by_group(other).values() for node in nodes}
    left = []
    for name in sorted(ran - here):
        why = "its Node is gone" if world.node(name) is None else "it no longer matches the target (its labels or taints changed)"
        left.append({"name": name, "reason": LEFT_TARGET, "message": f"ran in another category of this certification; {why}"})
    return left


def _target(wf: Obj) -> TargetSpec:
    """The Workflow's target. One edited by hand into a shape no target has is refused in one line naming the Workflow
    and the field (the engine fails the Workflow with it, ReconcileError): pydantic's error read "a bug in nvcre" with
    its several lines of text."""
    try:
        return TargetSpec.model_validate(wf["spec"]["orchestration"].get("target") or {})
    except ValidationError as error:
        where = describe(WORKFLOW.kind, wf["metadata"]["name"], wf["metadata"].get("namespace"))
        problems = [said.removeprefix(f"{where}: ") for said in validation_messages(error, where, ("spec", "orchestration", "target"))]
        raise BadValue(f"{where}: {'; '.join(problems[:3])}") from None


def _waited_for_nodes(ctx: Context, wf: Obj) -> timedelta:
    """How long the Workflow has waited for a node to test (its InProgress condition WaitingForNodes since its
    lastTransitionTime, on the engine's clock: kept in its status, so an engine started again goes on counting); zero
    before it began; the whole wait where that time does not read (edited by hand: bounded, never a wait for ever)."""
    waiting = cond.find(workflow_status(wf).get("conditions"), IN_PROGRESS)
    if waiting is None or waiting.get("status") != "True" or waiting.get("reason") != WAITING_FOR_NODES:
        return timedelta(0)
    try:
        return max(ctx.clock.now() - parse_time(waiting.get("lastTransitionTime")), timedelta(0))
    except ValueError:
        return NODE_WAIT


async def _partition(ctx: Context, wf: Obj, world: World) -> float | None:
    """Discover and partition the Workflow's nodes, recording its groups; seconds until it needs another look."""
    spec = wf["spec"]
    orch_spec, run = spec["orchestration"], spec["jobTemplate"]["spec"]["workload"]["workloadRun"]
    target = _target(wf)
    gpus = int(run.get("gpusPerNode") or 1)
    asked = asked_of(wf)  # as rendered: cpu and memory fitted to the nodes
    tolerations = [item for item in run.get("tolerations") or [] if isinstance(item, dict)]
    shares = fitted_shares((wf["metadata"].get("annotations") or {}).get(ANNOTATION_FITTED_SHARE))  # render's rule, render's share
    try:
        found = discover(world.nodes, target, lambda platform, arch: gpus, lambda platform, arch: asked, lambda platform, arch: tolerations, shares)
    except PlatformError as error:
        await _fail(ctx, wf, "HeterogeneousPlatform", str(error))
        return 0.0
    # Others' pods holding a node's GPUs (a shared cluster) are read as the category starts, the moment its pods would
    # meet them: a busy node is left out and named (NodeBusy), not waited for until its group fails untested.
    found = leave_out_busy(found, asked, await ctx.node_occupants(wf, found.names))
    left = _left_target(wf, world, [*found.names, *(item.name for item in found.excluded)])
    excluded = sorted([item.to_wire() for item in found.excluded] + left, key=lambda e: e["name"])
    reason = "; ".join(filter(None, (found.exclusion_reason(), excluded_text(len(left), LEFT_TARGET) if left else ""))) or None
    base: Obj = {"totalNodes": len(found.nodes), "detectedPlatform": found.platform, "detectedGPUArchitecture": found.architecture,
            "excludedNodes": excluded or None, "exclusionReason": reason, "currentIteration": 1, "completedIterations": 0}
    if not found.nodes:
        why = found.exclusion_reason() if excluded else unmatched_reason(world.nodes, target)
        if found.none_available():  # every node busy (or cordoned, not Ready): nothing to test, none at fault
            # the rule a category planned on cordoned nodes waits by (discovery.NODE_WAIT): busy GPUs are often freed
            # minutes later; then NodesUnavailable, in the same words
            if (waited := _waited_for_nodes(ctx, wf)) < NODE_WAIT:
                message = unavailable_said(found, waiting=True)
                conditions = cond.with_phase(workflow_status(wf).get("conditions"), IN_PROGRESS, WAITING_FOR_NODES, message, ctx.now())
                first = not waited and cond.find(workflow_status(wf).get("conditions"), IN_PROGRESS) is None
                await ctx.transition(WORKFLOW, wf, {"conditions": conditions}, [("Normal", WAITING_FOR_NODES, message)] if first else [])
                return min(NODE_LOOK_SECONDS, (NODE_WAIT - waited).total_seconds())
            await _fail(ctx, wf, NODES_UNAVAILABLE, unavailable_said(found, waiting=False), {"orchestration": base})
            return 0.0
        await _fail(ctx, wf, "NodeDiscoveryError", f"no eligible nodes match the target ({why})", {"orchestration": base})
        return 0.0
    try:
        plan = partition(found.nodes, orch_spec)
    except PartitionError as error:
        await _fail(ctx, wf, "PartitionError", str(error), {"orchestration": base})
        return 0.0
    groups, npj = plan.groups, plan.nodes_per_job
    if plan.diagnose is not None:
        base["diagnose"] = plan.diagnose
    orch = {**base, "nodesPerJob": npj, "totalGroups": len(groups), "groups": [_group_status(g) for g in groups]}
    message = f"Discovered {count(len(found.nodes), 'node')}, partitioned into {count(len(groups), 'group')} ({npj} nodes/job)"
    conditions = cond.with_phase(None, IN_PROGRESS, "GroupsPartitioned", message, ctx.now())
    events = [("Normal", "GroupsPartitioned", message)]
    if excluded:
        events.append(("Warning", "NodesExcluded", f"{len(excluded)} nodes excluded: {found.exclusion_reason()}"))
    if plan.replanned:
        events.append(("Warning", "PlanChanged", f"partitioned again, not as planned at creation: {plan.replanned}"))
    await ctx.transition(WORKFLOW, wf, {"conditions": conditions, "orchestration": stored_orchestration(orch), "startTime": ctx.now()}, events)
    return 0.0


def _group_status(group: Group) -> Obj:
    status: Obj = {"name": group.name, "nodes": list(group.nodes), "phase": "Pending"}  # overflow and retries only when set
    if group.overflow:
        status["overflow"] = True
    if group.domains:
        status["domains"] = list(group.domains)
    return status


def _job_name(wf: Obj, orch: Obj, group: Obj) -> str:
    single = orch.get("totalGroups") == 1 and wf["spec"]["orchestration"].get("iterations", 1) == 1
    return job_name(wf["metadata"]["name"], group["name"], single=single, diagnose=orch.get("diagnose") is not None,
                    iteration=int(orch.get("currentIteration", 1)))


async def _launch(ctx: Context, wf: Obj, orch: Obj, jobs: Mapping[str, Obj]) -> bool:
    """Launch the Pending groups that may run now; whether one of them has a Job that ended already (one the engine
    refused before its group launched: created by another hand under the name it gives the group's Job)."""
    limit = int(wf["spec"]["orchestration"].get("execution", {}).get("maxConcurrent") or 0)
    running = [set(g["nodes"]) for g in orch["groups"] if g["phase"] == "Running"]
    iteration = str(orch.get("currentIteration", 1))
    ended = False
    for group in orch["groups"]:
        if group["phase"] != "Pending":
            continue
        if limit and len(running) >= limit:
            break
        if any(not busy.isdisjoint(group["nodes"]) for busy in running):
            continue
        name = _launched_name(wf, orch, group, jobs)
        template = wf["spec"]["jobTemplate"]
        labels = {**(labels_of(template)), LABEL_WORKFLOW: wf["metadata"]["name"], LABEL_GROUP: group["name"], LABEL_ITERATION: iteration}
        # The group's own size (an overflow or a clique's part differs from nodesPerJob): `kubectl get`'s Nodes column.
        run = {**template["spec"]["workload"]["workloadRun"], "numNodes": len(group["nodes"])}
        spec = {**template["spec"], "workload": {**template["spec"]["workload"], "workloadRun": run}}
        job = {"apiVersion": wf["apiVersion"], "kind": "Job", "spec": spec,
               "metadata": {"name": name, "labels": labels, "annotations": {ANNOTATION_GROUP_NODES: group_nodes_value(group["nodes"])}}}
        try:
            made_now = await ctx.create_child(JOB, wf, job)
        except NamespaceTerminating:  # it admits no new object: this round's Jobs are never made; the Workflow ends
            _not_launched(wf, orch, name, ctx.now())
            return ended
        ended = ended or is_done(as_nvcre_reads_it(JOB.kind, made_now))
        group.update(phase="Running", jobRef=name, startTime=ctx.now())
        running.append(set(group["nodes"]))
    return ended


def _launched_name(wf: Obj, orch: Obj, group: Obj, jobs: Mapping[str, Obj]) -> str:
    """The name of the group's Job: the one the engine gives it, unless a Job made for the group before its status said
    so (an engine stopped in between) stands under an older engine's name (a diagnose test's `<workflow>-<test>-iter-<n>`)
    on its nodes, which is adopted: a second Job on the same nodes would hold their GPUs against the first. Only one of
    the Workflow's own Jobs (`jobs`: those whose controller ownerReference names its uid), by its name, which nobody may
    change; never by its group and iteration labels, which anyone may edit: an earlier iteration's Job relabelled stood
    for the next one, never run. A Job under the engine's own name is the group's whatever it holds (create_child
    returns it): one another hand made is refused (controllers/foreign.py)."""
    name = _job_name(wf, orch, group)
    iteration = int(orch.get("currentIteration", 1))
    older = job_name(wf["metadata"]["name"], group["name"], single=False, diagnose=False, iteration=iteration)
    made = jobs.get(older) if older != name else None
    if made is not None and not made["metadata"].get("deletionTimestamp") and group_nodes(made) == list(group["nodes"]):
        return older
    return name


def _refused(groups: Sequence[Mapping[str, Any]]) -> str:
    """The failed groups whose Job the engine refused for another hand's writing (REFUSED: a Job planted under the name
    it gives the group's, or whose spec or status was edited), the first named with why: `1 group refused (group-2:
    SpecWrittenByAnother: Job default/x: its spec was written by kubectl-create, ...): nothing it ran is taken`; "" for none."""
    refused = [g for g in groups if g.get("reason") in REFUSED]
    if not refused:
        return ""
    first = refused[0]
    which = "" if len(refused) == 1 else "the first, "
    return (f"{count(len(refused), 'group')} refused ({which}{first.get('name')}: {first.get('reason')}: {first.get('message') or 'no message'}): "
            f"nothing {'it' if len(refused) == 1 else 'they'} ran is taken")


def _closing(groups: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first group whose Job its namespace refused (being terminated), or None."""
    return next((g for g in groups if g.get("phase") == FAILED and g.get("reason") == NAMESPACE_TERMINATING), None)


def _not_launched(wf: Obj, orch: Obj, refused: str, now: str) -> None:
    """The round's groups not launched yet failed, untested: the Workflow's namespace is being terminated (Job
    `refused` was refused, 403 NamespaceTerminating). Without it the Workflow failed as ReconcileError."""
    namespace = wf["metadata"].get("namespace")
    for group in orch["groups"]:
        if group["phase"] == "Pending":
            group.update(phase=FAILED, completionTime=now, reason=NAMESPACE_TERMINATING,
                         message=f"namespace {namespace} is being terminated: it admits no new object, so Job {refused} "
                                 "and the round's other Jobs not made yet were not created; no node blamed")


async def _round_complete(ctx: Context, wf: Obj, orch: Obj, jobs: dict[str, Obj], world: World) -> float | None:
    if orch.get("diagnose") is not None:
        return await _diagnose_round(ctx, wf, orch, jobs, world)
    iterations = int(wf["spec"]["orchestration"].get("iterations", 1))
    history = _record_finished(orch, orch.get("currentIteration", 1))
    orch.update(completedIterations=len(history))
    if _closing(orch["groups"]) is not None:  # its namespace admits no new Job: no further iteration, no diagnosis
        await _finalize(ctx, wf, orch, blamed_nodes(_with(wf, orch), jobs.values()), jobs, history)
        return None
    if len(history) >= iterations and (started := await _diagnose_failures(ctx, wf, orch, world)) is not None:
        if not started.complete:
            return 0.0
        await _diagnosis_done(ctx, wf, orch, started, jobs, history)  # the iterations' evidence alone decided it
        return None
    if len(history) < iterations:
        orch.update(currentIteration=len(history) + 1, groups=[
            {k: v for k, v in g.items() if k in ("name", "nodes", "domains", "overflow")} | {"phase": "Pending"} for g in orch["groups"]
        ])
        await ctx.transition(WORKFLOW, wf, {"orchestration": stored_orchestration(orch)},
                             [("Normal", "IterationCompleted", f"iteration {len(history)} of {iterations} completed")])
        return 0.0
    await _finalize(ctx, wf, orch, blamed_nodes(_with(wf, orch), jobs.values()), jobs, history)
    return None


async def _diagnose_failures(ctx: Context, wf: Obj, orch: Obj, world: World) -> diagnose.DiagnoseState | None:
    """onFailure: diagnose: the last iteration failed somewhere; narrow its failed groups down in this Workflow, over
    the cliques its Nodes are labelled with (a full-scale group spans several: its links are searched as testScale
    diagnose searches them). The diagnosis started (its first round launched unless already complete), or None."""
    spec = (wf["spec"]["orchestration"].get("onFailure") or {}).get("diagnose")
    if spec is None:
        return None
    untested = _untested(orch["groups"])
    if untested:  # no evidence about those nodes: narrowing the rest down would leave them out silently
        await ctx.transition(WORKFLOW, wf, {"orchestration": stored_orchestration(orch)},
                             [("Warning", "DiagnosisSkipped", f"onFailure diagnose not started: {untested[0]}")])
        return None
    limit = int((wf["spec"]["orchestration"].get("execution") or {}).get("maxConcurrent") or 0)
    groups = _every_iteration(wf, orch)
    orchestration = wf["spec"]["orchestration"]
    key = str(spec.get("topologyKey") or topology_key(orchestration))  # the Workflow's domains: cliques, or racks
    cliques = {name: node_labels(node).get(key) or "" for name in {n for g in groups for n in g["nodes"]}
               if (node := world.node(name)) is not None}
    state = diagnose.follow_up(groups, int(spec.get("minGroupSize") or 2), limit,
                               within_domains=spec.get("withinDomains") is True, cliques=cliques, reasons=_failure_reasons(groups),
                               culprits=_failure_culprits(groups), hardware=_hardware_flagged(groups))
    if state is None:
        return None
    orch.update(diagnose=state.to_dict())
    if state.complete:  # the iterations alone decided it: no round of its own
        return state
    wave = diagnose.plan_round(state)
    orch.update(groups=[_group_status(g) for g in wave], totalGroups=orch.get("totalGroups", 0) + len(wave))
    await ctx.transition(WORKFLOW, wf, {"orchestration": stored_orchestration(orch), "failedNodes": None},
                         [("Normal", "DiagnosisStarted", f"groups failed: diagnosing their nodes ({count(len(wave), 'group')} in the first round)")])
    return state


def _every_iteration(wf: Obj, orch: Obj) -> list[diagnose.GroupResult]:
    """What a diagnosis after the iterations starts from: every iteration's groups, not the last one's alone (a node
    that failed the first iteration and passed the second is evidence both ways). With several iterations each is
    named `<group>-iter-<n>`, as its Job; a group of an earlier iteration that tested no node is no evidence."""
    finished = finished_iterations(_with(wf, orch))
    if len(finished) <= 1:
        return list(orch["groups"])
    groups: list[diagnose.GroupResult] = []
    for record in finished:
        last = record is finished[-1]
        for group in record["groups"]:
            if not last and _untested([group]):
                continue
            groups.append(cast(diagnose.GroupResult, {**group, "name": iterated_name(group["name"], record["iteration"])}))
    return groups


def _failure_reasons(groups: Sequence[Mapping[str, object]]) -> dict[str, str]:
    """Each failed group's reason where its measured value is not why it failed (a crash, a timeout, a node that could
    not take its pod): a value above the threshold beside "failed" would read as the evidence (record_round's `reasons`)."""
    return {str(g["name"]): str(g["reason"]) for g in groups
            if g.get("phase") == FAILED and g.get("reason") and g.get("reason") != THRESHOLD_VIOLATED}


def _failure_culprits(groups: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each failed group's members its Job blamed where it blamed some, not all (a crash its log put on one node):
    record_round's `culprits`."""
    return {str(g["name"]): blamed_members(g, g["nodes"]) for g in groups if g.get("phase") == FAILED and g.get("blamedMembers")}


def _hardware_flagged(groups: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each group that failed HardwareFailureDetected with the members the node health check flagged (its Job blamed
    them alone): record_round's `hardware`, a conviction on its own, where a crash's named node is not."""
    return {str(g["name"]): blamed_members(g, g["nodes"]) for g in groups if g.get("phase") == FAILED and g.get("reason") == HARDWARE_FAILURE_DETECTED}


async def _diagnose_round(ctx: Context, wf: Obj, orch: Obj, jobs: dict[str, Obj], world: World) -> float | None:
    state = diagnose.DiagnoseState.from_dict(orch["diagnose"])
    not_run = cordoned_before_start(orch, jobs, world)  # no test: no verdict from it, its cordoned members left out
    untested = _untested(orch["groups"])
    if untested:  # a group that tested nothing is no evidence: stop with what is known rather than convict on it
        history = _record_finished(orch)
        stopped = f"in round {state.round}, {untested[0]}" + (f" (and {len(untested) - 1} more)" if len(untested) > 1 else "")
        await _finalize(ctx, wf, orch, diagnose_convictions(state, jobs, history, diagnosis_values(job_template_spec(wf).get("thresholds"))), jobs, history,
                        healthy=[n for n, v in state.verdicts().items() if v == "healthy"], stopped=stopped, confirmed=_confirmed(state))
        return None
    # cordoned now: in no test of the next round (one convicted already, a flag during its test, is no exclusion)
    convicted = {n for n, v in state.verdicts().items() if v in ("faulty", "intermittent")} | {n for ns in _hardware_flagged(orch["groups"]).values() for n in ns}
    exclude(orch, cordoned_now(set(state.domain_of) - excluded_cordoned(orch) - convicted, world), f"when round {state.round + 1} was planned")
    state = diagnose.record_round(state, {g["name"]: g["phase"] == SUCCEEDED for g in orch["groups"]}, diagnose.measured(orch["groups"]),
                                  _failure_reasons(orch["groups"]), _failure_culprits(orch["groups"]), _hardware_flagged(orch["groups"]),
                                  untested=not_run, unavailable=excluded_cordoned(orch))
    history = _record_finished(orch)
    orch.update(diagnose=state.to_dict())
    if not state.complete:
        groups = diagnose.plan_round(state)
        orch.update(groups=[_group_status(g) for g in groups], totalGroups=orch.get("totalGroups", 0) + len(groups))
        await ctx.patch_status(WORKFLOW, wf, {"orchestration": stored_orchestration(orch)})
        return 0.0
    await _diagnosis_done(ctx, wf, orch, state, jobs, history)
    return None


async def _diagnosis_done(ctx: Context, wf: Obj, orch: Obj, state: diagnose.DiagnoseState, jobs: dict[str, Obj], history: list[Obj]) -> None:
    """Finish the Workflow on a complete diagnosis: its verdicts, and what it left unresolved."""
    verdicts = state.verdicts()
    await _finalize(ctx, wf, orch, diagnose_convictions(state, jobs, history, diagnosis_values(job_template_spec(wf).get("thresholds"))), jobs, history,
                    healthy=[n for n, v in verdicts.items() if v == "healthy"], unresolved=_unresolved(state, wf), confirmed=_confirmed(state))


def _unresolved(state: diagnose.DiagnoseState, wf: Obj) -> list[str]:
    """diagnose.problems, a fabric-wide fault in the words every report and the console give it (judging.fabric_fault:
    what its tests measured against the threshold, and what to check), not the diagnosis's hedge."""
    found = diagnose.problems(state)
    fleet = [domain for domain, _ in state.domains if domain]
    wide = [note for note in state.infrastructure_faults if fabric_wide(note.cliques, fleet)]
    if not wide:
        return found
    readable, thresholds = diagnose.readable(state.to_dict()), job_template_spec(wf).get("thresholds")
    words = {f"infrastructure fault: {note.message}": f"infrastructure fault: {fault_message(note.to_dict(), readable, thresholds)}" for note in wide}
    return [words.get(problem, problem) for problem in found]


def _confirmed(state: diagnose.DiagnoseState) -> str:
    """What a diagnosis has convicted: "1 faulty node confirmed", "2 faulty nodes and 1 intermittent node confirmed"."""
    verdicts = list(state.verdicts().values())
    faulty, intermittent = verdicts.count("faulty"), verdicts.count("intermittent")
    parts = ([count(faulty, "faulty node")] if faulty or not intermittent else []) + ([count(intermittent, "intermittent node")] if intermittent else [])
    return " and ".join(parts) + " confirmed"


def _with(wf: Obj, orch: Obj) -> Obj:
    """The Workflow as it will be stored with `orch`."""
    return {**wf, "status": {**workflow_status(wf), "orchestration": stored_orchestration(orch)}}


def _record_finished(orch: Obj, number: int | None = None) -> list[Obj]:
    """iterationHistory with the finished iteration (or diagnose round: numbered after the last record) appended,
    stored in orch."""
    history = list(orch.get("iterationHistory") or [])
    history.append(history_record(len(history) + 1 if number is None else number, orch["groups"]))
    orch.update(iterationHistory=history)
    return history


def _room(wf: Obj, status: Obj) -> int:
    """Bytes left for a diagnosis's verdicts in its Workflow once `status` is written (OBJECT_HEADROOM stays free
    for what the API server adds, managedFields)."""
    written = {**wf, "status": {**workflow_status(wf), **status}}
    return OBJECT_LIMIT - OBJECT_HEADROOM - len(json.dumps(written, separators=(",", ":")))


def _blamed_only_together(recorded: Sequence[Mapping[str, Any]], jobs: Mapping[str, Obj]) -> set[str]:
    """Nodes every failed group blamed only with all its members (judging.blame.blamed_together): suspects, as the
    console and the report call them, whom no evidence convicts alone."""
    together: set[str] = set()
    alone: set[str] = set()
    for record in recorded:
        for group in record["groups"]:
            if group["phase"] != FAILED:
                continue
            blamed = group_failures(group, group["nodes"], jobs.get(str(group.get("jobRef"))))
            words: dict[str, bool] = {}  # per reason, the same for every failure of it (weighed per failure: O(n²))
            for failure in blamed:
                reason = str(failure.get("reason") or "")
                if reason not in words:
                    words[reason] = blamed_together(group["nodes"], blamed, reason)
                (together if words[reason] else alone).add(str(failure["name"]))
    return together - alone


async def _finalize(
    ctx: Context, wf: Obj, orch: Obj, failed: list[Obj], jobs: dict[str, Obj], history: list[Obj],
    healthy: list[str] | None = None, unresolved: list[str] | None = None, stopped: str | None = None, confirmed: str = "",
) -> None:
    """Write the result ConfigMaps and the final condition. `unresolved` (diagnose: inconclusive nodes,
    fabric faults) fails the Workflow without blaming nodes: an unresolved diagnosis is never a pass; nor is
    one `stopped` before its end (where and why)."""
    failed_configmap, succeeded_configmap = result_configmap_names(wf)
    failed_names = {f["name"] for f in failed}
    recorded = finished_iterations(_with(wf, orch))
    ran_ok = {n for record in recorded for g in record["groups"] if g["phase"] == SUCCEEDED for n in g["nodes"]}
    # A node also in a failed group of any iteration is not certified, blamed or not (its passes came before or beside
    # a failure nobody explained): the console and the history call it inconclusive, and so must this list.
    in_failed = {n for record in recorded for g in record["groups"] if g["phase"] == FAILED for n in g["nodes"]}
    # a node cordoned during a diagnosis (excluded Cordoned) is left out, as one cordoned before: never certified
    succeeded = sorted(set(healthy if healthy is not None else ran_ok - in_failed) - failed_names - excluded_cordoned(orch))
    try:
        await ctx.create_child(CONFIGMAP, wf, failed_nodes_configmap(failed_configmap, failed))
        await ctx.create_child(CONFIGMAP, wf, succeeded_nodes_configmap(succeeded_configmap, succeeded))
        unwritten = ""
    except NamespaceTerminating:  # it admits no new object: the Workflow still ends, with its own reason (not ReconcileError)
        unwritten = f"; its result ConfigMaps were not written: namespace {wf['metadata'].get('namespace')} is being terminated"
    failed_groups = [g for record in history for g in record["groups"] if g["phase"] == FAILED]
    failed_jobs = [jobs[g["jobRef"]] for g in failed_groups if g.get("jobRef") in jobs]
    validation = any(cond.is_true(job, VALIDATION_FAILED) for job in failed_jobs)
    now = ctx.now()
    conditions: Sequence[Mapping[str, Any]] | None = workflow_status(wf).get("conditions")
    diagnosing = orch.get("diagnose") is not None
    # A group recorded untested because others' pods took a member after planning (NODE_BUSY: controllers/busy.py) failed
    # no check: beside groups that passed the Workflow succeeds (its busy members excluded: INCOMPLETE); with none, it
    # tested nothing and fails NodesUnavailable (the certification FAILED, none blamed), as where every node was busy as it started.
    busy = [g for g in failed_groups if g.get("reason") == NODE_BUSY]
    failing = bool(failed or unresolved or stopped or (len(failed_groups) > len(busy) and not diagnosing))
    if busy and not failing and not ran_ok:
        message = (f"no node tested: {count(len(busy), 'group')} ran nothing, members taken by other pods after planning "
                   f"({busy[0].get('message')}); no node blamed")
        conditions = cond.with_phase(conditions, FAILED, NODES_UNAVAILABLE, message, now)
        reason = NODES_UNAVAILABLE
        failing = True
    elif failing:
        hardware = any(cond.is_true(job, HARDWARE_FAILED) for job in failed_jobs)
        reason = "JobHardwareFailed" if hardware else "JobValidationFailed" if validation else "IterationsFailed"
        message = f"{count(len(failed_groups), 'group')} failed across {count(len(history), 'iteration')}; {count(len(failed_names), 'node')} blamed"
        if not diagnosing and (together := _blamed_only_together(recorded, jobs) & failed_names):
            message += f" ({'all' if together == failed_names else len(together)} only with their whole group: no node named)"
        if not diagnosing and (refused := _refused(failed_groups)):
            # every failed group refused: that is what happened ("1 group failed ...; 0 nodes blamed" said nothing of it)
            message = f"{refused}, no node blamed" if not failed_names and all(g.get("reason") in REFUSED for g in failed_groups) else f"{message}; {refused}"
        if not diagnosing and (timed_out := timed_out_said(_with(wf, orch))):
            reason, message = TIMED_OUT_EVERYWHERE, timed_out
        if stopped:
            reason = "DiagnosisStopped"
            message = f"Diagnosis stopped {stopped}; {confirmed} before it"
        elif diagnosing:
            named = bool((orch.get("diagnose") or {}).get("infrastructureFaults"))
            reason = "FaultyNodesConfirmed" if failed else "InfrastructureFaultFound" if named else "DiagnosisUnresolved"
            message = "; ".join([f"Diagnosis complete: {confirmed}", *(unresolved or [])])
        conditions = cond.with_phase(conditions, FAILED, reason, message, now)
    else:
        reason, message = "JobCompleted", f"All {len(history)} iterations completed successfully"
        if busy:  # said: not every group ran
            message += f"; {count(len(busy), 'group')} untested, members taken by other pods after planning ({busy[0].get('message')})"
        conditions = cond.with_phase(conditions, SUCCEEDED, reason, message, now)
    closing = _closing(history[-1]["groups"]) if history else None
    if closing is not None:  # it stopped there: why it ended is its namespace, not a node (the counts above say the rest)
        reason = NAMESPACE_TERMINATING
        if not stopped:  # a diagnosis stopped on it says so already
            message += f"; stopped in iteration {history[-1]['iteration']}: {closing.get('message')}"
        unwritten = unwritten.replace(f": namespace {wf['metadata'].get('namespace')} is being terminated", "")
    if unwritten or closing is not None:
        message += unwritten
        conditions = cond.with_phase(conditions, FAILED if failing else SUCCEEDED, reason, message, now)
    if wf["spec"]["jobTemplate"]["spec"].get("thresholds"):  # as NVCRE: no thresholds, no ValidationFailed condition
        conditions = cond.with_condition(conditions, VALIDATION_FAILED, validation, "JobValidationFailed" if validation else THRESHOLDS_MET,
                                         "a group missed a threshold" if validation else "", now)
    refs = {} if unwritten else {"succeededNodesRef": {"kind": "ConfigMap", "name": succeeded_configmap},
                                 "failedNodesRef": {"kind": "ConfigMap", "name": failed_configmap}}
    orch["groups"] = settled_groups(orch["groups"])  # how they went is in the last record of iterationHistory now
    status: Obj = {"conditions": conditions, "orchestration": stored_orchestration(orch), "failedNodes": None, "completionTime": now, **refs}
    if diagnosing and failed:  # a diagnosis stores its verdicts; other Workflows' blamed nodes are their Jobs' (iterations.blamed_nodes)
        status["failedNodes"] = stored = within_room(failed, _room(wf, status) - NOTE_ROOM)
        if stored != failed:
            shown = count(len(failed), "verdict") if len(stored) == len(failed) else f"first {len(stored)} of {len(failed)} verdicts"
            message += (f"; its {shown} {'is' if len(failed) == 1 else 'are'} stored shortened to fit the 1.5 MiB object "
                        "(the failed-nodes ConfigMap has every one whole)")
            status["conditions"] = cond.with_phase(conditions, FAILED, reason, message, now)
    await ctx.transition(WORKFLOW, wf, status, [("Warning" if cond.phase({"status": status}) == FAILED else "Normal", reason, message)])


__all__ = ["reconcile_workflow", "LABEL_WORKFLOW"]
