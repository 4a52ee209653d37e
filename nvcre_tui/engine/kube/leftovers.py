"""What nvcre's objects made on a cluster that outlives them where no garbage collector runs (an API server alone):
the workload objects, result ConfigMaps and pull secrets whose every owner is an nvcre object. `setup reset` removes
the CRDs, and with them every nvcre object; on a cluster, kube-controller-manager's garbage collector then removes
their dependents. Without one they stay, and `setup reset` deletes them itself: only objects whose every
ownerReference names an nvcre kind, never one another owner also holds or one with no owner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from nvcre_tui.engine.runners.kubernetes.create import COMPUTE_DOMAIN, TRAINING_RUNTIME, TRAINJOB
from nvcre_tui.engine.store.errors import Forbidden, NotFound, StoreError
from nvcre_tui.engine.store.protocol import BATCH_JOB, CONFIGMAP, NVCRE_GROUP, SECRET, SERVICE, ResourceKind, ResourceStore

Obj = dict[str, Any]
# Every kind an nvcre object owns outside its own group (workloads/, judging/results.py, the CLI's pull secrets).
OWNED_KINDS: tuple[ResourceKind, ...] = (TRAINJOB, TRAINING_RUNTIME, BATCH_JOB, SERVICE, COMPUTE_DOMAIN, CONFIGMAP, SECRET)


def owned_by_nvcre_only(obj: Obj) -> bool:
    """Whether the object has owners and every one is an nvcre object."""
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return bool(refs) and all(isinstance(ref, dict) and str(ref.get("apiVersion", "")).partition("/")[0] == NVCRE_GROUP
                              for ref in refs)


async def leftovers(store: ResourceStore) -> AsyncIterator[tuple[ResourceKind, Obj]]:
    """Each object of OWNED_KINDS in every namespace that only nvcre objects own; a kind the server does not serve (no
    Trainer, no DRA driver) or will not list is passed over."""
    for kind in OWNED_KINDS:
        try:
            items = (await store.list(kind)).items
        except (NotFound, Forbidden):
            continue
        for obj in items:
            if owned_by_nvcre_only(obj):
                yield kind, obj


async def delete_leftovers(store: ResourceStore) -> tuple[list[str], list[str]]:
    """Delete the leftovers, each by its uid: (`kind/namespace/name` deleted, `... (why)` not deleted)."""
    deleted, kept = [], []
    async for kind, obj in leftovers(store):
        meta = obj["metadata"]
        where = f"{kind.kind.lower()}{'.' + kind.group if kind.group else ''}/{meta['name']} in {meta.get('namespace')}"
        try:
            await store.delete(kind, meta["name"], meta.get("namespace"), uid=meta.get("uid"))
            deleted.append(where)
        except NotFound:
            continue  # a garbage collector was first
        except StoreError as error:
            kept.append(f"{where} ({error})")
    return deleted, kept


__all__ = ["OWNED_KINDS", "delete_leftovers", "leftovers", "owned_by_nvcre_only"]
