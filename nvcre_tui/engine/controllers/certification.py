"""Certification reconciler: one Workflow per category. Categories whose node sets overlap run one
after another in the order written; categories on disjoint nodes run in parallel (NVCRE runs all
sequentially). A category also waits while another certification's Workflow runs on any of its nodes (its pods
would wait for the same GPUs and fail unplaced), or an older certification's category waits for them: first come,
first served. A failed category does not stop the others."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.bodies import certification_status, conditions_of, creation_order, orchestration_of, run_status, workflow_spec, workflow_status
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.api.vocabulary import (FAILED, IN_PROGRESS, INVALID_SPEC, NAMESPACE_TERMINATING, NODES_UNAVAILABLE, RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED,
                                             RESULT_RUNNING, SUCCEEDED, WAITING_FOR_LEFTOVERS, WAITING_FOR_NODES)
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.context import DISOWNED, Context, Leftover, NameCollision, World
from nvcre_tui.engine.controllers.disowned import end_disowned_workflow
from nvcre_tui.engine.controllers.iterations import blamed_names, excluded_counted, nodes_by_group
from nvcre_tui.engine.judging.untested import WORKFLOW_DISOWNED
from nvcre_tui.engine.planning.discovery import NODE_WAIT
from nvcre_tui.engine.planning.manifest import certification_problems
from nvcre_tui.engine.planning.render import RenderedCategory, RenderError, category_workflow_name, render_category
from nvcre_tui.engine.runners.base import NAMESPACE_PROBE_SECONDS
from nvcre_tui.engine.store.errors import NamespaceTerminating, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, WORKFLOW
from nvcre_tui.engine.units import count, listed

Obj = dict[str, Any]
# How a category waiting for a Workflow on its nodes says so: it looks again when a Workflow finishes, not at every
# Node change (engine._waits_for_nodes).
HELD = "waits for "


def is_held(status: Mapping[str, Any]) -> bool:
    """Whether a categoryStatuses entry waits for a Workflow on its nodes (an earlier category's, or another
    certification's) or for an older certification's waiting category: not for discovery."""
    return status.get("status") == "Pending" and str(status.get("message") or "").startswith(HELD)


_HOLDER = re.compile(r"certification ([^\s,]+)(?: in namespace ([^\s,]+))?, which ")


def held_by(status: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """(name, namespace or None: the same) of the certification a held category waits for, as its message names it
    (`waits for certification first, which runs on ...`: the holder _held_elsewhere and _queued_before write); None when
    it is not held, or held by an earlier category of its own or a Workflow of no certification."""
    if not is_held(status):
        return None
    found = _HOLDER.match(str(status.get("message")).removeprefix(HELD))
    return (found.group(1), found.group(2)) if found else None


def _waiting_since(ctx: Context, cert: Obj, status: Obj) -> datetime:
    """When the category began waiting for eligible nodes: its `waitingSince`, else the certification's start (its
    status.startTime, on the engine's clock: not the API server's creationTimestamp, which a --sim-runner clock runs
    ahead of, so its wait for nodes would be over at once); now before the first status write records it."""
    for since in (status.get("waitingSince"), certification_status(cert).get("startTime")):
        try:
            return parse_time(since)
        except ValueError:
            continue
    return ctx.clock.now()


async def reconcile_certification(ctx: Context, cert: Obj, world: World) -> float | None:
    """Advance one Certification; returns seconds until it needs another look."""
    if cond.is_terminal(cert):
        await _recount_finished(ctx, cert, world)
        return None
    try:
        model = Certification.model_validate(cert)
    except ValidationError as error:
        await _finish(ctx, cert, FAILED, INVALID_SPEC, "; ".join(validation_messages(error, cert["metadata"]["name"])[:3]), [])
        return None
    unknown = [c.key for c in model.spec.categories if ctx.catalog.find(c.domain, c.variant) is None]
    if unknown:
        await _finish(ctx, cert, FAILED, "CategoryNotFound", f"not in the catalog: {', '.join(unknown)}", [])
        return None
    # The same checks the CLI makes when it reads a file, before anything runs: a certification an earlier nvcre
    # accepted and started is not failed mid-run by a check added since.
    started = bool(certification_status(cert).get("categoryStatuses")) or bool(world.children_of(cert, "Workflow"))
    problems = [] if started else certification_problems(model, ctx.catalog)
    if problems:
        await _finish(ctx, cert, FAILED, INVALID_SPEC, "; ".join(problems[:3]), [])
        return None
    workflows = {wf["metadata"]["name"]: wf for wf in world.children_of(cert, "Workflow")}
    previous = {(s["domain"], s["variant"], i): s for i, s in enumerate(certification_status(cert).get("categoryStatuses") or [])}
    statuses: list[Obj] = []
    busy: list[set[str]] = []  # node sets of earlier categories that are not finished
    elsewhere: list[Held] | None = None  # other certifications' unfinished Workflows: read when a category may start
    requeue: float | None = None
    waiting: Obj | None = None  # the Workflow a held category would create: asked whether its namespace is closing
    for index, category in enumerate(model.spec.categories):
        name = category_workflow_name(model, index)
        status = dict(previous.get((category.domain, category.variant, index)) or {"domain": category.domain, "variant": category.variant, "status": "Pending"})
        wf = workflows.get(name)
        if wf is None and status["status"] == IN_PROGRESS and (lost := await ctx.lost_child(WORKFLOW, name, cert)) is not None:
            if lost == DISOWNED:
                disowned = (f"Workflow {name}'s metadata.ownerReferences no longer name Certification {cert['metadata']['name']} "
                            "as its controller (edited)")
                said = f"{disowned}: its runs are stopped, its result not taken"
                # the garbage collector no longer reaches it: it ends, and its runs give the GPUs back here
                await end_disowned_workflow(ctx, world, name, cert["metadata"].get("namespace"), WORKFLOW_DISOWNED, said,
                                            f"{disowned}: its run is stopped, its result not taken; no node blamed")
                status.update(status=FAILED, reason=WORKFLOW_DISOWNED, message=said)
            else:
                status.update(status=FAILED, reason="WorkflowDeleted", message=f"Workflow {name} was deleted before it finished")
            statuses.append(status)
            continue
        if wf is not None:
            status.update(_mirror(wf))
            if status["status"] not in (SUCCEEDED, FAILED):
                busy.append(_workflow_nodes(wf) or _planned_nodes(ctx, cert, model, index, world))
        elif status["status"] == "Pending":
            try:
                rendered = _rendered(ctx, cert, model, index, world)
            except RenderError as error:
                if is_held(status):  # held until now: its wait for nodes begins
                    status["waitingSince"] = ctx.now()
                waited = ctx.clock.now() - _waiting_since(ctx, cert, status)
                if error.field == "target" and waited < NODE_WAIT:
                    status.update(reason=WAITING_FOR_NODES, message=error.waiting or str(error))
                    requeue = (NODE_WAIT - waited).total_seconds()
                else:  # every node it selects cordoned or not Ready: none at fault, nothing tested (FAILED NodesUnavailable, as all busy)
                    status.update(status=FAILED, reason=NODES_UNAVAILABLE if error.unavailable else "WorkflowValidationFailed", message=str(error))
                statuses.append(status)
                continue
            nodes = set(rendered.discovery.names)
            if elsewhere is None:
                elsewhere = _held_elsewhere(cert, world) + _queued_before(ctx, cert, world)
            holder = next((f"{held.holder}, which {held.doing} {_share(len(nodes & held.nodes), len(nodes))}"
                           for held in elsewhere if not nodes.isdisjoint(held.nodes)), None)
            if any(not nodes.isdisjoint(other) for other in busy):
                status.update(reason=WAITING_FOR_NODES, message=f"{HELD}an earlier category on the same nodes")
            elif holder is not None:  # its pods would wait for the same GPUs, and fail unplaced after the grace
                status.update(reason=WAITING_FOR_NODES, message=f"{HELD}{holder}")
                waiting = waiting or {**rendered.workflow.to_wire(), "metadata": {"name": name, "namespace": cert["metadata"].get("namespace")}}
            elif not await _create_workflow(ctx, cert, rendered.workflow.to_wire(), index, len(model.spec.categories), status):
                requeue = min(requeue if requeue is not None else LEFTOVER_SECONDS, LEFTOVER_SECONDS)
            busy.append(nodes)
        statuses.append(status)
    closing = any(s["status"] == FAILED and s.get("reason") == NAMESPACE_TERMINATING for s in statuses)
    if waiting is not None and not closing:
        # Held by another certification, it tries no create and never meets its namespace's refusal: asked (once an
        # interval a namespace, as the runner asks for its runs), and looked at again that often while it waits.
        closing = bool(asked := await ctx.namespace_closing(WORKFLOW, waiting))
        if asked is False:
            requeue = min(requeue if requeue is not None else NAMESPACE_PROBE_SECONDS, NAMESPACE_PROBE_SECONDS)
    if closing:
        for status in statuses:  # its namespace refused a Workflow or a Job: none of the categories still waiting can ever start
            if status["status"] == "Pending":
                status.pop("waitingSince", None)
                status.update(status=FAILED, reason=NAMESPACE_TERMINATING, message=_closed(cert, "its Workflow was not created"))
    await _summarise(ctx, cert, statuses, workflows, world, _how_run(cert, workflows, world))
    return requeue


def _closed(cert: Obj, what: str) -> str:
    """Why a category cannot start in a namespace being terminated, naming it."""
    return (f"namespace {cert['metadata'].get('namespace')} is being terminated: it admits no new object (403 NamespaceTerminating), "
            f"so {what}; no node blamed")


def _rendered(ctx: Context, cert: Obj, model: Certification, index: int, world: World) -> RenderedCategory:
    """render_category, once per (Certification generation, category, state of the Nodes): RenderError too. One render
    is kept per category, the latest (an older generation or state of the Nodes is never asked again), and the engine
    forgets a certification's once it finished or went (forget_renders): keyed on every state, a long-lived engine
    kept up to RENDER_MEMO renders of the whole fleet, most of them of certifications long deleted."""
    key = (str(cert["metadata"]["uid"]), index)
    stamp = (int(cert["metadata"].get("generation") or 0), world.nodes_version)
    kept = ctx.renders.get(key)
    if kept is not None and kept[0] == stamp:
        found = kept[1]
    else:
        try:
            found = render_category(model, index, world.nodes, ctx.catalog)
        except RenderError as error:
            found = error
        if kept is None and len(ctx.renders) >= RENDER_MEMO:
            ctx.renders.clear()  # a safety net: forget_renders keeps it to the certifications still running
        ctx.renders[key] = (stamp, found)
    if isinstance(found, RenderError):
        raise found
    return found


RENDER_MEMO = 512


def forget_renders(ctx: Context, uid: str) -> None:
    """Forget the renders of a certification that finished or was deleted (it renders nothing again)."""
    for key in [key for key in ctx.renders if key[0] == uid]:
        del ctx.renders[key]
LEFTOVER_SECONDS = 2.0  # how soon a category waiting for an earlier namesake's Workflow to go looks again


def _how_run(cert: Obj, workflows: dict[str, Obj], world: World) -> list[Obj]:
    """The HOW_RUN conditions (cond.HOW_RUN) of this certification's started runs: those it carries already, its Jobs'
    (each carries its run's), and the first started run's of each Workflow (a runner decides once per engine; its Job
    carries them a reconcile later). Every Job, not the first only: after an upgrade, runs an older nvcre's fleet finished
    say nothing of it (runs did not then) while those this fleet played on say Simulated."""
    found = {c["type"]: c for c in cond.how_run(certification_status(cert).get("conditions"))}
    for wf in workflows.values():
        jobs = world.children_of(wf, "Job")
        for job in jobs:
            for condition in cond.how_run(conditions_of(job)):
                found.setdefault(condition["type"], condition)
        for job in jobs:
            runs = [r for r in world.children_of(job, "WorkloadRun") if run_status(r).get("phase")]
            if runs:
                for condition in cond.how_run(conditions_of(runs[0])):
                    found.setdefault(condition["type"], condition)
                break
    return list(found.values())


async def _create_workflow(ctx: Context, cert: Obj, workflow: Obj, index: int, total: int, status: Obj) -> bool:
    """Create the category's Workflow and say so in `status`; False while an earlier namesake's is still there."""
    workflow.pop("status", None)
    try:
        created = await ctx.create_child(WORKFLOW, cert, workflow)
    except Leftover as error:  # collected soon (by the engine, or a garbage collector): created then
        status.update(reason=WAITING_FOR_LEFTOVERS, message=f"{error.message}; created once it is gone")
        return False
    except NameCollision as error:
        status.update(status=FAILED, reason="WorkflowNameCollision", message=str(error))
        return True
    except NamespaceTerminating:  # never admitted again: the category fails (not the Certification, as ReconcileError)
        status.update(status=FAILED, reason=NAMESPACE_TERMINATING, message=_closed(cert, f"its Workflow {workflow['metadata']['name']} was not created"))
        return True
    key = f"{status['domain']}/{status['variant']}"
    status.update(status=IN_PROGRESS, reason="WorkflowCreated", message=f"Created Workflow for category {key} ({index + 1} of {total})",
                  workflowRef={"name": created["metadata"]["name"], "namespace": created["metadata"].get("namespace")})
    await ctx.event(cert, "Normal", "WorkflowCreated", status["message"])
    return True


def _mirror(wf: Obj) -> Obj:
    phase = cond.phase(wf)
    state = workflow_status(wf)
    current = cond.find(state.get("conditions"), phase or "") or {}
    mirrored: Obj = {
        "status": {SUCCEEDED: SUCCEEDED, FAILED: FAILED}.get(phase or "", IN_PROGRESS),
        "workflowRef": {"name": wf["metadata"]["name"], "namespace": wf["metadata"].get("namespace")},
        "reason": current.get("reason"), "message": current.get("message"),
    }
    for ref in ("succeededNodesRef", "failedNodesRef"):
        if state.get(ref):
            mirrored[ref] = state[ref]
    return mirrored


@dataclass(frozen=True)
class Held:
    """Nodes an unfinished Workflow outside this certification uses, and whose it is, as a status message says it."""

    holder: str
    nodes: frozenset[str]
    doing: str = "runs on"  # or "is queued first for": an older certification's category that waits for them too


def _share(shared: int, of: int) -> str:
    """How many of a category's `of` nodes another holds: "this category's node", "both of this category's nodes",
    "all 32 of this category's nodes", "3 of this category's nodes"."""
    if of == 1:
        return "this category's node"
    if shared == of:
        return f"{'both' if of == 2 else f'all {of}'} of this category's nodes"
    return f"{shared} of this category's nodes"


def _held_elsewhere(cert: Obj, world: World) -> list[Held]:
    """Unfinished Workflows of other certifications (or made by hand) with their nodes: a category waits for them as
    for an earlier category of its own (and for older certifications' waiting categories: _queued_before)."""
    uid, name = cert["metadata"]["uid"], cert["metadata"]["name"]
    held = []
    for wf in world.workflows():
        try:
            refs = [r for r in wf["metadata"].get("ownerReferences") or [] if isinstance(r, dict) and r.get("controller")]
            if cond.is_terminal(wf) or any(r.get("uid") == uid for r in refs):
                continue
            owner = next((f"certification {r.get('name')}" if r.get("name") != name else
                          f"a deleted certification of the same name (its Workflow {wf['metadata']['name']} is still there)"
                          for r in refs if r.get("kind") == "Certification"), f"Workflow {wf['metadata']['name']}")
            if (wf["metadata"].get("namespace") or "") != (cert["metadata"].get("namespace") or ""):
                owner += f" in namespace {wf['metadata'].get('namespace')}"
            held.append(Held(owner, _known_nodes(wf)))
        except (AttributeError, TypeError, KeyError, ValueError):  # malformed: its own reconcile quarantines it
            continue
    return held


def _queued_before(ctx: Context, cert: Obj, world: World) -> list[Held]:
    """The nodes of older certifications' categories that wait for a Workflow on their nodes: they go first when it
    ends (a fleet-wide certification waited for ever while smaller ones kept starting on its nodes). The oldest waiting
    category waits only for running Workflows, so every wait ends."""
    mine = _queue_key(cert)
    queued = []
    for other in world.certifications():
        try:
            if other["metadata"].get("uid") == cert["metadata"]["uid"] or cond.is_terminal(other) or _queue_key(other) >= mine:
                continue
            statuses = certification_status(other).get("categoryStatuses") or []
            waiting = [i for i, s in enumerate(statuses) if isinstance(s, Mapping) and is_held(s)]
            if not waiting:
                continue
            model = Certification.model_validate(other)
            for index in waiting:
                nodes = frozenset(_rendered(ctx, other, model, index, world).discovery.names)
                queued.append(Held(f"certification {other['metadata']['name']}", nodes, "is queued first for"))
        except (ValidationError, RenderError, AttributeError, TypeError, KeyError, ValueError, IndexError):
            continue  # what cannot be read holds nothing; its own reconcile says what is wrong with it
    return queued


def _queue_key(cert: Obj) -> tuple[str, int, str, str]:
    """Who came first: creation time (whole seconds), then the store's order of creation (api.bodies.creation_order)."""
    return creation_order(cert)


_NODES: dict[int, tuple[Obj, frozenset[str]]] = {}  # id(Workflow body) -> (that body, its nodes)
NODES_KEPT = 4096


def _known_nodes(wf: Obj) -> frozenset[str]:
    """_workflow_nodes once per version of a Workflow: a diagnosing one's are decoded from its plan (40 ms at 2,048
    nodes), and every waiting certification asks at each look. The watch cache replaces a body when it changes and
    shares it otherwise, so identity is the version (uids and resourceVersions repeat across simulated sessions)."""
    found = _NODES.get(id(wf))
    if found is None or found[0] is not wf:
        if len(_NODES) >= NODES_KEPT:
            _NODES.clear()  # bodies replaced since are never asked again: start over
        found = _NODES[id(wf)] = (wf, frozenset(_workflow_nodes(wf)))
    return found[1]


def _workflow_nodes(wf: Obj) -> set[str]:
    """Nodes of a Workflow: planned at creation, and those it partitioned into or diagnose tested (empty for a
    hand-written one before its first partition)."""
    return {n for nodes in nodes_by_group(wf).values() for n in nodes}


def _planned_nodes(ctx: Context, cert: Obj, model: Certification, index: int, world: World) -> set[str]:
    """The nodes a category will use, before its Workflow has partitioned them."""
    try:
        return set(_rendered(ctx, cert, model, index, world).discovery.names)
    except RenderError:
        return set()


async def _summarise(ctx: Context, cert: Obj, statuses: list[Obj], workflows: dict[str, Obj], world: World, how: Sequence[Obj] = ()) -> None:
    done = [s for s in statuses if s["status"] in (SUCCEEDED, FAILED)]
    passed = sum(1 for s in statuses if s["status"] == SUCCEEDED)
    failed_nodes = {name for wf in workflows.values() for name in blamed_names(wf, world.children_of(wf, "Job"))}
    excluded = {e["name"] for wf in workflows.values() for e in (orchestration_of(wf).get("excludedNodes") or [])}
    # A category that could test no node, each unavailable (busy, cordoned, not Ready), failed no check and blames none,
    # but it measured nothing: the certification is FAILED under its own reason (NodesUnavailable), never INCOMPLETE,
    # which exits 0 as a pass does (no measurement is never a pass); nodes excluded beside tested ones make INCOMPLETE.
    untested = [s for s in statuses if s["status"] == FAILED and s.get("reason") == NODES_UNAVAILABLE]
    any_failed = any(s["status"] == FAILED for s in statuses if s not in untested)
    if len(done) < len(statuses):
        result = RESULT_RUNNING
    else:
        result = RESULT_FAILED if any_failed or untested else RESULT_INCOMPLETE if excluded else RESULT_PASSED
    # One node, one state, worst first (as the wall and the console count them): a node blamed in one category and
    # excluded from a later one (cordoned mid-run) is a failed node, counted under failedNodes only, and one left
    # inconclusive is not counted excluded either (excluded_counted). Each category still lists its exclusions with
    # their reasons; `excluded` whole decides INCOMPLETE.
    summary = {"passedCategories": f"{passed}/{len(statuses)}", "failedNodes": len(failed_nodes),
               "excludedNodes": len(excluded_counted(workflows.values(), failed_nodes)),
               "result": result}
    if result == RESULT_RUNNING:
        running = [f"{s['domain']}/{s['variant']}" for s in statuses if s["status"] == IN_PROGRESS]
        message = f"{len(done)}/{len(statuses)} categories finished" + (f"; running: {', '.join(running)}" if running else "")
        conditions = cond.with_phase(certification_status(cert).get("conditions"), IN_PROGRESS, "WorkflowRunning", message, ctx.now())
        conditions = cond.carried(conditions, how, ctx.now())
        await ctx.patch_status(CERTIFICATION, cert, {"conditions": conditions, "categoryStatuses": statuses, "summary": summary,
                                                     "startTime": certification_status(cert).get("startTime") or ctx.now(), **_created(cert)})
        return
    closing = [s for s in statuses if s["status"] == FAILED and s.get("reason") == NAMESPACE_TERMINATING]
    if closing:  # why it ended is its namespace: said first, naming it, with the categories it stopped
        keys = listed([f"{s['domain']}/{s['variant']}" for s in closing])
        blamed = f"{count(len(failed_nodes), 'node')} blamed by the categories that ran" if failed_nodes else "no node blamed"
        message = (f"namespace {cert['metadata'].get('namespace')} is being terminated: it admits no new object (403 "
                   f"NamespaceTerminating), so {len(closing)} {'category' if len(closing) == 1 else 'categories'} could not go on ({keys}); {blamed}")
        await _finish(ctx, cert, FAILED, NAMESPACE_TERMINATING, message, statuses, summary, how)
    elif any_failed:
        await _finish(ctx, cert, FAILED, "WorkflowFailed", "One or more certification categories failed", statuses, summary, how)
    elif untested:
        keys = listed([f"{s['domain']}/{s['variant']}" for s in untested])
        await _finish(ctx, cert, FAILED, NODES_UNAVAILABLE, f"No category failed a check, but {keys} tested no node: every node it "
                      "selects was unavailable (busy, cordoned or not Ready), none blamed, nothing certified", statuses, summary, how)
    else:
        await _finish(ctx, cert, SUCCEEDED, "AllWorkflowsSucceeded", "All certification categories succeeded", statuses, summary, how)


async def _recount_finished(ctx: Context, cert: Obj, world: World) -> None:
    """A finished certification's summary counted again, once, where an nvcre before the one-node-one-state rule
    counted it: its excludedNodes counted a node a category blamed or left inconclusive (excluded_counted), and
    kubectl's Excluded Nodes column kept saying so until something wrote its status again (`certification list`
    recounts as it reads; kubectl cannot). Only the summary's excludedNodes is written, through the status
    subresource as every summary is, and only lowered (the rule can only lower it); only when every category that
    made a Workflow still has it, so a certification whose objects are partly gone keeps its word. Nothing runs
    again, no condition or time changes; its next look finds nothing to change. A refusal never fails it."""
    summary = certification_status(cert).get("summary")
    stored = summary.get("excludedNodes") if isinstance(summary, dict) else None
    if not isinstance(summary, dict) or not isinstance(stored, int) or isinstance(stored, bool) or stored <= 0:
        return  # nothing an older rule could have overcounted (most finished certifications: no reading at all)
    refs = {str(s["workflowRef"].get("name")) for s in certification_status(cert).get("categoryStatuses") or []
            if isinstance(s, dict) and isinstance(s.get("workflowRef"), dict)}
    workflows = {str(wf["metadata"]["name"]): wf for wf in world.children_of(cert, "Workflow")}
    if not refs or not refs <= workflows.keys():
        return
    try:
        failed = {name for wf in workflows.values() for name in blamed_names(wf, world.children_of(wf, "Job"))}
        counted = len(excluded_counted(workflows.values(), failed))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return  # a damaged Workflow: the stored count stands (its own reconcile says what is wrong)
    if counted < stored:
        try:
            await ctx.patch_status(CERTIFICATION, cert, {"summary": {**summary, "excludedNodes": counted}})
        except StoreError as error:
            if error.retryable:
                raise
            # refused for good (never expected within the engine's RBAC): the count stays; a finished certification
            # is never failed again for a recount


def _created(cert: Obj) -> Obj:
    """status.createdResourceVersion: kept once written, else the resourceVersion the engine sees it at now (its first
    status write: the store's order of creation, which creationTimestamp's whole seconds do not give)."""
    status = certification_status(cert)
    version = status.get("createdResourceVersion") or (cert["metadata"].get("resourceVersion") if not status.get("startTime") else None)
    return {"createdResourceVersion": str(version)} if version else {}  # none: one an older nvcre started (its order unknown)


async def _finish(ctx: Context, cert: Obj, phase: str, reason: str, message: str, statuses: list[Obj], summary: Obj | None = None,
                  how: Sequence[Obj] = ()) -> None:
    status: Obj = {
        "conditions": cond.carried(cond.with_phase(certification_status(cert).get("conditions"), phase, reason, message, ctx.now()),
                                   how, ctx.now()),
        "completionTime": ctx.now(), "summary": summary or {"result": RESULT_FAILED}, **_created(cert),
    }
    if statuses:
        status["categoryStatuses"] = statuses
    await ctx.transition(CERTIFICATION, cert, status, [("Warning" if phase == FAILED else "Normal", reason, message)])
