"""Deleting a certification, its record kept in the history first: one way for `nvcre certification delete`,
`run --cleanup` and the console's x.

A finished certification is archived in the history first, and is not deleted when that write fails (its
report would be gone with nothing kept); an unfinished one is cancelled: its runs stop. It is deleted by uid,
never a namesake made meanwhile. Its Workflows, Jobs and runs follow it: the garbage collector removes them on
a cluster, the simulator's store at once, the nvcre engine where an API server has none
(controllers/collect.py); `wait_collected` follows them out of a watch cache.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from nvcre_tui.engine.api.damage import damaged_object
from nvcre_tui.engine.api.vocabulary import PULL_SECRET_INFIX
from nvcre_tui.engine.clock import Clock, ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.grants import certifications_take, rbac_refused
from nvcre_tui.engine.store.errors import Conflict, Forbidden, NotFound, StoreError
from nvcre_tui.engine.store.owned import delete_owned
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, JOB, SECRET, WORKFLOW, WORKLOADRUN, ResourceKind, ResourceStore

if TYPE_CHECKING:
    from nvcre_tui.engine.history.archive import Archiver

Obj = dict[str, Any]
# Whether RBAC allows this user (verb, kind, namespace, name), asked of the API server; None: it would not say
Authorizer = Callable[[str, ResourceKind, str | None, str | None], Awaitable[bool | None]]
CHILD_KINDS = (WORKFLOW, JOB, WORKLOADRUN)
POLL_SECONDS = 0.5  # how often a wait looks at the cache while another engine (or a garbage collector) works
WATCH_POLL_SECONDS = 0.02  # with this process's engine on a manual clock: how often the watch may bring deletions in
TAKE_OVER_SECONDS = 5.0  # without an engine: how often a wait (delete, cleanup, run --wait) asks for the Lease (one API request)
ENGINE_STEP_SECONDS = 1.0  # ... and how far its clock moves meanwhile, so its retries (a lost race, a 429) come due


class Engine(Protocol):
    """What a wait needs of this process's engine (engine/engine.py's Engine)."""

    clock: Clock

    async def run_until_settled(self, *, until: Callable[[], Awaitable[bool]] | None = None, max_seconds: float | None = None) -> bool: ...

    async def run(self, *, idle_poll: float = 30.0) -> None: ...

    def limit_to(self, scope: Callable[[ResourceKind, Obj], bool] | None) -> None: ...


@dataclass
class Deletion:
    """A certification deleted: what became of its record, and its descendants as seen then (for `wait_collected`)."""

    name: str
    namespace: str
    kept: str  # "its record is kept in the history (PATH)", "it had not finished: its runs stop" ...
    known: set[str] = field(default_factory=set)
    already_gone: bool = False

    @property
    def said(self) -> str:
        """One line for the user."""
        if self.already_gone:
            return f"certification {self.name} was already deleted"
        return f"certification {self.name} deleted from namespace {self.namespace}; {self.kept}"


async def delete_certification(store: ResourceStore, cache: WatchCache, archiver: Archiver | None, cert: Obj, *,
                               authorizer: Authorizer | None = None) -> Deletion:
    """Archive `cert` when finished (InputError, nothing deleted, when that fails), then delete it by its uid.
    `authorizer` (kube.access.authorizer_of: a SelfSubjectAccessReview) is asked first whether RBAC lets this user delete it: a
    finished one must be archived before it is gone, and a record archived for a delete the server then refuses would
    stand in the history beside the certification still on the cluster. None: no RBAC (the simulator)."""
    meta = cert["metadata"]
    name, namespace, uid = str(meta["name"]), str(meta.get("namespace") or "default"), str(meta.get("uid") or "")
    known = {uid} if uid else set()
    remaining(cache, known)  # seen before they go: their own children are found through them later
    damage = damaged_object(CERTIFICATION.kind, cert)
    if not cond.is_terminal(cert):
        kept = "it had not finished: its runs stop"
    elif damage is not None and archiver is not None and uid and archiver.holds(uid):  # archived when it finished
        kept = f"its record is kept in the history ({archiver.path}), from before it was damaged"
    elif damage is not None:  # no record can be built from it: keeping it would only keep the damage
        kept = f"not archived: it is damaged ({damage}), so its report goes with it"
    elif archiver is None:
        kept = "not archived: the history is off, so its report goes with it"
    elif authorizer is not None and await authorizer("delete", CERTIFICATION, namespace, name) is False:
        raise InputError(printable(f"certification {name!r}: this user may not delete it (RBAC, asked of the server: no delete on "
                                   f"certifications in namespace {namespace}); {certifications_take('deleting', namespace)} "
                                   "(nothing deleted nor archived)", newlines=False))
    elif archiver.archive_now(cert):
        kept = f"its record is kept in the history ({archiver.path})"
    else:
        why = archiver.errors[-1] if archiver.errors else f"{archiver.path}: not written"
        raise InputError(printable(f"certification {name!r} not deleted: its record could not be archived ({why}); "
                                   "free the history (or give --history PATH) and delete it again", newlines=False))
    try:
        await store.delete(CERTIFICATION, name, namespace, uid=uid or None)
    except NotFound:
        return Deletion(name, namespace, kept, known, already_gone=True)
    except Conflict:
        raise InputError(printable(f"certification {name!r} in {namespace} was replaced meanwhile by a new one; nothing deleted",
                                   newlines=False)) from None
    except StoreError as error:
        why = f"; {certifications_take('deleting', namespace)} (nothing deleted)" if rbac_refused(error) else ""
        raise InputError(printable(f"certification {name!r}: {error}{why}", newlines=False)) from None
    await _delete_pull_secrets(store, cert)
    left = await _delete_owned_configmaps(store, namespace, known)
    return Deletion(name, namespace, kept + (f"; {left}" if left else ""), known)


class DamagedDeleter(ResourceStore, Protocol):
    """A store that can also delete an object whose stored row cannot be read (SqliteStore.delete_damaged)."""

    async def delete_damaged(self, kind: ResourceKind, name: str, namespace: str | None = None) -> str: ...


async def delete_damaged_certification(store: DamagedDeleter, cache: WatchCache, archiver: Archiver | None, name: str,
                                       namespace: str, problem: str) -> Deletion:
    """Delete a certification whose stored row is damaged (its body unreadable) by its key: nothing of it can be
    archived now, but its record is kept when the history took it when it finished. Its Workflows, Jobs, runs, the
    ConfigMaps and Secrets they own go with it, found by its uid (the store keeps it beside the body)."""
    try:
        uid = await store.delete_damaged(CERTIFICATION, name, namespace)
    except NotFound:
        return Deletion(name, namespace, "", set(), already_gone=True)
    except StoreError as error:
        raise InputError(printable(f"certification {name!r}: {error}; nothing deleted", newlines=False)) from None
    known = {uid}
    remaining(cache, known)
    if archiver is not None and archiver.holds(uid):
        kept = f"its record is kept in the history ({archiver.path}), from before it was damaged"
    else:
        kept = f"not archived: its stored row is damaged ({problem}), so its report goes with it"
    left = await _delete_owned_configmaps(store, namespace, known)
    return Deletion(name, namespace, kept + (f"; {left}" if left else ""), known)


def pull_secrets_of(cert: Obj) -> list[str]:
    """The `run --workload-registry` pull secrets the certification names in its imagePullSecrets (global or a
    category's): `<name>-registry-...`."""
    spec = _mapping(cert.get("spec"))  # a damaged certification is deleted too: any part may be of another type
    categories: list[Any] = spec["categories"] if isinstance(spec.get("categories"), list) else []
    lists = [spec.get("imagePullSecrets"), _mapping(spec.get("options")).get("imagePullSecrets"),
             *(_mapping(_mapping(category).get("options")).get("imagePullSecrets") for category in categories)]
    prefix = f"{cert['metadata']['name']}{PULL_SECRET_INFIX}"
    return sorted({str(ref.get("name")) for refs in lists if isinstance(refs, list) for ref in refs
                   if isinstance(ref, dict) and str(ref.get("name") or "").startswith(prefix)})


def _mapping(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


async def _delete_pull_secrets(store: ResourceStore, cert: Obj) -> None:
    """Its pull secrets, each only when it names this certification's uid as owner. A garbage collector would remove
    them through that ownerReference; an API server with none keeps them. Best effort: the certification is gone."""
    meta = cert["metadata"]
    for name in pull_secrets_of(cert):
        try:
            secret = await store.get(SECRET, name, meta.get("namespace"))
            if any(ref.get("uid") == meta.get("uid") for ref in secret["metadata"].get("ownerReferences") or []):
                await store.delete(SECRET, name, meta.get("namespace"), uid=secret["metadata"].get("uid"))
        except StoreError:
            continue  # gone already, or not ours to delete (the collector's, when there is one)


async def _delete_owned_configmaps(store: ResourceStore, namespace: str, known: set[str]) -> str | None:
    """The ConfigMaps and Secrets its Workflows and Jobs made (results, a run's config; a batch MPI run's ssh keys),
    each only when every owner it names is one of the deleted objects. A garbage collector would remove them; an API
    server with none keeps them, and the engine may not delete these kinds (RBAC), so the user's command does. What
    could not be deleted is said, not hidden."""
    said = [found for kind in (CONFIGMAP, SECRET) if (found := await _delete_owned(store, kind, namespace, known))]
    return "; ".join(said) or None


async def _delete_owned(store: ResourceStore, kind: ResourceKind, namespace: str, known: set[str]) -> str | None:
    """_delete_owned_configmaps for one kind."""
    try:
        done = await delete_owned(store, kind, namespace, lambda ref: ref.get("uid") in known)
    except Forbidden:
        # Secrets: only a batch MPI run made one; a user who may not list them is told nothing of them
        return None if kind is SECRET else f"its {kind.kind}s are left to a garbage collector (not listed: forbidden)"
    except StoreError as error:
        return f"its {kind.kind}s are left to a garbage collector (not listed: {error})"
    left = [str(obj["metadata"]["name"]) for obj, _ in done.kept]
    if not left:
        return None
    return (f"{len(left)} of its {kind.kind}s could not be deleted and are left to a garbage collector "
            f"({', '.join(left[:4])}{' ...' if len(left) > 4 else ''})")


def remaining(cache: WatchCache, known: set[str]) -> list[Obj]:
    """The Workflows, Jobs and runs in `cache` that descend from the `known` uids, which grow by every descendant
    found: a child is still found through an owner already deleted (its ownerReference stays), as long as that
    owner was seen once."""
    found: dict[str, Obj] = {}
    frontier = list(known)
    while frontier:
        owner = frontier.pop()
        for child in (child for kind in CHILD_KINDS for child in cache.owned_by(owner, kind)):
            uid = str(child["metadata"].get("uid"))
            if uid not in found:
                found[uid] = child
                known.add(uid)
                frontier.append(uid)
    return list(found.values())


def in_tree(cache: WatchCache, known: set[str]) -> Callable[[ResourceKind, Obj], bool]:
    """Whether an object is one of the `known` uids or descends from one (for Engine.limit_to: a deletion's engine
    collects that tree and touches nothing else)."""
    def accepts(kind: ResourceKind, obj: Obj) -> bool:
        metadata = obj.get("metadata") or {}
        owners = {str(ref.get("uid")) for ref in metadata.get("ownerReferences") or [] if isinstance(ref, dict)}
        if str(metadata.get("uid")) in known or owners & known:
            return True
        remaining(cache, known)  # a descendant seen since: `known` grows by it
        return str(metadata.get("uid")) in known
    return accepts


async def wait_collected(cache: WatchCache, engine: Engine | None, known: set[str], limit: float,
                         take_over: Callable[[], Awaitable[Engine | None]] | None = None) -> list[Obj]:
    """Wait up to `limit` seconds of real time until nothing descends from the `known` uids, running `engine` (this
    process's, if any) meanwhile, limited to their tree: it collects them where no garbage collector does, and starts
    nothing for another certification (no other engine may follow what it would start). What is left.
    `take_over`: without an engine, asked every TAKE_OVER_SECONDS for one (the engine Lease taken once its holder
    released it or died): an engine killed just before the deletion leaves its Lease live for its duration."""
    deadline = time.monotonic() + limit
    next_try = time.monotonic()
    while engine is None and take_over is not None and remaining(cache, known) and time.monotonic() < deadline:
        if time.monotonic() >= next_try:
            next_try = time.monotonic() + TAKE_OVER_SECONDS
            engine = await take_over()
            if engine is not None:
                break
        await asyncio.sleep(POLL_SECONDS)
    if engine is not None:
        engine.limit_to(in_tree(cache, known))
    if engine is not None and isinstance(engine.clock, ManualClock):
        # The deletions reach the cache by its watch; the engine collects what they leave orphaned.
        while remaining(cache, known) and time.monotonic() < deadline:
            await engine.run_until_settled(max_seconds=ENGINE_STEP_SECONDS)
            await asyncio.sleep(WATCH_POLL_SECONDS)
        return remaining(cache, known)
    task = asyncio.create_task(engine.run(), name="engine") if engine is not None else None
    try:
        while remaining(cache, known) and time.monotonic() < deadline:
            if task is not None and task.done():
                task.result()  # the engine died: say why rather than wait for nothing
            await asyncio.sleep(POLL_SECONDS)
        return remaining(cache, known)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def left_message(left: list[Obj], limit: str) -> str:
    """What remains after a wait of `limit`, and what removes it: the finalizers that hold those being deleted (another
    client's: no engine or collector removes them, so blaming an absent engine sent the user looking for one), else an
    engine or a garbage collector."""
    kinds = sorted({str(obj.get("kind")) for obj in left})
    said = f"after {limit}, {len(left)} of its objects remain ({', '.join(kinds)})"
    held = [obj for obj in left if (obj.get("metadata") or {}).get("deletionTimestamp") and (obj.get("metadata") or {}).get("finalizers")]
    if held:
        holds = "; ".join(f"{str(obj.get('kind')).lower()} {obj['metadata'].get('namespace')}/{obj['metadata'].get('name')} is held "
                          f"by {', '.join(map(str, obj['metadata']['finalizers']))}" for obj in held[:3])
        return (f"{said}: {holds}{' ...' if len(held) > 3 else ''}; whoever set a finalizer removes it, then what it holds "
                "goes with the rest")
    return f"{said}: no garbage collector or nvcre engine removed them yet (is `nvcre controller` running?); they go once one does"


__all__ = ["Authorizer", "CHILD_KINDS", "Deletion", "delete_certification", "left_message", "remaining", "wait_collected"]
