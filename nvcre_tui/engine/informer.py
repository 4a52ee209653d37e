"""The console's view of the session's watch cache: Snapshots of the kinds the screens show.

The cache (engine/store/cache.py) lists each kind once and follows its watch; the engine reads the same
one. A snapshot costs O(objects) references, never deep copies; its objects are shared: never mutate them.
Successive snapshots share node-state models (engine/report/nodestates.py) that recompute only what changed.
"""

from __future__ import annotations

from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.views import SNAPSHOT_KINDS, CachedJoin, NodeStateModels, Snapshot


class Informer:
    """Snapshots of a WatchCache; `version` goes up with every change the cache sees."""

    def __init__(self, cache: WatchCache) -> None:
        missing = [kind.kind for kind in SNAPSHOT_KINDS if kind not in cache.objects]
        if missing:
            raise ValueError(f"the cache does not hold {', '.join(missing)}")
        self.cache = cache
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
        lists = [self.cache.list(kind) for kind in SNAPSHOT_KINDS]
        nodes, certifications, workflows, jobs, runs = lists
        self.join.forget_except({cert["metadata"]["name"] for cert in certifications})
        return Snapshot(nodes, certifications, workflows, jobs, runs, resource_version=str(self.cache.version), models=self.models,
                        join=self.join)
