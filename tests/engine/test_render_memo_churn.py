"""A Certification's categories are rendered (discovery over every Node) once per state of the Nodes as planning sees
them: a Node's heartbeat, an image pulled or a volume attached changes nothing planning reads. Keyed on every Node
write, a certification whose second category waited for its first rendered it again at nearly every reconcile on a
cluster, whose kubelets report every Node's status every few minutes (65 ms a reconcile against 4 ms at 3,000 nodes:
bench/reconcile.py)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.api.nodes import plans_the_same
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.controllers import certification
from nvcre_tui.engine.controllers.certification import is_held
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION, NODE

Obj = dict[str, Any]
TWO_ON_THE_SAME_NODES = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: burn-in}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node, maxConcurrent: 8}}
    - {domain: communication, variant: nccl-loopback, options: {maxConcurrent: 8}}
"""


def heartbeat(node: Obj, at: str) -> Obj:
    """The Node as its kubelet reports it again: the same conditions beating at `at`, an image pulled, a volume in use."""
    beat = copy.deepcopy(node)
    status = beat.setdefault("status", {})
    status["conditions"] = [{**c, "lastHeartbeatTime": at} for c in status.get("conditions") or []]
    status["images"] = [{"names": [f"nvcr.io/nvidia/pytorch:{at}"], "sizeBytes": 1}]
    status["volumesInUse"] = [f"kubernetes.io/csi/scratch^{at}"]
    return beat


async def test_a_heartbeat_renders_no_category_again_and_a_label_change_does(monkeypatch: pytest.MonkeyPatch) -> None:
    renders: list[int] = []
    render_category = certification.render_category

    def counted(*args: Any) -> Any:
        renders.append(args[1])
        return render_category(*args)

    monkeypatch.setattr(certification, "render_category", counted)
    session = await SimSession.open(default_scenario(), None, history=None)
    engine = session.engine
    assert engine is not None
    body = certification_from_text("test", TWO_ON_THE_SAME_NODES, default_catalog()).to_wire()
    body["metadata"]["namespace"] = "default"
    await session.store.create(CERTIFICATION, body)
    await engine.run_until_settled(max_seconds=60)
    cert = session.cache.get(CERTIFICATION, "burn-in", "default")
    assert cert is not None
    assert is_held(certification_status(cert)["categoryStatuses"][1])  # the second waits for the first: rendered at each look

    async def seen(written: Obj) -> None:
        """Once the engine's cache holds what was written (a watch event, delivered on the loop)."""
        for _ in range(1000):
            if session.cache.get(NODE, written["metadata"]["name"]) == written:
                return
            await asyncio.sleep(0)
        raise AssertionError(f"the cache never saw {written['metadata']['name']} as written")

    async def looked_at_again() -> list[int]:
        renders.clear()
        engine.queue.add((CERTIFICATION, ("default", "burn-in")))
        await engine.settle()
        return list(renders)

    assert await looked_at_again() == []  # nothing changed: the memo answers
    at = format_time(session.clock.now())
    for node in list(session.cache.objects[NODE].values()):
        await seen(await session.store.update_status(NODE, heartbeat(node, at)))
    assert await looked_at_again() == [], "a heartbeat of every Node rendered the categories again"

    cached = session.cache.get(NODE, "gpu-node-03")
    assert cached is not None
    node = copy.deepcopy(cached)
    node["metadata"]["labels"]["example.com/rack-row"] = "b"
    await seen(await session.store.update(NODE, node))
    assert await looked_at_again() == [1], "a label changed and the waiting category was not rendered again"
    for row in "cd":  # the latest render of each category is kept, not one per state of the Nodes
        node = copy.deepcopy(session.cache.get(NODE, "gpu-node-03") or {})
        node["metadata"]["labels"]["example.com/rack-row"] = row
        await seen(await session.store.update(NODE, node))
        assert await looked_at_again() == [1]
    assert len(engine.ctx.renders) == 2  # its two categories
    await session.store.delete(CERTIFICATION, "burn-in", "default")  # a certification gone: its renders go too
    await engine.settle()
    assert engine.ctx.renders == {}
    await session.close()


def test_only_churn_plans_the_same() -> None:
    node: Obj = {"metadata": {"name": "n", "resourceVersion": "1", "labels": {"a": "b"}}, "spec": {},
                 "status": {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "t0"}], "allocatable": {"nvidia.com/gpu": "8"}}}
    beat = heartbeat(node, "t1")
    beat["metadata"]["resourceVersion"] = "2"
    assert plans_the_same(node, beat)
    for path, value in ((("status", "conditions"), [{"type": "Ready", "status": "False", "lastHeartbeatTime": "t1"}]),
                        (("status", "allocatable"), {"nvidia.com/gpu": "7"}), (("metadata", "labels"), {"a": "c"}),
                        (("spec", "unschedulable"), True), (("metadata", "annotations"), {"x": "y"})):
        changed = copy.deepcopy(beat)
        changed[path[0]][path[1]] = value
        assert not plans_the_same(node, changed), path
    assert not plans_the_same(None, node) and not plans_the_same(node, None)
