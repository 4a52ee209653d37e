"""SimulatedRunner: status lifecycle on a ManualClock, restart safety, logs while running, stop, faults."""

from __future__ import annotations

from datetime import timedelta

from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.judging.blame import node_at_fault
from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.parsers.base import split_kubelet_prefix
from nvcre_tui.engine.runners.simulated import RETRY_SECONDS, SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
from nvcre_tui.engine.store import BATCH_JOB, WORKLOADRUN, MemoryStore
from nvcre_tui.engine.workloads import workload_name

from .helpers import ALL_NODES, Obj, nccl_run, scenario, training_run

SHORT = ["-b", "8", "-e", "256M", "-f", "2", "-n", "20", "-N", "2"]


async def start(scn: Scenario, run: Obj) -> tuple[ManualClock, MemoryStore, SimulatedRunner]:
    clock = ManualClock()
    store = MemoryStore(clock)
    fleet = SimulatedFleet(store, clock, scn)
    await fleet.ensure_nodes()
    await store.create(WORKLOADRUN, run)
    return clock, store, SimulatedRunner(store, clock, scn, fleet)


async def current(store: MemoryStore, run: Obj) -> Obj:
    return await store.get(WORKLOADRUN, run["metadata"]["name"], "default")


async def drive(clock: ManualClock, store: MemoryStore, runner: SimulatedRunner, run: Obj, limit: float = 1e6) -> Obj:
    """Reconcile, jump to the wake-up, repeat, until the run needs no more looks."""
    while (wait := await runner.reconcile_run(await current(store, run))) is not None and wait < limit:
        clock.advance(wait)
    return await current(store, run)


async def test_lifecycle_scheduling_running_succeeded() -> None:
    run = nccl_run("life", ALL_NODES[:2], args=SHORT)
    clock, store, runner = await start(scenario(), run)
    wait = await runner.reconcile_run(await current(store, run))
    state = (await current(store, run))["status"]
    assert state["phase"] == "Scheduling" and state["nodes"] == ALL_NODES[:2] and wait == 5.0
    clock.advance(wait)
    duration = await runner.reconcile_run(await current(store, run))
    state = (await current(store, run))["status"]
    assert state["phase"] == "Running" and state["startTime"] == "2026-01-01T00:00:05Z" and duration is not None and duration > 45
    clock.advance(duration + 100)  # the engine looks late: completion is when the run ended, not now
    assert await runner.reconcile_run(await current(store, run)) is None
    state = (await current(store, run))["status"]
    assert state["phase"] == "Succeeded" and state["exitCode"] == 0
    assert (parse_time(state["completionTime"]) - parse_time(state["startTime"])).total_seconds() == round(duration)
    assert runner.writes == 3 + 32 * 2 + 1  # three status patches; the fleet's nodes (create + status) and epoch


async def test_restart_mid_run_gives_the_same_result_and_logs() -> None:
    run = nccl_run("restart", ALL_NODES[:2], args=SHORT)
    clock, store, runner = await start(scenario(), run)
    await drive(clock, store, runner, run, limit=30)
    assert (await current(store, run))["status"]["phase"] == "Running"
    restarted = SimulatedRunner(store, clock, scenario(), SimulatedFleet(store, clock, scenario()))
    finished = await drive(clock, store, restarted, run)
    reference = nccl_run("restart", ALL_NODES[:2], args=SHORT)
    clock2, store2, runner2 = await start(scenario(), reference)
    alone = await drive(clock2, store2, runner2, reference)
    assert finished["status"] == alone["status"]
    assert await restarted.logs(finished) == await runner2.logs(alone)


async def test_logs_while_running_hold_only_what_was_printed_by_now() -> None:
    run = training_run("partial", ALL_NODES[16:24])
    clock, store, runner = await start(scenario(), run)
    await drive(clock, store, runner, run, limit=60)
    clock.advance(120)
    running = await current(store, run)
    early = await runner.logs(running)
    times = [split_kubelet_prefix(line)[0] for line in early]
    assert times and all(moment is not None and moment <= clock.now() for moment in times)
    done = await drive(clock, store, runner, run)
    full = await runner.logs(done)
    assert full[: len(early)] == early and len(full) > len(early)
    assert measure("training", full).measurements["avgStepTimeSec"] > 0


async def test_stop_marks_the_run_failed_and_keeps_its_logs() -> None:
    scn = scenario(faults=[{"type": "hang", "node": "gpu-node-02"}])
    run = nccl_run("hung", ALL_NODES[:2], args=SHORT)
    clock, store, runner = await start(scn, run)
    assert (await drive(clock, store, runner, run))["status"]["phase"] == "Running"  # hangs: no wake-up asked
    clock.advance(3600)
    before = await runner.logs(await current(store, run))
    await runner.stop(await current(store, run))
    stopped = await current(store, run)
    assert stopped["status"]["phase"] == "Failed" and stopped["status"]["reason"] == "Stopped"
    assert await runner.logs(stopped) == before
    writes = runner.writes
    await runner.stop(stopped)  # already finished: nothing written
    assert runner.writes == writes


async def test_stop_after_the_run_ended_keeps_its_real_end() -> None:
    run = nccl_run("ended", ALL_NODES[:2], args=SHORT)
    clock, store, runner = await start(scenario(), run)
    await runner.reconcile_run(await current(store, run))
    clock.advance(3600)  # the run finished long ago; nobody looked
    await runner.stop(await current(store, run))
    state = (await current(store, run))["status"]
    assert state["phase"] == "Succeeded" and state["reason"] == "Completed"


async def test_unschedulable_nodes_keep_the_run_scheduling() -> None:
    scn = scenario(faults=[{"type": "unschedulable", "node": "gpu-node-02"}])
    run = nccl_run("blocked", ALL_NODES[:3], args=SHORT)
    clock, store, runner = await start(scn, run)
    assert await runner.reconcile_run(await current(store, run)) is None
    clock.advance(3600)
    assert await runner.reconcile_run(await current(store, run)) is None
    state = (await current(store, run))["status"]
    assert state["phase"] == "Scheduling" and state["blockedNodes"] == ["gpu-node-02"] and "gpu-node-02" in state["message"]
    assert await runner.logs(await current(store, run)) == []


async def test_xid_mid_run_fails_naming_the_node_at_the_xid_time() -> None:
    scn = scenario(faults=[{"type": "xid", "node": "gpu-node-02", "gpu": 4, "at": "100s"}])
    run = nccl_run("xid", ALL_NODES[:2])
    clock, store, runner = await start(scn, run)
    finished = await drive(clock, store, runner, run)
    state = finished["status"]
    # Kubelet's words for the launcher's container, not the fault: the runner names no node and no Xid itself.
    assert (state["phase"], state["reason"], state["exitCode"]) == ("Failed", "Error", 134)
    assert "failedNode" not in state and "gpu-node-02" not in state["message"] and "Xid" not in state["message"]
    # The output does, and the engine reads it there (engine/judging/blame.py), with the line that named it.
    named = node_at_fault(await runner.logs(finished), ALL_NODES[:2])
    assert named is not None and named.name == "gpu-node-02" and "NCCL WARN Cuda failure" in named.evidence
    epoch = await runner.fleet.epoch()
    assert parse_time(state["completionTime"]) == epoch + timedelta(seconds=100)


async def test_a_stale_run_object_is_skipped_not_raised() -> None:
    run = nccl_run("stale", ALL_NODES[:2], args=SHORT)
    clock, store, runner = await start(scenario(), run)
    stale = await current(store, run)
    await runner.reconcile_run(stale)
    writes = runner.writes
    assert await runner.reconcile_run(stale) == RETRY_SECONDS  # resourceVersion moved on: Conflict, looked at again soon
    assert runner.writes == writes


async def test_invalid_spec_fails_the_run_with_a_message() -> None:
    run = nccl_run("bad", ALL_NODES[:2], args=["-b", "8", "-e", "lots"])
    clock, store, runner = await start(scenario(), run)
    state = (await drive(clock, store, runner, run))["status"]
    assert state["phase"] == "Failed" and state["reason"] == "InvalidSpec" and "nccl-tests args" in state["message"]
    assert "exitCode" not in state  # no container ran, so none exited: an exit code would read like a crash


async def test_a_run_another_runner_started_is_not_played_and_blames_nobody() -> None:
    """An engine without --sim-runner started it (Scheduling, no Simulated condition; its TrainJob never got pods):
    played here it passed with made-up numbers and no Simulated mark, archived as a real GPU's result. Its TrainJob
    goes with it (pods a Trainer controller made would hold GPUs for a run that is over); a namesake not ours stays."""
    run = nccl_run("real", ALL_NODES[:2], args=SHORT)
    clock, store, local = await start(scenario(), run)
    runner = SimulatedRunner(store, clock, local.scenario, local.fleet, fleet_only=True)  # --sim-runner on a cluster
    stored = await current(store, run)
    owned = {"kind": "TrainJob", "apiVersion": TRAINJOB.api_version,
             "metadata": {"name": workload_name("real"), "namespace": "default",
                          "ownerReferences": [{"apiVersion": "v1", "kind": "WorkloadRun", "name": "real", "uid": stored["metadata"]["uid"]}]}}
    await store.create(TRAINJOB, owned)
    await store.create(BATCH_JOB, {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": workload_name("real"), "namespace": "default"}})
    await store.update_status(WORKLOADRUN, {**stored, "status": {"phase": "Scheduling", "message": "TrainJob real created; waiting for its pods"}})
    assert await runner.reconcile_run(await current(store, run)) is None
    state = (await current(store, run))["status"]
    assert (state["phase"], state["reason"]) == ("Failed", "WorkloadNotCreated")
    assert "started on real pods by an engine without --sim-runner" in state["message"] and "failedNode" not in state
    assert not any(c["type"] == "Simulated" for c in state.get("conditions") or [])
    assert [job["metadata"]["name"] for job in (await store.list(TRAINJOB, "default")).items] == []
    assert [job["metadata"]["name"] for job in (await store.list(BATCH_JOB, "default")).items] == [workload_name("real")]  # not its owner's


async def test_the_embedded_simulator_plays_its_own_older_runs_without_the_condition() -> None:
    """A store written before runs carried the Simulated condition: no other runner exists there, so its runs go on."""
    run = nccl_run("older", ALL_NODES[:2], args=SHORT)
    clock, store, runner = await start(scenario(), run)
    assert not runner.fleet_only
    stored = await current(store, run)
    await store.update_status(WORKLOADRUN, {**stored, "status": {"phase": "Scheduling", "pendingSince": "2026-01-01T00:00:00Z",
                                                                  "nodes": ALL_NODES[:2]}})
    finished = await drive(clock, store, runner, run)
    assert finished["status"]["phase"] == "Succeeded"
