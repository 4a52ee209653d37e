"""Console benchmark on a 4,096-node simulated fleet, as ratios against an idle app in the same process.

    python bench/tui.py [--rounds N]

- idle frame:        `await pilot.pause()` on the topology map with nothing to do;
- 1,000 changes:     1,000 node-state changes written to the store (Job status writes), then the
                     snapshot refresh and the map update they cause, until the app is idle again;
- key press:         an arrow key on the map and `pilot.pause()`, idle vs while 1,000 store events per second
                     arrive (status patches, 50 every 50 ms).
The widget alone (no store, no snapshot) is measured by bench/tui_map.py. Not run by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from timing import median_ms

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW
from nvcre_tui.screens.topology import TopologyScreen

NODES, CLIQUES, GROUP = 4096, 128, 32


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


async def run(rounds: int) -> dict[str, float]:
    rng = random.Random(7)
    session = await SimSession.open(scenario(), None)
    nodes = await fleet_with_jobs(session)
    app = NvcreApp(session=session, live=False)
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
        stop = asyncio.Event()
        sent = [0]

        async def feed() -> None:
            due = time.perf_counter()
            while not stop.is_set():
                for _ in range(50):  # 50 store events every 50 ms: 1,000 events per second
                    await change(session, nodes, rng)
                sent[0] += 50
                due += 0.05
                await asyncio.sleep(max(0.0, due - time.perf_counter()))

        async def refresher() -> None:
            while not stop.is_set():  # the live app's 0.5 s snapshot timer
                await app.refresh_snapshot()
                await asyncio.sleep(0.5)

        tasks = [asyncio.create_task(feed()), asyncio.create_task(refresher())]
        start = time.perf_counter()
        result["key_loaded"] = await median_ms(rounds, key)
        stop.set()
        await asyncio.gather(*tasks)
        result["rate"] = sent[0] / (time.perf_counter() - start)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    r = asyncio.run(run(parser.parse_args().rounds))
    print(f"console on {NODES} nodes, topology map at 200x50")
    print(f"idle frame                        {r['idle']:9.2f} ms   1.00x")
    print(f"1,000 node-state changes applied  {r['thousand']:9.2f} ms   {r['thousand'] / r['idle']:6.2f}x idle frame")
    print(f"key press, idle                   {r['key_idle']:9.2f} ms   1.00x")
    print(f"key press, {r['rate']:5.0f} store events/s  {r['key_loaded']:9.2f} ms   {r['key_loaded'] / r['key_idle']:6.2f}x idle key press")


if __name__ == "__main__":
    main()
