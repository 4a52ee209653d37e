"""The real engine on the simulated fleet: the default scenario's faults are found by the real parsers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.controllers.iterations import blamed_nodes
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import load_certification
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, MemoryStore

Obj = dict[str, Any]
# The repository's examples/ (a copy of shared/examples, which sits beside the checkout).
_ROOT = Path(__file__).resolve().parents[2]
_CANDIDATES = (_ROOT / "examples/certification.yaml", _ROOT.parent / "shared/examples/certification.yaml")
EXAMPLE = str(next((path for path in _CANDIDATES if path.exists()), _CANDIDATES[0]))  # missing: load names the file
ALL_REDUCE = "gpu-cluster-cert-communication-nccl-all-reduce"


def intra_node_certification() -> Obj:
    """The shared example, with its all-reduce run inside each node against `value >= 400`."""
    cert = load_certification(EXAMPLE, default_catalog()).to_wire()
    cert["metadata"]["namespace"] = "default"
    cert["spec"]["options"].pop("thresholds", None)  # the category's own replace them: applied to none, refused
    for category in cert["spec"]["categories"]:
        if category["variant"] == "nccl-all-reduce":
            category["options"] = {"testScale": "intra-node", "thresholds": {"busBandwidthGBps": "value >= 400"}}
    return cert


def engine_on(store: MemoryStore, clock: ManualClock) -> Engine:
    scenario = default_scenario()
    return Engine(store, clock, default_catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))


async def test_intra_node_all_reduce_blames_the_slow_gpu_node_only() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    engine = engine_on(store, clock)
    cert = intra_node_certification()
    await store.create(CERTIFICATION, cert)
    await engine.run_until_settled()

    finished = await store.get(CERTIFICATION, cert["metadata"]["name"], "default")
    assert cond.is_terminal(finished)
    workflow = await store.get(WORKFLOW, ALL_REDUCE, "default")
    assert "failedNodes" not in workflow["status"]  # its Jobs hold them: a fleet failing everywhere would outgrow it
    failed = blamed_nodes(workflow, (await store.list(JOB, "default")).items)
    assert [entry["name"] for entry in failed] == ["gpu-node-07"]
    evidence = failed[0]["evidence"][0]
    assert evidence["metric"] == "busBandwidthGBps" and evidence["expression"] == "value >= 400"
    assert evidence["measured"] < 400 and not evidence["passed"]

    jobs = {job["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"]: job
            for job in (await store.list(JOB, "default")).items if job["metadata"]["labels"].get("nvcre.nvidia.com/workflow") == ALL_REDUCE}
    assert len(jobs) == 32
    node12 = jobs["gpu-node-12"]["status"]
    assert node12["measurements"]["busBandwidthGBps"] >= 400 and not node12.get("failedNodes")  # its NIC is not on this path
    assert jobs["gpu-node-07"]["status"]["measurements"]["busBandwidthGBps"] == evidence["measured"]


async def test_an_engine_restarted_mid_run_reaches_the_same_outcome() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    await store.create(CERTIFICATION, intra_node_certification())
    await engine_on(store, clock).run_until_settled(max_seconds=120)  # stopped while the runs are going
    assert not cond.is_terminal(await store.get(CERTIFICATION, "gpu-cluster-cert", "default"))
    await engine_on(store, clock).run_until_settled()
    restarted = await store.get(WORKFLOW, ALL_REDUCE, "default")

    reference_clock = ManualClock()
    reference = MemoryStore(reference_clock)
    await reference.create(CERTIFICATION, intra_node_certification())
    await engine_on(reference, reference_clock).run_until_settled()
    uninterrupted = await reference.get(WORKFLOW, ALL_REDUCE, "default")
    blamed = [blamed_nodes(wf, (await s.list(JOB, "default")).items) for wf, s in ((restarted, store), (uninterrupted, reference))]
    assert blamed[0] == blamed[1] and [f["name"] for f in blamed[0]] == ["gpu-node-07"]
    groups = [[(g["nodes"], g["phase"]) for g in wf["status"]["orchestration"]["groups"]] for wf in (restarted, uninterrupted)]
    assert groups[0] == groups[1]
    history = [[(g["name"], g["phase"], g.get("measurements")) for r in wf["status"]["orchestration"]["iterationHistory"] for g in r["groups"]]
               for wf in (restarted, uninterrupted)]
    assert history[0] == history[1] and len(history[0]) == 32
