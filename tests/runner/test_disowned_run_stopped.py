"""A Job whose metadata.ownerReferences were edited away mid-run fails its group (`JobDisowned`), and a Workflow so
disowned its category (`WorkflowDisowned`), their results not taken. What they still ran was left: the disowned Job's
WorkloadRun went on, its workload's pods holding the group's GPUs until the run ended (the garbage collector no longer
reaches a Job that names no owner), and a disowned Workflow went on launching groups nobody would read. Now the
disowned Job, and each Job of a disowned Workflow, fails so (no node blamed) and its run is stopped through the runner,
its workload deleted; a disowned Workflow ends too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import LABEL_JOB
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.protocol import BATCH_JOB, JOB, POD, WORKFLOW, WORKLOADRUN, ResourceKind
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.kube.cluster import installed, store_on
from tests.kubeapi.kubelet import TestKubelet
from tests.runner.harness import KubeletDriven, denied, register_gpu_nodes, service_account_kubeconfig
from tests.scenarios.harness import CASES, NAMESPACE, catalog, start_certification

Obj = dict[str, Any]
CASE = "threshold-pass-two-metrics"  # one full-scale group of 4 nodes; passes when nobody interferes


async def _disowned_mid_run(folder: Path, kind: ResourceKind) -> dict[str, Any]:
    """The case run by the Kubernetes runner (the test kubelet playing pods) as the engine's ServiceAccount; once its
    pods run, the one object of `kind` has its ownerReferences edited away (kubectl edit); the engine runs until the
    Certification ends. What is left then."""
    clock = ManualClock(SIM_START)
    scenario = load_scenario(CASES / CASE / "scenario.yaml")
    async with installed(folder, clock=clock, garbage_collector=True) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_store = await store_on(await service_account_kubeconfig(kubeconfig, INSTALL_NAMESPACE, ENGINE_NAME), clock, "nvcre-engine")
        runner: KubernetesRunner | None = None
        try:
            await register_gpu_nodes(admin, clock, scenario)
            name = await start_certification(admin, CASES / CASE / "cert.yaml")
            cache = engine_cache(engine_store)
            writer = WriteThroughStore(engine_store, cache)
            runner = KubernetesRunner(writer, clock, engine_store)
            engine = Engine(writer, clock, catalog(), KubeletDriven(runner, TestKubelet(admin, server, clock, scenario)), cache=cache)
            runner.connect(engine.queue.add, cache)

            async def running() -> bool:
                pods = (await admin.list(POD, NAMESPACE, label_selector=LABEL_JOB)).items
                return bool(pods) and all((p.get("status") or {}).get("phase") == "Running" for p in pods)

            async def ended() -> bool:
                return cond.is_terminal(await admin.get(CERTIFICATION, name, NAMESPACE))

            assert await engine.run_until_settled(until=running, max_seconds=600)
            [child] = (await admin.list(kind, NAMESPACE)).items
            child["metadata"]["ownerReferences"] = []  # kubectl edit
            await admin.update(kind, child)
            assert await engine.run_until_settled(until=ended, max_seconds=600)
            left = {"workloads": [j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, NAMESPACE)).items],
                    "runs": (await admin.list(WORKLOADRUN, NAMESPACE)).items, "jobs": (await admin.list(JOB, NAMESPACE)).items,
                    "workflows": (await admin.list(WORKFLOW, NAMESPACE)).items,
                    "certification": await admin.get(CERTIFICATION, name, NAMESPACE)}
            await engine.stop()
            left["denied"] = denied(server.requests)
            return left
        finally:
            if runner is not None:
                await runner.close()
            await engine_store.close()
            await admin.close()


@pytest.mark.parametrize(("kind", "reason"), [(JOB, "JobDisowned"), (WORKFLOW, "WorkflowDisowned")])
def test_a_disowned_jobs_run_is_stopped_and_its_workload_deleted(tmp_path: Path, kind: ResourceKind, reason: str) -> None:
    left = asyncio.run(_disowned_mid_run(tmp_path, kind))
    summary = left["certification"]["status"]["summary"]
    assert (summary["result"], summary["failedNodes"]) == ("FAILED", 0), summary
    [run] = left["runs"]
    assert (run["status"]["phase"], run["status"].get("reason")) == ("Failed", "Stopped"), run["status"]
    assert left["workloads"] == [], f"the disowned run's batch Job stays: its pods hold the group's GPUs ({left['workloads']})"
    [job] = left["jobs"]
    failed = cond.find(job["status"].get("conditions"), "Failed")
    assert failed is not None and (failed["status"], failed["reason"]) == ("True", reason), job["status"].get("conditions")
    assert "no node blamed" in failed["message"] and not job["status"].get("failedNodes"), job["status"]  # its stop convicts nobody
    [wf] = left["workflows"]
    assert cond.is_terminal(wf), "the Workflow goes on launching groups"
    if kind is WORKFLOW:
        assert cond.find(wf["status"].get("conditions"), "Failed")["reason"] == reason  # type: ignore[index]
    assert left["denied"] == []
