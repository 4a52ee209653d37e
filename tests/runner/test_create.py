"""Creating a run's objects is idempotent (an engine restarted mid-way finds its own objects and goes on)
and never adopts an object of the same name that is not ours."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.runners.kubernetes.create import ForeignObject, create_all
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, NODE, SERVICE
from nvcre_tui.engine.workloads import placement_for
from tests.kube.cluster import installed, store_on
from tests.runner.harness import register_gpu_nodes
from tests.scenarios.harness import CASES

SPEC = {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "numNodes": 2, "gpusPerNode": 8,
        "target": {"nodeNames": ["gpu-node-01", "gpu-node-02"]},
        "framework": {"torch": {"script": "train.py"}}}
JOB = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
       "metadata": {"name": "cert-job", "namespace": "default", "uid": "job-uid-1",
                    "annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-01,gpu-node-02"}}}


async def _setup(tmp_path: Path):
    context = installed(tmp_path)
    server, kubeconfig = await context.__aenter__()
    store = await store_on(kubeconfig, server.clock, "nvcre-engine")
    await register_gpu_nodes(store, server.clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
    nodes = [await store.get(NODE, name) for name in ("gpu-node-01", "gpu-node-02")]
    return context, server, store, placement_for(JOB, nodes)


async def test_creating_twice_keeps_our_objects_and_creates_nothing_new(tmp_path: Path) -> None:
    context, server, store, where = await _setup(tmp_path)
    try:
        spec = WorkloadRunSpec.model_validate(SPEC)
        first = await create_all(store, spec, where, trainer=False)
        again = await create_all(store, spec, where, trainer=False)
        assert [o["metadata"]["uid"] for o in first] == [o["metadata"]["uid"] for o in again]
        assert [o["kind"] for o in first] == ["Service", "Job"]
        job = await store.get(BATCH_JOB, first[-1]["metadata"]["name"], "default")
        assert job["metadata"]["ownerReferences"][0]["uid"] == "job-uid-1"  # deleting the nvcre Job cascades
    finally:
        await store.close()
        await context.__aexit__(None, None, None)


async def test_an_object_of_the_same_name_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    context, server, store, where = await _setup(tmp_path)
    try:
        await store.create(SERVICE, {"apiVersion": "v1", "kind": "Service",
                                     "metadata": {"name": "cert-job-workload", "namespace": "default"}, "spec": {"ports": [{"port": 1}]}})
        with pytest.raises(ForeignObject, match="Service default/cert-job-workload exists and is not owned by cert-job"):
            await create_all(store, WorkloadRunSpec.model_validate(SPEC), where, trainer=False)
    finally:
        await store.close()
        await context.__aexit__(None, None, None)


async def test_an_object_naming_the_job_only_in_a_non_controller_reference_is_refused(tmp_path: Path) -> None:
    """A Service (a Job, a TrainJob) planted under the run's name with a plain reference to the nvcre Job's uid was
    taken for the runner's own: only the controller reference makes it ours, as Kubernetes controllers adopt."""
    context, server, store, where = await _setup(tmp_path)
    try:
        await store.create(SERVICE, {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 1}]}, "metadata": {
            "name": "cert-job-workload", "namespace": "default", "ownerReferences": [
                {"apiVersion": JOB["apiVersion"], "kind": "Job", "name": "cert-job", "uid": "job-uid-1", "controller": False}]}})
        with pytest.raises(ForeignObject, match="Service default/cert-job-workload exists and is not owned by cert-job"):
            await create_all(store, WorkloadRunSpec.model_validate(SPEC), where, trainer=False)
    finally:
        await store.close()
        await context.__aexit__(None, None, None)


async def test_a_field_the_real_trainjob_schema_lacks_is_refused_not_dropped(tmp_path: Path) -> None:
    # Creates ask fieldValidation=Strict: a field Kubeflow Trainer's CRD does not know fails the create, by name,
    # where a real server's default (Warn) would drop it and run the TrainJob without it.
    from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
    from nvcre_tui.engine.store.errors import Invalid
    from nvcre_tui.engine.store.protocol import CRD
    from tests.kubeapi.trainer_crds import real_trainer_crd

    async with installed(tmp_path) as (server, kubeconfig):
        store = await store_on(kubeconfig, server.clock, "nvcre-test")
        try:
            await store.create(CRD, real_trainer_crd("trainjobs"))
            for _ in range(500):
                if await store.served_resources("trainer.kubeflow.org/v1alpha1"):
                    break
                await asyncio.sleep(0.01)
            body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "tj", "namespace": "default"},
                    "spec": {"runtimeRef": {"name": "rt", "kind": "TrainingRuntime"}, "trainer": {"numNodes": 2, "numProcPerNodes": 8}}}
            with pytest.raises(Invalid, match='unknown field "spec.trainer.numProcPerNodes"'):
                await store.create(TRAINJOB, body)
        finally:
            await store.close()
