"""A certification run twice: on the simulator (SimulatedRunner) and on the API-server emulator through the
Kubernetes runner, with the test kubelet playing pods, GPUs and logs from the same scenario."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from nvcre_tui.engine.api.vocabulary import LABEL_JOB, LABEL_SIMULATED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import ENGINE_NAME, FIELD_MANAGER, INSTALL_NAMESPACE, install_objects, rbac_objects
from nvcre_tui.engine.kube.rbac import NVCRE_PLURALS, grants_for, rbac_allows
from nvcre_tui.engine.names import NVCRE_GROUP, NVCRE_VERSION
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario, load_scenario
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.protocol import CRD, JOB, NODE, POD, WORKLOADRUN, ResourceKind, kind_of
from nvcre_tui.engine.store.protocol import NAMESPACE as NAMESPACE_KIND
from nvcre_tui.engine.workloads.lookup import JOBSET_GROUP_VERSION
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.kube.cluster import installed, store_on
from tests.kubeapi.trainer_crds import jobset_crd, real_trainer_crd
from tests.kubeapi.faults import Fault
from tests.kubeapi.kubelet import PodFault, TestKubelet
from tests.scenarios.harness import CASES, NAMESPACE, RUN_LIMIT_SECONDS, catalog, digest, report_from, run_case, snapshot, start_certification
from tests.scenarios.untouched import Untouched

Obj = dict[str, Any]
TRAINER_API = TRAINJOB.api_version
JOBSET_API = JOBSET_GROUP_VERSION


class KubeletDriven:
    """The Kubernetes runner, with the test kubelet stepping on the engine's fleet tick (one ManualClock).

    After each step the runner's pod watch is let catch up with what the kubelet wrote (a tiny wait on
    the real socket), so the ManualClock never jumps past a pod event still in flight."""

    simulated = False

    def __init__(self, runner: KubernetesRunner, kubelet: TestKubelet, later: Sequence[Obj] = ()) -> None:
        self.runner, self.kubelet, self.later = runner, kubelet, list(later)

    async def reconcile_run(self, run: Obj) -> float | None:
        if self.later:  # others' pods bound once the first run starts: after its Workflow planned its groups
            later, self.later = self.later, []
            await make_pods(self.kubelet.store, later)
        return await self.runner.reconcile_run(run)

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        return await self.runner.logs(run, required=required)

    async def stop(self, run: Obj) -> None:
        await self.runner.stop(run)

    async def release(self, owner: Obj) -> None:
        await self.runner.release(owner)

    async def release_ended(self, run: Obj) -> None:
        await self.runner.release_ended(run)

    async def namespace_closing(self, kind: ResourceKind, probe: Obj) -> bool:
        return await self.runner.namespace_closing(kind, probe)

    async def others_on(self, nodes: Sequence[str]) -> dict[str, list[Obj]]:
        return await self.runner.others_on(nodes)

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


async def make_pods(admin: Any, pods: Sequence[Obj]) -> None:
    """Others' pods (not nvcre's) made as given, bound to their spec.nodeName, with their status or else Running."""
    for pod in pods:
        made = await admin.create(POD, pod)
        await admin.patch_status(POD, made["metadata"]["name"], made["metadata"]["namespace"], pod.get("status") or {"phase": "Running"})


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


WRITES = ("create", "update", "patch")


def warned(requests: list[Any]) -> list[str]:
    """Writes of the engine the server answered with a Warning: a field of what nvcre writes that the server's schema
    does not know, dropped (fieldValidation Warn; the runner's Strict writes would have failed instead)."""
    return sorted({f"{r.verb} {r.api_group}/{r.resource}: {warning}" for r in requests
                   if r.user_agent.startswith("nvcre-engine") and r.verb in WRITES for warning in r.warnings})


def incomplete(requests: list[Any]) -> list[str]:
    """Built-in objects the engine created or replaced without a field their type requires (a real server's validation
    refuses them: `Required value`; the emulator validates only part of the built-ins)."""
    from tests.workloads.schema import check_api_object

    models = {("", "services"): "V1Service", ("", "secrets"): "V1Secret", ("", "configmaps"): "V1ConfigMap",
              ("", "events"): "CoreV1Event", ("batch", "jobs"): "V1Job", ("coordination.k8s.io", "leases"): "V1Lease"}
    found = set()
    for r in requests:
        model = models.get((r.api_group, r.resource))
        if r.user_agent.startswith("nvcre-engine") and r.verb in ("create", "update") and not r.subresource and model:
            found |= {f"{r.verb} {r.resource}: {problem}" for problem in check_api_object(json.loads(r.body), model, "")
                      if "required by" in problem}
    return sorted(found)


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
                          jobset_controller: bool = True, crds: Sequence[Obj] = (),
                          mutators: Mapping[tuple[str, str], Callable[[Obj], None]] | None = None,
                          clock: ManualClock | None = None, pods: Sequence[Obj] = (), later: Sequence[Obj] = ()) -> tuple[Obj, dict[str, Any]]:
    """Run the case's certification on the emulator (a server of Kubernetes 1.`minor` when given); its report
    and the objects left (by kind; what the engine did on the cluster under lower-case keys). `controllers=False`:
    an API server and etcd alone, as envtest starts them (no workload controller, scheduler or kubelet: no pod
    is ever made); `jobset=False`: the Trainer's CRDs without JobSet's; `jobset_controller=False`: JobSet's CRD served
    and the Trainer's controller running, JobSet's controller not (a TrainJob's JobSet made, never reconciled); `crds`:
    more CustomResourceDefinitions served (a DRA driver's ComputeDomain); `clock`: the one the engine and the server
    share (a fault may look at it), else a new one at SIM_START; `pods`: others' pods (not nvcre's) made before the
    certification, bound to their spec.nodeName, with their status or else Running (another team's training holding a
    node's GPUs); `later`: the same made as the engine first looks at a run, its Workflow's groups planned (a node
    taken after planning)."""
    scenario = scenario or load_scenario(CASES / case / "scenario.yaml")
    clock = clock or ManualClock(SIM_START)
    async with installed(folder, clock=clock, garbage_collector=True) as (server, kubeconfig):
        if minor is not None:
            server.version_info.update(minor=minor, gitVersion=f"v1.{minor}.0-nvcre-emulator")
        for fault in server_faults:
            server.faults.add(fault)
        server.registry.mutators.update(mutators or {})
        kubelet = ((lambda admin: TestKubelet(admin, server, clock, scenario, faults, jobset_controller=jobset_controller))
                   if controllers else None)
        report, objects, runner = await certify(kubeconfig, clock, case, scenario, trainer=trainer, jobset=jobset,
                                                kubelet=kubelet, crds=crds, pods=pods, later=later)
        # What the engine created on the cluster, by API group/resource (the workload shapes used).
        objects["created"] = sorted({f"{r.api_group}/{r.resource}" for r in server.requests
                                     if r.verb == "create" and r.user_agent.startswith("nvcre-engine")})
        objects["deleted"] = sorted({f"{r.api_group}/{r.resource}/{r.name}" for r in server.requests
                                     if r.verb == "delete" and r.user_agent.startswith("nvcre-engine")})
        objects["denied"] = denied(server.requests)
        for crd in crds:  # the names of those left when the certification finished
            group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
            objects[f"{group}/{plural}"] = sorted(str(o["metadata"]["name"]) for o in server.objects(group, plural))
        objects["warned"], objects["incomplete"] = warned(server.requests), incomplete(server.requests)
        # How the engine read its runs' pods: one LIST then a WATCH (never a LIST per look at a run); and, apart, the
        # pods not nvcre's bound to each target node it listed as a Workflow started (others_on: busy nodes).
        pod_reads = [r for r in server.requests if r.resource == "pods" and not r.subresource
                     and r.verb in ("list", "watch", "get") and r.user_agent.startswith("nvcre-engine")]
        others = [r for r in pod_reads if r.query.get("labelSelector") == f"!{LABEL_JOB}"]
        objects["pod_reads"] = sorted(r.verb for r in pod_reads if r not in others)
        objects["occupant_reads"] = sorted(f"{r.verb} {r.query.get('fieldSelector')}" for r in others)
        objects["woken"] = runner.pods.woken
        return report, objects


async def bare_server_report(kubeconfig: Path, case: str, *, jobset: bool = True) -> tuple[Obj, dict[str, Any]]:
    """The case's certification through the Kubernetes runner on any API server named by `kubeconfig` with nothing
    beside it (no controllers, scheduler or kubelet), nvcre installed here as `setup init` installs it and the
    Trainer's real CRDs applied. The engine's clock is its own (ManualClock) while the server keeps real time, as
    on a real kube-apiserver + etcd."""
    clock = ManualClock(SIM_START)
    admin = await store_on(kubeconfig, clock, "nvcre-setup")
    try:
        for obj in install_objects():
            await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER, force=True)
        await served(admin, {f"{NVCRE_GROUP}/{NVCRE_VERSION}": NVCRE_PLURALS})
    finally:
        await admin.close()
    engine = await service_account_kubeconfig(kubeconfig, INSTALL_NAMESPACE, ENGINE_NAME)
    report, objects, _ = await certify(kubeconfig, clock, case, load_scenario(CASES / case / "scenario.yaml"),
                                       trainer=True, jobset=jobset, kubelet=None, engine_kubeconfig=engine)
    return report, objects


@contextlib.asynccontextmanager
async def gpu_cluster(folder: Path, clock: ManualClock) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The emulator as `setup init` leaves it, with threshold-pass-two-metrics' GPU Nodes registered: its server, a store
    as the admin and one as the engine's ServiceAccount (its RBAC judges each of the engine's requests); both closed after."""
    async with installed(folder, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine = await store_on(await service_account_kubeconfig(kubeconfig, INSTALL_NAMESPACE, ENGINE_NAME), clock, "nvcre-engine")
        try:
            await register_gpu_nodes(admin, clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
            yield server, admin, engine
        finally:
            await engine.close()
            await admin.close()


@contextlib.asynccontextmanager
async def batch_runner_on_gpu_nodes(folder: Path) -> AsyncIterator[tuple[Any, Any, KubernetesRunner]]:
    """The emulator (its garbage collector on) with threshold-pass-two-metrics' GPU Nodes registered: its server, a store
    as the engine and a batch-fallback Kubernetes runner on it, for a test to make runs and play their pods by hand;
    the runner and the store closed after."""
    async with installed(folder, garbage_collector=True) as (server, kubeconfig):
        store = await store_on(kubeconfig, server.clock, "nvcre-engine")
        runner = KubernetesRunner(store, server.clock, store, trainer=False)
        try:
            await register_gpu_nodes(store, server.clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
            yield server, store, runner
        finally:
            await runner.close()
            await store.close()


@contextlib.asynccontextmanager
async def kubelet_driven_engine(folder: Path, clock: ManualClock, case: str, *,
                                service_account: bool) -> AsyncIterator[tuple[Any, Any, Engine, str]]:
    """The case's Certification started on the emulator (its garbage collector on) and an engine for it whose Kubernetes
    runner's pods the test kubelet plays on `clock`: the server, the admin's store, the engine (not run yet) and the
    Certification's name. `service_account`: the engine is `setup init`'s ServiceAccount (its RBAC judges each of its
    requests), else the admin. The runner and both stores closed after."""
    scenario = load_scenario(CASES / case / "scenario.yaml")
    async with installed(folder, clock=clock, garbage_collector=True) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_kubeconfig = await service_account_kubeconfig(kubeconfig, INSTALL_NAMESPACE, ENGINE_NAME) if service_account else kubeconfig
        engine_store = await store_on(engine_kubeconfig, clock, "nvcre-engine")
        runner: KubernetesRunner | None = None
        try:
            await register_gpu_nodes(admin, clock, scenario)
            name = await start_certification(admin, CASES / case / "cert.yaml")
            cache = engine_cache(engine_store)
            writer = WriteThroughStore(engine_store, cache)
            runner = KubernetesRunner(writer, clock, engine_store)
            engine = Engine(writer, clock, catalog(), KubeletDriven(runner, TestKubelet(admin, server, clock, scenario)), cache=cache)
            runner.connect(engine.queue.add, cache)
            yield server, admin, engine, name
        finally:
            if runner is not None:
                await runner.close()
            await engine_store.close()
            await admin.close()


async def job_pods_running(admin: Any) -> bool:
    """Whether the Jobs' workload pods (labelled with their Job) are there and every one of them Running."""
    pods = (await admin.list(POD, NAMESPACE, label_selector=LABEL_JOB)).items
    return bool(pods) and all((p.get("status") or {}).get("phase") == "Running" for p in pods)


async def died_during(server: Any, work: Awaitable[Any], **request: Any) -> None:
    """Run `work` (a runner's look, its engine's) until the emulator `server` has seen a request with the fields of
    `request` (verb, resource, api_group: as requests_where takes them), then cancel it: the engine died mid-request."""
    look = asyncio.ensure_future(work)
    while not server.requests_where(**request):
        await asyncio.sleep(0.002)
    look.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await look


async def install_trainer(admin: Any) -> None:
    """Kubeflow Trainer's CRDs (TrainJob, TrainingRuntime, with their schemas and rules) and JobSet's, applied as their
    installs apply them, waited for until served."""
    for plural in ("trainjobs", "trainingruntimes"):
        await admin.apply(CRD, real_trainer_crd(plural), field_manager="kubeflow-trainer", force=True)
    await admin.apply(CRD, jobset_crd(), field_manager="jobset", force=True)
    await served(admin, {TRAINER_API: ["trainjobs", "trainingruntimes"], JOBSET_API: ["jobsets"]})


@contextlib.asynccontextmanager
async def engine_to_restart(folder: Path, clock: ManualClock) -> AsyncIterator[tuple[Any, Any, Path, Any]]:
    """The emulator as `setup init` leaves it, with threshold-pass-two-metrics' GPU Nodes registered, for an engine that
    dies and one started after: its server, a store as the admin, the engine's ServiceAccount's kubeconfig (for the
    engine after) and a store as it for the first engine, which the test closes when that engine dies. Both stores
    closed after (a store closed twice is closed once)."""
    async with installed(folder, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        as_engine = await service_account_kubeconfig(kubeconfig, INSTALL_NAMESPACE, ENGINE_NAME)
        first = await store_on(as_engine, clock, "nvcre-engine")
        try:
            await register_gpu_nodes(admin, clock, load_scenario(CASES / "threshold-pass-two-metrics" / "scenario.yaml"))
            yield server, admin, as_engine, first
        finally:
            await first.close()
            await admin.close()


async def started_once(engine: Any, clock: ManualClock, run: Obj) -> Obj:
    """The status of `run` once a batch-fallback runner of the engine's (`engine`: its ServiceAccount's store) has looked
    at it once, read back by `engine`'s store; the runner closed after."""
    runner = KubernetesRunner(engine, clock, engine, trainer=False)
    try:
        await runner.reconcile_run(run)
    finally:
        await runner.close()
    meta = run["metadata"]
    return dict((await engine.get(WORKLOADRUN, meta["name"], meta.get("namespace") or "default")).get("status") or {})


async def service_account_kubeconfig(kubeconfig: Path, namespace: str, name: str) -> Path:
    """A kubeconfig beside `kubeconfig` (same server and CA) authenticating as ServiceAccount namespace/name, with a
    token from the server's TokenRequest API (`kubectl create token`): the server's RBAC then judges each request."""
    from kubernetes_asyncio import client

    target = await load_target(str(kubeconfig))
    async with client.ApiClient(target.configuration) as api:
        answer = await client.CoreV1Api(api).create_namespaced_service_account_token(
            name, namespace, client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)))
    config = yaml.safe_load(kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": answer.status.token}
    path = kubeconfig.with_name(f"{kubeconfig.name}-{name}")
    path.write_text(yaml.safe_dump(config))
    return path


async def served(store: Any, wanted: Mapping[str, Sequence[str]], attempts: int = 500) -> None:
    """Wait (10 ms steps) until each group/version serves its plurals: a kind is served a moment after its CRD."""
    for _ in range(attempts):
        found = {gv: {r.get("name") for r in await store.served_resources(gv) or []} for gv in wanted}
        if all(set(plurals) <= found[gv] for gv, plurals in wanted.items()):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never served: {dict(wanted)}")


async def certify(kubeconfig: Path, clock: ManualClock, case: str, scenario: Scenario, *, trainer: bool, jobset: bool,
                  kubelet: Callable[[Any], TestKubelet] | None, engine_kubeconfig: Path | None = None,
                  crds: Sequence[Obj] = (), pods: Sequence[Obj] = (), later: Sequence[Obj] = ()) -> tuple[Obj, dict[str, Any], KubernetesRunner]:
    """Run the case's certification with the Kubernetes runner on the (installed) server; the report, the objects
    left and the runner. `kubelet`: the test kubelet playing pods on the admin store, or None (no pod is ever made);
    `engine_kubeconfig`: who the engine is (the admin's `kubeconfig` unless given); `pods`: others' pods made first
    (emulator_report); `later`: others' pods made as the first run starts (emulator_report)."""
    admin = await store_on(kubeconfig, clock, "nvcre-test")
    engine_store = await store_on(engine_kubeconfig or kubeconfig, clock, "nvcre-engine")
    runner: KubernetesRunner | None = None
    try:
        if trainer:
            for plural in ("trainjobs", "trainingruntimes"):  # Kubeflow Trainer's own, with their schemas and rules
                await admin.apply(CRD, real_trainer_crd(plural), field_manager="kubeflow-trainer", force=True)
            if jobset:
                await admin.apply(CRD, jobset_crd(), field_manager="jobset", force=True)  # the Trainer's dependency
            await served(engine_store, {TRAINER_API: ("trainjobs", "trainingruntimes"),
                                        **({JOBSET_API: ("jobsets",)} if jobset else {})})
        for crd in crds:
            await admin.apply(CRD, crd, field_manager="driver", force=True)
            names = crd["spec"]["names"]["plural"]
            await served(engine_store, {f"{crd['spec']['group']}/{version['name']}": (names,) for version in crd["spec"]["versions"]})
        await register_gpu_nodes(admin, clock, scenario)
        for namespace in sorted({pod["metadata"]["namespace"] for pod in [*pods, *later]} - {NAMESPACE}):
            await admin.create(NAMESPACE_KIND, {"metadata": {"name": namespace}})
        await make_pods(admin, pods)
        name = await start_certification(admin, CASES / case / "cert.yaml")
        cache = engine_cache(engine_store)
        guard = Untouched(cache)  # nothing edits the cache's shared objects in place (as on the embedded store)
        writer = WriteThroughStore(engine_store, cache)
        runner = KubernetesRunner(writer, clock, engine_store)
        played = KubeletDriven(runner, kubelet(admin), later) if kubelet is not None else runner
        engine = Engine(writer, clock, catalog(), played, cache=cache)
        runner.connect(engine.queue.add, cache)

        async def terminal() -> bool:
            return cond.is_terminal(await admin.get(CERTIFICATION, name, NAMESPACE))

        finished = await engine.run_until_settled(until=terminal, max_seconds=RUN_LIMIT_SECONDS)
        assert finished, f"{case}: the certification never finished on the API server"
        objects: dict[str, Any] = await snapshot(admin)
        await engine.stop()
        objects["pods"] = (await admin.list(POD)).items
        objects["trainjobs"] = (await admin.list(TRAINJOB, NAMESPACE)).items if trainer else []
        assert guard.check_all() == [], f"{case}: the engine edited shared cached objects in place: {guard.edited[:3]}"
        return report_from(objects, name), objects, runner
    finally:
        if runner is not None:
            await runner.close()
        await engine_store.close()
        await admin.close()


async def job_and_its_run(admin: Any, spec: Mapping[str, Any], nodes: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An nvcre Job `cert-job` of `spec` over `nodes` in default, and its WorkloadRun `cert-job-run` it controls: what the
    Job controller would have made, for a runner to start."""
    job = await admin.create(JOB, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
                                   "metadata": {"name": "cert-job", "namespace": "default",
                                                "annotations": {"nvcre.nvidia.com/group-nodes": ",".join(nodes)}},
                                   "spec": {"workload": {"workloadRun": spec}}})
    owner = {"apiVersion": job["apiVersion"], "kind": "Job", "name": "cert-job", "uid": job["metadata"]["uid"], "controller": True}
    run = await admin.create(WORKLOADRUN, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "spec": spec,
                                           "metadata": {"name": "cert-job-run", "namespace": "default", "ownerReferences": [owner]}})
    return job, run
