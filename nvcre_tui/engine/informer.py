"""An informer: list, then watch, each kind into an in-memory cache (re-listing when a watch expires).

The console reads its snapshots from here instead of listing the store on every refresh, so a refresh
costs O(objects) references, not O(objects) deep copies, and store events cost one dict update each.
Objects in the cache are shared: readers must not mutate them.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nvcre_tui.engine.store.errors import Gone, StoreError
from nvcre_tui.engine.store.protocol import ResourceKind, ResourceStore
from nvcre_tui.engine.views import SNAPSHOT_KINDS, Snapshot

Obj = dict[str, Any]
Key = tuple[str, str]


class Informer:
    """Caches every object of the snapshot kinds; `version` goes up with every change seen."""

    def __init__(self, store: ResourceStore, kinds: tuple[ResourceKind, ...] = SNAPSHOT_KINDS) -> None:
        self.store = store
        self.kinds = kinds
        self.cache: dict[ResourceKind, dict[Key, Obj]] = {kind: {} for kind in kinds}
        self.version = 0
        self.synced = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """List every kind (so the cache is complete on return), then keep it current in the background."""
        versions = {kind: await self._list(kind) for kind in self.kinds}
        self._tasks = [asyncio.create_task(self._watch(kind, versions[kind])) for kind in self.kinds]
        self.synced.set()

    async def stop(self) -> None:
        """End the watches."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _list(self, kind: ResourceKind) -> str:
        result = await self.store.list(kind)
        self.cache[kind] = {self._key(obj): obj for obj in result.items}
        self.version += 1
        return result.resource_version

    @staticmethod
    def _key(obj: Obj) -> Key:
        meta = obj["metadata"]
        return meta.get("namespace") or "", meta["name"]

    async def _watch(self, kind: ResourceKind, resource_version: str) -> None:
        while True:
            try:
                async for event in self.store.watch(kind, resource_version=resource_version):
                    resource_version = event.object["metadata"].get("resourceVersion", resource_version)
                    if event.type == "DELETED":
                        self.cache[kind].pop(self._key(event.object), None)
                    else:
                        self.cache[kind][self._key(event.object)] = event.object
                    self.version += 1
                await asyncio.sleep(0.1)  # the server closed the watch: resume from where it stopped
            except Gone:  # fell behind the store's history: start again from a fresh list
                resource_version = await self._list(kind)
            except StoreError:
                await asyncio.sleep(1.0)  # a transient error: back off, then watch again

    def snapshot(self) -> Snapshot:
        """The cached objects as a Snapshot (sorted like a list: namespace, then name)."""
        lists = [[self.cache[kind][key] for key in sorted(self.cache[kind])] for kind in self.kinds]
        return Snapshot(*lists, resource_version=str(self.version))
