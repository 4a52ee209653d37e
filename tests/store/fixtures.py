"""Object builders and watch helpers shared by the store contract tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from nvcre_tui.engine.store import WatchEvent

# Guards a broken watch from hanging the suite; never reached when the store works.
WATCH_GUARD_SECONDS = 5.0


def obj(
    name: str,
    namespace: str | None = "default",
    *,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    owners: list[dict[str, Any]] | None = None,
    finalizers: list[str] | None = None,
) -> dict[str, Any]:
    """A minimal object (apiVersion/kind are filled in by the store) with only the given parts."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = dict(labels)
    if owners:
        # One controller at most (the API server rejects two): the first owner is it, others just own.
        metadata["ownerReferences"] = [owner_ref(owner, controller=index == 0) for index, owner in enumerate(owners)]
    if finalizers is not None:
        metadata["finalizers"] = list(finalizers)
    body: dict[str, Any] = {"metadata": metadata, "spec": dict(spec or {"size": 1})}
    if status is not None:
        body["status"] = status
    return body


def pod(name: str, node: str | None = None, *, owners: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A Pod an API server accepts (it requires containers with a name and an image)."""
    body = obj(name, owners=owners, spec={"containers": [{"name": "main", "image": "busybox:1.36"}]})
    if node is not None:
        body["spec"]["nodeName"] = node
    return body


# What a store may lack: tests that need one skip, naming it, where the store cannot provide it.
CONTROLLED_CLOCK = "controlled-clock"      # server timestamps (creation, deletion) follow the test's clock
GARBAGE_COLLECTOR = "garbage-collector"    # deleting an owner removes its dependents
SMALL_HISTORY = "small-history"            # watch replay keeps only `history_limit` changes
ALL_CAPABILITIES = frozenset({CONTROLLED_CLOCK, GARBAGE_COLLECTOR, SMALL_HISTORY})


def needs(capabilities: frozenset[str], capability: str) -> None:
    """Skip the calling test when the store under test lacks `capability` (never a silent pass)."""
    if capability not in capabilities:
        pytest.skip(f"this store cannot provide {capability}")


def owner_ref(owner: dict[str, Any], controller: bool = True) -> dict[str, Any]:
    """An owner reference to a stored object (a controller reference unless told otherwise)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def relabel(stored: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """A copy of a stored object with other labels (ready for update: same resourceVersion)."""
    return dict(stored, metadata={**stored["metadata"], "labels": dict(labels)})


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


async def next_event(watch: AsyncIterator[WatchEvent]) -> WatchEvent:
    """The next event of a watch (fails the test instead of hanging if none comes)."""
    return await asyncio.wait_for(anext(watch), WATCH_GUARD_SECONDS)


async def take(watch: AsyncIterator[WatchEvent], count: int) -> list[tuple[str, str]]:
    """The next `count` events as (type, name)."""
    return [(e.type, e.object["metadata"]["name"]) for e in [await next_event(watch) for _ in range(count)]]
