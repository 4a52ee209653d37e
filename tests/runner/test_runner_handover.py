"""The Kubernetes runner plays only real pods: a run the simulated fleet started (--sim-runner, then an engine without
it took over) and a run on Nodes --sim-runner registered (no kubelet runs their pods) fail at once, blaming nobody,
rather than waiting minutes for pods that never come or judging pods that never existed."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.runner.harness import register_gpu_nodes
from tests.scenarios.harness import CASES

SCENARIO = CASES / "threshold-pass-two-metrics" / "scenario.yaml"
SPEC = {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "numNodes": 2, "gpusPerNode": 8,
        "target": {"nodeNames": ["gpu-node-01", "gpu-node-02"]}, "framework": {"torch": {"script": "train.py"}}}


def _run(name: str) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": name, "namespace": "default"}, "spec": SPEC}


async def test_a_run_the_simulated_fleet_started_fails_at_once_and_blames_nobody(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        store = await store_on(kubeconfig, server.clock, "nvcre-engine")
        runner = KubernetesRunner(store, server.clock, store, trainer=False)
        try:
            await register_gpu_nodes(store, server.clock, load_scenario(SCENARIO))
            run = await store.create(WORKLOADRUN, _run("played"))
            now = format_time(server.clock.now())
            simulated = {"type": "Simulated", "status": "True", "reason": "SimulatedRunner", "message": "", "lastTransitionTime": now}
            run = await store.patch_status(WORKLOADRUN, "played", "default", {"phase": "Running", "startTime": now, "conditions": [simulated]})
            assert await runner.reconcile_run(run) is None
            state = (await store.get(WORKLOADRUN, "played", "default"))["status"]
            assert (state["phase"], state["reason"]) == ("Failed", "WorkloadNotCreated") and "failedNode" not in state
            assert "started by the simulated fleet (--sim-runner)" in state["message"]
            assert (await store.list(BATCH_JOB, "default")).items == []  # nothing made for it
        finally:
            await runner.close()
            await store.close()


async def test_a_run_on_nodes_the_simulated_fleet_registered_fails_at_once_naming_them(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        store = await store_on(kubeconfig, server.clock, "nvcre-engine")
        runner = KubernetesRunner(store, server.clock, store, trainer=False)
        try:
            await SimulatedFleet(store, server.clock, load_scenario(SCENARIO)).ensure_nodes()  # labelled simulated
            run = await store.create(WORKLOADRUN, _run("on-sim-nodes"))
            assert await runner.reconcile_run(run) is None
            state = (await store.get(WORKLOADRUN, "on-sim-nodes", "default"))["status"]
            assert (state["phase"], state["reason"]) == ("Failed", "WorkloadNotCreated") and "failedNode" not in state
            assert "gpu-node-01 and gpu-node-02" in state["message"] or "gpu-node-01, gpu-node-02" in state["message"]
            assert "simulated Node" in state["message"] and "run with --sim-runner" in state["message"]
            assert (await store.list(BATCH_JOB, "default")).items == []
        finally:
            await runner.close()
            await store.close()
