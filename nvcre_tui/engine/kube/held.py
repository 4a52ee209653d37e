"""nvcre objects whose deletion a finalizer holds, and completing the deletions only the garbage collector's hold.

`kubectl delete --cascade=foreground` (Argo CD deletes so too) or `--cascade=orphan` hands an object to
kube-controller-manager's garbage collector by its finalizer (`foregroundDeletion`, `orphan`). An API server alone has
no collector: the object stays Terminating for good, and a CRD being deleted waits for every object of its kind, so
`setup reset` waited its whole timeout and left the install namespace Terminating. A DELETE that gives a propagation
policy sets those finalizers anew (the registry's deletionFinalizersForGarbageCollection, on an object already being
deleted too): nvcre's Background delete drops them and completes the deletion when no other finalizer holds it.
Another client's finalizer is never touched: it is named, for whoever set it.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.store.errors import NotFound, StoreError
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN, ResourceKind, ResourceStore

__all__ = ["COLLECTOR_FINALIZERS", "NVCRE_KINDS", "deletion_held", "describe", "held", "release_collector_holds"]

Obj = dict[str, Any]
COLLECTOR_FINALIZERS = frozenset({"foregroundDeletion", "orphan"})  # the garbage collector's, set by a DELETE's policy
NVCRE_KINDS: tuple[ResourceKind, ...] = (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)


async def held(store: ResourceStore) -> list[tuple[ResourceKind, Obj]]:
    """Every object of our kinds (all namespaces) being deleted that a finalizer holds. A kind the server no longer
    serves or will not list is passed over."""
    found = []
    for kind in NVCRE_KINDS:
        try:
            items = (await store.list(kind)).items
        except StoreError:
            continue
        found += [(kind, obj) for obj in items if obj["metadata"].get("deletionTimestamp") and obj["metadata"].get("finalizers")]
    return found


def describe(kind: ResourceKind, obj: Obj) -> str:
    """`certification default/fg (example.com/hold)`."""
    meta = obj["metadata"]
    return f"{kind.kind.lower()} {meta.get('namespace')}/{meta['name']} ({', '.join(map(str, meta.get('finalizers') or []))})"


async def release_collector_holds(store: ResourceStore) -> tuple[list[str], list[str]]:
    """Delete again, by uid and in the background, each object `held` holds by the garbage collector's finalizers only
    (one another client also holds keeps the collector's too: it goes when that client lets it). What was completed,
    and what could not be asked (with the server's answer), each as `describe` says it."""
    completed, failed = [], []
    for kind, obj in await held(store):
        if not set(obj["metadata"]["finalizers"]) <= COLLECTOR_FINALIZERS:
            continue
        meta = obj["metadata"]
        try:
            await store.delete(kind, meta["name"], meta.get("namespace"), uid=meta.get("uid"))
        except NotFound:
            continue  # gone meanwhile: a collector did it
        except StoreError as error:
            failed.append(f"{describe(kind, obj)}: {' '.join(str(error).split())}")
            continue
        completed.append(describe(kind, obj))
    return completed, failed


def deletion_held(name: str, obj: Obj) -> str | None:
    """What holds the deletion of a certification being deleted (`report`, `list` and `run --wait` say it: its status
    stays as it was, RUNNING for good where nothing removes the finalizer), with the way out; None when it is not being
    deleted."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("finalizers"), list):  # a damaged one is said as such elsewhere
        return None
    finalizers = [str(f) for f in meta["finalizers"]]
    if not meta.get("deletionTimestamp") or not finalizers:
        return None
    ours = [f for f in finalizers if f in COLLECTOR_FINALIZERS]
    others = [f for f in finalizers if f not in COLLECTOR_FINALIZERS]
    said = f"certification {name} is being deleted (since {meta['deletionTimestamp']}) and held by {', '.join(finalizers)}"
    namespace = f" -n {meta['namespace']}" if meta.get("namespace") not in (None, "default") else ""
    if ours and not others:
        return (f"{said}, the garbage collector's finalizer (kubectl delete --cascade={'foreground' if 'foregroundDeletion' in ours else 'orphan'}): "
                f"an API server without kube-controller-manager never removes it; `nvcre certification delete {name}{namespace}` "
                "completes the deletion")
    return f"{said}: whoever set {'it' if len(others) == 1 else 'them'} ({', '.join(others)}) removes {'it' if len(others) == 1 else 'them'}, then it goes"
