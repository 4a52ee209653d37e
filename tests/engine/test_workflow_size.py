"""render's estimate of a Workflow's largest write (which refuses a category that would pass the API server's
1.5 MiB) against the writes the engine really makes, on a fleet large enough for the per-group terms to count."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.clock import DEFAULT_START, ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.judging.results import job_failures
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import largest_write, render_category
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, NODE, WORKFLOW, MemoryStore
from nvcre_tui.engine.store.protocol import ResourceKind
from nvcre_tui.engine.store.writethrough import WriteThroughStore

Obj = dict[str, Any]
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: size}
spec:
  target: {}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, repeatCount: 2}
"""


DIAGNOSE = CERT.replace("{testScale: intra-node, repeatCount: 2}", "{testScale: diagnose}")


async def largest_stored(nodes: int, text: str = CERT) -> tuple[int, int]:
    """(render's estimate, the largest Workflow the engine stored) for a Certification on `nodes` simulated nodes."""
    clock = ManualClock(DEFAULT_START)
    store = MemoryStore(clock)
    scenario = Scenario.model_validate({"name": "size", "seed": 1, "nodes": [{"count": nodes, "cliques": nodes // 8}], "physics": {"noise": 0.0}})
    cache = engine_cache(store)
    writer = WriteThroughStore(store, cache)
    fleet = SimulatedFleet(writer, clock, scenario)
    await fleet.ensure_nodes()
    engine = Engine(writer, clock, default_catalog(), SimulatedRunner(writer, clock, scenario, fleet), cache=cache)
    cert = certification_from_text("size.yaml", text, default_catalog()).to_wire()
    cert["metadata"]["namespace"] = "default"
    cert.pop("status", None)
    await store.create(CERTIFICATION, cert)
    largest = 0

    def measure(kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        nonlocal largest
        if kind is WORKFLOW and new is not None:
            largest = max(largest, len(json.dumps(new, separators=(",", ":"))))

    cache.subscribe(measure)
    await cache.start()
    try:
        done = await engine.run_until_settled(until=lambda: _finished(cache), max_seconds=7 * 24 * 3600)
        assert done, "the certification did not finish"
        nodes_seen = [n for n in cache.objects[NODE].values()]
        model = Certification.model_validate(cert)
        estimate = largest_write(render_category(model, 0, nodes_seen, default_catalog()))
    finally:
        await engine.stop()
    return estimate, largest


async def _finished(cache: Any) -> bool:
    return cond.is_terminal(cache.get(CERTIFICATION, "size", "default") or {})


def test_the_estimate_bounds_the_largest_workflow_the_engine_writes_and_is_not_far_above_it() -> None:
    estimate, largest = asyncio.run(largest_stored(48))
    assert largest > 30_000  # 48 groups, two iterations: the per-group terms are most of it
    assert largest <= estimate + 8 * 1024, (largest, estimate)  # 8 KiB: conditions, failedNodes, metadata
    assert estimate <= largest * 1.25, (largest, estimate)


def test_the_estimate_bounds_a_diagnose_workflow_whose_groups_name_their_nodes_only_in_its_state() -> None:
    estimate, largest = asyncio.run(largest_stored(96, DIAGNOSE))
    assert largest > 20_000  # 12 screening groups of 8 and the diagnose state
    assert largest <= estimate + 8 * 1024, (largest, estimate)
    assert estimate <= largest * 1.25, (largest, estimate)


def test_a_fleet_that_misses_a_threshold_everywhere_grows_no_workflow_past_the_estimate() -> None:
    """Each node's failure stays on its Job: in the Workflow it would be 0.4 KiB a node (3,700 cloud-named nodes
    failing together would pass the API server's limit); a group's record keeps only the reason (and a culprit's
    name), which the estimate counts."""
    unreachable = CERT.replace("{testScale: intra-node, repeatCount: 2}", "{testScale: intra-node, repeatCount: 2, thresholds: {busBandwidthGBps: 'value >= 10000'}}")
    estimate, largest = asyncio.run(largest_stored(48, unreachable))
    assert largest <= estimate, (largest, estimate)  # every group failed: each record keeps whom its Job blamed


def test_a_full_scale_job_whose_every_node_misses_a_threshold_keeps_its_evidence_once() -> None:
    """Each failed node's entry is NVCRE's {name, reason, message}; the evidence is the Job's, stored once and joined
    to each entry by its readers (judging.results.job_failures): about 0.24 KiB a cloud-named node, so a full-scale
    Job fits about 6,500 of them under the API server's limit (a copy per entry took it to 0.47 KiB, 3,300 nodes)."""
    async def run() -> dict[str, Any]:
        pool = {"count": 200, "cliques": 25, "namePrefix": "ip-10-100-0-1-us-west-2-compute-internal-", "nameDigits": 4}
        session = await SimSession.open(Scenario.model_validate({"name": "size", "seed": 1, "nodes": [pool]}), None, history=None)
        text = CERT.replace("{testScale: intra-node, repeatCount: 2}", "{thresholds: {busBandwidthGBps: 'value >= 10000'}}")
        cert = certification_from_text("size.yaml", text, default_catalog()).to_wire()
        cert["metadata"]["namespace"] = "default"
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)
        try:
            assert session.engine is not None
            await session.engine.run_until_settled()
            [job] = (await session.store.list(JOB, "default")).items
            return job
        finally:
            await session.close()

    job = asyncio.run(run())
    entries = job["status"]["failedNodes"]
    assert len(entries) == 200 and all(set(entry) == {"name", "reason", "message"} for entry in entries)
    assert len(json.dumps(job, separators=(",", ":"))) / 200 < 260
    evidence = job_failures(job)[0]["evidence"]
    assert [(e["metric"], e["passed"]) for e in evidence] == [("busBandwidthGBps", False)]
