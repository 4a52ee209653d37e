"""The Kubernetes runner: WorkloadRuns as real pods (a Kubeflow Trainer TrainJob, or the batch/v1 Indexed
Job fallback when the Trainer's CRDs are not served), their status read back from the pods.

Level-triggered like the simulated runner: everything it decides is in the WorkloadRun's status and
on the cluster; what it keeps in memory (the Trainer discovery answer, the pod cache, log buffers) can be lost.

Pods are watched, not polled (watch.py): one cluster-wide watch of the pods nvcre made feeds a cache the
runner reads, and each pod event (or Node event of the group) wakes the run it belongs to through the
engine's queue (`connect`). A look at a run costs no API request; a slow resync (`poll`) is only a safety
net. A run's status is written only when it changes. When a group fails its workload object is deleted
(Background: the garbage collector deletes the pods and frees the GPUs) after the log was read;
succeeded runs keep their pods for their logs until the Job is deleted. Either way a finished (or stopped) run's
DRA objects go at once: its ComputeDomain, whose IMEX daemons hold its nodes, and its RoCE ResourceClaimTemplate.
That release follows the write of the run's end, and the run's Released condition follows the release: an engine
that died (or restarted, or lost its Lease) in between finds the ended run without it and releases again
(release_ended, asked of every ended run the engine reconciles: all of them as it starts).

`status.logRef` names the pod whose log holds the run's result or failure (the MPI launcher or rank 0;
the pod on the node at fault when the result pod's log says nothing): the Job's failureLog names it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from pydantic import ValidationError

from nvcre_tui.engine.api.bodies import WorkloadRunStatus, conditions_of, labels_of, pod_spec, pod_status, run_spec, run_status
from nvcre_tui.engine.api.fit import room_view
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import (DECIDED_WITHOUT_LOG, DRA_GROUP, DRA_VERSIONS, FABRIC_NOT_RENDERED, FAILED, INVALID_SPEC, JOB_NOT_SYNCED, KEY_COMPLETION_INDEX,
                                             JOBSET_NOT_RECONCILED, NO_JOB_CONTROLLER_SECONDS, NOT_RECONCILED,
                                             TRAINJOB_NOT_RECONCILED,
                                             LABEL_JOB, LABEL_ROLE, LABEL_SIMULATED, NAMESPACE_TERMINATING, NODE_NOT_FOUND, RELEASED, RELEASED_REASON,
                                             RUN_QUEUED, SIMULATED,
                                             SUCCEEDED, TRAINER_API_VERSION, TRAINER_GROUP, TRAINER_SERVED, WORKLOAD_NOT_CREATED, WORKLOAD_NOT_STARTED)
from nvcre_tui.engine.clock import Clock, format_time, parse_time
from nvcre_tui.engine.controllers.conditions import BATCH_FALLBACK, HOW_RUN, find, is_terminal, is_true, with_condition
from nvcre_tui.engine.judging.blame import node_at_fault
from nvcre_tui.engine.kube.podlogs import MAX_PODS, PodLogReader, by_time
from nvcre_tui.engine.planning.platform import PlatformError
from nvcre_tui.engine.runners.base import NAMESPACE_PROBE_SECONDS, stopped_status
from nvcre_tui.engine.runners.kubernetes.create import (CLAIM_TEMPLATES, COMPUTE_DOMAIN, TRAINJOB, ForeignObject, create_all, delete_owned,
                                                       group_nodes, kind_for, owner_of, placement, workload_kind)
from nvcre_tui.engine.runners.kubernetes.jobset import jobset_of, jobset_reconciled
from nvcre_tui.engine.runners.kubernetes.keys import ssh_key_pair
from nvcre_tui.engine.runners.kubernetes.managed import dispatch_refusal, foreign_manager
from nvcre_tui.engine.runners.kubernetes.pods import Verdict, is_result_pod, judge, no_pods_yet, not_ready_nodes, pod_hosts, pod_node
from nvcre_tui.engine.runners.kubernetes.watch import PodWatch, pod_cache
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import Conflict, Forbidden, Invalid, NamespaceTerminating, NotFound, StoreError, Unauthorized
from nvcre_tui.engine.store.protocol import BATCH_JOB, NODE, POD, WORKLOADRUN, ResourceKind, ResourceStore
from nvcre_tui.engine.units import format_duration, listed
from nvcre_tui.engine.workloads import WorkloadError, fabric_outcome, kept_object_names, workload_name, workload_object_names
from nvcre_tui.engine.workloads.container import CONTAINER, channel_claims, device_claims
from nvcre_tui.engine.workloads.lookup import JOBSET_GROUP_VERSION, trainer_served
from nvcre_tui.engine.workloads.placement import hostnames_of, label_value

Obj = dict[str, Any]
FINISHED = (SUCCEEDED, FAILED)
POLL_SECONDS = 60.0  # resync of a running run: events wake it; this only covers an event never delivered
OCCUPANT_READS = 8  # pod lists at once (_bound_to: one a node up to this many nodes, past it one of the whole cluster's)
# The pods that hold a node's room, as the API server selects them: a list of the whole cluster's (_bound_to, past
# OCCUPANT_READS nodes) leaves out the finished Job pods a shared cluster keeps by the thousand.
UNFINISHED_PODS = f"status.phase!={SUCCEEDED},status.phase!={FAILED}"
VERSION_SECONDS = 300.0  # how long the server's version, as read, is rendered for: an upgrade takes minutes itself
SIMULATED_RUN = ("started by the simulated fleet (--sim-runner): no pod of it exists, and only that fleet makes its output; "
                 "run the certification again, all with or all without --sim-runner")

# What the run's BatchFallback condition (controllers/conditions.HOW_RUN) says: True, the fallback; False, a TrainJob.
FALLBACK_MESSAGE = ("Kubeflow Trainer (trainer.kubeflow.org/v1alpha1 TrainJob, TrainingRuntime) is not served: "
                    "ran as a batch/v1 Indexed Job with a headless Service")
TRAINJOB_MESSAGE = "Kubeflow Trainer is served: ran as a trainer.kubeflow.org/v1alpha1 TrainJob with its own TrainingRuntime"
# A run recorded as a TrainJob (its BatchFallback False, written before anything is made) whose Trainer was removed before
# its objects were: failed, not switched to the fallback, which would leave one certification run in two shapes unsaid.
TRAINER_GONE_MESSAGE = (f"Kubeflow Trainer's API ({TRAINER_API_VERSION} TrainJob, TrainingRuntime) is no longer served: this "
                        "run was recorded as a TrainJob before the Trainer was removed; run the certification again (new runs "
                        "use the batch fallback), or reinstall Kubeflow Trainer")

# What the fallback needs of the server, by framework (None: every run): the result pod is found by the pod label
# batch.kubernetes.io/job-completion-index (set from 1.28); an MPI launcher's success ends its workers through Job
# successPolicy (GA in 1.33, on by default from 1.31; older servers drop the field and the workers never finish).
FALLBACK_NEEDS: tuple[tuple[str | None, tuple[int, int], str], ...] = (
    (None, (1, 28), "the pod label batch.kubernetes.io/job-completion-index"),
    ("mpi", (1, 31), "batch/v1 Job successPolicy"),
)

# The Trainer's TrainJob webhook looks the runtimeRef up in its controller's cache: a TrainingRuntime created a moment
# before may not be there yet, and the TrainJob is refused (403) with this text. Tried again for a while, then failed.
RUNTIME_NOT_CACHED = "must be created before the TrainJob"
RACE_RETRY_SECONDS = 2.0
RACE_PATIENCE_SECONDS = 60.0
# The Job controller (kube-controller-manager) writes a batch Job's status.startTime as it first syncs it, seconds after
# its create (or its admission by a queue). A Job with none NO_JOB_CONTROLLER_SECONDS after, and no pod of it, has no
# Job controller: an API server alone. Its run fails then, saying so, rather than after the whole scheduling grace
# (300 s) of waiting "for the Job controller" that the engine could already tell will never come; until then its
# reason is JOB_NOT_SYNCED, which bounds the Job's wait (and its message) to that minute. Likewise a TrainJob: the
# Trainer's controller makes its JobSet on its first reconcile; one with no JobSet and no status that long after has no
# Trainer controller (TRAINJOB_NOT_RECONCILED until then); and its JobSet: JobSet's controller writes its status and
# makes its Jobs on its first reconcile; one with neither that long after the Trainer made it (not after the TrainJob:
# a busy Trainer's seconds are not JobSet's) has no JobSet controller (JOBSET_NOT_RECONCILED).

__all__ = ["KubernetesRunner", "NAMESPACE_PROBE_SECONDS"]


class KubernetesRunner:
    """Executes WorkloadRuns as pods on the cluster (the Runner protocol of runners/base.py)."""

    simulated = False

    def __init__(self, store: ResourceStore, clock: Clock, kube: Any, *, poll: float = POLL_SECONDS,
                 trainer: bool | None = None, namespace: str | None = None) -> None:
        """`store`: where the engine reads and writes; `kube`: the KubeStore (discovery, the pod watch, pod logs);
        `namespace`: the one namespace whose pods it watches (a viewer's logs), else every one (an engine)."""
        self.store, self.clock, self.kube, self.poll = store, clock, kube, poll
        self._trainer = trainer
        self._version: tuple[int, int] | None = None  # the server's (major, minor) as last read (None: it does not say)
        self._version_read_at: float | None = None  # when (clock.monotonic), None: never
        self._compute_domains = False  # ComputeDomains seen served (a miss is asked again: the driver may come)
        self._jobsets = False  # JobSets seen served (likewise)
        self._dra_version: str | None = None  # the newest resource.k8s.io version seen serving ResourceClaimTemplates (likewise)
        self._kept = False  # whether release has asked which of a run's kept kinds (the two above) are served
        self.log_reader = PodLogReader.of_store(kube, clock=clock)
        self.pods = PodWatch(pod_cache(kube, namespace))
        self._nodes: WatchCache | None = None  # the engine's cache (Nodes), once connected
        # run uid -> its result pod as last seen (its log outlives it), the latest MAX_PODS only, as the logs kept
        self._result_pods: OrderedDict[str, Obj] = OrderedDict()
        # namespace -> (when it was last asked, the answer: being terminated), for _namespace_closing
        self._probed: dict[str, tuple[float, bool]] = {}
        self._refused_since: dict[str, float] = {}  # run uid -> when a webhook first refused its TrainJob (RUNTIME_NOT_CACHED)
        # uids of ended runs released by this runner, the latest MAX_PODS: the event of a run's end (written before its
        # Released condition) reaches the engine after the release, and is not to release it again
        self._released: OrderedDict[str, None] = OrderedDict()
        # run uid -> (when read, clock.monotonic; member -> the pods bound there): who holds a waiting run's room, said
        # again for `poll` (_occupants), not listed again at each look at it
        self._occupied: dict[str, tuple[float, dict[str, list[Obj]]]] = {}

    def connect(self, wake: Callable[[Hashable], None], cache: WatchCache | None = None) -> None:
        """Let pod events (and Node events, from the engine's `cache`) wake runs through `wake` (the
        engine's work queue `add`); Nodes are then read from that cache instead of one GET each."""
        self._nodes = cache
        self.pods.connect(wake, cache)

    async def close(self) -> None:
        """End the pod watch."""
        await self.pods.stop()

    async def trainer(self) -> bool:
        """Whether Kubeflow Trainer's TrainJob / TrainingRuntime are served (else the batch fallback)."""
        if self._trainer is None:
            served = await self.kube.served_resources(TRAINER_API_VERSION)
            self._trainer = trainer_served(r.get("name", "") for r in served or [])
        return self._trainer

    async def _shape(self, run: Obj) -> bool:
        """Whether `run` is (to be) a TrainJob: the shape it records (made_as_trainjob), else what is served now."""
        recorded = made_as_trainjob(run)
        return await self.trainer() if recorded is None else recorded

    @staticmethod
    def _workload_kinds(run: Obj) -> list[ResourceKind]:
        """The kinds `run`'s workload may be: the one its recorded shape says, else either (a start refused before the
        shape was recorded, by an nvcre that did not record it)."""
        recorded = made_as_trainjob(run)
        return [TRAINJOB, BATCH_JOB] if recorded is None else [workload_kind(recorded)]

    async def _record_shape(self, run: Obj, trainer: bool) -> Obj | None:
        """`run` with the shape it is about to be made in recorded (its BatchFallback condition, True or False), written
        before its first object is made: an engine started later, whatever it finds served, follows and deletes what was
        made. None when the run changed meanwhile (the write refused)."""
        if find(conditions_of(run), BATCH_FALLBACK) is not None:
            return run  # recorded by an earlier try (trainer is then what it says: _shape)
        conditions = with_condition(conditions_of(run), BATCH_FALLBACK, not trainer,
                                    TRAINER_SERVED if trainer else HOW_RUN[BATCH_FALLBACK],
                                    TRAINJOB_MESSAGE if trainer else FALLBACK_MESSAGE, format_time(self.clock.now()))
        return await self._patch(run, {"conditions": conditions})

    def _not_served(self, error: NotFound) -> str:
        """Why a create answered 404 fails its run: the Trainer's kinds gone (asked afresh for the next run), else the
        server's word (a namespace deleted meanwhile)."""
        if error.resource is not None and error.resource[0] == TRAINER_GROUP:
            self._trainer = None
            return TRAINER_GONE_MESSAGE
        return str(error)

    async def compute_domain_refusal(self, spec: WorkloadRunSpec) -> str | None:
        """Why this cluster cannot give `spec` its multi-node NVLink channel (no ComputeDomain served), or None."""
        if not channel_claims(spec) or self._compute_domains:
            return None
        served = await self.kube.served_resources(COMPUTE_DOMAIN.api_version)
        self._compute_domains = any(r.get("name") == COMPUTE_DOMAIN.plural for r in served or [])
        if self._compute_domains:
            return None
        return (f"this run needs a ComputeDomain ({COMPUTE_DOMAIN.api_version}) for multi-node NVLink (MNNVL on "
                f"GB200/GB300) and the cluster does not serve it: install NVIDIA's DRA driver for GPUs, or set "
                f"enableMNNVL: false")

    async def dra_version(self, spec: WorkloadRunSpec) -> tuple[str, str | None]:
        """The resource.k8s.io version to write the run's own ResourceClaimTemplates in (catalog/_workloads/claims.yaml:
        AWS GB300's RoCE NICs), the newest the server serves them in; and why the run cannot have them, or None."""
        wanted = device_claims(spec)
        if not wanted or self._dra_version:
            return self._dra_version or DRA_VERSIONS[0], None
        for template in CLAIM_TEMPLATES:
            served = await self.kube.served_resources(template.api_version)
            if any(r.get("name") == template.plural for r in served or []):
                self._dra_version = template.version
                return template.version, None
        return DRA_VERSIONS[0], (f"this run's claim {', '.join(wanted)} takes a DRA ResourceClaimTemplate and the cluster serves none "
                                 f"({DRA_GROUP} {', '.join(DRA_VERSIONS)}: Kubernetes 1.34 serves v1, 1.33 v1beta2, 1.32 v1beta1 "
                                 "with DRA enabled): upgrade, or enable DRA")

    async def trainer_refusal(self) -> str | None:
        """Why no TrainJob would ever get pods here (the Trainer's kinds served, JobSet's not: the Trainer makes a
        JobSet per TrainJob and JobSet's controller makes the pods), or None. Told at once, not after the grace."""
        if self._jobsets:
            return None
        served = await self.kube.served_resources(JOBSET_GROUP_VERSION)
        self._jobsets = any(r.get("name") == "jobsets" for r in served or [])
        if self._jobsets:
            return None
        return (f"Kubeflow Trainer's TrainJob is served but JobSet ({JOBSET_GROUP_VERSION}) is not: the Trainer makes a "
                "JobSet of each TrainJob and JobSet's controller makes its pods, so none would run; install JobSet, which "
                "the Trainer needs (`nvcre setup status` checks it)")

    async def server_version(self) -> tuple[int, int] | None:
        """The API server's (major, minor), read from /version at most once every VERSION_SECONDS; None when it does
        not say. Read again after that: a control plane upgraded under a long-running engine (1.28 -> 1.29 serves
        native sidecars; 1.31 Job successPolicy) is rendered for within that bound, not for the version it started on."""
        now = self.clock.monotonic()
        if self._version_read_at is None or now - self._version_read_at >= VERSION_SECONDS:
            self._version, self._version_read_at = await self.kube.server_version(), now
        return self._version

    async def fallback_refusal(self, spec: WorkloadRunSpec) -> str | None:
        """Why this server cannot run `spec` on the batch fallback (too old for what it needs), or None."""
        version = await self.server_version()
        if version is None:
            return None  # a server that does not say: tried as it is
        for framework, least, feature in FALLBACK_NEEDS:
            if framework in (None, spec.framework.kind) and version < least:
                return (f"Kubeflow Trainer is not installed and the batch fallback needs {feature}, from Kubernetes "
                        f"{least[0]}.{least[1]} on; this server is {version[0]}.{version[1]}: install Kubeflow Trainer or upgrade")
        return None

    # ----------------------------------------------------------------------- lifecycle

    async def reconcile_run(self, run: Obj) -> float | None:
        state = run_status(run)
        if state.get("phase") in FINISHED:
            return None
        try:
            spec = WorkloadRunSpec.model_validate(run["spec"])
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            await self._patch(run, self._failed(INVALID_SPEC, f"spec.{where}: {first['msg']}"))
            return None
        members = list((spec.target.node_names if spec.target else None) or [])
        if not members:
            await self._patch(run, self._failed(INVALID_SPEC, "spec.target.nodeNames is empty: the run needs its nodes"))
            return None
        if state.get("phase") in ("Scheduling", "Running") and is_true(run, SIMULATED):
            # The simulated fleet started it (--sim-runner): no pod of it exists, and its output only that fleet makes.
            await self._patch(run, self._failed(WORKLOAD_NOT_CREATED, SIMULATED_RUN))
            return None
        owner = await owner_of(self.store, run)
        trainer = await self._shape(run)
        if state.get("phase") not in ("Scheduling", "Running"):
            started = await self._start(run, spec, owner, members, trainer)
            if started is None or isinstance(started, float):
                return started
            run, state = started, started["status"]
        pods = await self._pods_of(run, owner, members)
        nodes = [await self._node(name) for name in members]
        launcher = trainer and spec.framework.kind == "mpi"
        # and those Kubernetes took from it (a NoExecute taint, a drain), gone now: why they went is known from them alone
        taken = self.pods.taken(run["metadata"].get("namespace") or "default", label_value(owner["metadata"]["name"]))
        expected = spec.num_nodes + (1 if launcher else 0)
        judged = partial(judge, [*pods, *taken], members, expected, launcher=launcher, was_running=state.get("phase") == "Running",
                         not_ready=not_ready_nodes(nodes, members), trainer=bool(trainer), nodes=dict(zip(members, nodes, strict=True)))
        verdict = judged()
        if verdict.reason == "Unschedulable" and not verdict.blocked:  # waiting for room other pods hold: named
            placed = {pod_node(pod) for pod in pods}
            if occupants := await self._occupants(run, [node for node in members if node not in placed], pods):
                verdict = judged(occupants=occupants)
        result = next((pod for pod in pods if is_result_pod(pod, launcher)), None)
        if result is not None:
            self._remember(run, result)
        look = self.poll
        if verdict.phase == "Scheduling" and not pods:
            verdict = await self._held(run, owner, trainer, expected) or verdict
            if verdict.reason in NOT_RECONCILED:  # looked at again as the Job controller's (Trainer's, JobSet's) minute ends
                left = NO_JOB_CONTROLLER_SECONDS - self._controller_waited(state, verdict.reason, verdict.since)
                look = min(look, max(1.0, left))
        live = [pod for pod in pods if not pod["metadata"].get("deletionTimestamp")]
        if verdict.phase == "Scheduling" and len(live) < expected:
            verdict = await self._namespace_closing(run) or verdict  # its pods can never all be made there
        if verdict.phase in FINISHED:
            await self._finish(run, verdict, pods, nodes, members, owner, result)
            self.pods.forget(run)
            return None
        patch = _progress(state, verdict, format_time(self.clock.now()))
        if patch and result is not None and state.get("logRef") != result["metadata"]["name"]:  # rides on a write
            patch["logRef"] = result["metadata"]["name"]
        if patch:
            await self._patch(run, patch)
        return look

    async def _namespace_closing(self, run: Obj) -> Verdict | None:
        """Failed when the run's namespace is being terminated (namespace_closing, asked with the run itself): its
        controllers are refused every pod they still make, and a server without a namespace controller never empties
        it: the run waited its whole timeoutPerJob saying only "4/5 pod(s) running"; else None."""
        if await self.namespace_closing(WORKLOADRUN, run):  # its own reason: the Workflow and the Certification name it
            namespace = run["metadata"].get("namespace") or "default"
            return Verdict(FAILED, NAMESPACE_TERMINATING, f"namespace {namespace} is being terminated: it admits none of the "
                                                         "run's pods not made yet (403 NamespaceTerminating)")
        return None

    async def namespace_closing(self, kind: ResourceKind, probe: Obj) -> bool:
        """Whether `probe`'s namespace is being terminated, asked as the engine may ask it (it may not read
        Namespaces): a dry-run create of `probe`, which NamespaceLifecycle refuses there (403, cause
        NamespaceTerminating) before its name is found taken. Asked once every NAMESPACE_PROBE_SECONDS a namespace,
        not a run (thousands of runs, or held categories, wait in one namespace while a fleet starts or a queue holds
        them); the answer holds for every asker meanwhile."""
        namespace, now = probe["metadata"].get("namespace") or "default", self.clock.monotonic()
        asked = self._probed.get(namespace)
        if asked is None or now - asked[0] >= NAMESPACE_PROBE_SECONDS:
            asked = (now, await self._refused_there(kind, probe, namespace))
            self._probed[namespace] = asked
        return asked[1]

    async def _refused_there(self, kind: ResourceKind, obj: Obj, namespace: str) -> bool:
        """Whether `namespace` refuses new objects because it is being terminated: a dry-run create of `obj`."""
        probe = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                 "metadata": {"name": obj["metadata"]["name"], "namespace": namespace}, "spec": obj.get("spec")}
        try:
            await self.kube.create(kind, probe, dry_run=True)
        except NamespaceTerminating:
            return True
        except StoreError:  # AlreadyExists: the namespace admits new objects; anything else is not this question's
            pass
        return False

    async def _held(self, run: Obj, owner: Obj, trainer: bool, expected: int) -> Verdict | None:
        """Why a workload made no pods, from the workload itself: suspended (a queue such as Kueue admits it: no
        stall, timeoutPerJob bounds it), or failed before making any (the Trainer refused its runtime), or not yet
        (or never) taken up by its controller (a batch Job no Job controller synced, a TrainJob no Trainer
        reconciled, its JobSet no JobSet controller reconciled: failed NO_JOB_CONTROLLER_SECONDS after it was made or
        admitted), or handed to another controller (spec.managedBy: waiting for that one, of its `expected` pods); else None."""
        kind = workload_kind(trainer)
        try:
            workload = await self.store.get(kind, workload_name(owner["metadata"]["name"]), run["metadata"].get("namespace") or "default")
        except (NotFound, Forbidden):
            return None
        what = f"{kind.kind} {workload['metadata']['name']}"
        # A TrainJob's and a batch Job's failure condition, both spelt as ours: "Failed"
        failed = next((c for c in conditions_of(workload) if c.get("type") == FAILED and c.get("status") == "True"), None)
        if failed is not None:
            return Verdict(FAILED, WORKLOAD_NOT_CREATED, f"{what} failed before making pods: {failed.get('reason') or FAILED}"
                           + (f": {failed['message']}" if failed.get("message") else ""))
        if (dispatched := dispatch_refusal(workload)) is not None:  # made by an nvcre that did not look
            return Verdict(FAILED, WORKLOAD_NOT_CREATED, dispatched)
        if (workload.get("spec") or {}).get("suspend") is True:
            return Verdict("Scheduling", RUN_QUEUED, f"{what} is suspended (spec.suspend): waiting for a queue such as Kueue to admit it")
        if (manager := foreign_manager(workload)) is not None:
            # another controller runs it: its own's silence says nothing, and it is not what the run waits for; the
            # pods' grace bounds the wait
            return no_pods_yet(expected, f"{manager} (the spec.managedBy of {what})")
        state = run_status(run)
        waited = self._controller_waited(state, JOB_NOT_SYNCED if not trainer else TRAINJOB_NOT_RECONCILED)
        if not trainer and not (workload.get("status") or {}).get("startTime"):
            if waited >= NO_JOB_CONTROLLER_SECONDS:
                return Verdict(FAILED, WORKLOAD_NOT_STARTED,
                               f"{what} made no pods and no Job controller has synced it in {format_duration(waited)} (no "
                               "status.startTime): kube-controller-manager does not run on this cluster (an API server "
                               "alone), so none of its pods would ever be made")
            return Verdict("Scheduling", JOB_NOT_SYNCED, "no pods yet: no Job controller has synced its batch Job yet (no status.startTime)")  # one wording for every group: run --wait says them in one line
        if not trainer or (workload.get("status") or {}).get("jobsStatus"):  # jobsStatus: its JobSet's, reported
            return None
        # The Trainer's controller, on its first reconcile of a TrainJob, makes its JobSet; its status may stay empty
        # until that JobSet reports (an empty object the server defaulted is none)
        made, jobset = await jobset_of(self.store, workload)
        if not made and not any((workload.get("status") or {}).values()):
            if waited >= NO_JOB_CONTROLLER_SECONDS:
                return Verdict(FAILED, WORKLOAD_NOT_STARTED,
                               f"{what} made no pods and no Kubeflow Trainer controller has reconciled it in "
                               f"{format_duration(waited)} (no JobSet made): the Trainer controller does not run on this "
                               "cluster (an API server alone, or the Trainer's CRDs without its controller), so none "
                               "of its pods would ever be made")
            return Verdict("Scheduling", TRAINJOB_NOT_RECONCILED,
                           "no pods yet: no Kubeflow Trainer controller has reconciled its TrainJob yet (no JobSet made)")
        # JobSet's controller, on its first reconcile of a JobSet, writes its replicatedJobsStatus and makes its Jobs
        if jobset is not None and not await jobset_reconciled(self.store, jobset):
            begun = jobset_wait_began(state, jobset, self.clock.now())
            waited = self._controller_waited(state, JOBSET_NOT_RECONCILED, begun)
            if waited >= NO_JOB_CONTROLLER_SECONDS:
                return Verdict(FAILED, WORKLOAD_NOT_STARTED,
                               f"JobSet {jobset['metadata']['name']} (of {what}) made no Jobs and no JobSet controller has "
                               f"reconciled it in {format_duration(waited)} (no status, no child Job): JobSet's controller "
                               "does not run on this cluster (JobSet's CRD without its controller), so none of its pods "
                               "would ever be made; install JobSet's controller, which the Trainer needs")
            return Verdict("Scheduling", JOBSET_NOT_RECONCILED,
                           "no pods yet: no JobSet controller has reconciled its TrainJob's JobSet yet (no status, no child Job)", since=begun)
        return None

    def _controller_waited(self, state: WorkloadRunStatus, reason: str, since: str | None = None) -> float:
        """Seconds the controller a run's `reason` (NOT_RECONCILED) waits on has had: at the look that starts its minute
        afresh (_minute_starts: pendingSince, reset as that look's verdict is written, is still the queue's or the
        Trainer's), those since `since` (when its JobSet was made), else none; after it, since pendingSince."""
        if not _minute_starts(state.get("reason"), reason):
            return self._waited(state)
        return self._waited({"pendingSince": since}) if since else 0.0

    def _waited(self, state: WorkloadRunStatus) -> float:
        """Seconds since the run's workload was made (or admitted by its queue): its status.pendingSince; 0 without."""
        since = state.get("pendingSince")
        try:
            return max(0.0, (self.clock.now() - parse_time(str(since))).total_seconds()) if since else 0.0
        except ValueError:
            return 0.0

    async def _start(self, run: Obj, spec: WorkloadRunSpec, owner: Obj, members: list[str], trainer: bool) -> Obj | float | None:
        """Create the workload and mark the run Scheduling; None when it failed or changed meanwhile, seconds when
        it is to be tried again (a webhook that has not seen the TrainingRuntime yet)."""
        nodes = [node for node in await group_nodes(self.store, members)]
        missing = sorted(set(members) - {n["metadata"]["name"] for n in nodes})
        if missing:
            await self._patch(run, {**self._failed(NODE_NOT_FOUND, f"no Node {', '.join(missing)} on the cluster"), "blockedNodes": missing})
            return None
        simulated = sorted(n["metadata"]["name"] for n in nodes if labels_of(n).get(LABEL_SIMULATED) == "true")
        if simulated:  # no kubelet runs their pods: waiting for them would only end in WorkloadNotStarted, minutes later
            await self._patch(run, self._failed(WORKLOAD_NOT_CREATED, f"Node {listed(simulated)} is a simulated Node (--sim-runner "
                                                f"registered it, {LABEL_SIMULATED}=true): no kubelet runs pods on it; run with "
                                                "--sim-runner, or target real GPU nodes"))
            return None
        try:
            where = placement(owner, nodes, spec, await self.server_version())  # a fabric's sidecar needs 1.29
            dra, dra_refusal = await self.dra_version(spec)
            refusal = (await self.compute_domain_refusal(spec) or dra_refusal
                       or await (self.trainer_refusal() if trainer else self.fallback_refusal(spec)))
            if refusal:
                raise WorkloadError(refusal)
            keys = await ssh_key_pair() if not trainer and spec.framework.kind == "mpi" else None
            if (recorded := await self._record_shape(run, trainer)) is None:
                return None  # changed meanwhile: the next look decides again
            run = recorded
            try:
                created = await create_all(self.store, spec, where, trainer=trainer, ssh_keys=keys, dra_version=dra)
            except NotFound as error:  # a kind no longer served (404): the Trainer removed since the shape was recorded
                raise WorkloadError(self._not_served(error)) from None
            if (dispatched := dispatch_refusal(created[-1])) is not None:  # as the webhooks left it: MultiKueue's
                raise WorkloadError(dispatched)
        except Unauthorized:
            raise  # the engine's credentials refused (401), not this workload: the engine retries it with backoff
        except (WorkloadError, ForeignObject, PlatformError, Invalid, Forbidden) as error:
            # Invalid: the server refused it (422); Forbidden: an admission webhook denied it, or RBAC below `setup init`
            uid = str(run["metadata"].get("uid") or "")
            if isinstance(error, Forbidden) and RUNTIME_NOT_CACHED in str(error):
                first = self._refused_since.setdefault(uid, self.clock.monotonic())
                if self.clock.monotonic() - first < RACE_PATIENCE_SECONDS:
                    return RACE_RETRY_SECONDS
            self._refused_since.pop(uid, None)
            reason = NAMESPACE_TERMINATING if isinstance(error, NamespaceTerminating) else WORKLOAD_NOT_CREATED
            if (failed := await self._patch(run, self._failed(reason, str(error)))) is not None:
                # What was made before the refused object (its TrainingRuntime, Service, ComputeDomain) goes with the run,
                # not with the certification; its ConfigMaps and ssh-key Secret stay for a garbage collector (_run_objects)
                await self._release_ended(failed, owner)
            return None
        self._refused_since.pop(str(run["metadata"].get("uid") or ""), None)
        shape = "TrainJob" if trainer else "batch Job (Kubeflow Trainer not installed)"
        now = format_time(self.clock.now())
        patch: Obj = {"phase": "Scheduling", "pendingSince": now, "nodes": members,
                      "message": f"{shape} {created[-1]['metadata']['name']} created; waiting for its pods"}
        conditions: list[Obj] = [dict(c) for c in conditions_of(run)]
        if (fabric := fabric_outcome(spec, where)) is not None and fabric.note is not None:
            await self._fabric_event(run, fabric.note)
            # a note on its result, whatever it is (the Job carries it to the report and the console)
            conditions = with_condition(conditions, FABRIC_NOT_RENDERED, True, FABRIC_NOT_RENDERED, fabric.note, now)
        if conditions != [dict(c) for c in conditions_of(run)]:
            patch["conditions"] = conditions
        return await self._patch(run, patch)

    async def _finish(self, run: Obj, verdict: Verdict, pods: list[Obj], nodes: list[Obj | None], members: list[str],
                      owner: Obj, result: Obj | None) -> None:
        now = format_time(self.clock.now())
        patch: Obj = {"phase": verdict.phase, "reason": verdict.reason, "message": verdict.message,
                      "completionTime": verdict.completion_time or now}
        if verdict.exit_code is not None:
            patch["exitCode"] = verdict.exit_code
        if result is not None:
            patch["logRef"] = result["metadata"]["name"]
        if verdict.phase == FAILED:
            # read (and kept) before the pods go; required where the Job is to judge the run by it (every read here)
            required = verdict.reason not in DECIDED_WITHOUT_LOG
            lines = await self.logs(run, required=required)
            hosts = pod_hosts(pods, hostnames_of([n for n in nodes if n]))
            named = node_at_fault(lines, members, hosts)
            culprit = named.name if named else verdict.failed_node
            if culprit:
                patch["failedNode"] = culprit
            if culprit and not await self._own_log(run, required=required):
                # The result pod's log says nothing (it never started, or was lost): the failure is in the
                # log of the pod on the node at fault; read it now, before the pods are deleted.
                blamed = next((pod for pod in pods if pod_node(pod) == culprit), None)
                if blamed is not None and (await self.log_reader.read(blamed, _container(blamed), required=required)
                                           or termination_messages(blamed)):
                    patch["logRef"] = blamed["metadata"]["name"]
                    self._remember(run, blamed)
        if (ended := await self._patch(run, patch)) is not None:
            await self._release_ended(ended, owner)  # passed or failed: its nodes' IMEX daemons go with its ComputeDomain

    async def stop(self, run: Obj) -> None:
        """Abandon the run (timeout, hardware failure, scheduling block): Failed/Stopped, pods deleted."""
        meta = run["metadata"]
        try:
            current = await self.store.get(WORKLOADRUN, meta["name"], meta.get("namespace"))
        except NotFound:
            return
        owner = await owner_of(self.store, current)
        if run_status(current).get("phase") not in FINISHED:
            # Kept for viewers (`certification logs`, the log pane): the Job's verdict is made. Not required: a kubelet
            # that no longer answers (the hung node's) held the stop, and the group's GPUs, for READ_PATIENCE_SECONDS.
            await self.logs(current, required=False)
            pod = await self.result_pod(current)
            patch = stopped_status(run_status(current).get("phase"), format_time(self.clock.now()))
            if pod is not None:
                patch["logRef"] = pod["metadata"]["name"]
            current = await self._patch(current, patch) or current  # changed meanwhile: released all the same
        self.pods.forget(current)
        await self._give_back(current, owner)
        if run_status(current).get("phase") in FINISHED and _holds(current):
            await self._mark_released(current)

    async def tick(self) -> float | None:
        return None

    async def release(self, owner: Obj) -> None:
        """Delete every object made for the run of nvcre Job `owner` (or a standalone WorkloadRun), for an API server
        with no garbage collector (_run_objects: its workload of either kind, TrainingRuntime, Service, ComputeDomain
        and ResourceClaimTemplates), each only when it names `owner` among its owners."""
        await self._delete_owned(owner, await self._run_objects(owner, [TRAINJOB, BATCH_JOB], workload=True, dra=True))

    async def _run_objects(self, owner: Obj, workload_kinds: list[ResourceKind], *, workload: bool,
                           dra: bool) -> list[tuple[ResourceKind, str]]:
        """The one list of what the runner makes for the run of nvcre Job `owner` (or a standalone WorkloadRun) that the
        engine may delete, as (kind, name), the pods' owner first. When `workload`: its workload (of `workload_kinds`,
        the shape the run records, else either), TrainingRuntime and Service (workloads.workload_object_names); when
        `dra`: its ComputeDomain and ResourceClaimTemplates (workloads.kept_object_names) of the kinds the server
        serves. Not its ConfigMaps and ssh-key Secret: the engine may not delete those kinds (other namespaces keep
        credentials in them); a garbage collector (or `certification delete`) does."""
        meta = owner["metadata"]
        found: list[tuple[ResourceKind, str]] = []
        if workload:
            for api_version, kind_name, name in workload_object_names(meta["name"]):
                kind = kind_for({"apiVersion": api_version, "kind": kind_name})
                if kind not in (TRAINJOB, BATCH_JOB) or kind in workload_kinds:
                    found.append((kind, name))
        if dra:
            served = {kind.kind: kind for kind in await self._kept_kinds()}
            found += [(served[kind_name], name) for kind_name, name in kept_object_names(meta["name"], str(meta.get("uid") or ""))
                      if kind_name in served]
        return found

    async def _delete_owned(self, owner: Obj, objects: list[tuple[ResourceKind, str]]) -> None:
        """Delete each of `objects` that names `owner` among its owners, by its uid; idempotent (one gone is no error)."""
        meta = owner["metadata"]
        namespace, uid = meta.get("namespace") or "default", str(meta.get("uid") or "")
        for kind, name in objects:
            await delete_owned(self.store, kind, name, namespace, uid)

    async def _give_back(self, run: Obj, owner: Obj) -> None:
        """Delete what ended (or stopped) `run` of nvcre Job `owner` owns (_run_objects): a run that did not pass, all of
        it (the garbage collector deletes its pods: the GPUs are free; what a refused start made goes too); any run, its
        DRA objects (a ComputeDomain's IMEX daemons hold its nodes). A passed run's workload stays, its pods for their
        logs. Nothing asked of a run that claims no DRA device about DRA objects."""
        failed = run_status(run).get("phase") != SUCCEEDED
        await self._delete_owned(owner, await self._run_objects(owner, self._workload_kinds(run), workload=failed,
                                                                dra=bool(run_spec(run).get("resourceClaims"))))

    async def release_ended(self, run: Obj) -> None:
        """Release what ended `run` still holds when no Released condition says it was (runners/base.EndedRelease): an
        engine that wrote the run's end and died, restarted or lost its Lease before the deletions (or met an API error
        in them) left its workload's pods or its ComputeDomain held until the Certification was deleted. A failed run's
        log is read first (its Job keeps the tail), as at its end. Nothing asked of a run that held nothing."""
        uid = str(run["metadata"].get("uid") or "")
        if not _holds(run) or uid in self._released or find(conditions_of(run), RELEASED) is not None:
            return
        owner = await owner_of(self.store, run)
        if run_status(run).get("phase") != SUCCEEDED:
            # Required (retried while the server fails it) only while its Job is still to judge the run by it; a Job with
            # its verdict has its tail, and a kubelet that no longer answers must not hold the GPUs for READ_PATIENCE_SECONDS
            await self.logs(run, required=owner is not run and not is_terminal(owner))
        await self._release_ended(run, owner)

    async def _release_ended(self, run: Obj, owner: Obj) -> None:
        """Give back what ended `run` (of nvcre Job `owner`) holds (_give_back), then say so (its Released condition)."""
        if not _holds(run):
            return  # passed, claiming nothing: its pods stay for their logs, and no condition is written
        await self._give_back(run, owner)
        await self._mark_released(run)

    async def _mark_released(self, run: Obj) -> None:
        """Write `run`'s Released condition (once), after its objects went; remembered here too, for the events of the
        writes before it."""
        uid = str(run["metadata"].get("uid") or "")
        self._released[uid] = None
        self._released.move_to_end(uid)
        while len(self._released) > MAX_PODS:
            self._released.popitem(last=False)
        if find(conditions_of(run), RELEASED) is None:
            conditions = with_condition(conditions_of(run), RELEASED, True, RELEASED_REASON,
                                        "what the run held on the cluster was given back", format_time(self.clock.now()))
            await self._patch(run, {"conditions": conditions})

    async def _kept_kinds(self) -> list[ResourceKind]:
        """The ComputeDomain kind, and ResourceClaimTemplate's in the newest version served (one version reads them
        all), where the server serves them. Asked once: a kind served later is seen served by the run that makes one
        (compute_domain_refusal, dra_version), so a miss leaves nothing of this runner's behind."""
        if not self._kept:
            served = await self.kube.served_resources(COMPUTE_DOMAIN.api_version)
            self._compute_domains = self._compute_domains or any(r.get("name") == COMPUTE_DOMAIN.plural for r in served or [])
            for template in CLAIM_TEMPLATES if self._dra_version is None else ():
                if any(r.get("name") == template.plural for r in await self.kube.served_resources(template.api_version) or []):
                    self._dra_version = template.version
                    break
            self._kept = True
        templates = [template for template in CLAIM_TEMPLATES if template.version == self._dra_version]
        return [*([COMPUTE_DOMAIN] if self._compute_domains else []), *templates]

    # ----------------------------------------------------------------------- output

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        """The result pod's log (launcher / index 0): read incrementally, bounded; what was kept once the
        pod is gone; else the containers' termination messages. A read the server fails raises its retryable error
        (the engine judges the run by this log: it looks again), unless not `required` (a viewer: what was kept)."""
        lines = await self._own_log(run, required=required)
        pod = await self.result_pod(run)
        last = None if pod is None else await self._last_rank_pod(run, pod)
        if last is not None:  # Megatron prints its step lines on the last global rank only: in the last node's pod
            lines = by_time(lines, await self.log_reader.read(last, _container(last), required=required))
        return lines

    async def _own_log(self, run: Obj, *, required: bool = True) -> list[str]:
        """The result pod's log alone, else its containers' termination messages."""
        pod = await self.result_pod(run)
        if pod is None:
            return []
        return await self.log_reader.read(pod, _container(pod), required=required) or termination_messages(pod)

    async def _last_rank_pod(self, run: Obj, result: Obj) -> Obj | None:
        """The last node's pod of a multi-node torch run (the result pod is rank 0's), else None."""
        spec = run_spec(run)
        nodes = int(spec.get("numNodes") or len((spec.get("target") or {}).get("nodeNames") or []) or 1)
        if nodes < 2 or not (spec.get("framework") or {}).get("torch"):
            return None
        owner = await owner_of(self.store, run)
        last = str(nodes - 1)
        return next((p for p in self.pods.pods(run["metadata"].get("namespace") or "default", label_value(owner["metadata"]["name"]))
                     if labels_of(p).get(LABEL_ROLE) == "node" and str(labels_of(p).get(KEY_COMPLETION_INDEX, "")) == last
                     and p["metadata"].get("uid") != result["metadata"].get("uid")), None)

    async def log_origin(self, run: Obj) -> tuple[str, str, str | None] | None:
        """(pod, container, node) of the log `logs` reads; None before the pod exists."""
        pod = await self.result_pod(run)
        return None if pod is None else (pod["metadata"]["name"], _container(pod), pod_spec(pod).get("nodeName"))

    async def result_pod(self, run: Obj) -> Obj | None:
        """The pod whose log carries the result (or the one `status.logRef` names), as last seen in the pod
        cache (it outlives its deletion here)."""
        uid = run["metadata"].get("uid", "")
        pod = self._result_pods.get(uid)
        named = run_status(run).get("logRef")
        if pod is None or not pod_node(pod) or (named and pod["metadata"]["name"] != named):
            launcher = bool((run_spec(run).get("framework") or {}).get("mpi")) and await self._shape(run)
            await self.pods.start()
            owner = await owner_of(self.store, run)
            pods = self.pods.pods(run["metadata"].get("namespace") or "default", label_value(owner["metadata"]["name"]))
            found = next((p for p in pods if (p["metadata"]["name"] == named if named else is_result_pod(p, launcher))), None)
            if found is None:
                return pod
            pod = self._remember(run, found)
        return pod

    def _remember(self, run: Obj, pod: Obj) -> Obj:
        """Keep `pod` as the run's result pod; a long-lived engine keeps the latest MAX_PODS (their logs are kept as
        many: PodLogReader), not one pod object per run it ever saw."""
        uid = str(run["metadata"].get("uid", ""))
        self._result_pods[uid] = pod
        self._result_pods.move_to_end(uid)
        while len(self._result_pods) > MAX_PODS:
            self._result_pods.popitem(last=False)
        return pod

    # ----------------------------------------------------------------------- helpers

    async def _pods_of(self, run: Obj, owner: Obj, members: list[str]) -> list[Obj]:
        """The run's pods from the pod watch; the run is tracked so their events wake it."""
        await self.pods.start()
        label = label_value(owner["metadata"]["name"])
        self.pods.track(run, label, members)
        return self.pods.pods(run["metadata"].get("namespace") or "default", label)

    async def others_on(self, nodes: Sequence[str]) -> dict[str, list[Obj]]:
        """node -> the pods bound to it that nvcre did not make (no `nvcre.nvidia.com/job` label) and that have not
        finished (runners/base.NodeOccupants)."""
        return await self._bound_to(nodes, f"!{LABEL_JOB}")

    async def _occupants(self, run: Obj, members: Sequence[str], own: Sequence[Obj]) -> dict[str, list[Obj]]:
        """member -> the unfinished pods bound to it but the run's `own` (others' and another nvcre run's), for every one
        of `members`; {} when the server does not answer (the
        wait is said as the scheduler says it, and looked at again). Read once for `poll` seconds while the same members
        wait: each look at a waiting run (each pod event, each minute) listed them again, thousands of lists a minute
        where hundreds of runs wait (a second certification over the same nodes)."""
        uid, now = str(run["metadata"].get("uid", "")), self.clock.monotonic()
        for stale in [key for key, (read_at, _) in self._occupied.items() if now - read_at >= self.poll]:
            del self._occupied[stale]
        waiting = list(members)
        kept = self._occupied.get(uid)
        if kept is not None and sorted(kept[1]) == sorted(waiting):
            bound = kept[1]
        else:
            try:
                bound = await self._bound_to(waiting, None)
            except StoreError:
                return {}
            self._occupied[uid] = (now, bound)
        mine = {pod["metadata"].get("uid") for pod in own}
        return {node: [pod for pod in pods if pod["metadata"].get("uid") not in mine] for node, pods in bound.items()}

    async def _bound_to(self, nodes: Sequence[str], selector: str | None) -> dict[str, list[Obj]]:
        """node -> its unfinished pods matching the label `selector`, under the pods list `setup init` grants the engine:
        one list a node (spec.nodeName, the field kube-apiserver indexes pods by for the kubelets), read together, for up
        to OCCUPANT_READS nodes; for more, one list of the cluster's unfinished pods, split by node. A list a node was a
        thousand as a 1,000-node category's Workflow started, each of which an API server reading etcd reads every pod
        of the cluster for (a field selector filters after the read)."""
        found: dict[str, list[Obj]] = {}
        if len(nodes) > OCCUPANT_READS:
            found = {node: [] for node in nodes}

            def kept(pod: Obj) -> Obj | None:  # page by page: a target node's unfinished pod, what holds room of it
                return room_view(pod) if pod_node(pod) in found and pod_status(pod).get("phase") not in FINISHED else None

            for pod in (await self.kube.list(POD, None, selector, UNFINISHED_PODS, keep=kept)).items:
                found[str(pod_node(pod))].append(pod)
            return found
        limit = asyncio.Semaphore(OCCUPANT_READS)

        async def read(node: str) -> None:
            async with limit:
                answer = await self.kube.list(POD, None, selector, f"spec.nodeName={node}", keep=room_view)
            found[node] = [pod for pod in answer.items if pod_status(pod).get("phase") not in FINISHED]

        await asyncio.gather(*(read(node) for node in nodes))
        return found

    async def _node(self, name: str) -> Obj | None:
        if self._nodes is not None:
            return self._nodes.get(NODE, name)
        try:
            return await self.store.get(NODE, name)
        except NotFound:
            return None

    def _failed(self, reason: str, message: str) -> Obj:
        """A run failed before any pod of it was made: no container exited, so it has no exit code."""
        return {"phase": FAILED, "reason": reason, "message": message, "completionTime": format_time(self.clock.now())}

    async def _fabric_event(self, run: Obj, note: str) -> None:
        """A Warning Event on the run naming why its fabric was not rendered (it runs over TCP, and its result's Socket
        note says so); one the server refuses (RBAC trimmed, a namespace closing) does not stop the run."""
        try:
            await self.store.record_event(run, "Warning", FABRIC_NOT_RENDERED, note)
        except StoreError:
            pass

    async def _patch(self, run: Obj, patch: Obj) -> Obj | None:
        meta = run["metadata"]
        try:
            return await self.store.patch_status(WORKLOADRUN, meta["name"], meta.get("namespace"), patch, meta.get("resourceVersion"))
        except (Conflict, NotFound):
            return None  # changed meanwhile: the next look decides again


def made_as_trainjob(run: Obj) -> bool | None:
    """The shape `run` was made in, as its status records it: True a TrainJob, False the batch fallback, None not
    recorded (nothing made yet). Its BatchFallback condition says it (True: the fallback; False: a TrainJob), written
    before the workload is made; a run started without one is a TrainJob (an nvcre that wrote only the fallback's).
    Never from what the server serves now: the Trainer installed or removed since (an engine restarted, discovering
    afresh) would have the run read, judged, stopped and deleted as an object it does not have."""
    condition = find(conditions_of(run), BATCH_FALLBACK)
    if condition is not None:
        return condition.get("status") != "True"
    return True if run_status(run).get("phase") in ("Scheduling", "Running") else None


def _holds(run: Obj) -> bool:
    """Whether ended `run` held anything past its end: a workload whose pods hold GPUs (a run that did not pass), or
    DRA objects (a run with resourceClaims: GB200/GB300's ComputeDomain, AWS GB300's RoCE claim template)."""
    return run_status(run).get("phase") == FAILED or bool(run_spec(run).get("resourceClaims"))


def _container(pod: Obj) -> str:
    names = [c.get("name") for c in pod_spec(pod).get("containers") or []]
    return CONTAINER if CONTAINER in names or not names else str(names[0])


def termination_messages(pod: Obj) -> list[str]:
    """The containers' termination messages (terminationMessagePath): the fallback when no log is readable."""
    lines = []
    for container in pod_status(pod).get("containerStatuses") or []:
        ended = (container.get("state") or {}).get("terminated") or {}
        lines += [line for line in (ended.get("message") or "").splitlines() if line.strip()]
    return lines


def _progress(state: WorkloadRunStatus, verdict: Verdict, now: str) -> Obj:
    """The status patch for a run still Scheduling / Running: only what changed (no write per poll)."""
    patch: Obj = {}
    if verdict.phase == "Running" and state.get("phase") != "Running":
        patch = {"phase": "Running", "startTime": verdict.start_time or now, "message": verdict.message,
                 "blockedNodes": None, "reason": None}
    elif verdict.phase == "Scheduling":
        wanted = {"blockedNodes": list(verdict.blocked) or None, "reason": verdict.reason or None, "message": verdict.message}
        patch = {key: value for key, value in wanted.items() if state.get(key) != value}
        if patch and state.get("phase") != "Scheduling":
            patch.update(phase="Scheduling", pendingSince=now)
        elif _minute_starts(state.get("reason"), verdict.reason):
            patch["pendingSince"] = verdict.since or now  # admitted, or its JobSet made: what follows gets its whole bound from then
    return patch


def jobset_wait_began(state: WorkloadRunStatus, jobset: Obj, now: datetime) -> str | None:
    """When JobSet's controller's minute began for a run (its status `state`) whose TrainJob's JobSet is `jobset`: when
    the Trainer made the JobSet (its creationTimestamp; a busy Trainer's seconds are not JobSet's), but not before the
    run's pendingSince nor after now (the server's clock ahead of the engine's). None for a run just admitted by its
    queue (a JobSet made while its TrainJob was suspended waits from the admission: now), or where neither time reads."""
    if state.get("reason") == RUN_QUEUED:
        return None
    try:
        times = [parse_time(str(each)) for each in (jobset["metadata"].get("creationTimestamp"), state.get("pendingSince")) if each]
    except ValueError:
        return None
    return format_time(min(max(times), now)) if times else None


def _minute_starts(previous: str | None, reason: str) -> bool:
    """Whether a look whose verdict says `reason`, of a run that said `previous`, starts the run's wait afresh: a queue
    (Kueue) admitted it (its pods' placement gets the whole stall grace, its controller its whole minute, from the
    admission), or its TrainJob's JobSet is first found made and unreconciled (JobSet's controller gets its whole
    minute from there: a busy Trainer may have taken most of its own before it made the JobSet)."""
    return (previous == RUN_QUEUED and reason != RUN_QUEUED) or (reason == JOBSET_NOT_RECONCILED and previous != JOBSET_NOT_RECONCILED)
