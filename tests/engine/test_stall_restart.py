"""A stalled training fails at the same moment whether or not the engine restarted while it hung: the stall clock
(engine/judging/stall.py) is kept in the Job's status (`trainingProgress`), so a restarted engine, or one taking
the Lease over, goes on from it. Before, a new engine started the clock again at its first look, and a stall of
minutes failed later by as long as the engine had watched it."""

from __future__ import annotations

from datetime import timedelta

from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, MemoryStore
from tests.scenarios.harness import CASES, NAMESPACE, catalog, start_certification

CASE = CASES / "hang-training-stalled"
WATCHED = 150.0  # how long the first engine watched the hung training (the limit is 3 minutes)


def new_engine(store: MemoryStore, clock: ManualClock) -> Engine:
    """A fresh engine process: its own fleet, runner and memory; only the store and the clock carry over."""
    scenario = load_scenario(CASE / "scenario.yaml")
    return Engine(store, clock, catalog(), SimulatedRunner(store, clock, scenario, SimulatedFleet(store, clock, scenario)))


async def stalled_job(restart: bool) -> dict:
    """The hung training's Job at the end, with an engine restart WATCHED seconds into the hang or none."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    scenario = load_scenario(CASE / "scenario.yaml")
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    name = await start_certification(store, CASE / "cert.yaml")

    async def done() -> bool:
        return cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE))

    async def hung_a_while() -> bool:
        for job in (await store.list(JOB, NAMESPACE)).items:
            kept = (job.get("status") or {}).get("trainingProgress") or {}
            if "step 20 " in (kept.get("mark") or "") and clock.now() - parse_time(kept["since"]) >= timedelta(seconds=WATCHED):
                return True
        return False

    if restart:
        assert await new_engine(store, clock).run_until_settled(until=hung_a_while, max_seconds=4 * 3600)
    assert await new_engine(store, clock).run_until_settled(until=done, max_seconds=4 * 3600)
    (job,) = [job for job in (await store.list(JOB, NAMESPACE)).items if cond.phase(job) == "Failed"]
    return job


def failure(job: dict) -> tuple[str, str]:
    """The Failed condition's reason and message."""
    (failed,) = [c for c in job["status"]["conditions"] if c["type"] == "Failed"]
    return failed["reason"], failed["message"]


async def test_a_restarted_engine_fails_a_stalled_training_when_one_engine_would() -> None:
    steady, restarted = await stalled_job(restart=False), await stalled_job(restart=True)
    assert failure(steady) == failure(restarted)
    assert failure(steady)[0] == "WorkloadStalled" and "no training progress for 4m00s after step 20/50" in failure(steady)[1]
    assert restarted["status"]["completionTime"] == steady["status"]["completionTime"]
    kept = restarted["status"]["trainingProgress"]
    assert kept["runUid"] and kept["mark"].startswith("step 20 at ")


async def test_a_kept_clock_of_another_run_or_unreadable_is_not_used() -> None:
    """A retry's new run starts its clock again; a damaged status starts it at the first look, as before."""
    from nvcre_tui.engine.controllers.job import _kept_progress

    now = SIM_START + timedelta(hours=1)
    assert _kept_progress({"runUid": "other", "mark": "step 3 at -", "since": "2026-01-01T00:00:00Z"}, "this", now) is None
    assert _kept_progress({"runUid": "this", "since": "yesterday"}, "this", now) is None
    assert _kept_progress(["runUid", "this"], "this", now) is None
    kept = _kept_progress({"runUid": "this", "mark": None, "since": "2099-01-01T00:00:00Z"}, "this", now)
    assert kept is not None and kept.mark is None and kept.since == now  # a clock that ran ahead: not later than now
