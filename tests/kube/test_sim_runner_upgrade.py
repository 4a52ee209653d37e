"""`--sim-runner` after an upgrade, over real HTTP against the emulator: the runs an older nvcre's simulated fleet had
started carry no Simulated condition (runs did not say it then), and the new fleet failed each as "started on real pods
by an engine without --sim-runner", which it was not. The server's managedFields say the simulator wrote their status:
the fleet plays them on, marked Simulated first; a run the engine started on real pods is still failed, blaming nobody."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvcre_tui.engine.api.vocabulary import LABEL_WORKFLOW
from nvcre_tui.engine.clock import ManualClock, SystemClock, format_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP, SimulatedFleet
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, WORKFLOW, WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.sim.helpers import ALL_NODES, nccl_run, scenario

SHORT = ["-b", "8", "-e", "256M", "-f", "2", "-n", "20", "-N", "2"]


async def _running(kubeconfig: Path, clock: ManualClock, name: str, writer: str) -> None:
    """A run Running on two of the fleet's Nodes, its status written by `writer` (its user agent: the field manager)."""
    admin = await store_on(kubeconfig, clock, "nvcre-test")
    store = await store_on(kubeconfig, clock, writer)
    try:
        run = nccl_run(name, ALL_NODES[:2], args=SHORT)
        run.pop("status", None)
        created = await admin.create(WORKLOADRUN, run)
        now = format_time(clock.now())
        await store.update_status(WORKLOADRUN, {**created, "status": {"phase": "Running", "pendingSince": now, "startTime": now,
                                                                      "nodes": ALL_NODES[:2], "message": "running on 2 node(s)"}})
    finally:
        await admin.close()
        await store.close()


async def test_runs_an_older_fleet_started_are_played_on_and_marked_simulated(tmp_path: Path) -> None:
    clock = ManualClock()
    async with installed(tmp_path) as (_, kubeconfig):
        await _running(kubeconfig, clock, "older-fleet", "nvcre-sim")
        await _running(kubeconfig, clock, "real-pods", "nvcre-engine")
        sim = await store_on(kubeconfig, clock, "nvcre-sim")
        try:
            scn = scenario()
            fleet = SimulatedFleet(sim, clock, scn)
            await fleet.ensure_nodes()
            runner = SimulatedRunner(sim, clock, scn, fleet, fleet_only=True)
            for _ in range(20):
                wait = await runner.reconcile_run(await sim.get(WORKLOADRUN, "older-fleet", "default"))
                if wait is None:
                    break
                clock.advance(wait)
            played = (await sim.get(WORKLOADRUN, "older-fleet", "default"))["status"]
            assert played["phase"] == "Succeeded" and played.get("reason") != "WorkloadNotCreated", played
            [simulated] = [c for c in played["conditions"] if c["type"] == "Simulated"]
            assert simulated["status"] == "True"
            assert await runner.reconcile_run(await sim.get(WORKLOADRUN, "real-pods", "default")) is None
            real = (await sim.get(WORKLOADRUN, "real-pods", "default"))["status"]
            assert (real["phase"], real["reason"]) == ("Failed", "WorkloadNotCreated")
            assert "started on real pods by an engine without --sim-runner" in real["message"]
            assert not any(c["type"] == "Simulated" for c in real.get("conditions") or [])
        finally:
            await sim.close()



async def test_a_real_pod_engine_stands_aside_for_a_certification_an_older_fleet_runs(tmp_path: Path) -> None:
    """Its runs, Jobs and Certification carry no Simulated mark (an older nvcre set none), so a session running real pods
    took the engine after an upgrade and failed the fleet's runs. The server says the simulator wrote a run's status, and
    the run's Workflow names its certification."""
    clock = SystemClock()
    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": FLEET_CONFIGMAP, "namespace": INSTALL_NAMESPACE}, "data": {}})
            cert = await admin.create(CERTIFICATION, {
                "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "during", "namespace": "default"},
                "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                         "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}})
            written = {**cert, "metadata": {"name": "during", "namespace": "default"}}
            rendered = render_certification(certification_from_text("during.yaml", json.dumps(written), default_catalog()),
                                            build_nodes(default_scenario()), default_catalog(), "during.yaml")
            workflow = rendered[0].workflow.to_wire()
            workflow["metadata"]["namespace"] = "default"
            workflow.pop("status", None)
            workflow = await admin.create(WORKFLOW, workflow)
            run = nccl_run("during-run", ALL_NODES[:2], args=SHORT)
            run.pop("status", None)
            run["metadata"].setdefault("labels", {})[LABEL_WORKFLOW] = workflow["metadata"]["name"]
            await admin.create(WORKLOADRUN, run)
        finally:
            await admin.close()
        await _running_status(kubeconfig, "during-run", "nvcre-sim")  # what the older fleet wrote
        with pytest.raises(InputError) as refused:  # `nvcre controller` without --sim-runner: an engine or nothing
            await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), history=None, elect=False)
        [message] = refused.value.messages
        assert f"the simulated fleet (ConfigMap {INSTALL_NAMESPACE}/{FLEET_CONFIGMAP}) runs default/during" in message, message


async def _running_status(kubeconfig: Path, name: str, writer: str) -> None:
    store = await store_on(kubeconfig, SystemClock(), writer)
    try:
        stored = await store.get(WORKLOADRUN, name, "default")
        now = format_time(SystemClock().now())
        await store.update_status(WORKLOADRUN, {**stored, "status": {"phase": "Running", "pendingSince": now, "startTime": now,
                                                                     "nodes": ALL_NODES[:2], "message": "running on 2 node(s)"}})
    finally:
        await store.close()
