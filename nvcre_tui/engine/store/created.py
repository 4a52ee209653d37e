"""Whether a create the store answered AlreadyExists made that object itself: the server committed an earlier try of
it and its answer was lost (a 5xx or a timeout after the write, a connection cut), and the store's retry met it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import AlreadyExists, StoreError
from .protocol import ResourceKind, ResourceStore

__all__ = ["made_by_this_create", "stored_if_same_spec"]


async def stored_if_same_spec(store: ResourceStore, kind: ResourceKind, body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stored object of `body`'s name when its spec is `body`'s, else None (also when it cannot be read)."""
    metadata = body["metadata"]
    try:
        stored = await store.get(kind, metadata["name"], metadata.get("namespace"))
    except StoreError:
        return None
    return stored if stored.get("spec") == body.get("spec") else None


async def made_by_this_create(store: ResourceStore, kind: ResourceKind, body: Mapping[str, Any],
                              refused: AlreadyExists) -> dict[str, Any] | None:
    """The object `body`'s create made when its AlreadyExists answered the store's retry of it (`repeated`) and the
    stored object has its spec; None for a name another took (told as taken, as before)."""
    return await stored_if_same_spec(store, kind, body) if refused.repeated else None
