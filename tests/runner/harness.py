"""A certification run twice: on the simulator (SimulatedRunner) and on the API-server emulator through the
Kubernetes runner, with the test kubelet playing pods, GPUs and logs from the same scenario."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import LABEL_JOB, LABEL_SIMULATED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE, rbac_objects
from nvcre_tui.engine.kube.rbac import grants_for, rbac_allows
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario, load_scenario
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.protocol import CRD, NODE, POD
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.kube.cluster import installed, store_on
from tests.kubeapi.trainer_crds import jobset_crd, real_trainer_crd
from tests.kubeapi.faults import Fault
from tests.kubeapi.kubelet import PodFault, TestKubelet
from tests.scenarios.harness import CASES, NAMESPACE, RUN_LIMIT_SECONDS, catalog, digest, report_from, run_case, snapshot, start_certification

Obj = dict[str, Any]


class KubeletDriven:
    """The Kubernetes runner, with the test kubelet stepping on the engine's fleet tick (one ManualClock).

    After each step the runner's pod watch is let catch up with what the kubelet wrote (a tiny wait on
    the real socket), so the ManualClock never jumps past a pod event still in flight."""

    simulated = False

    def __init__(self, runner: KubernetesRunner, kubelet: TestKubelet) -> None:
        self.runner, self.kubelet = runner, kubelet

    async def reconcile_run(self, run: Obj) -> float | None:
        return await self.runner.reconcile_run(run)

    async def logs(self, run: Obj) -> list[str]:
        return await self.runner.logs(run)

    async def stop(self, run: Obj) -> None:
        await self.runner.stop(run)

    async def release(self, owner: Obj) -> None:
        await self.runner.release(owner)

    async def tick(self) -> float | None:
        delay = await self.kubelet.step()
        await pods_caught_up(self.runner, self.kubelet.store)
        return delay


async def pods_caught_up(runner: KubernetesRunner, admin: Any, attempts: int = 400) -> None:
    """Wait (5 ms steps) until the runner's pod cache holds every labelled pod at its current resourceVersion."""
    if not runner.pods.cache.synced.is_set():
        return  # not started: the first look lists
    for _ in range(attempts):
        want = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["metadata"]["resourceVersion"]
                for p in (await admin.list(POD, label_selector=LABEL_JOB)).items}
        have = {key: obj["metadata"]["resourceVersion"] for key, obj in runner.pods.cache.objects[POD].items()}
        if have == want:
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the runner's pod watch never caught up with the kubelet")


async def register_gpu_nodes(store: Any, clock: Any, scenario: Scenario) -> None:
    """The scenario's Nodes as a GPU cluster's: without the label --sim-runner puts on its own (the Kubernetes runner
    runs no pod on a simulated Node), so the emulator's kubelet (TestKubelet) runs their pods."""
    await SimulatedFleet(store, clock, scenario).ensure_nodes()
    for node in (await store.list(NODE)).items:
        if (node["metadata"].get("labels") or {}).pop(LABEL_SIMULATED, None) is not None:
            await store.update(NODE, node)


def denied(requests: list[Any]) -> list[str]:
    """Requests of the engine (user agent nvcre-engine) that the RBAC of `nvcre setup init` does not allow."""
    grants = grants_for(rbac_objects(INSTALL_NAMESPACE), INSTALL_NAMESPACE, ENGINE_NAME)
    return sorted({f"{r.verb} {r.api_group}/{r.resource}{'/' + r.subresource if r.subresource else ''}"
                   for r in requests if r.user_agent.startswith("nvcre-engine") and r.resource
                   and not rbac_allows(grants, r.verb, r.api_group, r.resource, r.subresource or "", r.namespace, r.name)})


def comparable(report: Obj) -> Obj:
    """The digest without messages (the runners word things differently; verdicts and blame must agree)."""
    found = digest(report)
    found.pop("excludedNodes", None)
    for category in found["categories"]:
        category.pop("failureReason", None)
        for node in category.get("failedNodes") or []:
            node.pop("message", None)
    return found


def simulator_report(case: str) -> Obj:
    return run_case(case).report


async def emulator_report(folder: Path, case: str, *, trainer: bool, faults: tuple[PodFault, ...] = (),
                          scenario: Scenario | None = None, minor: str | None = None,
                          server_faults: tuple[Fault, ...] = (), controllers: bool = True, jobset: bool = True,
                          mutators: Mapping[tuple[str, str], Callable[[Obj], None]] | None = None) -> tuple[Obj, dict[str, Any]]:
    """Run the case's certification on the emulator (a server of Kubernetes 1.`minor` when given); its report
    and the objects left (by kind; what the engine did on the cluster under lower-case keys). `controllers=False`:
    an API server and etcd alone, as envtest starts them (no workload controller, scheduler or kubelet: no pod
    is ever made); `jobset=False`: the Trainer's CRDs without JobSet's."""
    scenario = scenario or load_scenario(CASES / case / "scenario.yaml")
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock, garbage_collector=True) as (server, kubeconfig):
        if minor is not None:
            server.version_info.update(minor=minor, gitVersion=f"v1.{minor}.0-nvcre-emulator")
        for fault in server_faults:
            server.faults.add(fault)
        server.registry.mutators.update(mutators or {})
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_store = await store_on(kubeconfig, clock, "nvcre-engine")
        runner: KubernetesRunner | None = None
        try:
            if trainer:
                for plural in ("trainjobs", "trainingruntimes"):  # Kubeflow Trainer's own, with their schemas and rules
                    await admin.create(CRD, real_trainer_crd(plural))
                if jobset:
                    await admin.create(CRD, jobset_crd())  # the Trainer's dependency, served
                for _ in range(500):  # served a moment after the CRD is Established
                    if await engine_store.served_resources("trainer.kubeflow.org/v1alpha1"):
                        break
                    await asyncio.sleep(0.01)
                else:
                    raise AssertionError("the Trainer CRDs were never served")
            await register_gpu_nodes(admin, clock, scenario)
            name = await start_certification(admin, CASES / case / "cert.yaml")
            cache = engine_cache(engine_store)
            writer = WriteThroughStore(engine_store, cache)
            runner = KubernetesRunner(writer, clock, engine_store)
            played = KubeletDriven(runner, TestKubelet(admin, server, clock, scenario, faults)) if controllers else runner
            engine = Engine(writer, clock, catalog(), played, cache=cache)
            runner.connect(engine.queue.add, cache)

            async def terminal() -> bool:
                return cond.is_terminal(await admin.get(CERTIFICATION, name, NAMESPACE))

            finished = await engine.run_until_settled(until=terminal, max_seconds=RUN_LIMIT_SECONDS)
            assert finished, f"{case}: the certification never finished on the emulator"
            objects: dict[str, Any] = await snapshot(admin)
            await engine.stop()
            # What the engine created on the cluster, by API group/resource (the workload shapes used).
            objects["created"] = sorted({f"{r.api_group}/{r.resource}" for r in server.requests
                                         if r.verb == "create" and r.user_agent.startswith("nvcre-engine")})
            objects["deleted"] = sorted({f"{r.api_group}/{r.resource}/{r.name}" for r in server.requests
                                         if r.verb == "delete" and r.user_agent.startswith("nvcre-engine")})
            objects["pods"] = (await admin.list(POD)).items
            objects["denied"] = denied(server.requests)
            # How the engine read pods: one LIST then a WATCH (never a LIST per look at a run).
            objects["pod_reads"] = sorted(r.verb for r in server.requests if r.resource == "pods" and not r.subresource
                                          and r.verb in ("list", "watch", "get") and r.user_agent.startswith("nvcre-engine"))
            objects["woken"] = runner.pods.woken
            return report_from(objects, name), objects
        finally:
            if runner is not None:
                await runner.close()
            await engine_store.close()
            await admin.close()
