"""The engine's own first partition of Workflows: an engine on a memory store whose pods never start."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.iterations import current_groups
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store import EVENT, NODE, WORKFLOW, MemoryStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore


class IdleRunner:
    """A cluster whose pods never start (no kubelet, as under envtest): the engine plans and creates, nothing runs."""

    simulated = False

    async def reconcile_run(self, run: dict[str, Any]) -> float | None:
        return None

    async def logs(self, run: dict[str, Any], *, required: bool = True) -> list[str]:
        return []

    async def stop(self, run: dict[str, Any]) -> None:
        return None

    async def release(self, owner: dict[str, Any]) -> None:
        return None

    async def tick(self) -> float | None:
        return None


@dataclass(frozen=True)
class Partitioned:
    """One Workflow after the controller partitioned it: its groups, and the reasons of its events."""

    groups: dict[str, list[str]]
    events: dict[str, str]  # reason -> message


async def partitioned(workflows: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> dict[str, Partitioned]:
    """The first-iteration groups the Workflow controller partitions each (status-less) Workflow into."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    for node in nodes:  # a create drops status (a subresource): write it as the kubelet would
        created = await store.create(NODE, node)
        if node.get("status"):
            await store.update_status(NODE, {**created, "status": node["status"]})
    for workflow in workflows:
        await store.create(WORKFLOW, {k: v for k, v in workflow.items() if k != "status"})
    cache = engine_cache(store)
    engine = Engine(WriteThroughStore(store, cache), clock, default_catalog(), IdleRunner(), cache=cache)
    await cache.start()
    try:
        await engine.settle()
    finally:
        await engine.stop()
        await cache.stop()
    events = (await store.list(EVENT)).items
    out = {}
    for workflow in (await store.list(WORKFLOW)).items:
        name = workflow["metadata"]["name"]
        groups = current_groups(workflow)
        mine = {e["reason"]: e["message"] for e in events if e["involvedObject"]["name"] == name}
        out[name] = Partitioned({g["name"]: g["nodes"] for g in groups}, mine)
    return out
