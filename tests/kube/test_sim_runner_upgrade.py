"""`--sim-runner` after an upgrade, over real HTTP against the emulator: the runs an older nvcre's simulated fleet had
started carry no Simulated condition (runs did not say it then), and the new fleet failed each as "started on real pods
by an engine without --sim-runner", which it was not. The server's managedFields say the simulator wrote their status:
the fleet plays them on, marked Simulated first; a run the engine started on real pods is still failed, blaming nobody."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
            workflow["metadata"]["ownerReferences"] = [_controlled_by(cert)]  # as the engine makes them: readers join by owner
            workflow = await admin.create(WORKFLOW, workflow)
            run = nccl_run("during-run", ALL_NODES[:2], args=SHORT)
            run.pop("status", None)
            run["metadata"].setdefault("labels", {})[LABEL_WORKFLOW] = workflow["metadata"]["name"]
            run["metadata"]["ownerReferences"] = [_controlled_by(workflow)]
            await admin.create(WORKLOADRUN, run)
        finally:
            await admin.close()
        await _running_status(kubeconfig, "during-run", "nvcre-sim")  # what the older fleet wrote
        with pytest.raises(InputError) as refused:  # `nvcre controller` without --sim-runner: an engine or nothing
            await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), history=None, elect=False)
        [message] = refused.value.messages
        assert f"the simulated fleet (ConfigMap {INSTALL_NAMESPACE}/{FLEET_CONFIGMAP}) runs default/during" in message, message


def _controlled_by(owner: dict[str, Any]) -> dict[str, Any]:
    """A controller ownerReference to `owner`, as the engine sets one on each child it makes."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


async def _running_status(kubeconfig: Path, name: str, writer: str) -> None:
    store = await store_on(kubeconfig, SystemClock(), writer)
    try:
        stored = await store.get(WORKLOADRUN, name, "default")
        now = format_time(SystemClock().now())
        await store.update_status(WORKLOADRUN, {**stored, "status": {"phase": "Running", "pendingSince": now, "startTime": now,
                                                                     "nodes": ALL_NODES[:2], "message": "running on 2 node(s)"}})
    finally:
        await store.close()


async def _strip_simulated(kubeconfig: Path, clock: ManualClock) -> tuple[int, set[str]]:
    """What an older nvcre's fleet left: no Simulated condition on runs (their status the simulator's writes, as then),
    Jobs, Workflows and the Certification (the engine's), and no runner annotation. How many runs it had started, and
    those it had finished."""
    from nvcre_tui.engine.api.vocabulary import ANNOTATION_ENGINE_RUNNER
    from nvcre_tui.engine.store.protocol import JOB

    started, finished = 0, set()
    for kind, agent in ((WORKLOADRUN, "nvcre-sim"), (JOB, "nvcre-engine"), (WORKFLOW, "nvcre-engine"), (CERTIFICATION, "nvcre-engine")):
        store = await store_on(kubeconfig, clock, agent)
        try:
            for obj in (await store.list(kind, "default")).items:
                status = obj.get("status") or {}
                started += kind is WORKLOADRUN and status.get("phase") in ("Scheduling", "Running")
                if kind is WORKLOADRUN and status.get("phase") in ("Succeeded", "Failed"):
                    finished.add(obj["metadata"]["name"])
                conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Simulated"]
                obj = await store.update_status(kind, {**obj, "status": {**status, "conditions": conditions}})
                if ANNOTATION_ENGINE_RUNNER in (obj["metadata"].get("annotations") or {}):
                    obj["metadata"]["annotations"].pop(ANNOTATION_ENGINE_RUNNER)
                    await store.update(kind, obj)
        finally:
            await store.close()
    return started, finished


async def test_a_certification_an_older_fleet_ran_finishes_reported_as_simulated(tmp_path: Path) -> None:
    """The runs an older fleet started are marked Simulated when played on; their Jobs and Certification were not checked.
    The Certification took its Simulated condition from the first started run of each Workflow only: one the older fleet
    had finished, which says nothing, so the Certification never said Simulated (kubectl, NVSentinel read it). Followed to
    the end: the Jobs of the runs played on and the Certification carry it, and the report says "simulated"."""
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.report.model import build_report
    from nvcre_tui.engine.report.text import render_text
    from nvcre_tui.engine.store.protocol import JOB
    from tests.console.harness import certification_body, intra_all_reduce

    clock = ManualClock()
    async with installed(tmp_path) as (_, kubeconfig):
        target = await load_target(str(kubeconfig))
        older = await KubeSession.open(target, default_catalog(), clock=clock, scenario=default_scenario(), history=None)
        try:
            admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
            await admin.create(CERTIFICATION, certification_body(intra_all_reduce("upgraded")))
            await admin.close()
            assert older.engine is not None

            async def running() -> bool:  # one run finished (before runs said Simulated), another still running
                phases = [(r.get("status") or {}).get("phase") for r in older.cache.list(WORKLOADRUN)]
                return "Succeeded" in phases and "Running" in phases

            assert await older.engine.run_until_settled(until=running, max_seconds=3600)
        finally:
            await older.close()
        started, finished_before = await _strip_simulated(kubeconfig, clock)
        assert started and finished_before
        session = await KubeSession.open(target, default_catalog(), clock=clock, scenario=default_scenario(), history=None)
        try:
            assert session.engine is not None

            async def finished() -> bool:
                cert = session.cache.get(CERTIFICATION, "upgraded", "default")
                return cert is not None and cond.is_terminal(cert)

            assert await session.engine.run_until_settled(until=finished, max_seconds=6 * 3600)
            cert = session.cache.get(CERTIFICATION, "upgraded", "default")
            workflows, jobs = session.cache.list(WORKFLOW, "default"), session.cache.list(JOB, "default")
            runs = session.cache.list(WORKLOADRUN, "default")
        finally:
            await session.close()
        assert cert is not None and jobs and runs
        # those the older fleet finished say nothing (it did not then); every run played on or started since says Simulated
        assert {r["metadata"]["name"] for r in runs if not cond.is_true(r, cond.SIMULATED)} == finished_before
        assert {j["metadata"]["name"] for j in jobs if not cond.is_true(j, cond.SIMULATED)} == {name[:-len("-run")] for name in finished_before}
        assert cond.is_true(cert, cond.SIMULATED), cert["status"].get("conditions")
        report = build_report(cert, workflows, jobs)
        assert report.get("simulated"), sorted(report)
        assert "simulated" in render_text(report).lower()
