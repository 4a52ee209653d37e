"""A session that runs real pods does not take the engine while runs the simulated fleet (--sim-runner) started are
under way: its Kubernetes runner fails each of them (no pod of theirs exists), and a `delete --wait` without
--sim-runner once took the free Lease and wrecked another certification so. `nvcre controller` says so in one line; a
console, `run` or `delete --wait` becomes a viewer that says why (and does not take the Lease over later). Once those
runs finish, it runs the engine again."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock, format_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP
from nvcre_tui.engine.store.protocol import CONFIGMAP, WORKLOADRUN
from tests.kube.cluster import installed, store_on

pytestmark = pytest.mark.asyncio

SPEC = {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "numNodes": 2, "gpusPerNode": 8,
        "target": {"nodeNames": ["gpu-node-01", "gpu-node-02"]}, "framework": {"torch": {"script": "train.py"}}}


async def _open(kubeconfig: Path, elect: bool = True) -> KubeSession:
    return await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), history=None, elect=elect)


async def test_a_real_pod_engine_stands_aside_while_the_simulated_fleets_runs_are_under_way(tmp_path: Path) -> None:
    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        try:
            await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": FLEET_CONFIGMAP, "namespace": INSTALL_NAMESPACE}, "data": {}})
            await admin.create(WORKLOADRUN, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
                                             "metadata": {"name": "played", "namespace": "default"}, "spec": SPEC})
            now = format_time(SystemClock().now())
            simulated = {"type": "Simulated", "status": "True", "reason": "SimulatedRunner", "message": "", "lastTransitionTime": now}
            await admin.patch_status(WORKLOADRUN, "played", "default", {"phase": "Running", "startTime": now, "conditions": [simulated]})

            with pytest.raises(InputError) as refused:  # `nvcre controller`: an engine or nothing
                await _open(kubeconfig, elect=False)
            [message] = refused.value.messages
            assert f"1 run(s) of the simulated fleet that plays this cluster's Nodes (ConfigMap {INSTALL_NAMESPACE}/{FLEET_CONFIGMAP})" in message
            assert "pass --sim-runner and its --scenario" in message
            console = await _open(kubeconfig)
            try:
                assert console.engine is None and console.lease is None and not await console.take_over()
                assert console.viewer_reason is not None and "an engine that runs real pods would fail them" in console.viewer_reason
            finally:
                await console.close()
            assert (await admin.get(WORKLOADRUN, "played", "default"))["status"]["phase"] == "Running"  # untouched

            await admin.patch_status(WORKLOADRUN, "played", "default", {"phase": "Succeeded", "completionTime": now})
            after = await _open(kubeconfig)
            try:
                assert after.engine is not None
            finally:
                await after.close()
        finally:
            await admin.close()
