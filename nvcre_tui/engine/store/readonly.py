"""ReadOnlyStore: a view of another store that refuses every write (the wall display's guarantee)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

from .errors import ReadOnlyRefusal, describe
from .protocol import EVENT, LabelSelectorInput, ListResult, ResourceKind, ResourceStore, WatchEvent

__all__ = ["ReadOnlyStore"]

Obj = dict[str, Any]


def _name_of(obj: object) -> tuple[str | None, str | None]:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(metadata, Mapping):
        return None, None
    return metadata.get("name") or metadata.get("generateName"), metadata.get("namespace")


class ReadOnlyStore:
    """Reads and watches pass through to `inner`; every write raises Forbidden and is counted."""

    def __init__(self, inner: ResourceStore) -> None:
        self._inner = inner
        self.refused_writes = 0

    def _refuse(self, verb: str, kind: object, name: str | None, namespace: str | None) -> ReadOnlyRefusal:
        self.refused_writes += 1
        return ReadOnlyRefusal(f"read-only: {verb} {describe(kind, name, namespace)} refused",
                               kind=kind, name=name or "", namespace=namespace)

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        return await self._inner.get(kind, name, namespace)

    async def list(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | None = None,
    ) -> ListResult:
        return await self._inner.list(kind, namespace, label_selector, field_selector)

    def watch(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        resource_version: str | None = None,
    ) -> AsyncGenerator[WatchEvent, None]:
        return self._inner.watch(kind, namespace, label_selector, resource_version)

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        raise self._refuse("create", kind, *_name_of(obj))

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        raise self._refuse("update", kind, *_name_of(obj))

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        raise self._refuse("update_status", kind, *_name_of(obj))

    async def patch_status(
        self,
        kind: ResourceKind,
        name: str,
        namespace: str | None,
        status_patch: Mapping[str, Any],
        resource_version: str | None = None,
    ) -> Obj:
        raise self._refuse("patch_status", kind, name, namespace)

    async def delete(
        self, kind: ResourceKind, name: str, namespace: str | None = None, uid: str | None = None
    ) -> None:
        raise self._refuse("delete", kind, name, namespace)

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        name, namespace = _name_of(involved)
        kind = involved.get("kind") if isinstance(involved, Mapping) else None
        raise self._refuse("record_event", kind or EVENT, name, namespace)

    async def close(self) -> None:
        """Closes the wrapped store: the view is how its owner holds it."""
        await self._inner.close()
