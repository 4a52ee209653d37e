"""`--sim-runner` after an upgrade, over real HTTP against the emulator: the runs an older nvcre's simulated fleet had
started carry no Simulated condition (runs did not say it then), and the new fleet failed each as "started on real pods
by an engine without --sim-runner", which it was not. The server's managedFields say the simulator wrote their status:
the fleet plays them on, marked Simulated first; a run the engine started on real pods is still failed, blaming nobody."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.store.protocol import WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.sim.helpers import ALL_NODES, nccl_run, scenario

SHORT = ["-b", "8", "-e", "256M", "-f", "2", "-n", "20", "-N", "2"]


async def _running(kubeconfig: Path, clock: ManualClock, name: str, writer: str) -> None:
    """A run Running on two of the fleet's Nodes, its status written by `writer` (its user agent: the field manager)."""
    admin = await store_on(kubeconfig, clock, "nvcre-test")
    store = await store_on(kubeconfig, clock, writer)
    try:
        run = nccl_run(name, ALL_NODES[:2], args=SHORT)
        run.pop("status", None)
        created = await admin.create(WORKLOADRUN, run)
        now = format_time(clock.now())
        await store.update_status(WORKLOADRUN, {**created, "status": {"phase": "Running", "pendingSince": now, "startTime": now,
                                                                      "nodes": ALL_NODES[:2], "message": "running on 2 node(s)"}})
    finally:
        await admin.close()
        await store.close()


async def test_runs_an_older_fleet_started_are_played_on_and_marked_simulated(tmp_path: Path) -> None:
    clock = ManualClock()
    async with installed(tmp_path) as (_, kubeconfig):
        await _running(kubeconfig, clock, "older-fleet", "nvcre-sim")
        await _running(kubeconfig, clock, "real-pods", "nvcre-engine")
        sim = await store_on(kubeconfig, clock, "nvcre-sim")
        try:
            scn = scenario()
            fleet = SimulatedFleet(sim, clock, scn)
            await fleet.ensure_nodes()
            runner = SimulatedRunner(sim, clock, scn, fleet, fleet_only=True)
            for _ in range(20):
                wait = await runner.reconcile_run(await sim.get(WORKLOADRUN, "older-fleet", "default"))
                if wait is None:
                    break
                clock.advance(wait)
            played = (await sim.get(WORKLOADRUN, "older-fleet", "default"))["status"]
            assert played["phase"] == "Succeeded" and played.get("reason") != "WorkloadNotCreated", played
            [simulated] = [c for c in played["conditions"] if c["type"] == "Simulated"]
            assert simulated["status"] == "True"
            assert await runner.reconcile_run(await sim.get(WORKLOADRUN, "real-pods", "default")) is None
            real = (await sim.get(WORKLOADRUN, "real-pods", "default"))["status"]
            assert (real["phase"], real["reason"]) == ("Failed", "WorkloadNotCreated")
            assert "started on real pods by an engine without --sim-runner" in real["message"]
            assert not any(c["type"] == "Simulated" for c in real.get("conditions") or [])
        finally:
            await sim.close()
