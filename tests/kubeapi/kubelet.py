"""A test kubelet for the API-server emulator: plays kube-scheduler, kubelet, the GPUs, and the controllers
that turn a workload object into pods (Kubeflow Trainer, which makes its JobSet, and JobSet, which writes its status, for a TrainJob; the Job
controller, which writes its status.startTime, for a batch Indexed Job), for nvcre's workloads only. Test code: kept minimal.

Pods go Pending -> Running -> Succeeded / Failed on the timeline the simulator's physics gives the run
(`plan_run`, the same seed, the same fleet epoch), and the result pod's log is the simulator's output
(`render_output`, the real nccl-tests / dcgmi / Megatron formats) with kubelet timestamps, served
through pods/log. So the same certification on the simulator and here should end in the same verdicts:
the engine only sees pods and their logs here.

Faults the simulator has (xid, flaky, slow-gpu, unschedulable, hang) come from the scenario; a pod requesting more cpu,
memory or GPUs (any resource the Node lists) than its Node has left (allocatable less the requests of the pods already bound there, a daemonset's a test
made) is never bound (Pending, Unschedulable, as kube-scheduler leaves it); faults only
a cluster has are `PodFault`s: an image that cannot be pulled, OOMKilled, a node lost (NotReady) and a
pod deleted mid-run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from nvcre_tui.engine.api.vocabulary import LABEL_ROLE
from nvcre_tui.engine.clock import Clock, format_time, parse_time
from nvcre_tui.engine.runners.kubernetes.create import TRAINING_RUNTIME, TRAINJOB
from nvcre_tui.engine.runners.simulated import render_output
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.outputs import LAYOUTS, NcclFormat, kubelet_prefix
from nvcre_tui.engine.sim.physics import PlanError, RunPlan, RunSpec, fleet_layout, plan_run
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.errors import AlreadyExists, Forbidden, NotFound, StoreError
from nvcre_tui.engine.store.protocol import BATCH_JOB, NODE, POD, WORKLOADRUN, ResourceKind, ResourceStore
from nvcre_tui.engine.units import parse_quantity

Obj = dict[str, Any]
# The Job controller's index of an Indexed Job's pod, label and annotation, spelt here as Kubernetes spells it (not
# taken from the package: a typo there must fail against this emulator).
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# The JobSet the Trainer makes of each TrainJob, spelt here as JobSet spells it (likewise not the package's).
JOBSET = ResourceKind("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")
PERIOD = 10.0  # seconds between log refreshes of a running pod
OOM_EXIT, ERROR_EXIT = 137, 1
STEP_LINE = re.compile(r"\biteration\s+\d+\s*/")  # Megatron's per-step line (printed by the last rank only)


def _requested(pod: Obj, name: str) -> float:
    """What a pod requests of `name` as kube-scheduler counts it: its containers and sidecars summed, or a plain init
    container's if more (a limit alone stands for its request)."""
    spec = pod.get("spec") or {}

    def asked(container: Obj) -> float:
        resources = container.get("resources") or {}
        value = (resources.get("requests") or {}).get(name, (resources.get("limits") or {}).get(name))
        return float(parse_quantity(value)) if value is not None else 0.0

    inits = spec.get("initContainers") or []
    sidecars = [c for c in inits if c.get("restartPolicy") == "Always"]
    return max([sum(asked(c) for c in [*spec.get("containers", []), *sidecars]),
                *(asked(c) for c in inits if c.get("restartPolicy") != "Always")])


@dataclass(frozen=True)
class PodFault:
    """A cluster fault on the pod of `node`, `at` seconds after the run started (image-pull: at once)."""

    kind: str  # image-pull | oom | node-lost | pod-deleted | taint-evicted | trainjob-refused (node unused: the Trainer fails the TrainJob)
    node: str
    at: float = 0.0


@dataclass
class _Run:
    """One workload as the kubelet plays it."""

    workload: Obj
    run: Obj
    members: list[str]
    pods: list[tuple[str, str, int, Obj]]  # (pod name, role, index, pod template)
    start: datetime
    plan: RunPlan | None
    lines: list[tuple[float, str]]
    gates: dict[str, list[str]] = field(default_factory=dict)  # role -> the roles whose pods must be Ready first (JobSet dependsOn)


def _as_pod_hosts(lines: list[tuple[float, str]], members: list[str], pods: list[tuple[str, str, int, Obj]]) -> list[tuple[float, str]]:
    """The simulator prints node names where a process prints gethostname(); in a pod without hostNetwork
    that is the pod's hostname (`<job>-<index>`, `<jobset>-node-0-<index>`): what a cluster's log shows."""
    renames = {members[index]: name for name, role, index, template in pods
               if role == "node" and index < len(members) and not (template.get("spec") or {}).get("hostNetwork")}
    if not renames:
        return lines
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(n) for n in sorted(renames, key=len, reverse=True)) + r")(?![\w-])")
    return [(t, pattern.sub(lambda m: renames[m.group(1)], text)) for t, text in lines]


class TestKubelet:
    """Drives the pods of every nvcre workload on the emulator; `step()` is one pass (call it from a tick)."""

    __test__ = False  # not a pytest class

    def __init__(self, store: ResourceStore, server: Any, clock: Clock, scenario: Scenario,
                 faults: Sequence[PodFault] = (), *, jobset_controller: bool = True) -> None:
        """`jobset_controller=False`: the Trainer runs and JobSet's controller does not (its CRD alone): a TrainJob's
        JobSet is made and never reconciled, and no pod of it is made."""
        self.store, self.server, self.clock, self.scenario = store, server, clock, scenario
        self.faults = list(faults)
        self.jobset_controller = jobset_controller
        self.fleet = SimulatedFleet(store, clock, scenario, plays_the_cluster=True)  # it cordons the "real" Nodes
        self._layout = fleet_layout(scenario)
        choice = random.Random(f"{scenario.seed}:nccl-format")  # the simulated runner's choice, same seed
        self._nccl = NcclFormat(choice.choice(sorted(LAYOUTS)), choice.random() < 0.25)
        self._memo: dict[str, tuple[RunPlan | None, list[tuple[float, str]]]] = {}
        self.lost: set[str] = set()
        self._runtimes: dict[str, Obj] = {}
        self._created: set[tuple[str, str]] = set()  # a deleted pod is not replaced (backoffLimit 0: the Job fails)
        self._jobsets: set[str] = set()  # uids of the TrainJobs whose JobSet is made

    async def step(self) -> float:
        """Create missing pods, move them along their timeline, finish graceful deletes; seconds to the next event."""
        await self.fleet.tick()
        waits = [PERIOD]
        for kind in (TRAINJOB, BATCH_JOB):
            try:
                workloads = (await self.store.list(kind)).items
            except NotFound:  # TrainJob without the Trainer's CRDs
                continue
            for workload in workloads:
                if workload["metadata"].get("deletionTimestamp") or (workload.get("spec") or {}).get("suspend") is True:
                    continue  # a suspended workload makes no pods until its queue (Kueue) admits it
                if kind is TRAINJOB and any(f.kind == "trainjob-refused" for f in self.faults):
                    await self._refuse(workload)
                    continue
                if kind is BATCH_JOB and not (workload.get("status") or {}).get("startTime"):
                    await self._sync(workload)
                if kind is TRAINJOB:
                    await self._jobset_of(workload)
                    if not self.jobset_controller:
                        continue  # its JobSet is never reconciled: no Job, no pod
                played = await self._load(kind, workload)
                if played is not None:
                    waits.append(await self._play(played))
        await self._finish_deletes()
        return max(min(waits), 0.001)

    async def _sync(self, job: Obj) -> None:
        """What the Job controller writes as it first syncs a batch Job (not suspended): its status.startTime."""
        await self.store.patch_status(BATCH_JOB, job["metadata"]["name"], job["metadata"]["namespace"],
                                      {"startTime": format_time(self.clock.now())})

    async def _jobset_of(self, trainjob: Obj) -> None:
        """What the Trainer's controller does on its first reconcile of a TrainJob: make its JobSet, of its name and
        namespace, owned by it, with its runtime's replicated jobs; and what JobSet's controller then does on its first
        reconcile (when it runs): write the JobSet's status.replicatedJobsStatus (the pods are then JobSet's Jobs'; here
        _play makes them)."""
        meta = trainjob["metadata"]
        if meta["uid"] in self._jobsets:
            return
        try:
            runtime = await self.store.get(TRAINING_RUNTIME, trainjob["spec"]["runtimeRef"]["name"], meta["namespace"])
            replicated = [{"name": job["name"], "replicas": job.get("replicas", 1)}
                          for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]]
        except (NotFound, KeyError):
            replicated = []
        jobset = {"apiVersion": f"{JOBSET.group}/{JOBSET.version}", "kind": JOBSET.kind,
                  "metadata": {"name": meta["name"], "namespace": meta["namespace"], "ownerReferences": [
                      {"apiVersion": trainjob["apiVersion"], "kind": trainjob["kind"], "name": meta["name"], "uid": meta["uid"],
                       "controller": True, "blockOwnerDeletion": True}]},
                  "spec": {"replicatedJobs": replicated}}
        try:
            await self.store.create(JOBSET, jobset)
        except AlreadyExists:
            pass
        except StoreError:  # JobSet's CRD not served, a namespace being terminated: the Trainer would make none either
            return
        self._jobsets.add(meta["uid"])
        if self.jobset_controller:
            counts = {"ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0}
            await self.store.patch_status(JOBSET, meta["name"], meta["namespace"], {
                "replicatedJobsStatus": [{"name": job["name"], **counts} for job in replicated]})

    async def _refuse(self, workload: Obj) -> None:
        """What the Trainer's controller does with a TrainJob whose runtime it does not support: Failed, no pods."""
        if any(c.get("type") == "Failed" for c in (workload.get("status") or {}).get("conditions") or []):
            return
        await self.store.patch_status(TRAINJOB, workload["metadata"]["name"], workload["metadata"]["namespace"], {"conditions": [
            {"type": "Failed", "status": "True", "reason": "TrainingRuntimeNotSupported", "lastTransitionTime": format_time(self.clock.now()),
             "message": "Specified runtime is not supported"}]})

    # ------------------------------------------------------------------ workloads -> pods

    async def _load(self, kind: Any, workload: Obj) -> _Run | None:
        meta = workload["metadata"]
        owner = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if owner is None:
            return None
        runs = [r for r in (await self.store.list(WORKLOADRUN, meta["namespace"])).items
                if any(ref.get("uid") == owner["uid"] for ref in r["metadata"].get("ownerReferences") or [])]
        if not runs or not (runs[0].get("status") or {}).get("pendingSince"):
            return None
        run = runs[0]
        members = list(((run["spec"].get("target") or {}).get("nodeNames")) or [])
        start = parse_time(run["status"]["pendingSince"]) + timedelta(seconds=self.scenario.physics.scheduling_sec)
        uid = run["metadata"]["uid"]
        if uid not in self._memo:
            try:
                spec = RunSpec.from_run(run)
                planned = plan_run(self.scenario, spec, await self.fleet.offset(start), layout=self._layout)
                rng = random.Random(f"{self.scenario.seed}:{spec.name}:output")
                self._memo[uid] = (planned, render_output(planned, start, rng, self._nccl))
            except PlanError as error:
                self._memo[uid] = (None, [(0.0, f"simulator: {error}")])
        plan, lines = self._memo[uid]
        if kind is TRAINJOB and (ref := workload["spec"]["runtimeRef"]["name"]) not in self._runtimes:
            self._runtimes[ref] = await self.store.get(TRAINING_RUNTIME, ref, meta["namespace"])
        pods = self._pod_plan(kind, workload, len(members))
        gates = {} if kind is BATCH_JOB else {
            job["name"]: [d["name"] for d in job.get("dependsOn") or [] if d.get("status") == "Ready"]
            for job in self._runtimes[workload["spec"]["runtimeRef"]["name"]]["spec"]["template"]["spec"]["replicatedJobs"]}
        return _Run(workload, run, members, pods, start, plan, _as_pod_hosts(lines, members, pods), gates)

    def _pod_plan(self, kind: Any, workload: Obj, nodes: int) -> list[tuple[str, str, int, Obj]]:
        name = workload["metadata"]["name"]
        if kind is BATCH_JOB:
            template = workload["spec"]["template"]
            return [(f"{name}-{index}", "node", index, template) for index in range(int(workload["spec"]["completions"]))]
        runtime = self._runtimes[workload["spec"]["runtimeRef"]["name"]]  # _load fetched it
        result = []
        for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
            count = nodes if job["name"] == "node" else 1
            template = job["template"]["spec"]["template"]
            result += [(f"{name}-{job['name']}-0-{index}", job["name"], index, template) for index in range(count)]
        return result

    async def _play(self, played: _Run) -> float:
        now = self.clock.now()
        elapsed = (now - played.start).total_seconds()
        waits = []
        pods = {p["metadata"]["name"]: p for p in (await self.store.list(POD, played.workload["metadata"]["namespace"])).items}
        node_pods = [item for item in played.pods if item[1] == "node"]
        for name, role, index, template in played.pods:
            node = played.members[index] if role == "node" else played.members[0]
            pod = pods.get(name)
            if pod is None and not self._gate_open(played, role, pods):
                continue  # JobSet makes a replicated job only once those it dependsOn are Ready (the MPI launcher)
            if pod is None and (played.run["metadata"]["uid"], name) not in self._created:
                self._created.add((played.run["metadata"]["uid"], name))
                pod = await self._create_pod(played, name, role, index, template)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            waits.append(await self._advance(played, pod, node, role, elapsed, len(node_pods)))
        return min((w for w in waits if w is not None), default=PERIOD)

    @staticmethod
    def _gate_open(played: _Run, role: str, pods: dict[str, Obj]) -> bool:
        for needed in played.gates.get(role, []):
            for name, other, _, _ in played.pods:
                found = pods.get(name)
                if other == needed and not (found and any(c.get("type") == "Ready" and c.get("status") == "True"
                                                          for c in (found.get("status") or {}).get("conditions") or [])):
                    return False
        return True

    async def _create_pod(self, played: _Run, name: str, role: str, index: int, template: Obj) -> Obj | None:
        workload = played.workload
        labels = {**(template.get("metadata") or {}).get("labels", {}), COMPLETION_INDEX: str(index)}
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": workload["metadata"]["namespace"], "labels": labels,
                            "annotations": {COMPLETION_INDEX: str(index)},
                            "ownerReferences": [{"apiVersion": workload["apiVersion"], "kind": workload["kind"],
                                                 "name": workload["metadata"]["name"], "uid": workload["metadata"]["uid"],
                                                 "controller": True, "blockOwnerDeletion": True}]},
               "spec": {**template["spec"], "hostname": name}}
        try:
            return await self.store.create(POD, pod)
        except AlreadyExists:
            return None
        except Forbidden:  # a namespace being terminated admits no new pod: a controller tries again on its next pass
            self._created.discard((played.run["metadata"]["uid"], name))
            return None

    # ------------------------------------------------------------------ one pod's timeline

    async def _advance(self, played: _Run, pod: Obj, node: str, role: str, elapsed: float, nodes: int) -> float | None:
        status = pod.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            return None
        plan = played.plan
        fault = next((f for f in self.faults if f.node == node and role == "node"), None)
        image = next((f for f in self.faults if f.kind == "image-pull" and f.node in played.members), None)
        if plan is not None and plan.outcome.kind == "unschedulable":
            if node in plan.outcome.blocked and role == "node" and not status.get("conditions"):
                await self._status(pod, {"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": plan.outcome.message}]})
            return None
        if elapsed < 0:
            return -elapsed
        if not (pod.get("spec") or {}).get("nodeName") and (short := await self._no_room(pod, node)):
            if not status.get("conditions"):  # kube-scheduler's NodeResourcesFit: the pod waits for room that never comes
                await self._status(pod, {"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": f"0/1 nodes are available: {', '.join(f'1 Insufficient {name}' for name in short)}."}]})
            return None
        if image is not None:
            if not status.get("containerStatuses"):
                await self._bind(pod, node)
                await self._status(pod, {"phase": "Pending", "containerStatuses": [{
                    "name": "node", "image": pod["spec"]["containers"][0]["image"], "ready": False, "restartCount": 0,
                    "state": {"waiting": {"reason": "ErrImagePull", "message": f"rpc error: code = NotFound desc = failed to pull and "
                                          f"unpack image \"{pod['spec']['containers'][0]['image']}\": not found"}}}]})
            return None
        if status.get("phase") != "Running":
            await self._bind(pod, node)
            await self._status(pod, {"phase": "Running", "startTime": format_time(played.start), "containerStatuses": [
                {"name": "node", "image": pod["spec"]["containers"][0]["image"], "ready": True, "restartCount": 0,
                 "state": {"running": {"startedAt": format_time(played.start)}}}]})
        cut = self._cut(played)
        if self._is_result(pod, role, played):
            self._set_log(pod, played, min(elapsed, cut if cut is not None else elapsed))
        if fault is not None and fault.kind != "image-pull" and elapsed >= fault.at:
            await self._cluster_fault(pod, node, fault, played)
            return None
        if fault is not None and fault.kind != "image-pull":
            return fault.at - elapsed
        victim = self._first_fault(played)
        if victim is not None and elapsed >= victim.at:
            if victim.kind == "oom":  # the others die of it: NCCL aborts when a rank is gone
                await self._end(pod, played, victim.at, ERROR_EXIT, "Error", "")
            return None
        if victim is not None:
            return victim.at - elapsed
        if plan is None:
            await self._end(pod, played, 0.0, ERROR_EXIT, "Error", "the simulator cannot run this spec")
            return None
        if plan.end is None:
            return PERIOD  # hangs until the engine gives up and deletes the workload
        if elapsed < plan.end:
            return min(plan.end - elapsed, PERIOD)
        outcome = plan.outcome
        if outcome.kind == "succeeded":
            await self._end(pod, played, plan.end, 0, "Completed", "")
        else:
            code = outcome.exit_code if self._is_result(pod, role, played) else ERROR_EXIT
            await self._end(pod, played, plan.end, code or ERROR_EXIT, "Error",
                            outcome.message if node == outcome.node and role == "node" else "")
        return None

    def _first_fault(self, played: _Run) -> PodFault | None:
        found = [f for f in self.faults if f.node in played.members and f.kind != "image-pull"]
        return min(found, key=lambda f: f.at) if found else None

    def _cut(self, played: _Run) -> float | None:
        first = self._first_fault(played)
        return first.at if first is not None else None

    async def _cluster_fault(self, pod: Obj, node: str, fault: PodFault, played: _Run) -> None:
        if fault.kind == "oom":
            await self._end(pod, played, fault.at, OOM_EXIT, "OOMKilled", "")
        elif fault.kind == "node-lost" and node not in self.lost:
            self.lost.add(node)  # the node's kubelet stops reporting: the pod stays Running as last seen
            found = await self.store.get(NODE, node)
            conditions = [c for c in (found.get("status") or {}).get("conditions") or [] if c.get("type") != "Ready"]
            conditions.append({"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                               "message": "Kubelet stopped posting node status."})
            await self.store.patch_status(NODE, node, None, {"conditions": conditions})
        elif fault.kind == "pod-deleted":
            self._delete_now(pod)
        elif fault.kind == "taint-evicted":  # the taint manager: DisruptionTarget first, then a graceful delete
            conditions = [*((pod.get("status") or {}).get("conditions") or []),
                          {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                           "message": "Taint manager: deleting due to NoExecute taint"}]
            await self._status(pod, {"conditions": conditions})
            res = self.server.resource("", "v1", "pods")
            self.server.registry.delete(res, pod["metadata"]["namespace"], pod["metadata"]["name"], {"gracePeriodSeconds": 30})

    # ------------------------------------------------------------------ writes

    def _is_result(self, pod: Obj, role: str, played: _Run) -> bool:
        """Whether the pod prints (part of) the run's output: the MPI launcher, else rank 0's pod, and for a multi-node
        torch run its last node's too (`_share`)."""
        return self._share(pod, role, played) is not None

    def _share(self, pod: Obj, role: str, played: _Run) -> re.Pattern[str] | None | bool:
        """Which output lines the pod's log holds: True all, a pattern those that match (False: those that do not),
        None none. Megatron prints its iteration lines on the last global rank only (print_rank_last), in the last
        node's pod; rank 0's pod has the rest."""
        launcher = any(item[1] == "launcher" for item in played.pods)
        labels = pod["metadata"].get("labels") or {}
        if launcher:
            return True if role == "launcher" else None
        if labels.get(LABEL_ROLE) != "node":
            return None
        index, nodes = labels.get(COMPLETION_INDEX), len(played.members)
        split = nodes > 1 and ((played.run.get("spec") or {}).get("framework") or {}).get("torch") is not None
        if index == "0":
            return False if split else True
        return STEP_LINE if split and index == str(nodes - 1) else None

    def _set_log(self, pod: Obj, played: _Run, upto: float) -> None:
        share = self._share(pod, (pod["metadata"].get("labels") or {}).get(LABEL_ROLE, "node"), played)
        step = STEP_LINE.search
        kept = [(t, line) for t, line in played.lines if t <= upto and (share is True or (bool(step(line)) == (share is STEP_LINE)))]
        text = "".join(f"{kubelet_prefix(played.start + timedelta(seconds=t))}{line}\n" for t, line in kept)
        self.server.set_pod_log(pod["metadata"]["namespace"], pod["metadata"]["name"], text)

    async def _no_room(self, pod: Obj, node: str) -> list[str]:
        """The resources (cpu, memory, GPUs, any the Node lists) the pod requests beyond what its Node has left, as
        kube-scheduler's NodeResourcesFit counts them: allocatable less the requests of the pods already bound there and
        not finished (a daemonset's, another team's training holding the GPUs). A resource the Node does not list is no
        limit here."""
        try:
            allocatable = ((await self.store.get(NODE, node)).get("status") or {}).get("allocatable") or {}
        except NotFound:
            return []
        bound = [other for other in (await self.store.list(POD, field_selector=f"spec.nodeName={node}")).items
                 if (other.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
                 and other["metadata"].get("uid") != pod["metadata"].get("uid")]
        short = []
        asked = {name for container in (pod.get("spec") or {}).get("containers") or []
                 for part in ("requests", "limits") for name in ((container.get("resources") or {}).get(part) or {})}
        for name in sorted({"cpu", "memory"} | asked):
            taken = sum(_requested(other, name) for other in bound)
            if name in allocatable and _requested(pod, name) > float(parse_quantity(allocatable[name])) - taken:
                short.append(name)
        return short

    async def _bind(self, pod: Obj, node: str) -> None:
        if (pod.get("spec") or {}).get("nodeName"):
            return
        # What a scheduler does: POST pods/<name>/binding (a pod's spec is otherwise immutable).
        pods = self.server.registry.find("", "v1", "pods")
        self.server.registry.bind(pods, pod["metadata"]["namespace"], pod["metadata"]["name"],
                                  {"target": {"kind": "Node", "name": node}}, manager="kube-scheduler")
        updated = await self.store.get(POD, pod["metadata"]["name"], pod["metadata"]["namespace"])
        pod["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]
        pod["spec"]["nodeName"] = node

    async def _status(self, pod: Obj, status: Obj) -> None:
        if status.get("phase") == "Running":
            status.setdefault("conditions", [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}])
        updated = await self.store.patch_status(POD, pod["metadata"]["name"], pod["metadata"]["namespace"], status)
        pod.update(updated)

    async def _end(self, pod: Obj, played: _Run, at: float, code: int, reason: str, message: str) -> None:
        if self._is_result(pod, (pod["metadata"].get("labels") or {}).get(LABEL_ROLE, "node"), played):
            self._set_log(pod, played, at)
        ended = {"exitCode": code, "reason": reason, "startedAt": format_time(played.start),
                 "finishedAt": format_time(played.start + timedelta(seconds=at))}
        if message:
            ended["message"] = message
        image = pod["spec"]["containers"][0]["image"]
        await self._status(pod, {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": [
            {"name": "node", "image": image, "ready": False, "restartCount": 0, "state": {"terminated": ended}}]})

    def _delete_now(self, pod: Obj) -> None:
        res = self.server.resource("", "v1", "pods")
        try:
            self.server.registry.delete(res, pod["metadata"]["namespace"], pod["metadata"]["name"], {"gracePeriodSeconds": 0})
        except Exception:  # noqa: BLE001 - already gone
            pass

    async def _finish_deletes(self) -> None:
        """A graceful delete (the garbage collector's) of a pod on a live node ends at once: the processes exit."""
        for pod in (await self.store.list(POD)).items:
            if pod["metadata"].get("deletionTimestamp") and (pod.get("spec") or {}).get("nodeName") not in self.lost:
                self._delete_now(pod)
