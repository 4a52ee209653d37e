"""What every reconciler works with: the store (written through into the watch cache), the clock, the
catalog, the runner, and the World: the engine's watch cache, indexed by owner."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from nvcre_tui.engine.api.nodes import plans_the_same
from nvcre_tui.engine.api.vocabulary import BUSY_NODES_READ, BUSY_NODES_UNKNOWN, BUSY_NODES_UNREAD
from nvcre_tui.engine.clock import Clock, format_time
from nvcre_tui.engine.controllers.foreign import as_nvcre_reads_it
from nvcre_tui.engine.controllers.timeslice import TimeSlice
from nvcre_tui.engine.judging.stall import Progress
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.runners.base import NamespaceProbe, NodeOccupants, Runner
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import AlreadyExists, Conflict, NamespaceTerminating, NotFound, StoreError, Unauthorized, failure_line
from nvcre_tui.engine.store.protocol import CERTIFICATION, NODE, WORKFLOW, ResourceKind, ResourceStore
from nvcre_tui.engine.units import count, format_duration

Obj = dict[str, Any]
# Ctx.lost_child: how a child its owner waits for was lost.
DELETED = "deleted"
DISOWNED = "disowned"


# How long the pods list the busy check needs (Context.node_occupants) may fail on transient answers before its Workflow
# says so (BUSY_NODES_UNREAD). Its Workflow waits meanwhile, the read retried with the work queue's backoff (0.5 s doubling:
# about seven attempts in a minute). An API server restarting, or a control plane upgraded one member at a time, answers
# 5xx or drops connections for tens of seconds, which is no news to an SRE and is not said; a Workflow standing still past
# a minute is, and `certification describe` and the Events said nothing of why.
BUSY_READ_PATIENCE = timedelta(seconds=60)
MAX_UNREAD = 1024  # Workflows whose episode of failed reads is remembered (the oldest forgotten, as Progress's runs)


@dataclass
class Unread:
    """An episode of failed reads of a Workflow's nodes' other pods: when the first failed, how many did, and whether
    its Workflow said so."""

    since: datetime
    attempts: int = 0
    said: bool = False


class NameCollision(Exception):
    """A child's deterministic name is taken by an object this parent does not own."""


class Leftover(Conflict):
    """A child's name is taken by what an earlier owner of the same name left (a Certification deleted and created
    again before the garbage collector, or the engine, removed its Workflows): looked at again until it is gone."""


class World:
    """What reconcilers read: the engine's watch cache (shared objects: never mutate them)."""

    def __init__(self, cache: WatchCache) -> None:
        self.cache = cache
        self._node_changes = 0  # Node changes planning can see (nodes_version)
        cache.subscribe(self._count_node_change)

    def close(self) -> None:
        """Stop counting the cache's changes (its engine stopped; the cache may outlive it, a session's)."""
        self.cache.unsubscribe(self._count_node_change)

    def _count_node_change(self, kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        if kind is NODE and not plans_the_same(old, new):
            self._node_changes += 1

    def children_of(self, owner: Obj, kind: str) -> list[Obj]:
        """Children of `owner` of one kind (controller references only), by name; one whose status someone other than
        nvcre wrote reads as failed for it (controllers/foreign.py)."""
        return [as_nvcre_reads_it(kind, child) for child in self.cache.controlled_by(owner["metadata"]["uid"], kind)]

    def certifications(self) -> list[Obj]:
        """Every Certification the cache holds, of every namespace."""
        return self.cache.list(CERTIFICATION)

    def workflows(self) -> list[Obj]:
        """Every Workflow the cache holds, of every owner and namespace."""
        return self.cache.list(WORKFLOW)

    @property
    def nodes(self) -> list[Obj]:
        """All Nodes, by name."""
        return self.cache.list(NODE)

    @property
    def nodes_version(self) -> int:
        """Goes up with every Node change the cache sees but churn (api.nodes.plans_the_same: a heartbeat, an image
        pulled): what a memo of planning over the Nodes is keyed on. Keyed on every Node write, a Certification with a
        category waiting rendered it again (discovery over the whole fleet: 65 ms a reconcile at 3,000 nodes in
        bench/reconcile.py) at nearly every reconcile on a cluster, whose kubelets report their Nodes' status every few
        minutes each."""
        return self._node_changes

    def node(self, name: str) -> Obj | None:
        """One Node, or None."""
        return self.cache.get(NODE, name)


@dataclass
class Context:
    """Store access for reconcilers, with the writes they need (idempotent creates, status patches, events)."""

    store: ResourceStore
    clock: Clock
    catalog: Catalog
    runner: Runner
    writes: int = 0
    # Rendered categories by (Certification uid, index), with the (generation, Nodes version) they were rendered at: a
    # category waiting for nodes or for an earlier category is looked at on every change of its Certification's children.
    renders: dict[tuple[str, int], tuple[tuple[int, int], Any]] = field(default_factory=dict)  # certification.py: _rendered
    # What the engine last saw of each running training's progress, by run uid (judging/stall.py): in its own time.
    progress: dict[str, Progress] = field(default_factory=dict)
    # The engine's share of the event loop: work that grows with a group's nodes breathes through it (the live loop's).
    slice: TimeSlice = field(default_factory=TimeSlice)
    # The reads of others' pods failing on transient answers, by Workflow uid (node_occupants): in memory, as `progress`,
    # and bounded as it is (MAX_UNREAD); an engine started again mid-episode counts it anew (said again at most once: the
    # Event merges, counted).
    unread: dict[str, Unread] = field(default_factory=dict)

    def now(self) -> str:
        """The clock's time, as Kubernetes writes it."""
        return format_time(self.clock.now())

    async def create_child(self, kind: ResourceKind, owner: Obj, child: Obj) -> Obj:
        """Create `child` owned by `owner`; if it already exists and is ours (its controller reference is `owner`'s uid),
        return it (restart-safe); one of another's is a NameCollision (Leftover while an earlier namesake's goes)."""
        meta = child.setdefault("metadata", {})
        meta["namespace"] = owner["metadata"].get("namespace")
        meta["ownerReferences"] = [{
            "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
        }]
        try:
            created = await self.store.create(kind, child)
            self.writes += 1
            return created
        except AlreadyExists:
            existing = await self.store.get(kind, meta["name"], meta["namespace"])
            refs = [ref for ref in existing["metadata"].get("ownerReferences") or [] if isinstance(ref, dict)]
            # Ours only by its controller reference, as Kubernetes controllers adopt: a plain reference to the owner's
            # uid is anyone's to write (a planted failed-nodes ConfigMap was taken for the one the engine measured)
            if any(ref.get("controller") is True and ref.get("uid") == owner["metadata"]["uid"] for ref in refs):
                return existing
            earlier = any(ref.get("controller") and ref.get("kind") == owner["kind"] and ref.get("name") == owner["metadata"]["name"]
                          for ref in refs)  # a namesake of this owner: gone, since this one holds the name now
            if earlier or existing["metadata"].get("deletionTimestamp"):
                raise Leftover(f"{kind.kind} {meta['name']} of an earlier {owner['kind']} {owner['metadata']['name']} is still being "
                               "removed", kind=kind, name=meta["name"], namespace=meta["namespace"]) from None
            raise NameCollision(f"{kind.kind} {meta['name']} exists and is not owned by {owner['kind']} {owner['metadata']['name']}") from None

    @staticmethod
    def changes(obj: Obj, status: Obj) -> bool:
        """Whether merging `status` would change obj.status. Nulls count as absent: a merge patch deletes a key
        set to null, and the API server prunes nulls inside lists (a structural schema has no nullable fields),
        so a row written with `reason: null` reads back without `reason`."""
        current: Obj = obj["status"] if isinstance(obj.get("status"), dict) else {}
        return not all(_same_without_nulls(current.get(key), value) for key, value in status.items())

    async def transition(self, kind: ResourceKind, obj: Obj, status: Obj, events: list[tuple[str, str, str]]) -> bool:
        """Patch status, recording `events` (type, reason, message) first: an engine that dies between
        the two still leaves the event (a repeat merges into the same Event, counted)."""
        if not self.changes(obj, status):
            return False
        for type_, reason, message in events:
            await self.event(obj, type_, reason, message)
        return await self.patch_status(kind, obj, status)

    async def patch_status(self, kind: ResourceKind, obj: Obj, status: Obj) -> bool:
        """Merge `status` into obj.status if it changes anything; False on a conflict (next sweep retries)."""
        if not self.changes(obj, status):
            return False
        meta = obj["metadata"]
        try:
            updated = await self.store.patch_status(kind, meta["name"], meta.get("namespace"), status, meta.get("resourceVersion"))
        except (Conflict, NotFound):
            return False
        self.writes += 1
        obj["status"], obj["metadata"] = updated.get("status", {}), updated["metadata"]
        return True

    async def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """A Kubernetes Event on `obj` (Warning for failures, else Normal). None where `obj`'s namespace is being
        terminated: it admits no new object (403 NamespaceTerminating), and the status write the Event comes before
        (`transition`) must still be made, or the object never leaves the state it is in."""
        try:
            await self.store.record_event(obj, type_, reason, message)
        except NamespaceTerminating:
            return
        self.writes += 1

    async def namespace_closing(self, kind: ResourceKind, probe: Obj) -> bool | None:
        """Whether `probe`'s namespace is being terminated, where the runner can tell (runners/base.NamespaceProbe:
        once an interval a namespace); None where it cannot (the embedded store has no namespaces)."""
        if not isinstance(self.runner, NamespaceProbe):
            return None
        return await self.runner.namespace_closing(kind, probe)

    async def node_occupants(self, wf: Obj, nodes: Sequence[str]) -> dict[str, list[Obj]]:
        """node -> the pods not nvcre's bound to it, for Workflow `wf`'s `nodes`, where the runner can tell
        (runners/base.NodeOccupants: a cluster); {} where it cannot (the simulated fleet, where nothing else runs). A
        read refused for good (RBAC: an engine's role edited; a proxy's 400, an aggregated API's 404) is read as nothing
        known, said on `wf` (BUSY_NODES_UNKNOWN): its nodes are kept, and a pod one cannot take waits, named, as before.
        Others' pods only keep a busy node out: failing the category for them (ReconcileError, as any other answer but
        Forbidden did) tested none of its nodes. A transient answer, and refused credentials, are raised: the engine looks
        again, or says so once."""
        if not isinstance(self.runner, NodeOccupants) or not nodes:
            return {}
        uid = str(wf["metadata"].get("uid") or "")
        try:
            found = await self.runner.others_on(nodes)
        except StoreError as error:
            if error.retryable:
                await self._unread(wf, uid, error)
            if error.retryable or isinstance(error, Unauthorized):
                raise
            self.unread.pop(uid, None)  # over: said as BUSY_NODES_UNKNOWN
            await self.event(wf, "Warning", BUSY_NODES_UNKNOWN, f"the pods on its nodes could not be read ({failure_line(error)}): "
                                                                 "no node is left out as busy with others' pods")
            return {}
        episode = self.unread.pop(uid, None)
        if episode is not None and episode.said:
            failing = format_duration((self.clock.now() - episode.since).total_seconds())
            await self.event(wf, "Normal", BUSY_NODES_READ, f"the pods on its nodes were read again, after failing for {failing} "
                                                              f"({count(episode.attempts, 'attempt')})")
        return found

    async def _unread(self, wf: Obj, uid: str, error: StoreError) -> None:
        """One more transient failure to read Workflow `wf`'s nodes' other pods: said once, in a Warning Event, once they
        have failed for BUSY_READ_PATIENCE."""
        if uid not in self.unread:
            while len(self.unread) >= MAX_UNREAD:  # a Workflow deleted mid-episode is never read again: not kept for ever
                self.unread.pop(next(iter(self.unread)))
            self.unread[uid] = Unread(since=self.clock.now())
        episode = self.unread[uid]
        episode.attempts += 1
        failing = self.clock.now() - episode.since
        if episode.said or failing < BUSY_READ_PATIENCE:
            return
        await self.event(wf, "Warning", BUSY_NODES_UNREAD, f"the pods on its nodes could not be read for {format_duration(failing.total_seconds())} "
                                                           f"({failure_line(error)}): it waits for them to tell busy nodes, retried with backoff")
        episode.said = True  # once recorded: an Event the store refused is tried again at the next failure

    async def lost_child(self, kind: ResourceKind, name: str, owner: Obj) -> str | None:
        """Why a child missing from this sweep's view of `owner`'s children is lost, confirmed with a live read (a cache
        miss must not fail anything: NVCRE #384): `deleted`, or `disowned` (it stands, but its metadata.ownerReferences
        no longer name `owner` as its controller: edited by hand, its result is not the owner's, and the owner stood
        still for ever waiting for it); None: it is the owner's child still."""
        try:
            live = await self.store.get(kind, name, owner["metadata"].get("namespace"))
        except NotFound:
            return DELETED
        refs = (live.get("metadata") or {}).get("ownerReferences")
        uid = owner["metadata"].get("uid")
        mine = any(isinstance(ref, dict) and ref.get("controller") is True and ref.get("uid") == uid for ref in refs or [])
        return None if mine else DISOWNED

    async def delete(self, kind: ResourceKind, obj: Obj) -> None:
        """Delete an object if it is still there."""
        try:
            await self.store.delete(kind, obj["metadata"]["name"], obj["metadata"].get("namespace"))
            self.writes += 1
        except NotFound:
            pass


def _same_without_nulls(a: Any, b: Any) -> bool:
    """_without_nulls(a) == _without_nulls(b), without copying either: equal parts are compared as they are (a
    Workflow's status of thousands of groups, of which a patch changes one, is walked down to that one only)."""
    if a == b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        keys = {key for key, item in a.items() if item is not None}
        if keys != {key for key, item in b.items() if item is not None}:
            return False
        return all(_same_without_nulls(a[key], b[key]) for key in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_without_nulls(x, y) for x, y in zip(a, b))
    return _without_nulls(a) == _without_nulls(b)


def _without_nulls(value: Any) -> Any:
    """`value` with every null map entry left out, at any depth (how the API server stores it)."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value
