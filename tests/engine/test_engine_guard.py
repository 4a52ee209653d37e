"""The engine's guard covers every step: a malformed object of any kind is failed with ReconcileError (or,
when it cannot even be described, left alone) while every other certification finishes normally."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN, ResourceKind

Obj = dict[str, Any]
SMALL = Scenario.model_validate({"name": "guard", "seed": 5, "nodes": [{"count": 4, "cliques": 1}]})
GOOD = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: good}
spec:
  target: {nodeNames: [gpu-node-01, gpu-node-02]}
  categories: [{domain: communication, variant: nccl-all-reduce}]
"""
API = "nvcre.nvidia.com/v1alpha1"

# (kind, body written with create, then the status written over it): every shape a hand edit or another
# tool could leave behind.
BROKEN: list[tuple[ResourceKind, Obj, Any]] = [
    (CERTIFICATION, {"spec": {"target": {}, "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}}, "not a mapping"),
    (CERTIFICATION, {"spec": "not a spec"}, None),
    (CERTIFICATION, {"spec": {"target": {}, "categories": [{"domain": "communication", "variant": "nccl-loopback"}]}},
     {"conditions": "not a list", "categoryStatuses": [1, 2]}),
    (WORKFLOW, {"spec": {"jobTemplate": {"spec": {}}, "orchestration": {}}}, {"orchestration": {"groups": "x"}}),
    (WORKFLOW, {"spec": 7}, None),
    (JOB, {"spec": {"workload": {}}}, {"conditions": [{"type": 3}]}),
    # a Job whose run the simulator cannot plan: the run fails (InvalidSpec) and the Job with it
    (JOB, {"spec": {"workload": {"workloadRun": {"image": 1}}}, "metadata": {"annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-03"}}},
     {"conditions": None}),
    (WORKLOADRUN, {"spec": {"numNodes": "many"}}, {"phase": "Running", "startTime": "yesterday"}),
]


async def _seed(session: SimSession, index: int, kind: ResourceKind, body: Obj, status: Any) -> str:
    name = f"broken-{index}"
    metadata = {"name": name, "namespace": "default", **(body.get("metadata") or {})}
    created = await session.store.create(kind, {"apiVersion": API, "kind": kind.kind, **body, "metadata": metadata})
    if status is not None:
        await session.store.update_status(kind, {**created, "status": status})
    return name


async def test_every_kind_of_malformed_object_is_quarantined_and_the_rest_finishes() -> None:
    session = await SimSession.open(SMALL, None)
    names = [(kind, await _seed(session, index, kind, body, status)) for index, (kind, body, status) in enumerate(BROKEN)]
    node = await session.store.get(NODE, "gpu-node-04")
    node["metadata"]["labels"] = "not a map"  # a Node the discovery and the health check must survive
    await session.store.update(NODE, node)
    await session.store.create(CERTIFICATION, {**certification_from_text("good.yaml", GOOD, default_catalog()).to_wire(),
                                               "metadata": {"name": "good", "namespace": "default"}})
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=3 * 3600)
    good = await session.store.get(CERTIFICATION, "good", "default")
    assert cond.phase(good) == "Succeeded", good.get("status")
    for kind, name in names:
        obj = await session.store.get(kind, name, "default")
        status = obj.get("status") or {}
        if kind is WORKLOADRUN:
            assert status.get("phase") == "Failed", (kind.kind, name, status)
            continue
        assert cond.phase(obj) == "Failed", (kind.kind, name, status)
        failed = cond.find(status["conditions"], "Failed")
        assert failed is not None, (kind.kind, name, status)
        reason = failed["reason"]
        # broken-6's run is refused by the runner (InvalidSpec, no pod made): its Job says so and blames no node
        expected = ("InvalidSpec",) if name == "broken-6" else ("ReconcileError", "InvalidSpec")
        assert reason in expected, (kind.kind, name, reason)
        if name == "broken-6":  # its run never started a container: no exit code, left out rather than made up or null
            [run] = [r for r in (await session.store.list(WORKLOADRUN, "default")).items
                     if [o.get("name") for o in r["metadata"].get("ownerReferences") or []] == [name]]
            assert "exitCode" not in (run.get("status") or {}), run.get("status")
            assert "exitCode" not in (status.get("failureLog") or {}) and "code None" not in failed["message"], status
            assert status.get("failedNodes") in (None, []) and "no node blamed" in failed["message"], status


@pytest.mark.parametrize("labels", ["not a map", ["a", "b"], 7])
async def test_a_node_with_bad_labels_does_not_stop_the_engine(labels: Any) -> None:
    session = await SimSession.open(SMALL, None)
    node = await session.store.get(NODE, "gpu-node-03")
    node["metadata"]["labels"] = labels
    await session.store.update(NODE, node)
    await session.store.create(CERTIFICATION, {**certification_from_text("good.yaml", GOOD, default_catalog()).to_wire(),
                                               "metadata": {"name": "good", "namespace": "default"}})
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=3 * 3600)
    assert cond.phase(await session.store.get(CERTIFICATION, "good", "default")) == "Succeeded"
