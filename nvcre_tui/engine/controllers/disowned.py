"""Ending what a disowned child still runs.

A Workflow or Job whose metadata.ownerReferences were edited away (`kubectl edit`) stands, but its owner no longer takes
its result (Context.lost_child: the category or group fails, WorkflowDisowned / JobDisowned), and the garbage collector
no longer reaches it from the Certification: its run went on, its pods holding the group's GPUs until it ended, and a
Workflow went on launching groups nobody reads. So it fails so itself, no node blamed (an edit ended it, not a node), a
Workflow's unfinished Jobs likewise, and each unfinished run is stopped through the runner, as any run its Job gave up on.
A Job is failed before its run is stopped: a Job that saw its run Stopped would judge it, and blame its group.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.bodies import conditions_of
from nvcre_tui.engine.api.vocabulary import FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.controllers.workloadrun import run_finished
from nvcre_tui.engine.store.errors import Conflict, NotFound
from nvcre_tui.engine.store.objects import copy_json
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW, WORKLOADRUN, ResourceKind

Obj = dict[str, Any]

__all__ = ["end_disowned_job", "end_disowned_workflow"]


async def end_disowned_job(ctx: Context, world: World, name: str, namespace: str | None, reason: str, message: str) -> None:
    """Fail the disowned Job `name` (`reason`, `message`, no node blamed) unless it ended, and stop its unfinished runs."""
    if (job := await _live(ctx, JOB, name, namespace)) is not None:
        await _end_job(ctx, world, job, reason, message)


async def end_disowned_workflow(ctx: Context, world: World, name: str, namespace: str | None, reason: str, message: str,
                                job_message: str) -> None:
    """Fail the disowned Workflow `name` unless it ended (it launches no group more), and each of its Jobs as
    end_disowned_job does, with `job_message`."""
    wf = await _live(ctx, WORKFLOW, name, namespace)
    if wf is None:
        return
    if not cond.is_terminal(wf):
        await _fail(ctx, WORKFLOW, wf, reason, message)
    for job in world.children_of(wf, JOB.kind):
        await _end_job(ctx, world, copy_json(job), reason, job_message)  # a copy: the cache's objects are shared


async def _end_job(ctx: Context, world: World, job: Obj, reason: str, message: str) -> None:
    if not cond.is_terminal(job):
        await _fail(ctx, JOB, job, reason, message)
    for run in world.children_of(job, WORKLOADRUN.kind):
        if not run_finished(run):
            await ctx.runner.stop(run)


async def _live(ctx: Context, kind: ResourceKind, name: str, namespace: str | None) -> Obj | None:
    try:
        return await ctx.store.get(kind, name, namespace)
    except NotFound:
        return None  # deleted meanwhile: its runs are orphans, collected as such


async def _fail(ctx: Context, kind: ResourceKind, obj: Obj, reason: str, message: str) -> None:
    conditions = cond.with_phase(conditions_of(obj), FAILED, reason, message, ctx.now())
    if not await ctx.transition(kind, obj, {"conditions": conditions, "completionTime": ctx.now()}, [("Warning", reason, message)]):
        # not written (changed or deleted meanwhile): its run is not stopped before it is, and the owner looks again
        meta = obj["metadata"]
        raise Conflict.about(kind, meta["name"], meta.get("namespace"), "changed while the engine failed it as disowned")
