"""The console's view of the session's watch cache: Snapshots of the kinds the screens show.

The cache (engine/store/cache.py) lists each kind once and follows its watch; the engine reads the same
one. A snapshot costs O(objects) references, never deep copies; its objects are shared: never mutate them.
Successive snapshots share node-state models (engine/report/nodestates.py) that recompute only what changed.
A damaged object (one its model refuses: a status of the wrong type) is left out of every snapshot, as the report
leaves it out, and named in the snapshot's `damaged`; the screens never meet it.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.damage import DamageChecks, DamagedObject
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.protocol import ResourceKind
from nvcre_tui.engine.views import SNAPSHOT_KINDS, CachedJoin, NodeStateModels, Snapshot

Obj = dict[str, Any]


class Informer:
    """Snapshots of a WatchCache, of one namespace's certifications (None: every namespace's); `version` goes up
    with every change the cache sees."""

    def __init__(self, cache: WatchCache, namespace: str | None = None) -> None:
        missing = [kind.kind for kind in SNAPSHOT_KINDS if kind not in cache.objects]
        if missing:
            raise ValueError(f"the cache does not hold {', '.join(missing)}")
        self.cache = cache
        self.namespace = namespace
        # A kind's undamaged objects of the namespace and its damaged ones, by the kind's version.
        self._lists: dict[ResourceKind, tuple[int, list[Obj], list[DamagedObject]]] = {}
        self.damage = DamageChecks()  # each object validated once, not on every snapshot
        self.models = NodeStateModels()  # node states carried from snapshot to snapshot: only changes are recomputed
        self.join = CachedJoin(cache, self.damage)  # certification views likewise: rebuilt only when one of their objects changed

    @property
    def version(self) -> int:
        return self.cache.version

    async def start(self) -> None:
        """Fill the cache if nobody has yet."""
        await self.cache.start()

    def snapshot(self) -> Snapshot:
        """The cached objects as a Snapshot (sorted like a list: namespace, then name), less the damaged ones."""
        lists = {kind: self._list(kind) for kind in SNAPSHOT_KINDS}
        nodes, certifications, workflows, jobs, runs = (list(lists[kind][0]) for kind in SNAPSHOT_KINDS)
        self.join.forget_except(certifications)
        return Snapshot(nodes, certifications, workflows, jobs, runs, resource_version=str(self.cache.version), models=self.models,
                        join=self.join, damaged=tuple(found for kind in SNAPSHOT_KINDS for found in lists[kind][1]))

    def _list(self, kind: ResourceKind) -> tuple[list[Obj], list[DamagedObject]]:
        """The cache's list of `kind` kept to the namespace, less its damaged objects, and those (filtered again only
        when the kind changed); shared: copy before changing it."""
        version = self.cache.kind_versions[kind]
        kept = self._lists.get(kind)
        if kept is None or kept[0] != version:
            everything = self.cache.list(kind)
            if self.namespace is not None and kind.namespaced:
                everything = [obj for obj in everything if obj["metadata"].get("namespace") == self.namespace]
            kept = (version, *self.damage.split(kind.kind, everything))
            self._lists[kind] = kept
        return kept[1], kept[2]
