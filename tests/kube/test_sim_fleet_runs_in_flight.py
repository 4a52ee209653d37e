"""A session that runs real pods runs no engine while certifications the simulated fleet (--sim-runner) runs are
unfinished: its Kubernetes runner would fail each of their runs, and start their next ones on Nodes no kubelet
serves (a `delete --wait` without --sim-runner once took the free Lease and wrecked another certification so).
`nvcre controller` says so in one line; a console, `run` or `delete --wait` is a viewer that says why, asks again
whenever it would take the Lease over, and runs the engine once they have finished."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock, format_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP
from tests.kube.cluster import installed, store_on

pytestmark = pytest.mark.asyncio

CERT = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "played", "namespace": "default"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}}


async def _open(kubeconfig: Path, elect: bool = True) -> KubeSession:
    return await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), history=None, elect=elect)


async def _fleet_running_a_certification(admin: KubeStore) -> None:
    """The fleet's ConfigMap, and a certification it runs (its runs carry the Simulated condition to it)."""
    await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": FLEET_CONFIGMAP, "namespace": INSTALL_NAMESPACE}, "data": {}})
    await admin.create(CERTIFICATION, CERT)
    now = format_time(SystemClock().now())
    await admin.patch_status(CERTIFICATION, "played", "default", {"conditions": [
        {"type": "InProgress", "status": "True", "reason": "CategoriesRunning", "message": "", "lastTransitionTime": now},
        {"type": "Simulated", "status": "True", "reason": "SimulatedRunner", "message": "", "lastTransitionTime": now}]})


async def _finish(admin: KubeStore) -> None:
    now = format_time(SystemClock().now())
    await admin.patch_status(CERTIFICATION, "played", "default", {"conditions": [
        {"type": "Succeeded", "status": "True", "reason": "Done", "message": "", "lastTransitionTime": now},
        {"type": "Simulated", "status": "True", "reason": "SimulatedRunner", "message": "", "lastTransitionTime": now}]})


async def test_a_real_pod_engine_stands_aside_while_the_simulated_fleets_certifications_run(tmp_path: Path) -> None:
    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        try:
            await _fleet_running_a_certification(admin)
            with pytest.raises(InputError) as refused:  # `nvcre controller`: an engine or nothing
                await _open(kubeconfig, elect=False)
            [message] = refused.value.messages
            assert f"the simulated fleet (ConfigMap {INSTALL_NAMESPACE}/{FLEET_CONFIGMAP}) runs default/played" in message
            assert "pass --sim-runner and its --scenario" in message
            console = await _open(kubeconfig)
            try:
                assert console.engine is None and console.lease is None and not await console.take_over()
                assert console.viewer_reason is not None and "an engine that runs real pods would fail them" in console.viewer_reason
                await _finish(admin)
                assert await console.take_over() and console.engine is not None  # they finished: it runs the engine now
            finally:
                await console.close()
        finally:
            await admin.close()


async def test_a_viewer_waiting_for_the_lease_asks_again_before_it_takes_it_over(tmp_path: Path) -> None:
    """Checked only at opening, a console (or `delete --wait`) that waited for another engine's Lease took it over
    once it lapsed and failed the simulated runs started meanwhile."""
    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        try:
            other = EngineLease(admin, SystemClock(), INSTALL_NAMESPACE, "engine@elsewhere/1", duration=3)
            assert await other.try_acquire()
            console = await _open(kubeconfig)
            try:
                assert console.engine is None and console.viewer_reason is not None and "engine@elsewhere/1" in console.viewer_reason
                await _fleet_running_a_certification(admin)
                await other.release()  # the Lease is free
                assert not await console.take_over()
                assert console.viewer_reason is not None and "runs default/played" in console.viewer_reason
            finally:
                await console.close()
        finally:
            await admin.close()


async def test_a_certification_the_fleet_runs_is_known_by_its_jobs_before_its_own_status_says_so() -> None:
    """The Certification's Simulated condition comes with its summary, a minute and more after its first runs: a
    real-pod controller started meanwhile took the Lease and failed all 32 of its groups."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.kube.session import _fleet_played
    from nvcre_tui.engine.store import JOB, WORKFLOW, MemoryStore

    clock = ManualClock()
    store = MemoryStore(clock)
    await store.create(CONFIGMAP, {"metadata": {"name": FLEET_CONFIGMAP, "namespace": INSTALL_NAMESPACE}, "data": {}})
    cert = await store.create(CERTIFICATION, {**CERT, "status": {"conditions": []}})
    assert await _fleet_played(store, INSTALL_NAMESPACE) is None  # nothing says who runs it yet
    simulated = {"type": "Simulated", "status": "True", "reason": "SimulatedRunner", "message": "", "lastTransitionTime": format_time(clock.now())}
    workflow = await store.create(WORKFLOW, {"metadata": {"name": "played-nccl", "namespace": "default", "ownerReferences": [
        {"kind": "Certification", "name": "played", "uid": cert["metadata"]["uid"], "controller": True}]}, "spec": {}})
    job = await store.create(JOB, {"metadata": {"name": "played-job", "namespace": "default", "ownerReferences": [
        {"kind": "Workflow", "name": "played-nccl", "uid": workflow["metadata"]["uid"], "controller": True}]}, "spec": {}})
    await store.update_status(JOB, {**job, "status": {"conditions": [simulated]}})  # a status is its subresource's
    said = await _fleet_played(store, INSTALL_NAMESPACE)
    assert said is not None and "runs default/played" in said
    await store.delete(CONFIGMAP, FLEET_CONFIGMAP, INSTALL_NAMESPACE)
    assert await _fleet_played(store, INSTALL_NAMESPACE) is None  # no fleet registered: a real cluster's


async def test_a_certification_run_with_the_sim_runner_is_the_fleets_before_any_run() -> None:
    """`run --sim-runner` without --wait, then a plain controller (as its hint once said): no run had started, nothing
    said whose it was, and the controller failed all its groups. The process that creates it marks it."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.kube.session import _fleet_played
    from nvcre_tui.engine.store import MemoryStore

    clock = ManualClock()
    store = MemoryStore(clock)
    await store.create(CONFIGMAP, {"metadata": {"name": FLEET_CONFIGMAP, "namespace": INSTALL_NAMESPACE}, "data": {}})
    marked = {**CERT, "metadata": {"name": "played", "namespace": "default",
                                   "annotations": {"nvcre.nvidia.com/engine-runner": "simulated-fleet"}}}
    await store.create(CERTIFICATION, marked)
    said = await _fleet_played(store, INSTALL_NAMESPACE)
    assert said is not None and "runs default/played" in said


async def test_a_kind_rbac_refuses_to_list_skips_only_its_own_part_of_the_check(tmp_path: Path) -> None:
    """A user who may list Certifications and Jobs but not WorkloadRuns nor Workflows (the runs' part, for an older
    nvcre's fleet): one refused list skipped the whole check, so the Certification's own Simulated condition went
    unread and its engine took the Lease and failed the fleet's runs."""
    from nvcre_tui.engine.kube.session import _fleet_played
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING, RBAC_GROUP

    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        await admin.create(CLUSTER_ROLE, {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": "no-runs"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
            {"apiGroups": ["nvcre.nvidia.com"], "resources": ["certifications", "jobs"], "verbs": ["get", "list"]}]})
        await admin.create(CLUSTER_ROLE_BINDING, {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "no-runs"},
                                                  "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "no-runs"},
                                                  "subjects": [{"kind": "User", "name": "carol", "apiGroup": RBAC_GROUP}]})
        carol = await store_on(Path(server.write_kubeconfig(tmp_path / "carol", token=server.add_token("carol-token", "carol"))),
                               SystemClock(), "test-carol")
        try:
            await _fleet_running_a_certification(admin)
            said = await _fleet_played(carol, INSTALL_NAMESPACE)
            assert said is not None and "runs default/played" in said
            assert server.requests_where(verb="list", resource="workloadruns")  # asked, and refused
        finally:
            await carol.close()
            await admin.close()


async def test_the_fleets_runs_are_known_by_owner_when_their_labels_were_removed() -> None:
    """A run's Workflow and Certification were found by the `nvcre.nvidia.com/workflow` and `/certification` labels:
    with them removed by hand (metadata anyone may edit) the fleet's runs went unseen, and a real-pod engine took the
    Lease and failed them. They are followed by owner, run -> Job -> Workflow -> Certification, as the engine joins."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.kube.session import _fleet_played
    from nvcre_tui.engine.store import JOB, WORKFLOW, WORKLOADRUN, MemoryStore

    clock = ManualClock()
    store = MemoryStore(clock)
    await store.create(CONFIGMAP, {"metadata": {"name": FLEET_CONFIGMAP, "namespace": INSTALL_NAMESPACE}, "data": {}})
    owner = await store.create(CERTIFICATION, {**CERT, "status": {"conditions": []}})
    for kind, name in ((WORKFLOW, "played-nccl"), (JOB, "played-nccl-group-0-iter-1"), (WORKLOADRUN, "played-nccl-group-0-iter-1-run")):
        owner = await store.create(kind, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": kind.kind, "spec": {}, "metadata": {
            "name": name, "namespace": "default", "labels": {},  # kubectl label ... nvcre.nvidia.com/workflow-
            "ownerReferences": [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": owner["kind"], "name": owner["metadata"]["name"],
                                 "uid": owner["metadata"]["uid"], "controller": True}]}})
    assert await _fleet_played(store, INSTALL_NAMESPACE) is None  # nothing says who runs it yet
    simulated = {"type": "Simulated", "status": "True", "reason": "SimulatedRunner", "message": "", "lastTransitionTime": format_time(clock.now())}
    await store.update_status(WORKLOADRUN, {**owner, "status": {"conditions": [simulated]}})
    said = await _fleet_played(store, INSTALL_NAMESPACE)
    assert said is not None and "runs default/played" in said
