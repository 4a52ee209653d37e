"""The console's view of the session's watch cache: Snapshots of the kinds the screens show.

The cache (engine/store/cache.py) lists each kind once and follows its watch; the engine reads the same
one. A snapshot costs O(objects) references, never deep copies; its objects are shared: never mutate them.
Successive snapshots share node-state models (engine/report/nodestates.py) that recompute only what changed.
"""

from __future__ import annotations

from typing import Any

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
        self._lists: dict[ResourceKind, tuple[int, list[Obj]]] = {}  # a kind's list of the namespace, by the kind's version
        self.models = NodeStateModels()  # node states carried from snapshot to snapshot: only changes are recomputed
        self.join = CachedJoin(cache)  # certification views likewise: rebuilt only when one of their objects changed

    @property
    def version(self) -> int:
        return self.cache.version

    async def start(self) -> None:
        """Fill the cache if nobody has yet."""
        await self.cache.start()

    def snapshot(self) -> Snapshot:
        """The cached objects as a Snapshot (sorted like a list: namespace, then name)."""
        nodes, certifications, workflows, jobs, runs = [self._list(kind) for kind in SNAPSHOT_KINDS]
        self.join.forget_except(certifications)
        return Snapshot(nodes, certifications, workflows, jobs, runs, resource_version=str(self.cache.version), models=self.models,
                        join=self.join)

    def _list(self, kind: ResourceKind) -> list[Obj]:
        """The cache's list of `kind`, kept to the namespace (filtered again only when the kind changed)."""
        everything = self.cache.list(kind)
        if self.namespace is None or not kind.namespaced:
            return everything
        version = self.cache.kind_versions[kind]
        kept = self._lists.get(kind)
        if kept is None or kept[0] != version:
            kept = (version, [obj for obj in everything if obj["metadata"].get("namespace") == self.namespace])
            self._lists[kind] = kept
        return list(kept[1])
