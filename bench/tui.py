"""Console benchmark on a 4,096-node simulated fleet, as ratios against an idle app in the same process.

    python bench/tui.py [--rounds N] [--no-freeze]

- idle frame:        `await pilot.pause()` on the topology map with nothing to do;
- 1,000 changes:     1,000 node-state changes written to the store (Job status writes), then the
                     snapshot refresh and the map update they cause, until the app is idle again;
- key press:         an arrow key on the map and `pilot.pause()`, idle vs while 1,000 store events per second
                     arrive (status patches, 50 every 50 ms);
- key to screen:     arrow keys typed from another thread at random moments (through the driver, as a terminal's
                     input thread delivers them), timed from the keystroke to the first screen update that shows
                     the moved cursor; p50/p95 idle, under 1,000 and under 5,000 store events/s, with the app's own
                     0.5 s snapshot timer running (targets: p95 < 50 ms at 1,000/s, < 100 ms at 5,000/s);
                     the app freezes its loaded heap as `nvcre` does (app.freeze_heap), unless --no-freeze.
The widget alone (no store, no snapshot) is measured by bench/tui_map.py. Not run by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import threading
import time

from textual import events
from timing import median_ms

from nvcre_tui.app import REFRESH_SECONDS, NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.widgets.rack_map import RackMap

NODES, CLIQUES, GROUP = 4096, 128, 32
TYPING_SECONDS = 20.0  # per load level
KEY_GAP = (0.05, 0.25)  # seconds between keystrokes, uniform: random moments, not when the loop is free
RATES = (1_000, 5_000)  # store events per second


def scenario() -> Scenario:
    return Scenario.model_validate({"name": "bench: 4,096 nodes", "seed": 1, "nodes": [{"count": NODES, "cliques": CLIQUES, "nameDigits": 4}]})


async def fleet_with_jobs(session: SimSession) -> list[str]:
    """A finished Workflow with one single-node Job per node; a node-state change flips one Job's
    failedNodes (one small status write: one store event), as the engine does when a job fails."""
    nodes = [n["metadata"]["name"] for n in (await session.store.list(NODE)).items]
    meta = {"namespace": "default", "labels": {"nvcre.nvidia.com/certification": "bench"}}
    await session.store.create(CERTIFICATION, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "bench", **meta},
                                               "spec": {"target": {}, "categories": [{"domain": "communication", "variant": "nccl-loopback"}]}})
    await session.store.create(WORKFLOW, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": "bench", **meta},
                                          "spec": {"jobTemplate": {"spec": {"workload": {"trainJob": {}}}}, "orchestration": {"testScale": "intra-node"}}})
    await session.store.patch_status(CERTIFICATION, "bench", "default", {"categoryStatuses": [  # the map shows this Workflow
        {"domain": "communication", "variant": "nccl-loopback", "status": "InProgress", "workflowRef": {"name": "bench", "namespace": "default"}}]})
    groups = [{"name": f"group-{i}", "nodes": [name], "phase": "Succeeded", "jobRef": f"job-{i}"} for i, name in enumerate(nodes)]
    await session.store.patch_status(WORKFLOW, "bench", "default", {"orchestration": {"groups": groups}})
    for i, name in enumerate(nodes):
        await session.store.create(JOB, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "spec": {"workload": {"trainJob": {}}}, "metadata": {
            "name": f"job-{i}", "namespace": "default", "labels": {"nvcre.nvidia.com/workflow": "bench"},
            "annotations": {"nvcre.nvidia.com/group-nodes": name}}})
    return nodes


async def change(session: SimSession, nodes: list[str], rng: random.Random) -> None:
    """One node-state change: a Job's node becomes failed (or passes again)."""
    i = rng.randrange(len(nodes))
    failed = [{"name": nodes[i], "reason": "ThresholdViolation", "message": "bench"}] if rng.random() < 0.5 else None
    await session.store.patch_status(JOB, f"job-{i}", "default", {"failedNodes": failed})


def typist(app: NvcreApp, stamps: list[float], stop: threading.Event, rng: random.Random) -> None:
    """A terminal's input thread: a right-arrow keystroke at random moments, handed to the driver."""
    driver = app._driver  # noqa: SLF001 - the object a terminal's input thread talks to
    assert driver is not None
    while not stop.wait(rng.uniform(*KEY_GAP)):
        stamps.append(time.perf_counter())
        driver.process_message(events.Key("right", None))


async def key_to_screen(app: NvcreApp, rng: random.Random) -> list[float]:
    """Milliseconds from each keystroke to the first screen update showing its cursor move."""
    rack_map = app.screen.query_one(RackMap)
    names = rack_map.visible_names
    rack_map.highlighted = names[0]
    start = names.index(rack_map.highlighted or names[0])
    stamps: list[float] = []
    latencies: list[float] = []
    display = app._display  # noqa: SLF001 - where Textual hands each screen update to the terminal

    def timed_display(screen: object, renderable: object) -> None:
        display(screen, renderable)  # type: ignore[arg-type]
        if renderable is None:
            return
        shown = names.index(rack_map.highlighted or names[0]) - start  # keys processed so far (each moves right by one)
        now = time.perf_counter()
        while len(latencies) < min(shown, len(stamps)):
            latencies.append((now - stamps[len(latencies)]) * 1000)

    app._display = timed_display  # type: ignore[method-assign]  # noqa: SLF001
    stop = threading.Event()
    thread = threading.Thread(target=typist, args=(app, stamps, stop, random.Random(rng.random())), daemon=True)
    thread.start()
    await asyncio.sleep(TYPING_SECONDS)
    stop.set()
    thread.join()
    await asyncio.sleep(0.5)  # the last keys reach the screen
    app._display = display  # type: ignore[method-assign]  # noqa: SLF001
    return latencies


async def feed(session: SimSession, nodes: list[str], rng: random.Random, rate: int, stop: asyncio.Event, sent: list[int]) -> None:
    """`rate` store events per second, in batches of 50 (every 50 ms at 1,000/s, every 10 ms at 5,000/s): the
    writes run on the console's own event loop, as the simulator's do, so a batch is time keys wait."""
    due, batch = time.perf_counter(), 50
    while not stop.is_set():
        for _ in range(batch):
            await change(session, nodes, rng)
        sent[0] += batch
        due += batch / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))


async def typing(app: NvcreApp, session: SimSession, nodes: list[str], rng: random.Random) -> dict[str, tuple[float, float, float]]:
    """(p50, p95, achieved events/s) of key-to-screen, idle and at each of RATES, with the app's snapshot timer."""
    timer = app.set_interval(REFRESH_SECONDS, app.refresh_snapshot, name="snapshot")  # what a live app runs
    found: dict[str, tuple[float, float, float]] = {}
    for rate in (0, *RATES):
        stop, sent = asyncio.Event(), [0]
        task = asyncio.create_task(feed(session, nodes, rng, rate, stop, sent)) if rate else None
        start = time.perf_counter()
        latencies = await key_to_screen(app, rng)
        elapsed = time.perf_counter() - start
        stop.set()
        if task is not None:
            await task
        await app.refresh_snapshot()
        cuts = statistics.quantiles(latencies, n=20)
        found[str(rate)] = (statistics.median(latencies), cuts[18], sent[0] / elapsed)
    timer.stop()
    return found


async def run(rounds: int, freeze: bool) -> tuple[dict[str, float], dict[str, tuple[float, float, float]]]:
    rng = random.Random(7)
    session = await SimSession.open(scenario(), None)
    nodes = await fleet_with_jobs(session)
    app = NvcreApp(session=session, live=False, freeze_heap=freeze)  # the `nvcre` command freezes its heap
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(TopologyScreen())
        await pilot.pause()

        async def idle() -> None:
            await pilot.pause()

        async def thousand() -> None:
            for _ in range(1000):
                await change(session, nodes, rng)
            await app.refresh_snapshot()
            await pilot.pause()

        keys = iter(["right", "left"] * rounds * 4)

        async def key() -> None:
            await pilot.press(next(keys))
            await pilot.pause()

        result = {"idle": await median_ms(rounds, idle), "thousand": await median_ms(rounds, thousand), "key_idle": await median_ms(rounds, key)}
        stop, sent = asyncio.Event(), [0]

        async def refresher() -> None:
            while not stop.is_set():  # the live app's 0.5 s snapshot timer
                await app.refresh_snapshot()
                await asyncio.sleep(0.5)

        tasks = [asyncio.create_task(feed(session, nodes, rng, 1000, stop, sent)), asyncio.create_task(refresher())]
        start = time.perf_counter()
        result["key_loaded"] = await median_ms(rounds, key)
        stop.set()
        await asyncio.gather(*tasks)
        result["rate"] = sent[0] / (time.perf_counter() - start)
        typed = await typing(app, session, nodes, rng)
    return result, typed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-freeze", action="store_true", help="keep the loaded heap in the garbage collector's full passes")
    args = parser.parse_args()
    r, typed = asyncio.run(run(args.rounds, not args.no_freeze))
    print(f"console on {NODES} nodes, topology map at 200x50" + (", loaded heap not frozen" if args.no_freeze else ""))
    print(f"idle frame                        {r['idle']:9.2f} ms   1.00x")
    print(f"1,000 node-state changes applied  {r['thousand']:9.2f} ms   {r['thousand'] / r['idle']:6.2f}x idle frame")
    print(f"key press, idle                   {r['key_idle']:9.2f} ms   1.00x")
    print(f"key press, {r['rate']:5.0f} store events/s  {r['key_loaded']:9.2f} ms   {r['key_loaded'] / r['key_idle']:6.2f}x idle key press")
    idle_p50, idle_p95, _ = typed["0"]
    print("key to screen, keys typed from another thread at random moments     p50        p95")
    for rate, (p50, p95, achieved) in typed.items():
        label = "idle" if rate == "0" else f"{achieved:5.0f} store events/s (asked {int(rate):,})"
        print(f"  {label:44s} {p50:8.2f} ms {p95:8.2f} ms   {p50 / idle_p50:6.2f}x / {p95 / idle_p95:6.2f}x idle")


if __name__ == "__main__":
    main()
