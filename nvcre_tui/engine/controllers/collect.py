"""Collecting what a deleted Certification leaves behind, where no garbage collector does it.

Every object the engine makes names its owner (Workflow -> Certification, Job -> Workflow, WorkloadRun and
the workload objects -> Job), so on a cluster the garbage collector of kube-controller-manager removes a
deleted Certification's children. An API server without it (envtest: kube-apiserver and etcd alone) keeps
them: orphaned Workflows would go on planning Jobs, and their runs would hold GPUs for a certification nobody
can see any more. So the engine does that one part of the collector's work for its own objects: a child whose
controlling owner is gone (not in the cache, and live reads of the owner and of the child agree, by uid) stops its
runs and is deleted, and its own children follow the same way. Where a garbage collector runs too, both delete,
and whoever comes second meets NotFound.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.controllers.workloadrun import run_finished
from nvcre_tui.engine.store.errors import Conflict, NotFound
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN, ResourceKind

Obj = dict[str, Any]
# Which nvcre kind controls each collected kind. A Certification has no nvcre owner and is never collected; an owner
# of another group or kind (an Argo Workflow, a batch/v1 Job, a CronJob) is not ours to judge.
OWNER_OF: dict[ResourceKind, ResourceKind] = {WORKFLOW: CERTIFICATION, JOB: WORKFLOW, WORKLOADRUN: JOB}


def controlling_owner(kind: ResourceKind, obj: Obj) -> Obj | None:
    """The controller ownerReference of `obj` to the nvcre kind that owns a `kind` (OWNER_OF), or None."""
    parent = OWNER_OF.get(kind)
    if parent is None:
        return None
    for ref in obj["metadata"].get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") == parent.kind \
                and str(ref.get("apiVersion", "")).partition("/")[0] == parent.group \
                and isinstance(ref.get("name"), str) and isinstance(ref.get("uid"), str):
            return ref
    return None


async def orphan(ctx: Context, kind: ResourceKind, obj: Obj, world: World) -> Obj | None:
    """The object as the API server has it now, when its controlling owner is gone; else None.

    As the garbage collector does: the cache answers for a living owner; a miss is confirmed by reading the owner
    (gone, or a new object of that name: another uid), and then the object itself, whose live ownerReference must
    still name that owner (a lagging cache must never delete anything, nor a child someone has since detached)."""
    ref = controlling_owner(kind, obj)
    if ref is None or world.cache.get_by_uid(ref["uid"]) is not None:
        return None
    namespace = obj["metadata"].get("namespace")
    if await _lives(ctx, OWNER_OF[kind], ref["name"], namespace, ref["uid"]):
        return None
    try:
        live = await ctx.store.get(kind, obj["metadata"]["name"], namespace)
    except NotFound:
        return None
    now = controlling_owner(kind, live)
    return live if now is not None and now["uid"] == ref["uid"] else None


async def _lives(ctx: Context, kind: ResourceKind, name: str, namespace: str | None, uid: str) -> bool:
    try:
        found = await ctx.store.get(kind, name, namespace)
    except NotFound:
        return False
    return found["metadata"].get("uid") == uid


async def collect(ctx: Context, kind: ResourceKind, obj: Obj, world: World) -> None:
    """Stop and delete an orphan (its live copy, from `orphan`) and the workload objects of its runs; its nvcre
    children are orphans next. The Workflow's result ConfigMaps stay for a garbage collector: the engine may not
    delete ConfigMaps (other namespaces keep credentials in them)."""
    meta = obj["metadata"]
    if kind is JOB:
        for run in world.children_of(obj, WORKLOADRUN.kind):
            if not run_finished(run):
                await ctx.runner.stop(run)  # while its Job still stands, so the runner finds the workload by it
        await ctx.runner.release(obj)
    elif kind is WORKLOADRUN:
        if not run_finished(obj):
            await ctx.runner.stop(obj)
        ref = controlling_owner(kind, obj)  # a Job deleted by hand: its workload objects are this run's
        if ref is not None:
            await ctx.runner.release({"metadata": {"name": ref["name"], "namespace": meta.get("namespace"), "uid": ref["uid"]}})
    try:
        await ctx.store.delete(kind, meta["name"], meta.get("namespace"), uid=meta.get("uid"))
        ctx.writes += 1
    except (NotFound, Conflict):
        pass  # already gone, or a new object of that name: not ours to delete


__all__ = ["OWNER_OF", "collect", "controlling_owner", "orphan"]
