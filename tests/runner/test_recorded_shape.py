"""A run is followed as the shape it was made in, whatever an engine started later discovers: a batch Job made before
Kubeflow Trainer was installed, or a TrainJob made before the Trainer was (partly) removed, is read, judged, stopped,
deleted and its log found as that object by a new engine (a new store and runner over HTTP, discovering afresh).
Before, the runner chose the kind from discovery, once per process: the restarted engine looked for the other kind,
never saw the real workload (the run waited out the grace and failed for the wrong reason) and never deleted it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, CRD, POD, WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.runner.harness import denied, engine_to_restart, install_trainer, job_and_its_run, pods_caught_up, register_gpu_nodes
from tests.runner.test_log_pod import COMPLETION_INDEX
from tests.runner.test_release_after_restart import _engine_started
from tests.scenarios.harness import CASES

Obj = dict[str, Any]
NODES = ["gpu-node-01", "gpu-node-02"]
TORCH = {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "numNodes": 2, "gpusPerNode": 8, "target": {"nodeNames": NODES},
         "framework": {"torch": {"script": "train.py"}}}
MPI = {**TORCH, "framework": {"mpi": {"binary": "/usr/local/bin/all_reduce_perf_mpi"}}}
TRAINER_PLURALS = ("trainjobs", "trainingruntimes")


async def _no_longer_served(admin: Any, plural: str) -> None:
    for _ in range(500):
        if plural not in {r.get("name") for r in await admin.served_resources(TRAINJOB.api_version) or []}:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{plural} still served")


async def _restarted(folder: Path, *, made_as_trainjob: bool) -> tuple[Obj, list[str], list[str], list[str]]:
    """A run started by one engine's runner as a TrainJob (the Trainer and JobSet installed) or a batch Job (neither),
    on a server with no workload controller; the Trainer is then removed (its TrainingRuntime CRD deleted: no longer
    served) or installed, and a new engine starts past the controller's minute. The run once that engine settled,
    the TrainJobs and batch Jobs left, and both engines' requests `setup init` does not grant (the shape's record too)."""
    clock = ManualClock(SIM_START)
    async with engine_to_restart(folder, clock) as (server, admin, as_engine, first):
        if made_as_trainjob:
            await install_trainer(admin)
        _, created = await job_and_its_run(admin, TORCH, NODES)
        runner = KubernetesRunner(first, clock, first)  # discovers, as an engine does
        try:
            await runner.reconcile_run(created)
        finally:
            await runner.close()
        await first.close()
        if made_as_trainjob:
            await admin.delete(CRD, "trainingruntimes.trainer.kubeflow.org")
            await _no_longer_served(admin, "trainingruntimes")
        else:
            await install_trainer(admin)
        clock.advance(61)  # the workload's controller had its minute

        async def ended() -> bool:
            return (await admin.get(WORKLOADRUN, "cert-job-run", "default")).get("status", {}).get("phase") == "Failed"

        await _engine_started(as_engine, clock, ended, trainer=None)
        trainjobs = [o["metadata"]["name"] for o in server.objects(TRAINJOB.group, TRAINJOB.plural)]
        jobs = sorted(j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, "default")).items)
        return await admin.get(WORKLOADRUN, "cert-job-run", "default"), trainjobs, jobs, denied(server.requests)


def test_a_batch_run_is_followed_as_its_batch_job_by_an_engine_that_finds_kubeflow_trainer_installed(tmp_path: Path) -> None:
    run, trainjobs, jobs, refused = asyncio.run(_restarted(tmp_path, made_as_trainjob=False))
    state = run["status"]
    assert (state.get("phase"), state.get("reason")) == ("Failed", "WorkloadNotStarted"), state
    assert state["message"].startswith("Job cert-job-workload made no pods and no Job controller has synced it"), state["message"]
    assert jobs == [] and trainjobs == [], f"the run's batch Job was left: {jobs}"
    shape = next(c for c in state["conditions"] if c["type"] == "BatchFallback")
    assert (shape["status"], shape["reason"]) == ("True", "TrainerNotServed"), shape
    assert refused == []


def test_a_trainjob_run_is_followed_as_its_trainjob_by_an_engine_that_finds_the_trainer_not_served(tmp_path: Path) -> None:
    run, trainjobs, jobs, refused = asyncio.run(_restarted(tmp_path, made_as_trainjob=True))
    state = run["status"]
    assert (state.get("phase"), state.get("reason")) == ("Failed", "WorkloadNotStarted"), state
    assert state["message"].startswith("TrainJob cert-job-workload made no pods and no Kubeflow Trainer controller"), state["message"]
    assert trainjobs == [] and jobs == [], f"the run's TrainJob was left: {trainjobs}"
    shape = next(c for c in state["conditions"] if c["type"] == "BatchFallback")
    assert (shape["status"], shape["reason"]) == ("False", "TrainerServed"), shape  # a TrainJob, as recorded when made
    assert refused == []


async def _stopped_after_trainer_installed(folder: Path) -> tuple[list[str], list[str], Obj]:
    """A batch-fallback MPI run whose index-0 pod (its result pod: no launcher on the fallback) ran and logged; the
    Trainer is installed and a new runner, discovering it, reads the run's log and stops it. Its log as read, the
    batch Jobs left, the run."""
    async with installed(folder, garbage_collector=False) as (server, kubeconfig):
        clock = server.clock
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            await register_gpu_nodes(admin, clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
            _, created = await job_and_its_run(admin, MPI, NODES)
            first = KubernetesRunner(admin, clock, admin)
            try:
                await first.reconcile_run(created)
            finally:
                await first.close()
            job = (await admin.list(BATCH_JOB, "default")).items[0]
            template = job["spec"]["template"]
            pod = await admin.create(POD, {
                "apiVersion": "v1", "kind": "Pod", "spec": {**template["spec"], "nodeName": NODES[0]},
                "metadata": {"name": "cert-job-workload-0", "namespace": "default",
                             "labels": {**template["metadata"]["labels"], COMPLETION_INDEX: "0"},
                             "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
                                                  "uid": job["metadata"]["uid"], "controller": True}]}})
            container = pod["spec"]["containers"][0]["name"]
            await admin.patch_status(POD, pod["metadata"]["name"], "default", {"phase": "Running", "containerStatuses": [
                {"name": container, "image": MPI["image"], "ready": True, "state": {"running": {"startedAt": "2026-01-01T00:00:10Z"}}}]})
            server.set_pod_log("default", pod["metadata"]["name"], "2026-01-01T00:00:11.000000000Z # nThread 1 nGpus 1\n")
            await install_trainer(admin)
            runner = KubernetesRunner(admin, clock, admin)  # a new engine's: it discovers the Trainer
            try:
                await runner.pods.start()
                await pods_caught_up(runner, admin)
                run = await admin.get(WORKLOADRUN, "cert-job-run", "default")
                lines = await runner.logs(run)
                await runner.stop(run)
            finally:
                await runner.close()
            jobs = sorted(j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, "default")).items)
            return lines, jobs, await admin.get(WORKLOADRUN, "cert-job-run", "default")
        finally:
            await admin.close()


def test_a_batch_run_is_read_and_stopped_as_its_batch_job_after_kubeflow_trainer_was_installed(tmp_path: Path) -> None:
    lines, jobs, run = asyncio.run(_stopped_after_trainer_installed(tmp_path))
    assert any("nThread 1" in line for line in lines), f"its index-0 pod's log was not read: {lines}"
    assert run["status"]["phase"] == "Failed" and run["status"]["reason"] == "Stopped", run["status"]
    assert jobs == [], f"a stopped run's batch Job was left: {jobs}"


async def _recorded_then_trainer_removed(folder: Path) -> tuple[Obj, list[str]]:
    """A run whose engine recorded it as a TrainJob (the Trainer served) and died before making anything; the Trainer
    is removed (both its CRDs) and a new engine's runner starts it. The run as left, and that runner's refused requests."""
    clock = ManualClock(SIM_START)
    async with engine_to_restart(folder, clock) as (server, admin, as_engine, first):
        await install_trainer(admin)
        _, created = await job_and_its_run(admin, TORCH, NODES)
        dying = KubernetesRunner(first, clock, first)
        try:
            recorded = await dying._record_shape(created, await dying.trainer())  # then the engine died
        finally:
            await dying.close()
        assert recorded is not None
        for plural in TRAINER_PLURALS:
            await admin.delete(CRD, f"{plural}.trainer.kubeflow.org")
            await _no_longer_served(admin, plural)
        runner = KubernetesRunner(first, clock, first)  # a new engine's: it discovers the Trainer gone
        try:
            await runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default"))
        finally:
            await runner.close()
        return await admin.get(WORKLOADRUN, "cert-job-run", "default"), denied(server.requests)


def test_a_run_recorded_as_a_trainjob_fails_clearly_when_the_trainer_was_removed_before_anything_was_made(tmp_path: Path) -> None:
    """It raised the create's NotFound out of the runner (an engine error, retried with backoff, the run never ending)."""
    run, refused = asyncio.run(_recorded_then_trainer_removed(tmp_path))
    state = run["status"]
    assert (state.get("phase"), state.get("reason")) == ("Failed", "WorkloadNotCreated"), state
    assert "Kubeflow Trainer" in state["message"] and "no longer served" in state["message"], state["message"]
    assert refused == []
