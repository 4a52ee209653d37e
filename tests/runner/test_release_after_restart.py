"""An engine that dies between writing a run's end and giving back what the run held leaves nothing held for good: the
next engine to start (a new session, a new runner, over HTTP) finds the ended run without its Released condition and
deletes its ComputeDomain (whose IMEX daemons hold a GB200 rack's nodes) and its RoCE ResourceClaimTemplate, as the
nvcre-engine ServiceAccount `setup init` grants. Before, they stayed until the Certification was deleted."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import RELEASED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.conditions import find
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.kubernetes.create import COMPUTE_DOMAIN
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
from nvcre_tui.engine.store.protocol import BATCH_JOB, CRD, WORKLOADRUN
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.kube.cluster import store_on
from tests.kubeapi.faults import Fault
from tests.runner.harness import denied, died_during, engine_to_restart, install_trainer, job_and_its_run, served
from tests.runner.test_release_dra import NODES, SPEC, TEMPLATE, _crd
from tests.scenarios.harness import catalog

Obj = dict[str, Any]


async def _died_at_the_end(folder: Path) -> tuple[dict[str, list[str]], Obj, dict[str, list[str]], Obj, list[str], list[str]]:
    """A GB200-like run (ComputeDomain channel + RoCE claim) started by one engine's runner on a server with no Job
    controller; past the controller's minute that runner writes the run's end (WorkloadNotStarted) and dies as it
    starts releasing (its task cancelled, its session closed). Then a new engine starts on the same server. What was
    held after the death, the run then, what is held once the new engine settled, the run then, the new engine's
    deletions, and the engine's requests `setup init` does not grant."""
    clock = ManualClock(SIM_START)
    async with engine_to_restart(folder, clock) as (server, admin, as_engine, first):
        await admin.create(CRD, _crd("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate"))
        await admin.create(CRD, _crd(COMPUTE_DOMAIN.group, COMPUTE_DOMAIN.version, "computedomains", "ComputeDomain"))
        await served(admin, {"resource.k8s.io/v1": ["resourceclaimtemplates"], COMPUTE_DOMAIN.api_version: ["computedomains"]})
        _, created = await job_and_its_run(admin, SPEC, NODES)

        async def held() -> dict[str, list[str]]:
            kinds = {"ComputeDomain": COMPUTE_DOMAIN, "ResourceClaimTemplate": TEMPLATE}
            return {name: sorted(o["metadata"]["name"] for o in (await admin.list(kind, "default")).items) for name, kind in kinds.items()}

        runner = KubernetesRunner(first, clock, first, trainer=False)
        try:
            await runner.reconcile_run(created)
            clock.advance(61)  # no Job controller synced its batch Job: this look ends the run
            # The release's first read of the ComputeDomain is slow to answer; the engine dies waiting for it.
            server.faults.add(Fault(method="GET", path=r"/computedomains/", delay=0.2, times=1))
            await died_during(server, runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default")),
                              verb="get", resource="computedomains")
        finally:
            await runner.close()
        await first.close()
        after_death, ended = await held(), await admin.get(WORKLOADRUN, "cert-job-run", "default")

        server.clear_requests()

        async def released() -> bool:
            return await held() == {"ComputeDomain": [], "ResourceClaimTemplate": []}

        await _engine_started(as_engine, clock, released, trainer=False)
        deletions = sorted(f"{r.resource}/{r.name}" for r in server.requests_where(verb="delete"))
        return (after_death, ended, await held(), await admin.get(WORKLOADRUN, "cert-job-run", "default"), deletions,
                denied(server.requests))


async def _engine_started(kubeconfig: Path, clock: ManualClock, until: Any, *, trainer: bool | None) -> None:
    """An engine started as the nvcre-engine ServiceAccount (`kubeconfig`), run until `until()` (or it settles); stopped."""
    store = await store_on(kubeconfig, clock, "nvcre-engine")
    try:
        cache = engine_cache(store)
        writer = WriteThroughStore(store, cache)
        runner = KubernetesRunner(writer, clock, store, trainer=trainer)
        engine = Engine(writer, clock, catalog(), runner, cache=cache)
        runner.connect(engine.queue.add, cache)
        try:
            await engine.run_until_settled(until=until, max_seconds=120)
        finally:
            await engine.stop()
            await runner.close()
    finally:
        await store.close()


async def _died_deleting_its_job(folder: Path) -> tuple[list[str], list[str]]:
    """A batch-fallback run (Kubeflow Trainer not installed) that fails past the Job controller's minute; its engine
    dies as it deletes the run's batch Job (the request never answered). Kubeflow Trainer is installed before the next
    engine starts, which so discovers TrainJobs served. The batch Jobs after the death, and once the new engine settled."""
    clock = ManualClock(SIM_START)
    async with engine_to_restart(folder, clock) as (server, admin, as_engine, first):
        _, created = await job_and_its_run(admin, {k: v for k, v in SPEC.items() if k != "resourceClaims"}, NODES)

        async def jobs() -> list[str]:
            return sorted(j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, "default")).items)

        runner = KubernetesRunner(first, clock, first, trainer=False)
        try:
            await runner.reconcile_run(created)
            clock.advance(61)
            dropped = server.faults.add(Fault(method="DELETE", path=r"^/apis/batch/v1/", reset_connection=True))
            await died_during(server, runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default")),
                              verb="delete", resource="jobs", api_group="batch")
        finally:
            await runner.close()
        await first.close()
        server.faults.remove(dropped)
        after_death = await jobs()
        await install_trainer(admin)

        async def gone() -> bool:
            return not await jobs()

        await _engine_started(as_engine, clock, gone, trainer=None)
        return after_death, await jobs()


def test_a_restarted_engine_releases_what_a_run_ended_by_a_dead_one_still_holds(tmp_path: Path) -> None:
    after_death, ended, after_restart, run, deletions, refused = asyncio.run(_died_at_the_end(tmp_path))
    assert (ended["status"]["phase"], ended["status"]["reason"]) == ("Failed", "WorkloadNotStarted"), ended["status"]
    assert len(after_death["ComputeDomain"]) == 1 and len(after_death["ResourceClaimTemplate"]) == 1, after_death  # the death held them
    assert find(ended["status"].get("conditions"), RELEASED) is None
    assert after_restart == {"ComputeDomain": [], "ResourceClaimTemplate": []}, f"still held after a restart: {after_restart}"
    assert sorted(d.split("/")[0] for d in deletions) == ["computedomains", "resourceclaimtemplates"], deletions
    released = find(run["status"].get("conditions"), RELEASED)
    assert released is not None and released["status"] == "True", run["status"]
    assert refused == []


def test_a_restarted_engine_deletes_a_failed_runs_batch_job_after_kubeflow_trainer_was_installed(tmp_path: Path) -> None:
    """The run was made a batch Job; the engine that resumes its release serves TrainJobs: it deletes the batch Job,
    whose pods hold the group's GPUs, not a TrainJob the run never had."""
    after_death, after_restart = asyncio.run(_died_deleting_its_job(tmp_path))
    assert after_death == ["cert-job-workload"], after_death
    assert after_restart == [], f"a failed run's batch Job stays after a restart: {after_restart}"


async def _died_after_a_refused_start(folder: Path) -> tuple[list[str], Obj, list[str], Obj, list[str]]:
    """A TrainJob run whose TrainJob a webhook denies after its TrainingRuntime (and whatever else comes first) was
    made; the run is written failed and its engine dies as it starts releasing. A new engine starts. What of the run's
    (named cert-job-*) was left after the death, the run then, what is left once the new engine settled, the run then,
    and the engine's requests `setup init` does not grant."""
    clock = ManualClock(SIM_START)
    async with engine_to_restart(folder, clock) as (server, admin, as_engine, first):
        await install_trainer(admin)
        _, created = await job_and_its_run(admin, {k: v for k, v in SPEC.items() if k != "resourceClaims"}, NODES)
        server.faults.add(Fault(method="POST", path=r"/trainjobs$", status=403, reason="Forbidden",
                                message='admission webhook "validate.example.com" denied the request: TrainJobs need the label team'))

        def left() -> list[str]:
            return sorted(f"{plural}/{o['metadata']['name']}" for group, plural in
                          ((TRAINJOB.group, "trainingruntimes"), (TRAINJOB.group, "trainjobs"), ("", "services"), ("batch", "jobs"))
                          for o in server.objects(group, plural) if o["metadata"]["name"].startswith("cert-job"))

        runner = KubernetesRunner(first, clock, first)
        try:
            # The release's first read is slow to answer; the engine dies waiting for it.
            server.faults.add(Fault(method="GET", path=r"/trainjobs/", delay=0.2, times=1))
            await died_during(server, runner.reconcile_run(created), verb="get", resource="trainjobs")
        finally:
            await runner.close()
        await first.close()
        after_death, ended = left(), await admin.get(WORKLOADRUN, "cert-job-run", "default")
        server.clear_requests()

        async def released() -> bool:
            return not left()

        await _engine_started(as_engine, clock, released, trainer=None)
        return after_death, ended, left(), await admin.get(WORKLOADRUN, "cert-job-run", "default"), denied(server.requests)


def test_a_restarted_engine_deletes_what_a_refused_start_made_before_its_engine_died(tmp_path: Path) -> None:
    """The run's TrainingRuntime (its pod templates pin the group's nodes) and Service, made before the TrainJob a
    webhook denied, go with the run when the engine that failed it died before deleting them: they stayed until the
    certification was deleted (the resumed release deleted the workload and DRA objects only)."""
    after_death, ended, after_restart, run, refused = asyncio.run(_died_after_a_refused_start(tmp_path))
    assert (ended["status"]["phase"], ended["status"]["reason"]) == ("Failed", "WorkloadNotCreated"), ended["status"]
    assert find(ended["status"].get("conditions"), RELEASED) is None
    assert any(name.startswith("trainingruntimes/") for name in after_death), after_death  # the death left it
    assert after_restart == [], f"left after a restart: {after_restart}"
    released = find(run["status"].get("conditions"), RELEASED)
    assert released is not None and released["status"] == "True", run["status"]
    assert refused == []
