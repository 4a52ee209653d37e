"""The console's view of the session's watch cache: Snapshots of the kinds the screens show.

The cache (engine/store/cache.py) lists each kind once and follows its watch; the engine reads the same
one. Each kind is kept sorted and checked from the keys the cache notes as they change (store/cacheview.py): a
snapshot after a change takes in the objects that changed, then copies each list's references (never the objects:
they are shared, never mutate them).
Successive snapshots share node-state models (engine/report/nodestates.py) that recompute only what changed.
A damaged object (one its model refuses: a status of the wrong type) is left out of every snapshot, as the report
leaves it out, and named in the snapshot's `damaged`; the screens never meet it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from nvcre_tui.engine.api import damage
from nvcre_tui.engine.api.damage import DamagedObject
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.cacheview import CONTROLLER, CacheView
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW, ResourceKind
from nvcre_tui.engine.views.join import CachedJoin
from nvcre_tui.engine.views.snapshot import SNAPSHOT_KINDS, NodeStateModels, Snapshot


class Informer:
    """Snapshots of a WatchCache, of one namespace's certifications (None: every namespace's); `version` goes up
    with every change the cache sees."""

    def __init__(self, cache: WatchCache, namespace: str | None = None) -> None:
        missing = [kind.kind for kind in SNAPSHOT_KINDS if kind not in cache.objects]
        if missing:
            raise ValueError(f"the cache does not hold {', '.join(missing)}")
        self.cache = cache
        self.namespace = namespace
        # Each kind's undamaged objects of the namespace and its damaged ones, kept from the cache's changes: a
        # snapshot after one change takes that object in (validated once), not the whole kind again.
        groups = {WORKFLOW: CONTROLLER, JOB: CONTROLLER}  # joined to their owners as the engine does (views/join.py)
        self.lists = {kind: CacheView(cache, kind, namespace, group_by=groups.get(kind), refuse=partial(_unshowable, kind.kind))
                      for kind in SNAPSHOT_KINDS}
        self.models = NodeStateModels()  # node states carried from snapshot to snapshot: only changes are recomputed
        # certification views likewise: rebuilt only when one of their objects changed, a Workflow's Jobs patched
        self.join = CachedJoin(cache, self.lists[WORKFLOW], self.lists[JOB])

    @property
    def version(self) -> int:
        return self.cache.version

    async def start(self) -> None:
        """Fill the cache if nobody has yet."""
        await self.cache.start()

    def snapshot(self) -> Snapshot:
        """The cached objects as a Snapshot (sorted like a list: namespace, then name), less the damaged ones."""
        nodes, certifications, workflows, jobs, runs = (list(self.lists[kind].objects()) for kind in SNAPSHOT_KINDS)
        self.join.forget_except(certifications)
        return Snapshot(nodes, certifications, workflows, jobs, runs, resource_version=str(self.cache.version), models=self.models,
                        join=self.join, damaged=tuple(_damaged(kind, obj, problem) for kind in SNAPSHOT_KINDS
                                                      for obj, problem in self.lists[kind].refused()))


def _unshowable(kind: str, obj: dict[str, Any]) -> str | None:
    return damage.unshowable_object(kind, obj)  # looked up at each call: tests count the checks


def _damaged(kind: ResourceKind, obj: dict[str, Any], problem: str) -> DamagedObject:
    meta = obj.get("metadata") or {}
    return DamagedObject(kind.kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""), problem)
