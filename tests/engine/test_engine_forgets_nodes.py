"""An engine left running for weeks on a cluster whose nodes come and go by name (autoscaled, replaced): its index of
the unfinished Jobs on each node holds the nodes with one running, not every node it ever saw one on."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.store import JOB, MemoryStore
from tests.engine.memory_engine import ScriptedRunner

Obj = dict[str, Any]
FINISHED = [{"type": "Succeeded", "status": "True", "reason": "Done", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def _job(name: str, nodes: list[str], rv: int, finished: bool = False) -> Obj:
    job: Obj = {"kind": "Job", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": str(rv),
                                            "annotations": {ANNOTATION_GROUP_NODES: ",".join(nodes)}}}
    if finished:
        job["status"] = {"conditions": FINISHED}
    return job


def test_nodes_whose_jobs_ended_or_went_are_forgotten() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    engine = Engine(store, clock, default_catalog(), ScriptedRunner(store, clock, "Succeeded", 0, lambda run: []))  # type: ignore[arg-type]
    rv = 0
    for i in range(20):  # each Job on two nodes seen once (ip-10-0-<i>-...): one finishes, one is deleted while running
        rv += 1
        engine.cache.observe(JOB, _job(f"ends-{i}", [f"ip-10-0-{i}-1", f"ip-10-0-{i}-2"], rv))
        rv += 1
        engine.cache.observe(JOB, _job(f"ends-{i}", [f"ip-10-0-{i}-1", f"ip-10-0-{i}-2"], rv, finished=True))
        rv += 1
        engine.cache.observe(JOB, _job(f"goes-{i}", [f"ip-10-1-{i}-1"], rv))
        engine.cache.forget(JOB, _job(f"goes-{i}", [f"ip-10-1-{i}-1"], rv))
    rv += 1
    engine.cache.observe(JOB, _job("runs", ["gpu-node-01"], rv))
    assert engine._jobs_on_node == {"gpu-node-01": {("default", "runs")}}
