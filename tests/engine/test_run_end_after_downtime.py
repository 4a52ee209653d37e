"""A Job ends when its run ended, not when an engine first saw it: an engine down while a run finished (a restart,
a Lease handed over) stamped the Job, its Workflow's group and a diagnose round with the moment it came back, and
durations and node-minutes grew by the downtime."""

from __future__ import annotations

from datetime import timedelta

from nvcre_tui.engine.api.bodies import run_status
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKLOADRUN, MemoryStore
from tests.scenarios.harness import CASES, NAMESPACE, catalog, start_certification

CASE = CASES / "all-pass-full-scale"
DOWN = timedelta(minutes=30)


def new_engine(store: MemoryStore, clock: ManualClock) -> Engine:
    """A fresh engine process: only the store and the clock carry over."""
    scenario = load_scenario(CASE / "scenario.yaml")
    return Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))


async def job_ends(down: bool) -> dict[str, str]:
    """Each Job's completionTime by its group, with the engine away for DOWN once its first run is running, or not."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, load_scenario(CASE / "scenario.yaml")).ensure_nodes()
    name = await start_certification(store, CASE / "cert.yaml")

    async def done() -> bool:
        return cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE))

    async def running() -> bool:
        return any(run_status(run).get("phase") == "Running" for run in (await store.list(WORKLOADRUN, NAMESPACE)).items)

    if down:
        assert await new_engine(store, clock).run_until_settled(until=running, max_seconds=3600)
        clock.advance(DOWN.total_seconds())  # no engine: the run finishes meanwhile
    assert await new_engine(store, clock).run_until_settled(until=done, max_seconds=4 * 3600)
    runs = {run["metadata"]["name"]: run_status(run) for run in (await store.list(WORKLOADRUN, NAMESPACE)).items}
    ends = {}
    for job in (await store.list(JOB, NAMESPACE)).items:
        run = runs[job["status"]["workloadRef"]["name"]]
        assert job["status"]["completionTime"] == run["completionTime"]  # the run's end, as its runner saw it
        ends[job["metadata"]["name"]] = job["status"]["completionTime"]
    return ends


async def test_a_job_ends_when_its_run_ended_though_no_engine_looked() -> None:
    steady, restarted = await job_ends(down=False), await job_ends(down=True)
    assert steady and restarted.keys() == steady.keys()
    first = min(steady, key=steady.__getitem__)
    assert restarted[first] == steady[first]  # the run that ended while no engine ran: not DOWN later
