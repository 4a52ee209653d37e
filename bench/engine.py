"""Engine cost per Job: CPU per job transition, store writes and API requests per Job, re-lists.

An intra-node NCCL certification (one Job per node) on a simulated fleet of 256, 1,024 and 3,072 nodes,
run to the end on a ManualClock, on the embedded MemoryStore, on the durable SqliteStore (a file in a
temporary folder, every write one committed transaction) and (when the test emulator is importable,
i.e. from a checkout) on KubeStore over the API-server emulator on loopback HTTP. Printed per store and
size: engine CPU per job transition (process time inside reconciles, the simulator's own work included),
writes per Job by the engine and by the simulated fleet (which plays kubelet), the latency of one write
(p50 and p95, wall time from call to return: for SQLite that includes the commit), API requests per Job,
list calls after the first per kind (0: nothing re-lists), and the growth exponent against the smallest
fleet measured in the same process; then each store against the memory baseline of the same size. "cpu/transition" is the engine's own work (controllers, cache, store,
parsers); "+simulator" adds the simulated fleet's (run plans, output generation), which a real cluster's
kubelet and GPUs would do.

    python bench/engine.py                          # 256, 1024, 3072 on every store (the emulator at 3,072 takes minutes)
    python bench/engine.py --quick                  # 256 only
    python bench/engine.py --sizes 1024 --stores memory,sqlite
    python bench/engine.py --sizes 3072 --stores kube
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import DEFAULT_START, ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, ResourceKind, ResourceStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore

CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: bench}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node}}
"""
WRITES = ("create", "update", "update_status", "patch_status", "delete", "record_event")
Obj = dict[str, Any]


class TimedRunner:
    """The simulated runner, with the process time spent inside it (the simulator's work, not the engine's)."""

    def __init__(self, inner: SimulatedRunner) -> None:
        self.inner = inner
        self.simulated = True
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def _timed(self, call: Awaitable[Any]) -> Any:
        started = time.process_time()
        try:
            return await call
        finally:
            self.seconds += time.process_time() - started

    async def reconcile_run(self, run: Obj) -> float | None:
        return await self._timed(self.inner.reconcile_run(run))

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        return await self._timed(self.inner.logs(run, required=required))

    async def stop(self, run: Obj) -> None:
        await self._timed(self.inner.stop(run))

    async def release(self, owner: Obj) -> None:
        await self._timed(self.inner.release(owner))

    async def tick(self) -> float | None:
        return await self._timed(self.inner.tick())


class CountingStore:
    """Counts the calls made through it, by method (reads and writes), and times each write."""

    def __init__(self, inner: ResourceStore) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.lists: Counter[str] = Counter()
        self.write_seconds: list[float] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if not callable(method) or name.startswith("_"):
            return method

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            if name == "list" and args and isinstance(args[0], ResourceKind):
                self.lists[args[0].kind] += 1
            return method(*args, **kwargs)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            started = time.perf_counter()
            try:
                return await method(*args, **kwargs)
            finally:
                self.write_seconds.append(time.perf_counter() - started)

        return timed if name in WRITES else counted

    @property
    def writes(self) -> int:
        return sum(self.calls[name] for name in WRITES)


@dataclass
class Result:
    store: str
    nodes: int
    jobs: int
    transitions: int
    cpu_per_transition_ms: float
    with_simulator_ms: float
    engine_writes_per_job: float
    fleet_writes_per_job: float
    requests_per_job: float
    relists: int
    wall_seconds: float
    write_p50_us: float
    write_p95_us: float

    @property
    def writes_per_job(self) -> float:
        return self.engine_writes_per_job + self.fleet_writes_per_job


def scenario(nodes: int) -> Scenario:
    return Scenario.model_validate({"name": f"bench-{nodes}", "seed": 1, "nodes": [{"count": nodes, "cliques": max(1, nodes // 18)}],
                                    "physics": {"noise": 0.0}})


async def run_once(nodes: int, open_store: Callable[[ManualClock], Awaitable[tuple[ResourceStore, Callable[[], Awaitable[None]]]]],
                   label: str) -> Result:
    clock = ManualClock(DEFAULT_START)
    raw, close = await open_store(clock)
    engine_side, fleet_side = CountingStore(raw), CountingStore(raw)
    scn = scenario(nodes)
    cache = engine_cache(engine_side)
    fleet = SimulatedFleet(WriteThroughStore(fleet_side, cache), clock, scn)
    await fleet.ensure_nodes()
    runner = TimedRunner(SimulatedRunner(WriteThroughStore(fleet_side, cache), clock, scn, fleet))
    engine = Engine(engine_side, clock, default_catalog(), runner, cache=cache)
    cert = certification_from_text("bench.yaml", CERT, default_catalog()).to_wire()
    cert["metadata"]["namespace"] = "default"
    cert.pop("status", None)
    await raw.create(CERTIFICATION, cert)
    transitions = 0
    seen: dict[str, str] = {}

    def count_transitions(kind: ResourceKind, old: Obj | None, new: Obj | None, own: bool) -> None:
        nonlocal transitions
        if kind is JOB and new is not None:
            phase = cond.phase(new) or "None"
            state = f"{phase}:{(cond.find((new.get('status') or {}).get('conditions'), phase) or {}).get('reason')}"
            if seen.get(new["metadata"]["name"]) != state:
                seen[new["metadata"]["name"]] = state
                transitions += 1

    cache.subscribe(count_transitions)
    fleet_side.calls.clear()
    engine_side.calls.clear()
    fleet_side.write_seconds.clear()
    engine_side.write_seconds.clear()
    started = time.perf_counter()

    async def done() -> bool:
        return cond.is_terminal(cache.get(CERTIFICATION, "bench", "default") or {})

    assert await engine.run_until_settled(until=done, max_seconds=7 * 24 * 3600), "the certification did not finish"
    wall = time.perf_counter() - started
    jobs = len(cache.objects[JOB])
    await engine.stop()
    assert jobs, f"{label} at {nodes} nodes: the certification ran no Job (refused: {cond.find((cache.get(CERTIFICATION, 'bench', 'default') or {}).get('status', {}).get('conditions'), 'Failed')})"
    requests = sum(engine_side.calls.values()) + sum(fleet_side.calls.values())
    relists = sum(max(count - 1, 0) for count in engine_side.lists.values())
    await close()
    per = 1000 / max(transitions, 1)
    latencies = sorted(engine_side.write_seconds + fleet_side.write_seconds)
    return Result(label, nodes, jobs, transitions, (engine.cpu_seconds - runner.seconds) * per, engine.cpu_seconds * per,
                  engine_side.writes / max(jobs, 1), fleet_side.writes / max(jobs, 1), requests / max(jobs, 1), relists, wall,
                  _quantile(latencies, 0.50) * 1e6, _quantile(latencies, 0.95) * 1e6)


def _quantile(values: list[float], q: float) -> float:
    """The q-quantile of sorted values (nearest rank); 0 for none."""
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


async def memory_store(clock: ManualClock) -> tuple[ResourceStore, Callable[[], Awaitable[None]]]:
    store = MemoryStore(clock)

    async def close() -> None:
        await store.close()

    return store, close


async def sqlite_store(clock: ManualClock) -> tuple[ResourceStore, Callable[[], Awaitable[None]]]:
    """The simulator's default store: an SQLite file (WAL, synchronous=NORMAL) in a temporary folder."""
    from nvcre_tui.engine.store.sqlite import SqliteStore

    folder = tempfile.TemporaryDirectory(prefix="nvcre-bench-")
    store = SqliteStore(Path(folder.name) / "sim.db", clock)

    async def close() -> None:
        await store.close()
        folder.cleanup()

    return store, close


def emulator_store_factory() -> Callable[[ManualClock], Awaitable[tuple[ResourceStore, Callable[[], Awaitable[None]]]]] | None:
    """KubeStore over the test API-server emulator (nvcre installed as `setup init` does), from a checkout."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from tests.kube.cluster import install, store_on  # noqa: PLC0415
        from tests.kubeapi import ApiServer  # noqa: PLC0415
    except ImportError:
        return None

    async def open_store(clock: ManualClock) -> tuple[ResourceStore, Callable[[], Awaitable[None]]]:
        server = ApiServer(clock=clock, history_limit=1_000_000)
        await server.start()
        folder = Path(tempfile.mkdtemp(prefix="nvcre-bench-"))
        store = await store_on(await install(server, folder), clock, "nvcre-bench")

        async def close() -> None:
            await store.close()
            await server.stop()

        return store, close

    return open_store


def _ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:.2f}x" if baseline > 0 else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="256 nodes only")
    parser.add_argument("--sizes", metavar="N,N", help="fleet sizes (default 256,1024,3072: one Workflow of a Job per node holds at most about 3,700 groups)")
    parser.add_argument("--stores", default="memory,sqlite,kube", help="any of memory, sqlite, kube (default: all three)")
    args = parser.parse_args()
    sizes = (256,) if args.quick else tuple(int(n) for n in (args.sizes or "256,1024,3072").split(","))
    stores = set(args.stores.split(","))
    if stores - {"memory", "sqlite", "kube"}:
        parser.error(f"--stores: unknown {', '.join(sorted(stores - {'memory', 'sqlite', 'kube'}))}; known: memory, sqlite, kube")
    stores.add("memory")  # the baseline every other store is compared with
    results = [asyncio.run(run_once(n, memory_store, "memory")) for n in sizes]
    if "sqlite" in stores:
        results += [asyncio.run(run_once(n, sqlite_store, "sqlite")) for n in sizes]
    factory = emulator_store_factory()
    if factory is not None and "kube" in stores:
        results += [asyncio.run(run_once(n, factory, "kube/emulator")) for n in sizes]
    header = (f"{'store':<14}{'nodes':>6}{'jobs':>6}{'cpu/transition':>16}{'+simulator':>12}{'growth':>8}{'eng writes/job':>16}"
              f"{'sim writes/job':>16}{'write p50':>11}{'write p95':>11}{'requests/job':>14}{'re-lists':>9}{'wall s':>8}")
    print(header)
    base: dict[str, Result] = {}
    for result in results:
        first = base.setdefault(result.store, result)
        growth = (math.log(result.cpu_per_transition_ms / first.cpu_per_transition_ms) / math.log(result.nodes / first.nodes)
                  if result.nodes != first.nodes and first.cpu_per_transition_ms > 0 and result.cpu_per_transition_ms > 0 else float("nan"))
        print(f"{result.store:<14}{result.nodes:>6}{result.jobs:>6}{result.cpu_per_transition_ms:>13.2f} ms{result.with_simulator_ms:>9.2f} ms{growth:>8.2f}"
              f"{result.engine_writes_per_job:>16.2f}{result.fleet_writes_per_job:>16.2f}{result.write_p50_us:>8.0f} us{result.write_p95_us:>8.0f} us"
              f"{result.requests_per_job:>14.1f}{result.relists:>9}{result.wall_seconds:>8.1f}")
    memory = {r.nodes: r for r in results if r.store == "memory"}
    for result in results:
        if result.store != "memory" and result.nodes in memory:
            baseline = memory[result.nodes]
            print(f"{result.store} vs memory at {result.nodes} nodes: {_ratio(result.writes_per_job, baseline.writes_per_job)} writes per Job, "
                  f"{_ratio(result.write_p50_us, baseline.write_p50_us)} write p50, {_ratio(result.write_p95_us, baseline.write_p95_us)} write p95, "
                  f"{_ratio(result.cpu_per_transition_ms, baseline.cpu_per_transition_ms)} CPU per job transition, "
                  f"{_ratio(result.wall_seconds, baseline.wall_seconds)} wall time")
    print("growth: exponent of CPU per transition against the smallest fleet (0 = flat, 1 = linear in nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
