"""The guard the scenario cases run under (untouched.Untouched) finds an object edited in the watch cache."""

from __future__ import annotations

import asyncio

from nvcre_tui.engine.clock import DEFAULT_START, ManualClock
from nvcre_tui.engine.store import WORKFLOW, MemoryStore
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.scenarios.untouched import Untouched


def _workflow(name: str) -> dict[str, object]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": name, "namespace": "default"},
            "spec": {"groups": [{"name": "group-0", "nodes": ["gpu-node-01"]}]}}


async def _edits(edit_nested: bool) -> list[str]:
    store = MemoryStore(ManualClock(DEFAULT_START))
    cache = WatchCache(store, (WORKFLOW,))
    guard = Untouched(cache)
    await cache.start()
    writer = WriteThroughStore(store, cache)
    try:
        await writer.create(WORKFLOW, _workflow("edited"))
        await writer.create(WORKFLOW, _workflow("replaced"))
        cached = cache.get(WORKFLOW, "edited", "default")
        assert cached is not None
        if edit_nested:
            cached["spec"]["groups"][0]["nodes"].append("gpu-node-02")  # what a reconciler handed a shallow copy must never do
        replaced = cache.get(WORKFLOW, "replaced", "default")
        assert replaced is not None
        await writer.update(WORKFLOW, {**replaced, "spec": {"groups": []}})  # a write replaces: no edit
        return guard.check_all()
    finally:
        await cache.stop()


def test_the_guard_names_an_object_edited_in_the_cache_and_not_one_replaced_by_a_write() -> None:
    assert asyncio.run(_edits(edit_nested=True)) == ["Workflow edited edited in the cache"]
    assert asyncio.run(_edits(edit_nested=False)) == []
