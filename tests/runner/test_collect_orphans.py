"""A deleted Certification leaves nothing behind, with or without a garbage collector.

On an API server alone (no kube-controller-manager, as envtest and the trial cluster start it) nothing follows
ownerReferences: the engine stops and deletes a deleted Certification's Workflows, Jobs, runs and workload
objects itself (engine/controllers/collect.py), inside the RBAC `setup init` grants, and never an object that
only shares a name with one of its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import LABEL_JOB
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.kubernetes.create import TRAINING_RUNTIME, TRAINJOB
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE
from nvcre_tui.engine.store.protocol import BATCH_JOB, CERTIFICATION, CONFIGMAP, CRD, JOB, SECRET, SERVICE, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from nvcre_tui.engine.workloads import workload_name
from tests.kube.cluster import installed, store_on
from tests.kubeapi.trainer_crds import jobset_crd, real_trainer_crd
from tests.runner.harness import KubeletDriven, denied, register_gpu_nodes
from tests.kubeapi.kubelet import TestKubelet
from tests.scenarios.harness import NAMESPACE, catalog, start_certification

Obj = dict[str, Any]
SCENARIO = {"name": "collect", "seed": 3, "nodes": [{"count": 2, "cliques": 1}]}
CERT = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "gone"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "full-scale"}},
                                {"domain": "diagnostics", "variant": "dcgm-level4", "options": {"testScale": "intra-node"}}]}}
OURS = (WORKFLOW, JOB, WORKLOADRUN, CONFIGMAP, SECRET, SERVICE, BATCH_JOB)


async def _left(admin: Any, trainer: bool) -> dict[str, list[str]]:
    """What is left in the namespace, by kind (of the built-in kinds, what nvcre made: owned or labelled; the batch
    Job as `batch/Job`, apart from nvcre's)."""
    kinds = (*OURS, TRAINJOB, TRAINING_RUNTIME) if trainer else OURS
    left = {}
    for kind in kinds:
        items = (await admin.list(kind, NAMESPACE)).items
        names = [o["metadata"]["name"] for o in items if kind in (WORKFLOW, JOB, WORKLOADRUN)
                 or o["metadata"].get("ownerReferences") or LABEL_JOB in (o["metadata"].get("labels") or {})]
        if names:
            left[f"{kind.group}/{kind.kind}" if kind.group and kind.group != "nvcre.nvidia.com" else kind.kind] = names
    return left


async def _certify_then_delete(folder: Path, *, trainer: bool, garbage_collector: bool,
                               when: str) -> tuple[Obj, Obj, list[str], dict[str, int]]:
    """Start the certification, delete it `when` ("running": its first runs are in flight; "finished"), let the
    engine work on; (what was there before the delete, what is left after, the engine's requests that `setup init`'s
    RBAC or the server refused, engine deletes by resource). The engine runs as its ServiceAccount: the server's
    authorizer judges every request by the roles `setup init` applied."""
    clock = ManualClock(SIM_START)
    (folder / "cert.yaml").write_text(json.dumps(CERT))
    async with installed(folder, clock=clock, garbage_collector=garbage_collector) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_store = await engine_as_service_account(server, folder, clock)
        runner: KubernetesRunner | None = None
        try:
            if trainer:
                for plural in ("trainjobs", "trainingruntimes"):
                    await admin.create(CRD, real_trainer_crd(plural))
                await admin.create(CRD, jobset_crd())  # the Trainer's dependency, served
                for _ in range(500):
                    if await engine_store.served_resources("trainer.kubeflow.org/v1alpha1"):
                        break
                    await asyncio.sleep(0.01)
            scenario = Scenario.model_validate(SCENARIO)
            await register_gpu_nodes(admin, clock, scenario)
            name = await start_certification(admin, folder / "cert.yaml")
            cache = engine_cache(engine_store)
            writer = WriteThroughStore(engine_store, cache)
            runner = KubernetesRunner(writer, clock, engine_store, trainer=trainer)
            engine = Engine(writer, clock, catalog(), KubeletDriven(runner, TestKubelet(admin, server, clock, scenario, ())), cache=cache)
            runner.connect(engine.queue.add, cache)

            async def ready() -> bool:
                cert = await admin.get(CERTIFICATION, name, NAMESPACE)
                if when == "finished":
                    return (cert.get("status") or {}).get("summary", {}).get("result") in ("PASSED", "FAILED")
                runs = (await admin.list(WORKLOADRUN, NAMESPACE)).items
                return any((r.get("status") or {}).get("phase") == "Running" for r in runs)

            assert await engine.run_until_settled(until=ready, max_seconds=6 * 3600)
            before = await _left(admin, trainer)
            await admin.delete(CERTIFICATION, name, NAMESPACE)

            async def only_configmaps_left() -> bool:
                return set(await _left(admin, trainer)) <= {"ConfigMap"}

            await engine.run_until_settled(until=only_configmaps_left, max_seconds=3600)
            after = await _left(admin, trainer)
            await engine.stop()
            deletes: dict[str, int] = {}
            for r in server.requests:
                if r.verb == "delete" and r.user_agent.startswith("nvcre-engine"):
                    deletes[r.resource] = deletes.get(r.resource, 0) + 1
            forbidden = sorted({f"{r.verb} {r.resource} (403)" for r in server.requests
                                if r.status == 403 and r.user_agent.startswith("nvcre-engine")})
            return before, after, denied(server.requests) + forbidden, deletes
        finally:
            if runner is not None:
                await runner.close()
            await engine_store.close()
            await admin.close()


async def engine_as_service_account(server: Any, folder: Path, clock: ManualClock) -> Any:
    """The engine's KubeStore, authenticated as the nvcre-engine ServiceAccount: the server's authorizer judges
    each of its requests by the roles `setup init` applied."""
    kubeconfig = server.write_kubeconfig(folder / "engine-kubeconfig", token=server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME))
    return await store_on(kubeconfig, clock, "nvcre-engine")


def _owned_configmaps(left: Obj) -> list[str]:
    return sorted(left.get("ConfigMap") or [])


@pytest.mark.parametrize("trainer", [True, False], ids=["trainjob", "batch"])
async def test_a_running_certification_deleted_without_a_garbage_collector_leaves_nothing_of_its_runs(tmp_path: Path, trainer: bool) -> None:
    before, after, refused, deletes = await _certify_then_delete(tmp_path, trainer=trainer, garbage_collector=False, when="running")
    workload = "trainer.kubeflow.org/TrainJob" if trainer else "batch/Job"
    assert before.get("WorkloadRun") and before.get(workload), before  # there was something in flight to collect
    # Only ConfigMaps and a batch MPI run's key Secret stay (the engine may not delete them), and only those that were
    # there: nothing new was made.
    assert set(after) <= {"ConfigMap", "Secret"} and set(_owned_configmaps(after)) <= set(_owned_configmaps(before))
    assert set(after.get("Secret") or []) <= set(before.get("Secret") or [])
    assert refused == []  # inside the RBAC `setup init` grants, as the server's authorizer judged it
    assert deletes.get("workflows") and deletes.get("workloadruns")  # the engine did it: no one else could


async def test_a_finished_certification_deleted_without_a_garbage_collector_leaves_only_its_configmaps(tmp_path: Path) -> None:
    before, after, refused, deletes = await _certify_then_delete(tmp_path, trainer=True, garbage_collector=False, when="finished")
    assert before.get("ConfigMap") and before.get("Workflow")  # the result ConfigMaps were written
    assert after == {"ConfigMap": before["ConfigMap"]}  # left for a garbage collector: no delete on ConfigMaps
    assert refused == [] and "configmaps" not in deletes


async def test_with_a_garbage_collector_the_engine_and_the_collector_do_not_trip_over_each_other(tmp_path: Path) -> None:
    before, after, refused, _ = await _certify_then_delete(tmp_path, trainer=True, garbage_collector=True, when="running")
    assert before.get("WorkloadRun")
    assert after == {}
    assert refused == []


async def test_release_deletes_only_what_names_the_job_as_owner(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    async with installed(tmp_path, clock=clock) as (_, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            job: Obj = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
                   "metadata": {"name": "gone-nccl-g0", "namespace": NAMESPACE, "uid": "1f0e4a9e-0000-4000-8000-000000000001"}}
            owner_ref = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "name": "gone-nccl-g0",
                         "uid": job["metadata"]["uid"], "controller": True}
            name = workload_name("gone-nccl-g0")
            await admin.create(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NAMESPACE},
                                         "spec": {"clusterIP": "None", "selector": {"app": "x"}}})  # someone else's namesake
            await admin.create(BATCH_JOB, {"apiVersion": "batch/v1", "kind": "Job",
                                           "metadata": {"name": name, "namespace": NAMESPACE, "ownerReferences": [owner_ref]},
                                           "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                                          "containers": [{"name": "c", "image": "busybox"}]}}}})
            runner = KubernetesRunner(admin, clock, admin, trainer=False)
            await runner.release(job)
            with pytest.raises(NotFound):
                await admin.get(BATCH_JOB, name, NAMESPACE)
            assert (await admin.get(SERVICE, name, NAMESPACE))["metadata"]["name"] == name
            await runner.close()
        finally:
            await admin.close()


async def test_a_job_deleted_by_hand_without_a_garbage_collector_takes_its_workload_with_its_run(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    (tmp_path / "cert.yaml").write_text(json.dumps(CERT))
    async with installed(tmp_path, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_store = await engine_as_service_account(server, tmp_path, clock)
        scenario = Scenario.model_validate(SCENARIO)
        await register_gpu_nodes(admin, clock, scenario)
        await start_certification(admin, tmp_path / "cert.yaml")
        cache = engine_cache(engine_store)
        writer = WriteThroughStore(engine_store, cache)
        runner = KubernetesRunner(writer, clock, engine_store, trainer=False)
        engine = Engine(writer, clock, catalog(), KubeletDriven(runner, TestKubelet(admin, server, clock, scenario, ())), cache=cache)
        runner.connect(engine.queue.add, cache)
        try:
            async def running() -> bool:
                return any((r.get("status") or {}).get("phase") == "Running" for r in (await admin.list(WORKLOADRUN, NAMESPACE)).items)

            assert await engine.run_until_settled(until=running, max_seconds=6 * 3600)
            run = next(r for r in (await admin.list(WORKLOADRUN, NAMESPACE)).items if (r.get("status") or {}).get("phase") == "Running")
            job = run["metadata"]["ownerReferences"][0]["name"]
            made = workload_name(job)
            assert (await admin.get(BATCH_JOB, made, NAMESPACE))["metadata"]["name"] == made
            await admin.delete(JOB, job, NAMESPACE)  # `kubectl delete jobs.nvcre.nvidia.com ...`

            async def released() -> bool:
                names = {r["metadata"]["name"] for r in (await admin.list(WORKLOADRUN, NAMESPACE)).items}
                return run["metadata"]["name"] not in names

            assert await engine.run_until_settled(until=released, max_seconds=3600)
            for kind in (BATCH_JOB, SERVICE):
                with pytest.raises(NotFound):
                    await admin.get(kind, made, NAMESPACE)
            assert denied(server.requests) == [] and not [r for r in server.requests if r.status == 403]
        finally:
            await engine.stop()
            await runner.close()
            await engine_store.close()
            await admin.close()


@pytest.mark.parametrize("trainer", [True, False], ids=["trainjob", "batch"])
async def test_a_certification_of_the_same_name_runs_again_after_a_delete_without_a_garbage_collector(tmp_path: Path, trainer: bool) -> None:
    """What stays behind (ConfigMaps: the engine may not delete them) carries the old Job's uid in its name, so the
    new run's objects never clash with it."""
    clock = ManualClock(SIM_START)
    (tmp_path / "cert.yaml").write_text(json.dumps(CERT))
    async with installed(tmp_path, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_store = await engine_as_service_account(server, tmp_path, clock)
        runner = KubernetesRunner(WriteThroughStore(engine_store, cache := engine_cache(engine_store)), clock, engine_store, trainer=trainer)
        try:
            if trainer:
                for plural in ("trainjobs", "trainingruntimes"):
                    await admin.create(CRD, real_trainer_crd(plural))
                await admin.create(CRD, jobset_crd())  # the Trainer's dependency, served
            scenario = Scenario.model_validate(SCENARIO)
            await register_gpu_nodes(admin, clock, scenario)
            engine = Engine(runner.store, clock, catalog(), KubeletDriven(runner, TestKubelet(admin, server, clock, scenario, ())), cache=cache)
            runner.connect(engine.queue.add, cache)
            name = await start_certification(admin, tmp_path / "cert.yaml")

            async def running() -> bool:
                return any((r.get("status") or {}).get("phase") == "Running" for r in (await admin.list(WORKLOADRUN, NAMESPACE)).items)

            assert await engine.run_until_settled(until=running, max_seconds=6 * 3600)
            await admin.delete(CERTIFICATION, name, NAMESPACE)

            async def only_configmaps_left() -> bool:
                return set(await _left(admin, trainer)) <= {"ConfigMap", "Secret"}

            assert await engine.run_until_settled(until=only_configmaps_left, max_seconds=3600)
            if not trainer:  # the batch MPI run's ssh key Secret stayed behind to clash with
                assert (await _left(admin, trainer)).get("Secret")
            await start_certification(admin, tmp_path / "cert.yaml")

            async def finished() -> bool:
                cert = await admin.get(CERTIFICATION, name, NAMESPACE)
                return (cert.get("status") or {}).get("summary", {}).get("result") in ("PASSED", "FAILED")

            assert await engine.run_until_settled(until=finished, max_seconds=6 * 3600)
            reasons = {(r.get("status") or {}).get("reason") for r in (await admin.list(WORKLOADRUN, NAMESPACE)).items}
            assert "WorkloadNotCreated" not in reasons
            assert (await admin.get(CERTIFICATION, name, NAMESPACE))["status"]["summary"]["result"] == "PASSED"
        finally:
            await engine.stop()
            await runner.close()
            await engine_store.close()
            await admin.close()
