"""What the engine may collect where no garbage collector runs (engine/controllers/collect.py): only an nvcre
Workflow, Job or WorkloadRun whose nvcre owner is gone by uid, as the owner and the object itself read live.
Never a Certification, never an object some other controller owns, never on a cache that lags, never a child
someone has since detached."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.collect import orphan
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store import CERTIFICATION, NODE, WORKFLOW, MemoryStore
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.engine.memory_engine import ScriptedRunner

Obj = dict[str, Any]
CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: cert, namespace: default}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
  - {domain: diagnostics, variant: dcgm-level4, options: {testScale: intra-node}}
"""
GONE_UID = "aaaaaaaa-0000-4000-8000-000000000001"


async def _fleet() -> tuple[ManualClock, MemoryStore]:
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    for node in build_nodes(default_scenario()):
        created = await store.create(NODE, node)
        await store.update_status(NODE, {**created, "status": node["status"]})
    return clock, store


def _cert(owner: Obj | None = None) -> Obj:
    cert = certification_from_text("cert", CERT, default_catalog()).to_wire()
    cert.pop("status", None)
    if owner is not None:
        cert["metadata"]["ownerReferences"] = [owner]
    return cert


@pytest.mark.parametrize(("api_version", "kind"), [("argoproj.io/v1alpha1", "Workflow"), ("batch/v1", "Job"),
                                                    ("nvcre.nvidia.com/v1alpha1", "Workflow")])
async def test_a_certification_with_a_controller_owner_that_is_gone_is_never_collected(api_version: str, kind: str) -> None:
    clock, store = await _fleet()
    cache = engine_cache(store)
    writer = WriteThroughStore(store, cache)
    engine = Engine(writer, clock, default_catalog(), ScriptedRunner(writer, clock, "Succeeded", 0, lambda run: []), cache=cache)
    await store.create(CERTIFICATION, _cert({"apiVersion": api_version, "kind": kind, "name": "nightly-42", "uid": GONE_UID,
                                             "controller": True}))
    try:
        await engine.run_until_settled(max_seconds=3600)
        cert = await store.get(CERTIFICATION, "cert", "default")
        assert cert["status"]["summary"]["result"] in ("PASSED", "FAILED")  # it ran, and it is still there
    finally:
        await engine.stop()


class LaggingCache:
    """A cache that has not yet seen the owner (its watch is behind the store)."""

    def __init__(self, cache: WatchCache) -> None:
        self.inner = cache

    def get_by_uid(self, uid: str) -> Obj | None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _workflow_of(store: MemoryStore, owner_uid: str) -> Obj:
    workflow: Obj = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                     "metadata": {"name": "w", "namespace": "default", "ownerReferences": [
                         {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "cert", "uid": owner_uid,
                          "controller": True}]},
                     "spec": {"jobTemplate": {"spec": {}}}}
    return await store.create(WORKFLOW, workflow)


async def test_a_cache_that_has_not_seen_the_owner_collects_nothing() -> None:
    clock, store = await _fleet()
    cert = await store.create(CERTIFICATION, _cert())
    workflow = await _workflow_of(store, cert["metadata"]["uid"])
    ctx = Context(store=store, clock=clock, catalog=default_catalog(), runner=ScriptedRunner(store, clock, "Succeeded", 0, lambda run: []))  # type: ignore[arg-type]
    world = World(LaggingCache(engine_cache(store)))  # type: ignore[arg-type]
    assert await orphan(ctx, WORKFLOW, workflow, world) is None  # the live read finds the owner


async def test_an_owner_gone_or_replaced_by_a_namesake_makes_an_orphan_but_a_detached_child_is_left_alone() -> None:
    clock, store = await _fleet()
    ctx = Context(store=store, clock=clock, catalog=default_catalog(), runner=ScriptedRunner(store, clock, "Succeeded", 0, lambda run: []))  # type: ignore[arg-type]
    world = World(engine_cache(store))
    workflow = await _workflow_of(store, GONE_UID)
    live = await orphan(ctx, WORKFLOW, workflow, world)
    assert live is not None and live["metadata"]["uid"] == workflow["metadata"]["uid"]
    await store.create(CERTIFICATION, _cert())  # a new Certification of the same name: not the owner
    assert await orphan(ctx, WORKFLOW, workflow, world) is not None
    detached = {**workflow, "metadata": {**workflow["metadata"], "ownerReferences": []}}
    await store.update(WORKFLOW, detached)  # `--cascade=orphan`: the garbage collector took the reference away
    assert await orphan(ctx, WORKFLOW, workflow, world) is None  # the cached copy still names the owner; the live one does not
    await store.delete(WORKFLOW, "w", "default")
    with pytest.raises(NotFound):
        await store.get(WORKFLOW, "w", "default")
    assert await orphan(ctx, WORKFLOW, workflow, world) is None  # gone already: nothing to collect
