"""A ResourceStore view that feeds every object it writes back into a WatchCache at once.

The engine and the in-process simulator write through it, so the cache they read never lags behind
their own writes (the watch delivers the same states later; the cache takes each state once).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

from .cache import WatchCache
from .protocol import EVENT, LabelSelectorInput, ListResult, ResourceKind, ResourceStore, WatchEvent

__all__ = ["WriteThroughStore"]

Obj = dict[str, Any]


class WriteThroughStore:
    """Reads and watches go to `inner`; writes go to `inner`, then their result into `cache`."""

    def __init__(self, inner: ResourceStore, cache: WatchCache) -> None:
        self.inner = inner
        self.cache = cache
        self.writes = 0  # successful writes, so a settle can tell a quiet pass

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        return await self.inner.get(kind, name, namespace)

    async def list(self, kind: ResourceKind, namespace: str | None = None, label_selector: LabelSelectorInput = None,
                   field_selector: str | None = None) -> ListResult:
        return await self.inner.list(kind, namespace, label_selector, field_selector)

    def watch(self, kind: ResourceKind, namespace: str | None = None, label_selector: LabelSelectorInput = None,
              resource_version: str | None = None) -> AsyncGenerator[WatchEvent, None]:
        return self.inner.watch(kind, namespace, label_selector, resource_version)

    def _seen(self, kind: ResourceKind, obj: Obj) -> Obj:
        self.writes += 1
        self.cache.observe(kind, obj)
        return obj

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        return self._seen(kind, await self.inner.create(kind, obj))

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        return self._seen(kind, await self.inner.update(kind, obj))

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        return self._seen(kind, await self.inner.update_status(kind, obj))

    async def patch_status(self, kind: ResourceKind, name: str, namespace: str | None, status_patch: Mapping[str, Any],
                           resource_version: str | None = None) -> Obj:
        return self._seen(kind, await self.inner.patch_status(kind, name, namespace, status_patch, resource_version))

    async def delete(self, kind: ResourceKind, name: str, namespace: str | None = None, uid: str | None = None) -> None:
        await self.inner.delete(kind, name, namespace, uid)
        self.writes += 1  # the watch brings the deletion (or the deletionTimestamp) into the cache

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        return self._seen(EVENT, await self.inner.record_event(involved, type, reason, message))

    async def close(self) -> None:
        await self.inner.close()

