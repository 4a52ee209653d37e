"""What nvcre's objects made on a cluster that outlives them where no garbage collector runs (an API server alone):
the workload objects, result ConfigMaps and pull secrets whose every owner is an nvcre object. `setup reset` removes
the CRDs, and with them every nvcre object; on a cluster, kube-controller-manager's garbage collector then removes
their dependents. Without one they stay, and `setup reset` deletes them itself: only objects whose every
ownerReference names an nvcre kind, never one another owner also holds or one with no owner."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from nvcre_tui.engine.runners.kubernetes.create import CLAIM_TEMPLATES, COMPUTE_DOMAIN, TRAINING_RUNTIME, TRAINJOB
from nvcre_tui.engine.store.errors import Forbidden, NotFound, StoreError
from nvcre_tui.engine.store.events import EVENT_COMPONENT
from nvcre_tui.engine.store.owned import delete_owned
from nvcre_tui.engine.store.protocol import BATCH_JOB, CONFIGMAP, EVENT, NVCRE_GROUP, SECRET, SERVICE, ResourceKind, ResourceStore
from nvcre_tui.engine.units import count

Obj = dict[str, Any]
# Every kind an nvcre object owns outside its own group (workloads/, judging/results.py, the CLI's pull secrets).
# ResourceClaimTemplates in every version nvcre writes: a server serving several lists the same objects in each, and
# the first version's pass deletes them.
OWNED_KINDS: tuple[ResourceKind, ...] = (TRAINJOB, TRAINING_RUNTIME, BATCH_JOB, SERVICE, COMPUTE_DOMAIN, *CLAIM_TEMPLATES, CONFIGMAP, SECRET)


def nvcre_owner(ref: Mapping[str, Any]) -> bool:
    """Whether an ownerReference names an nvcre object."""
    return str(ref.get("apiVersion", "")).partition("/")[0] == NVCRE_GROUP


async def delete_leftovers(store: ResourceStore) -> tuple[list[tuple[ResourceKind, Obj]], list[str]]:
    """Delete, each by its uid, every object of OWNED_KINDS in every namespace that only nvcre objects own:
    ((kind, object) deleted, in OWNED_KINDS order; `kind/name in namespace (why)` not deleted). A kind the server does
    not serve (no Trainer, no DRA driver) or will not list is passed over."""
    deleted: list[tuple[ResourceKind, Obj]] = []
    kept: list[str] = []
    for kind in OWNED_KINDS:
        try:
            done = await delete_owned(store, kind, None, nvcre_owner)
        except (NotFound, Forbidden):
            continue
        deleted += [(kind, obj) for obj in done.deleted]
        kept += [f"{_where(kind, obj)} ({error})" for obj, error in done.kept]
    return deleted, kept


DELETED = "deleted (its nvcre owners are gone)"


def deleted_lines(deleted: list[tuple[ResourceKind, Obj]]) -> list[str]:
    """What `setup reset` says of the leftovers it deleted: a line each, but the ConfigMaps (two results per Workflow and a
    config per run: hundreds on a cluster that certified for months) in one line, counted per namespace, at the place
    of their kind."""
    lines: list[str] = []
    configmaps: Counter[str] = Counter()
    at = 0  # where their line goes: at the place of their kind
    for kind, obj in deleted:
        if kind != CONFIGMAP:
            lines.append(f"{_where(kind, obj)} {DELETED}")
            continue
        if not configmaps:
            at = len(lines)
        configmaps[str(obj["metadata"].get("namespace"))] += 1
    if configmaps:
        where = ", ".join(f"{n} in {namespace}" for namespace, n in sorted(configmaps.items()))
        total = sum(configmaps.values())
        deleted_them = DELETED if total == 1 else DELETED.replace("its", "their")
        lines.insert(at, f"{count(total, 'ConfigMap')} (results, run configs) {deleted_them}: {where}")
    return lines


def _where(kind: ResourceKind, obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{kind.kind.lower()}{'.' + kind.group if kind.group else ''}/{meta['name']} in {meta.get('namespace')}"


async def delete_own_events(store: ResourceStore, namespace: str) -> int:
    """Delete, each by its uid, the Events nvcre wrote in `namespace` about its own objects (reportingComponent nvcre,
    the involved object of the nvcre group): a certification run in the install namespace leaves them there, and once
    `setup reset` has deleted the objects they are about, they held that namespace Terminating on an API server without
    a namespace controller (it finalizes only an empty one). How many went; none when they may not be listed."""
    try:
        events = (await store.list(EVENT, namespace)).items
    except StoreError:
        return 0
    deleted = 0
    for event in events:
        about = event.get("involvedObject") or {}
        if event.get("reportingComponent") != EVENT_COMPONENT or not nvcre_owner(about if isinstance(about, Mapping) else {}):
            continue
        try:
            await store.delete(EVENT, event["metadata"]["name"], namespace, uid=event["metadata"].get("uid"))
            deleted += 1
        except StoreError:
            continue  # gone meanwhile, or refused: the namespace's contents say what is left
    return deleted


__all__ = ["OWNED_KINDS", "delete_leftovers", "delete_own_events", "deleted_lines", "nvcre_owner"]
