"""A Certification's reconcile on a large fleet whose kubelets report their Nodes' status: the render memo keyed on the
Node changes planning can see against keyed on every Node write (the old key, kept here as the baseline).

    python bench/reconcile.py [--nodes N,N] [--rounds N]

A simulated fleet of N nodes (default 3,000 and 10,000) in pools of at most 3,000, one certification per pool with two
categories on the same nodes (every node alone on all-reduce, then on loopback, 64 at a time): the first runs, the
second waits for it, and every look at the certification asks what the waiting category would run on (render_category:
discovery over every Node, memoised per state of the Nodes). The engine (in-memory store, ManualClock) runs 60 simulated
seconds in; then each round writes the status of a thirtieth of the Nodes as a kubelet does (the same conditions,
beating now: every node every 5 minutes at 10 s a round) and has the engine look at every certification once. Timed:
each Certification reconcile (process time, as the engine's metrics see it), its median over the rounds, for the memo
as it is (`World.nodes_version`: api.nodes.plans_the_same leaves churn out) and as it was (every Node write a new
state), alternately on the same engine with the memo emptied between the two, so the ratio compares like with like.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import statistics
import sys
import time
from typing import Any

from nvcre_tui.engine.clock import DEFAULT_START, ManualClock, format_time
from nvcre_tui.engine.controllers.context import World
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.cache import key_of
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, NODE
from nvcre_tui.engine.store.writethrough import WriteThroughStore

POOL = 3_000  # one Workflow of a group per node holds at most about 3,700
WARM_SECONDS = 60.0
HEARTBEAT_SHARE = 30  # a thirtieth of the Nodes a round: each every 5 minutes at 10 s a round
CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: burn-in-{pool}}}
spec:
  target: {{nodeSelector: {{pool: "{pool}"}}}}
  categories:
    - {{domain: communication, variant: nccl-all-reduce, options: {{testScale: intra-node, maxConcurrent: 64}}}}
    - {{domain: communication, variant: nccl-loopback, options: {{maxConcurrent: 64}}}}
"""


class EveryNodeWrite(World):
    """The World as it was: every Node write a new state of the Nodes for the render memo."""

    @property
    def nodes_version(self) -> int:
        return self.cache.kind_versions[NODE]


class Timings:
    """The engine's metrics: the process time of each Certification reconcile."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def observe_reconcile(self, kind: str, seconds: float, error: str | None = None) -> None:
        if kind == CERTIFICATION.kind:
            self.seconds.append(seconds)


def scenario(nodes: int) -> Scenario:
    pools = -(-nodes // POOL)
    sizes = [nodes // pools + (1 if p < nodes % pools else 0) for p in range(pools)]
    return Scenario.model_validate({
        "name": f"bench reconcile {nodes}", "seed": 1, "physics": {"noise": 0.0},
        "nodes": [{"count": size, "namePrefix": f"p{p}-node-", "nameDigits": 5, "cliques": max(1, size // 18), "cliquePrefix": f"p{p}-clique-",
                   "labels": {"pool": f"p{p}"}} for p, size in enumerate(sizes)]})


async def measure(nodes: int, rounds: int) -> dict[str, float]:
    clock = ManualClock(DEFAULT_START)
    store = MemoryStore(clock)
    cache = engine_cache(store)
    scn = scenario(nodes)
    fleet = SimulatedFleet(WriteThroughStore(store, cache), clock, scn)
    await fleet.ensure_nodes()
    timings = Timings()
    engine = Engine(store, clock, default_catalog(), SimulatedRunner(WriteThroughStore(store, cache), clock, scn, fleet), cache=cache, metrics=timings)
    certs = []
    for pool in range(-(-nodes // POOL)):
        cert = certification_from_text("bench.yaml", CERT.format(pool=f"p{pool}"), default_catalog()).to_wire()
        cert["metadata"]["namespace"] = "default"
        cert.pop("status", None)
        certs.append(key_of(await store.create(CERTIFICATION, cert)))
    await engine.run_until_settled(max_seconds=WARM_SECONDS)
    worlds = {"new": engine.world, "old": EveryNodeWrite(cache)}
    names = sorted(name for _, name in cache.objects[NODE])
    per_round = max(1, len(names) // HEARTBEAT_SHARE)
    found: dict[str, list[float]] = {"new": [], "old": []}
    beats = 0
    for _ in range(rounds):
        for way, world in worlds.items():
            engine.world = world
            engine.ctx.renders.clear()  # the two keys count differently: never one's memo for the other
            for key in certs:  # a first look fills the memo (not timed)
                engine.queue.add((CERTIFICATION, key))
            await engine.settle()
            for _ in range(per_round):  # a kubelet's status report: the same conditions, beating now
                node: dict[str, Any] = copy.deepcopy(cache.get(NODE, names[beats % len(names)]) or {})
                beats += 1
                node["status"]["conditions"] = [{**c, "lastHeartbeatTime": format_time(clock.now())} for c in node["status"].get("conditions") or []]
                await store.update_status(NODE, node)
            for _ in range(100):  # the watch delivers them to the cache
                await asyncio.sleep(0)
            timings.seconds.clear()
            for key in certs:
                engine.queue.add((CERTIFICATION, key))
            await engine.settle()
            assert len(timings.seconds) == len(certs), f"{len(timings.seconds)} reconciles of {len(certs)} certifications"
            found[way] += timings.seconds
    engine.world = worlds["new"]
    await engine.stop()
    return {way: statistics.median(seconds) * 1000 for way, seconds in found.items()} | {"certifications": len(certs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="3000,10000", help="fleet sizes, comma-separated (default 3000,10000)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of heartbeats, each way (the median is printed)")
    args = parser.parse_args()
    print(f"{'nodes':>6} {'certifications':>15}  {'keyed on every Node write':>26} {'on planning changes':>20} {'ratio':>7}")
    for nodes in (int(n) for n in args.nodes.split(",")):
        started = time.perf_counter()
        r = asyncio.run(measure(nodes, args.rounds))
        print(f"{nodes:>6} {int(r['certifications']):>15}  {r['old']:>23.1f} ms {r['new']:>17.1f} ms {r['old'] / r['new']:>6.1f}x"
              f"   ({time.perf_counter() - started:.0f} s)")
    print("a Certification reconcile (median process time) after a round of Node heartbeats, its second category waiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
