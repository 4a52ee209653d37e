"""A Certification deleted and created again before its Workflows were collected (the engine was down, or the garbage
collector slow) waits for them to go instead of failing every category WorkflowNameCollision, testing nothing."""

from __future__ import annotations

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store import CERTIFICATION, NODE, WORKFLOW, MemoryStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.engine.memory_engine import ScriptedRunner

CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: again, namespace: default}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories: [{domain: communication, variant: nccl-loopback}]
"""


async def _engine_with(leftover_owner: dict) -> tuple[MemoryStore, Engine, str]:
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    for node in build_nodes(default_scenario()):
        created = await store.create(NODE, node)
        await store.update_status(NODE, {**created, "status": node["status"]})
    cert = certification_from_text("cert", CERT, default_catalog()).to_wire()
    cert.pop("status", None)
    created = await store.create(CERTIFICATION, cert)
    # The Workflow the first category needs, as an earlier certification of this name left it.
    name = "again-communication-nccl-loopback"
    await store.create(WORKFLOW, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                  "metadata": {"name": name, "namespace": "default", "ownerReferences": [leftover_owner]},
                                  "spec": {}})
    cache = engine_cache(store)
    writer = WriteThroughStore(store, cache)
    engine = Engine(writer, clock, default_catalog(), ScriptedRunner(writer, clock, "Succeeded", 0, lambda run: []), cache=cache)
    await cache.start()
    return store, engine, created["metadata"]["uid"]


async def test_a_workflow_an_earlier_namesake_left_is_waited_for_then_the_category_runs() -> None:
    earlier = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "again", "uid": "uid-of-the-earlier-one",
               "controller": True, "blockOwnerDeletion": True}
    store, engine, uid = await _engine_with(earlier)
    try:
        await engine.run_until_settled(max_seconds=600)
    finally:
        await engine.stop()
        await engine.cache.stop()
    cert = await store.get(CERTIFICATION, "again", "default")
    [category] = cert["status"]["categoryStatuses"]
    assert category.get("reason") != "WorkflowNameCollision", category
    [workflow] = (await store.list(WORKFLOW, "default")).items
    assert workflow["metadata"]["ownerReferences"][0]["uid"] == uid  # the leftover was collected, this one made
    assert cond.is_terminal(cert)


async def test_a_workflow_of_another_owner_is_still_a_collision() -> None:
    stranger = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "someone-else", "uid": "uid-x",
                "controller": True}
    store, engine, _ = await _engine_with(stranger)
    try:
        await engine.run_until_settled(max_seconds=600)
    finally:
        await engine.stop()
        await engine.cache.stop()
    [category] = (await store.get(CERTIFICATION, "again", "default"))["status"]["categoryStatuses"]
    assert category["reason"] == "WorkflowNameCollision"
