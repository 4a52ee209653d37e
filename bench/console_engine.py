"""The console's event loop while its own engine runs a large simulated fleet: the longest stretches the loop could not
turn, and the engine step that held it, as ratios against the same loop idle in the same process.

`nvcre` on the embedded simulator runs the engine as a worker on the UI's event loop (app.py, `_run_engine`), so every
stretch of engine work that never awaits freezes the screen for as long. This bench opens the console's session (a
SimSession on an SQLite store, a live ScaledClock at the scenario's speed, the history archive), submits a full-scale
and an intra-rack all-reduce certification (threshold 300 GB/s: the full-scale run misses it and blames its whole
group, the intra-rack run finds the slow GPU's clique) and runs the engine as the console does until both finished,
while a heartbeat task sleeps 10 ms at a time and records how late it wakes (what a key press would wait). The
baseline is that heartbeat for as long with no engine.

    python bench/console_engine.py                       # 1,024 nodes in cliques of 8
    python bench/console_engine.py --nodes 2048 --profile

Which step held the loop: every loop callback is timed (asyncio's Handle._run, wrapped here only), and its time is
credited to the engine step (a reconcile of one object, or the runner's fleet tick) that ran during it, or to the
garbage collector's pass that interrupted it; the longest are listed. The loaded heap is frozen as `nvcre` freezes it
(app.freeze_heap) unless --no-freeze. `--profile` runs again with each loop callback under cProfile and prints the top functions of the three
longest (cProfile slows Python 2-3x: its times are for finding the cause, not for the table). Target: no block over
about 250 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nvcre_tui.app import freeze_heap  # noqa: E402
from nvcre_tui.engine.controllers import conditions as cond  # noqa: E402
from nvcre_tui.engine.engine import Engine  # noqa: E402
from nvcre_tui.engine.session import SimSession  # noqa: E402
from nvcre_tui.engine.sim.scenario import Scenario  # noqa: E402
from nvcre_tui.engine.store.protocol import CERTIFICATION  # noqa: E402

BEAT_SECONDS = 0.01
NAMESPACE = "default"
CERTIFICATIONS = {"full": "full-scale", "rack": "intra-rack"}
SHOWN = 8  # stretches listed, by wall time and by CPU time
PROFILED = 3  # the longest stretches (by CPU) --profile prints


def scenario(nodes: int, speed: float) -> Scenario:
    return Scenario.model_validate({"name": f"bench: {nodes} nodes", "seed": 1, "speed": speed,
                                    "nodes": [{"count": nodes, "cliques": max(1, nodes // 8), "nameDigits": 4}],
                                    "faults": [{"type": "slow-gpu", "node": "gpu-node-0007", "gpu": 3, "factor": 0.55}]})


def certification(name: str, scale: str) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": scale}}],
                     "options": {"thresholds": {"busBandwidthGBps": "value >= 300"}}}}


def step_name(key: Hashable) -> str:
    if isinstance(key, tuple) and len(key) == 2 and hasattr(key[0], "kind"):
        return f"{key[0].kind} {key[1][1]}"
    return "runner fleet tick" if key == ("fleet",) else str(key)


def outside(handle: asyncio.events.Handle) -> str:
    """What a loop callback runs outside the engine's steps: its task's name and coroutine, else the callback."""
    callback = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)  # a task's step (C tasks' TaskStepMethWrapper has it too)
    if isinstance(task, asyncio.Task):
        coro = task.get_coro()
        return f"task {task.get_name()} ({getattr(coro, '__qualname__', coro)})"
    return f"callback {getattr(callback, '__qualname__', callback)}"


@dataclass
class Watch:
    """Loop callbacks and the engine steps that ran in them."""

    profile: bool = False
    recording: bool = False  # from the submission on (not the session's opening)
    current: str | None = None  # the step in hand (a reconcile may await between its parts)
    mark: float = 0.0
    credited: dict[str, float] = field(default_factory=dict)  # this callback's time per step
    # (wall seconds, CPU seconds, the step that took most of it): on a loaded machine the wall time of a stretch
    # includes waiting for a core; its CPU time is the work itself
    blocks: list[tuple[float, float, str]] = field(default_factory=list)
    profiles: list[tuple[float, str, pstats.Stats]] = field(default_factory=list)  # (CPU seconds, step, its profile)

    outside: str = "?"  # what the callback in hand runs when no step is in hand: its task and coroutine
    collecting: str | None = None  # the garbage collector's pass under way, credited apart from the step it interrupts

    def credit(self) -> None:
        now = time.perf_counter()
        what = self.collecting or self.current or self.outside
        self.credited[what] = self.credited.get(what, 0.0) + now - self.mark
        self.mark = now

    def install(self) -> None:
        """Time every loop callback (asyncio's Handle._run) and credit the engine's steps (Engine._reconcile)."""
        watch = self
        run_handle = asyncio.events.Handle._run
        reconcile = Engine._reconcile

        def timed_run(handle: asyncio.events.Handle) -> None:
            watch.outside = outside(handle)
            watch.credited, watch.mark = {}, time.perf_counter()
            start, cpu, recording = watch.mark, time.thread_time(), watch.recording
            profiler = cProfile.Profile() if watch.profile and recording else None
            if profiler is not None:
                profiler.enable()
            try:
                run_handle(handle)
            finally:
                if profiler is not None:
                    profiler.disable()
                watch.credit()
                if recording and watch.recording:
                    block = (time.perf_counter() - start, time.thread_time() - cpu, max(watch.credited, key=watch.credited.__getitem__))
                    watch.blocks.append(block)
                    if profiler is not None and (len(watch.profiles) < PROFILED or block[1] > watch.profiles[-1][0]):
                        watch.profiles = sorted([*watch.profiles, (block[1], block[2], pstats.Stats(profiler))], key=lambda found: -found[0])[:PROFILED]

        async def timed_reconcile(engine: Engine, key: Hashable) -> None:
            watch.credit()
            watch.current = step_name(key)
            try:
                await reconcile(engine, key)
            finally:
                watch.credit()
                watch.current = None

        def collector(phase: str, info: dict[str, int]) -> None:
            watch.credit()
            watch.collecting = f"garbage collector, generation {info['generation']}" if phase == "start" else None

        gc.callbacks.append(collector)
        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign,assignment]
        Engine._reconcile = timed_reconcile  # type: ignore[method-assign,assignment]


async def heartbeat(late: list[float], stop: asyncio.Event) -> None:
    """Sleep BEAT_SECONDS at a time; how late each wake-up came."""
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(BEAT_SECONDS)
        late.append(max(0.0, time.perf_counter() - start - BEAT_SECONDS))


async def idle(seconds: float) -> list[float]:
    late: list[float] = []
    stop = asyncio.Event()
    task = asyncio.create_task(heartbeat(late, stop))
    await asyncio.sleep(seconds)
    stop.set()
    await task
    return late


async def certify(nodes: int, speed: float, timeout: float, watch: Watch, freeze: bool) -> tuple[list[float], float, dict[str, str], int]:
    """Open the console's session, submit both certifications and run its engine until they finished: the heartbeat's
    lateness, the wall seconds, each certification's phase and how often the engine let the loop run inside a step."""
    with tempfile.TemporaryDirectory() as folder:
        session = await SimSession.open(scenario(nodes, speed), Path(folder) / "state.db", live=True, history=Path(folder) / "history.db")
        assert session.engine is not None
        if freeze:
            freeze_heap()  # as `nvcre` does once its first screen is up: full collections leave the loaded fleet out
        late: list[float] = []
        stop = asyncio.Event()
        beat = asyncio.create_task(heartbeat(late, stop))
        engine = asyncio.create_task(session.engine.run())
        start = time.perf_counter()
        watch.recording = True
        for name, scale in CERTIFICATIONS.items():
            await session.store.create(CERTIFICATION, certification(name, scale))
        phases: dict[str, str] = {}
        while time.perf_counter() - start < timeout:
            await asyncio.sleep(0.25)
            certs = {name: session.cache.get(CERTIFICATION, name, NAMESPACE) for name in CERTIFICATIONS}
            phases = {name: str(cond.phase(cert) or "Pending") if cert is not None else "missing" for name, cert in certs.items()}
            if all(cert is not None and cond.is_terminal(cert) for cert in certs.values()):
                break
        elapsed = time.perf_counter() - start
        watch.recording = False
        stop.set()
        await beat
        yields = getattr(getattr(session.engine, "slice", None), "yields", 0)  # the code before TimeSlice has none
        await session.close()
        engine.cancel()
        return late, elapsed, phases, yields


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98] if len(values) >= 2 else max(values, default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--speed", type=float, default=120.0, help="simulated seconds per real second (the console's default: 120)")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall seconds to wait for both certifications")
    parser.add_argument("--no-freeze", action="store_true", help="keep the loaded heap in the garbage collector's full passes (nvcre freezes it)")
    parser.add_argument("--profile", action="store_true", help="run again with each loop callback under cProfile; print the longest three's top functions")
    args = parser.parse_args()
    watch = Watch()
    watch.install()
    late, elapsed, phases, yields = asyncio.run(certify(args.nodes, args.speed, args.timeout, watch, not args.no_freeze))
    base = asyncio.run(idle(min(elapsed, 10.0)))
    engine_max, engine_p99, idle_max, idle_p99 = max(late), p99(late), max(base), p99(base)
    print(f"console engine on {args.nodes} nodes (cliques of 8), speed {args.speed:g}{', heap not frozen' if args.no_freeze else ''}: "
          f"full-scale {phases.get('full')}, "
          f"intra-rack {phases.get('rack')} in {elapsed:.1f} s; the engine let the loop run {yields} times in its steps")
    print(f"heartbeat every {BEAT_SECONDS * 1000:.0f} ms, how late it woke        max          p99")
    print(f"  idle loop (baseline)                       {idle_max * 1000:9.1f} ms {idle_p99 * 1000:9.1f} ms")
    print(f"  engine running                             {engine_max * 1000:9.1f} ms {engine_p99 * 1000:9.1f} ms")
    print(f"max loop block {engine_max * 1000:.1f} ms ({engine_max / max(idle_max, 1e-6):.1f}x idle), "
          f"p99 {engine_p99 * 1000:.1f} ms ({engine_p99 / max(idle_p99, 1e-6):.1f}x idle)")
    most_cpu = max((cpu for _, cpu, _ in watch.blocks), default=0.0)
    print(f"longest stretch of work without a turn of the loop: {most_cpu * 1000:.1f} ms of CPU (wall time less the waits for a "
          "core or the disk, which a loaded machine adds)")
    for label, order in (("wall", 0), ("CPU", 1)):
        print(f"longest stretches by {label} time (wall, CPU), and the engine step that took most of each:")
        for seconds, cpu, step in sorted(watch.blocks, key=lambda block: -float(block[order]))[:SHOWN]:
            print(f"  {seconds * 1000:8.1f} ms {cpu * 1000:8.1f} ms  {step}")
    if args.profile:
        profiled = Watch(profile=True)
        profiled.install()
        asyncio.run(certify(args.nodes, args.speed, args.timeout, profiled, not args.no_freeze))
        for seconds, step, stats in profiled.profiles:
            out = io.StringIO()
            stats.stream = out  # type: ignore[attr-defined]
            stats.sort_stats("cumulative").print_stats(30)
            print(f"\na longest stretch under cProfile: {seconds * 1000:.0f} ms of CPU, mostly {step}\n{out.getvalue()}")


if __name__ == "__main__":
    main()
