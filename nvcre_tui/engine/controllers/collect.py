"""Collecting what a deleted Certification leaves behind, where no garbage collector does it.

Every object the engine makes names its owner (Workflow -> Certification, Job -> Workflow, WorkloadRun and
the workload objects -> Job), so on a cluster the garbage collector of kube-controller-manager removes a
deleted Certification's children. An API server without it (envtest: kube-apiserver and etcd alone) keeps
them: orphaned Workflows would go on planning Jobs, and their runs would hold GPUs for a certification nobody
can see any more. So the engine does that one part of the collector's work for its own objects: a child whose
controlling owner is gone (not in the cache, and a live read agrees, by uid) stops its runs and is deleted,
and its own children follow the same way. Where a garbage collector runs too, both delete, and whoever comes
second meets NotFound.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.controllers.workloadrun import run_finished
from nvcre_tui.engine.judging.results import result_configmap_names
from nvcre_tui.engine.store.errors import Conflict, Forbidden, NotFound
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, JOB, WORKFLOW, WORKLOADRUN, ResourceKind

Obj = dict[str, Any]
OWNER_KINDS: dict[str, ResourceKind] = {kind.kind: kind for kind in (CERTIFICATION, WORKFLOW, JOB)}


def controlling_owner(obj: Obj) -> tuple[ResourceKind, str, str] | None:
    """(kind, name, uid) of the nvcre object that controls `obj`, or None (a Certification, a standalone run)."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") in OWNER_KINDS \
                and isinstance(ref.get("name"), str) and isinstance(ref.get("uid"), str):
            return OWNER_KINDS[ref["kind"]], ref["name"], ref["uid"]
    return None


async def is_orphan(ctx: Context, obj: Obj, world: World) -> bool:
    """Whether the object's controlling owner is gone. The cache answers for a living owner; a miss is
    confirmed with a live read (a cache that lags must never delete anything)."""
    owner = controlling_owner(obj)
    if owner is None or world.cache.get_by_uid(owner[2]) is not None:
        return False
    kind, name, uid = owner
    try:
        found = await ctx.store.get(kind, name, obj["metadata"].get("namespace"))
    except NotFound:
        return True
    return found["metadata"].get("uid") != uid  # a new object of the same name is not the owner


async def collect(ctx: Context, kind: ResourceKind, obj: Obj, world: World) -> None:
    """Stop and delete an orphan and what it made outside the nvcre kinds; its nvcre children are orphans next."""
    meta = obj["metadata"]
    if kind is JOB:
        for run in world.children_of(obj, WORKLOADRUN.kind):
            if not run_finished(run):
                await ctx.runner.stop(run)  # while its Job still stands, so the runner finds the workload by it
        await ctx.runner.release(obj)
    elif kind is WORKLOADRUN and not run_finished(obj):
        await ctx.runner.stop(obj)
    elif kind is WORKFLOW:
        for name in result_configmap_names(obj):
            await _delete_owned(ctx, CONFIGMAP, name, meta.get("namespace"), meta.get("uid"))
    try:
        await ctx.store.delete(kind, meta["name"], meta.get("namespace"), uid=meta.get("uid"))
        ctx.writes += 1
    except (NotFound, Conflict):
        pass  # already gone, or a new object of that name: not ours to delete


async def _delete_owned(ctx: Context, kind: ResourceKind, name: str, namespace: str | None, owner_uid: str | None) -> None:
    try:
        found = await ctx.store.get(kind, name, namespace)
        if owner_uid in {ref.get("uid") for ref in found["metadata"].get("ownerReferences") or []}:
            await ctx.store.delete(kind, name, namespace, uid=found["metadata"].get("uid"))
            ctx.writes += 1
    except (NotFound, Conflict):
        pass
    except Forbidden:
        pass  # an install older than this nvcre grants no delete here: left for a garbage collector, the Workflow still goes


__all__ = ["collect", "controlling_owner", "is_orphan"]
