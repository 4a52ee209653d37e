"""The wire vocabulary: every label, annotation and resource key nvcre writes or reads, in one place; and the
condition types, reasons and results its objects say, and the API groups of the other projects' kinds it creates.

Ours (`nvcre.nvidia.com/...`) tie the objects of one certification together; the rest belong to other
projects (Kubernetes, the GPU Operator's feature discovery, Kubeflow Trainer, KAI, NVSentinel) and are
only read, or set on the pods we create as those projects document. Metric keys live with their units
in parsers.measurements. Node states, their glyphs and their two orders are here too (plain data, no Textual:
the console colours them through `$verdict-<state>` theme variables).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Final


# -- ours: labels (selectable) -------------------------------------------------------------------------------
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_CERTIFICATION = "nvcre.nvidia.com/certification"
LABEL_DOMAIN = "nvcre.nvidia.com/category-domain"
LABEL_VARIANT = "nvcre.nvidia.com/category-variant"
LABEL_WORKFLOW = "nvcre.nvidia.com/workflow"
LABEL_GROUP = "nvcre.nvidia.com/group"
LABEL_ITERATION = "nvcre.nvidia.com/iteration"
LABEL_JOB = "nvcre.nvidia.com/job"
LABEL_ROLE = "nvcre.nvidia.com/role"
LABEL_SIMULATED = "nvcre.nvidia.com/simulated"  # "true" on the Nodes `--sim-runner` registers (`setup reset` removes them)

# -- ours: annotations ---------------------------------------------------------------------------------------
# "true" on a namespace `setup init` installed nvcre into: how every command finds the install. nvcre's own key, as the
# shared app.kubernetes.io/part-of (LABEL_PART_OF) of a namespace that existed before init is its owner's: init sets that
# one only on a namespace it creates, and an older init's part-of=nvcre is still recognised as an install.
LABEL_INSTALL = "nvcre.nvidia.com/install"
ANNOTATION_TEST_SCALE = "nvcre.nvidia.com/requested-test-scale"
ANNOTATION_GROUP_NODES = "nvcre.nvidia.com/group-nodes"  # a Job's node names, comma-separated
# On a Workflow whose cpu and memory requests render fitted to the nodes: the catalog's fitRequests.share, which its own
# discovery checks each node by (fit.pod_shortfalls), as render did.
ANNOTATION_FITTED_SHARE = "nvcre.nvidia.com/fitted-requests-share"
ANNOTATION_SCHEMA_HASH = "nvcre.nvidia.com/schema-hash"  # on our CRDs: which schema `setup init` installed
# On our CRDs too: the nvcre version whose `setup init` installed them, and its schema generation (an integer bumped with
# every schema change), so that `setup status` and the engine say which is newer and an older init does not downgrade.
ANNOTATION_INSTALLED_BY_VERSION = "nvcre.nvidia.com/installed-by-version"
ANNOTATION_SCHEMA_GENERATION = "nvcre.nvidia.com/schema-generation"
ANNOTATION_NOTE = "nvcre.nvidia.com/note"  # a word for whoever reads the object
# On the install namespace when `setup init` created it: only then does `setup reset` delete it (a namespace that
# existed before, a team's, would take everything in it along).
ANNOTATION_MADE_BY_INIT = "nvcre.nvidia.com/made-by-setup-init"
# On the engine's Lease: what its holder's engine runs a certification's workloads with, so that another process
# does not create a certification that engine would fail (real pods on the simulated fleet's Nodes) or play (the
# simulated fleet, made-up measurements, for a certification meant for GPUs). Its value bare, as older readers compare it;
# it is the holder's only where ANNOTATION_ENGINE_VERSION names that holder (an older holder keeps the one it finds).
ANNOTATION_ENGINE_RUNNER = "nvcre.nvidia.com/engine-runner"
RUNNER_PODS, RUNNER_SIMULATED = "pods", "simulated-fleet"
# On the engine's Lease too: the nvcre version of its holder's engine, followed by that holder's identity ("0.1.0
# controller-7f9c"), so that `setup init` says which engine it would upgrade the CRDs under. The identity makes an older
# holder, which writes no such annotation and keeps the one it finds, read as unknown rather than as the version before it.
ANNOTATION_ENGINE_VERSION = "nvcre.nvidia.com/engine-version"
# -- ours: names ---------------------------------------------------------------------------------------------
INSTALL_NAMESPACE = "nvcre-system"  # where `setup init` installs the engine; its Lease and the fleet's ConfigMap live there
ENGINE_NAME = "nvcre-engine"  # the engine's ServiceAccount, roles and bindings, its Lease, and its user agent
SIMULATOR_NAME = "nvcre-simulator"  # the simulated fleet's role, and the managed-by of the Nodes it registers
LEASE_READER_NAME = "nvcre-engine-lease-reader"  # the Role and RoleBinding that let every authenticated user read the engine Lease
# The simulated fleet's user agent on a cluster: the field manager the server credits with the Nodes it registers (their
# managedFields), which tells them from a Node someone else labelled simulated.
SIMULATOR_AGENT = "nvcre-sim"
# `run --workload-registry`'s pull secret: `<certification>-registry-<5 random>` (cli/registry.py), found again by it.
PULL_SECRET_INFIX = "-registry-"

# -- Kubernetes ----------------------------------------------------------------------------------------------
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_PART_OF = "app.kubernetes.io/part-of"  # `nvcre` on what `setup init` installs and on the engine's Lease
LABEL_APP_NAME = "app.kubernetes.io/name"  # `nvcre-engine` on the pods of `setup controller`'s Deployment: its selector
# The Job controller's index of an Indexed Job's pod: a label (Kubernetes 1.28+) and an annotation.
KEY_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# What a Deployment of another project (the Kubeflow Trainer, the GPU Operator) says its release is, first found wins.
VERSION_LABELS = ("app.kubernetes.io/version", "helm.sh/chart")

# -- cloud providers: the rack (network block) a node sits in, by platform; what tells a platform apart -------
FORGE_SITE_LABEL = "nke.nvidia.com/site-name"
TOGETHER_WORKER_LABEL = "node-role.together.ai/worker"
NSCALE_RDMA_RESOURCE = "nscale.com/rdmashare"
RACK_TOPOLOGY_KEYS: Mapping[str, str] = MappingProxyType({
    "aws": "topology.k8s.aws/network-node-layer-1",
    "gcp": "cloud.google.com/gce-topology-block",
    "azure": "kubernetes.azure.com/ppg",
})

# -- the GPU Operator (GPU feature discovery, device plugin) -------------------------------------------------
LABEL_GPU_CLIQUE = "nvidia.com/gpu.clique"
LABEL_GPU_PRODUCT = "nvidia.com/gpu.product"
LABEL_GPU_PRESENT = "nvidia.com/gpu.present"
LABEL_GPU_COUNT = "nvidia.com/gpu.count"
LABEL_MIG_STRATEGY = "nvidia.com/mig.strategy"
LABEL_GPU_REPLICAS = "nvidia.com/gpu.replicas"  # time-slicing or MPS: each GPU advertised this many times
RESOURCE_MIG_PREFIX = "nvidia.com/mig-"  # MIG slices under the mixed strategy: nvidia.com/mig-1g.10gb ...
# GPU Feature Discovery's versions: the full label, its parts, and the deprecated parts older GFD writes.
LABEL_CUDA_DRIVER = "nvidia.com/cuda.driver-version.full"
LABEL_CUDA_DRIVER_PARTS = tuple(f"nvidia.com/cuda.driver-version.{part}" for part in ("major", "minor", "revision"))
LABEL_CUDA_DRIVER_OLD_PARTS = tuple(f"nvidia.com/cuda.driver.{part}" for part in ("major", "minor", "rev"))
LABEL_CUDA_RUNTIME = "nvidia.com/cuda.runtime-version.full"
LABEL_CUDA_RUNTIME_PARTS = tuple(f"nvidia.com/cuda.runtime-version.{part}" for part in ("major", "minor"))
LABEL_CUDA_RUNTIME_OLD_PARTS = tuple(f"nvidia.com/cuda.runtime.{part}" for part in ("major", "minor"))
RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_NIC = "nvidia.com/mlnxnics"
RESOURCE_EFA = "vpc.amazonaws.com/efa"  # AWS's EFA device plugin: one per EFA interface of the node

# -- KAI scheduler -------------------------------------------------------------------------------------------
LABEL_KAI_QUEUE = "kai.scheduler/queue"

# -- Kueue (read only: nvcre sets no spec.managedBy; Kueue's webhook may) --------------------------------------
LABEL_KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"  # the LocalQueue a job is queued in (none: the namespace's `default`)
KUEUE_DEFAULT_QUEUE = "default"  # the LocalQueue Kueue queues a job without the label in, where it exists
# A batch Job's or TrainJob's spec.managedBy that MultiKueue's webhook sets when the job's ClusterQueue has a MultiKueue
# admission check: the job is dispatched to a worker cluster and its pods run there, never on this cluster's nodes.
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
# spec.managedBy values that mean the workload's own controller runs it here (unset means so too).
OWN_WORKLOAD_CONTROLLERS = frozenset({"kubernetes.io/job-controller", "trainer.kubeflow.org/trainjob-controller"})

# -- NVSentinel (read only: the engine writes none of them) --------------------------------------------------
LABEL_NVSENTINEL_STATE = "nvsentinel.nvidia.com/validation-state"
LABEL_NVSENTINEL_REQUEST = "nvsentinel.nvidia.com/active-validation-request"
TAINT_NVSENTINEL_FAILED = "nvsentinel.dgxc.nvidia.com/nvcre-cert-failed"
ANNOTATION_NVSENTINEL_FAILURES = "nvsentinel.dgxc.nvidia.com/nvcre-cert-failures-details"


# -- API groups of other projects (the store's kinds name Kubernetes' own: store.protocol) --------------------
TRAINER_GROUP: Final = "trainer.kubeflow.org"  # Kubeflow Trainer v2: TrainJob, TrainingRuntime
TRAINER_VERSION: Final = "v1alpha1"
TRAINER_API_VERSION: Final = f"{TRAINER_GROUP}/{TRAINER_VERSION}"
JOBSET_GROUP: Final = "jobset.x-k8s.io"  # the Trainer makes a JobSet per TrainJob; JobSet's controller, the pods
JOBSET_VERSION: Final = "v1alpha2"
JOBSET_CONTROLLER_NAME: Final = "jobset.sigs.k8s.io/jobset-controller"  # a JobSet's spec.managedBy when JobSet's controller runs it
COMPUTE_DOMAIN_GROUP: Final = "resource.nvidia.com"  # the NVIDIA DRA driver's ComputeDomain (GB200 / GB300 MNNVL)
COMPUTE_DOMAIN_VERSION: Final = "v1beta1"
COMPUTE_DOMAIN_API_VERSION: Final = f"{COMPUTE_DOMAIN_GROUP}/{COMPUTE_DOMAIN_VERSION}"
# Kubernetes' DRA API (ResourceClaimTemplates a run's claims take, catalog/_workloads/claims.yaml): the versions whose
# ResourceClaimTemplate nvcre writes, newest first (v1 from Kubernetes 1.34; v1beta2 1.33; v1beta1 1.32, another shape).
DRA_GROUP: Final = "resource.k8s.io"
DRA_VERSIONS: Final = ("v1", "v1beta2", "v1beta1")


# -- ours: condition types (status.conditions) -----------------------------------------------------------------
# The phase types, exclusive (controllers.conditions keeps one True): InProgress, Succeeded, Failed. Succeeded and
# Failed are also the phase a category, a group, a WorkloadRun and a pod (Kubernetes' word) ends in.
IN_PROGRESS: Final = "InProgress"
SUCCEEDED: Final = "Succeeded"
FAILED: Final = "Failed"
# Additive: the run went, its thresholds were missed; a health check or the workload flagged hardware.
VALIDATION_FAILED: Final = "ValidationFailed"
HARDWARE_FAILED: Final = "HardwareFailed"
# How runs were carried out when it was not as a reader would assume: set True by the runner on a WorkloadRun,
# carried to its Job and Certification (controllers.conditions.carried) and named by the report. Type -> the reason
# when none was given.
BATCH_FALLBACK: Final = "BatchFallback"  # a batch/v1 Job ran the pods: Kubeflow Trainer is not installed
SIMULATED: Final = "Simulated"  # the simulated fleet played the run: no GPU ran it, its measurements are made up
# Why a simulated run has no log where a pod's would be (the HTML report's size curves, `certification logs`, the log pane)
SIMULATED_OUTPUT: Final = "a simulated run, whose output only --sim-runner makes"
HOW_RUN: Mapping[str, str] = MappingProxyType({BATCH_FALLBACK: "TrainerNotServed", SIMULATED: "SimulatedRunner"})
# A WorkloadRun made as a Kubeflow Trainer TrainJob has BatchFallback False with this reason: the Kubernetes runner records
# either shape on the run before it makes the workload, and follows the run as that shape whatever is served later.
TRAINER_SERVED: Final = "TrainerServed"
# On an ended WorkloadRun of the Kubernetes runner: what the run held on the cluster was given back (a failed run's
# workload, whose pods hold GPUs; any run's ComputeDomain, whose IMEX daemons hold its nodes, and RoCE claim template).
# Written after the deletions, so an engine that died between the run's end and them finds the run without it and
# releases again (runners/kubernetes: release_ended). Never carried to the Job.
RELEASED: Final = "Released"
RELEASED_REASON: Final = "RunEnded"

# -- ours: a certification's result (status.summary.result) -----------------------------------------------------
RESULT_RUNNING: Final = "RUNNING"
RESULT_PASSED: Final = "PASSED"
RESULT_FAILED: Final = "FAILED"
RESULT_INCOMPLETE: Final = "INCOMPLETE"  # passed, with nodes excluded from the test
# The order certifications are shown in, most urgent first (report.shown_order: the dashboard, the wall, `list`):
# unfinished, then failed, then passed with nodes excluded, then passed.
RESULT_ORDER: tuple[str, ...] = (RESULT_RUNNING, RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED)

# -- ours: why a node failed (a Job's failedNodes[].reason: api.resources.NodeFailureReason) ------------------
HARDWARE_FAILURE_DETECTED: Final = "HardwareFailureDetected"  # a health check flagged it
THRESHOLD_VIOLATION: Final = "ThresholdViolation"  # its measurement missed a threshold
WORKLOAD_FAILED: Final = "WorkloadFailed"  # the workload failed on it
TIMEOUT: Final = "Timeout"  # its Job ran past timeoutPerJob
# SCHEDULING_BLOCKED, below, too.

# -- ours: reasons a run or a Job gives ------------------------------------------------------------------------
# A run's spec the runner cannot run, or a Certification's the engine refuses.
INVALID_SPEC: Final = "InvalidSpec"
# A WorkloadRun's reason while Scheduling with every pod placed and some still creating their containers (pulling a
# large image, say): the Job bounds that by timeoutPerJob, not by the scheduling stall grace.
RUN_STARTING = "Starting"
# A WorkloadRun's reason while Scheduling with its TrainJob / batch Job suspended (spec.suspend: a queue such as Kueue
# admits it when there is room), no pod made yet. Bounded by timeoutPerJob as well.
RUN_QUEUED: Final = "Queued"
AWAITING_START = frozenset({RUN_STARTING, RUN_QUEUED})  # a Scheduling run's reasons that timeoutPerJob bounds
# A Scheduling batch Job's run while no Job controller has synced its Job yet (no status.startTime, no pod): one the
# controller-manager would sync within seconds. Bounded by NO_JOB_CONTROLLER_SECONDS, not the scheduling grace: on an
# API server alone none comes, and the run fails then (runners/kubernetes), which its waiting message says.
JOB_NOT_SYNCED: Final = "JobNotSynced"
# Its TrainJob twin: no Kubeflow Trainer controller has reconciled the run's TrainJob yet (no JobSet made for it, no
# status written), which the Trainer does within seconds. Bounded, and failed, the same way.
TRAINJOB_NOT_RECONCILED: Final = "TrainJobNotReconciled"
# The next step's: the Trainer made the TrainJob's JobSet, and no JobSet controller has reconciled it yet (no status
# written, no child Job made), which JobSet's controller does within seconds (JobSet's CRD without its controller).
JOBSET_NOT_RECONCILED: Final = "JobSetNotReconciled"
# a Scheduling run's reasons that minute bounds
NOT_RECONCILED = frozenset({JOB_NOT_SYNCED, TRAINJOB_NOT_RECONCILED, JOBSET_NOT_RECONCILED})
# How long a batch Job may go unsynced, or a TrainJob or its JobSet unreconciled (a minute covers a controller-manager's
# leader handing over, its Lease lasting 15 s, and a busy one's queue).
NO_JOB_CONTROLLER_SECONDS: Final = 60.0
# A run's reasons for failing before any node was tested: the API server refused its workload (a config file name,
# no ComputeDomain driver), the engine failed reconciling it, or its image cannot be pulled (a name, a registry or
# its credentials: the same image on every node), or its image lacks the command. The nodes did nothing wrong.
WORKLOAD_NOT_CREATED: Final = "WorkloadNotCreated"
RECONCILE_ERROR: Final = "ReconcileError"
IMAGE_PULL_FAILED: Final = "ImagePullFailed"
# The container runtime could not start the run's command: the image lacks it (the same image on every node).
COMMAND_NOT_FOUND: Final = "CommandNotFound"
# A category's, a group's, a run's and a Certification's reason when their namespace is being terminated: it admits no
# new object (403, cause NamespaceTerminating), so the category's Workflow, the group's Job or the run's pods were never
# (all) made; no node tested.
NAMESPACE_TERMINATING: Final = "NamespaceTerminating"
# An object whose status someone other than nvcre wrote (`kubectl edit --subresource=status`, a patch, a script: the
# API server's managedFields name the writer; api/provenance.py): nothing in it was measured by nvcre, so no node was
# tested by it either.
FOREIGN_STATUS: Final = "StatusWrittenByAnother"
# A Workflow whose spec someone other than nvcre wrote (one created in advance under the name the engine gives a
# category's Workflow, or edited since): it would run what its Certification does not ask (looser thresholds, other
# nodes), so it is refused as a foreign status is, under its own reason.
FOREIGN_SPEC: Final = "SpecWrittenByAnother"
# The reasons of an object the engine refused for another hand's writing (controllers/foreign.py): every reader takes
# either for refused (the report, the list, the console, the history's `FAILED (refused)`).
REFUSED: frozenset[str] = frozenset({FOREIGN_STATUS, FOREIGN_SPEC})
# A Workflow's and a Job's reason when their Certification was refused for such a status while they ran: it can yield
# no result any more, so they are stopped (their runs' pods deleted through the runner, freeing the GPUs); no node
# blamed by it.
CERTIFICATION_REFUSED: Final = "CertificationRefused"
# A Job's reason when its Workflow was refused so (status or spec written by another hand) while it ran: stopped the
# same way, no node blamed by it.
WORKFLOW_REFUSED: Final = "WorkflowRefused"
# Those two: a Job stopped so ran no test to its end and its result is not taken; its nodes are untested (NOT_RUN), never
# blamed, and a diagnosis reading it stops on it as on any group that tested nothing (judging/untested.py).
STOPPED_FOR_REFUSAL = frozenset({CERTIFICATION_REFUSED, WORKFLOW_REFUSED})
# A Workflow's Failed reasons when the engine stopped its running Jobs with it (refused itself, or its Certification
# was) -> the reason each of those Jobs failed with. It records no group's end then: a group it still holds Running ran
# no test to its end, and is read as failed so (report/readmodel.py), its nodes untested, never running for ever.
JOBS_STOPPED_AS: Mapping[str, str] = MappingProxyType({FOREIGN_STATUS: WORKFLOW_REFUSED, FOREIGN_SPEC: WORKFLOW_REFUSED,
                                                        CERTIFICATION_REFUSED: CERTIFICATION_REFUSED})
# A Job's reason when its group-nodes annotation (metadata, which anyone may edit) no longer names the nodes its run was
# made on: whom its result would blame is not who ran, so it is not taken and no node is blamed.
GROUP_NODES_EDITED: Final = "GroupNodesEdited"
# InvalidSpec: a run whose spec the runner could not turn into a workload (a field, no nodes) made no pod either.
NEVER_RAN = frozenset({WORKLOAD_NOT_CREATED, RECONCILE_ERROR, IMAGE_PULL_FAILED, COMMAND_NOT_FOUND, NAMESPACE_TERMINATING, INVALID_SPEC,
                       *REFUSED})
# The Job's reason when a running training stopped logging progress (engine/judging/stall.py): every group node is
# blamed WorkloadFailed, as for any failure of the whole group's run.
WORKLOAD_STALLED: Final = "WorkloadStalled"
# A run's and its Job's reason when Kubernetes deleted one of its pods mid-run for a reason not its node's health (a
# NoExecute taint put on a Ready node, a drain's eviction, a preemption: the pod's DisruptionTarget condition): the run
# ran and proved nothing, and no node is blamed (runners/kubernetes/pods.py, controllers/job.py).
POD_DISRUPTED: Final = "PodDisrupted"
# A Warning Event on a run whose fabric (catalog/_workloads/fabrics.yaml: GKE's GPUDirect-TCPXO) its nodes do not let
# be rendered (a machine type, networks missing from their allocatable): it runs over TCP, and says why. Also the
# condition saying so (True, the same message) the runner sets on the run and the Job carries: a note on its result.
FABRIC_NOT_RENDERED: Final = "FabricNotRendered"
# A Job's condition (True) when its run's output qualifies what it measured beside its rows, whatever the verdict
# (parsers' remarks: NCCL's network transport was Socket, nccl-tests' own data check not read, Megatron stopped on its
# own limit); the message is the remarks. Skipped rows and tests are not remarks: the report counts those apart.
MEASUREMENT_REMARKS: Final = "MeasurementRemarks"
# Conditions that qualify a result without judging it (its verdict is the same): the runner sets them True on a
# WorkloadRun, carried to its Job (controllers.conditions.carried), and the Job controller MEASUREMENT_REMARKS; not
# carried to the Certification, and noted by the report (its category's `runNotes`) and the console's Job detail.
RESULT_NOTES: tuple[str, ...] = (FABRIC_NOT_RENDERED, MEASUREMENT_REMARKS)
# A node left out as its Workflow starts because other pods (not nvcre's: another team's training) hold the GPUs, CPUs or
# memory a pod needs (planning/discovery.leave_out_busy): not faulty, never blamed, never certified (INCOMPLETE).
NODE_BUSY: Final = "NodeBusy"
# A Warning Event on a Workflow whose nodes' other pods could not be read (controllers/context.Context.node_occupants: a
# refusal no retry mends, RBAC's or a proxy's): none of its nodes is left out NodeBusy, its category goes on as if
# none were busy; said once (a repeat merges into the same Event, counted).
BUSY_NODES_UNKNOWN: Final = "BusyNodesUnknown"
# A Warning Event on a Workflow whose nodes' other pods could not be read, on transient answers (a 5xx, a timeout, a reset
# connection), for BUSY_READ_PATIENCE (controllers/context.py): it waits, the read retried with backoff; said once an
# episode, and its end said by a Normal BUSY_NODES_READ Event once a later read answers.
BUSY_NODES_UNREAD: Final = "BusyNodesUnread"
BUSY_NODES_READ: Final = "BusyNodesRead"
# A category's (its Workflow's, or its own where none was made) Failed reason when every node its target selects was left
# out for its own state, not the category's fit: busy (NODE_BUSY), cordoned or not Ready (UNAVAILABLE_STATES), still so
# after the wait for a node (planning/discovery.NODE_WAIT). Nothing was tested and no node is at fault: its certification
# reads FAILED under this reason (nothing measured is nothing certified), never PASSED, and blames no node.
NODES_UNAVAILABLE: Final = "NodesUnavailable"
UNAVAILABLE_STATES = frozenset({"Cordoned", "NotReady", NODE_BUSY})
NODE_NOT_FOUND: Final = "NodeNotFound"  # the run's reason when group nodes are gone from the cluster (its blockedNodes)
# A failed run's reasons whose Job's verdict its log does not decide (a pod Kubernetes took, a group node gone): the log is
# read as evidence only, what was kept when the server fails the read (runners: `logs(required=False)`); a kubelet that
# no longer answers (the gone or hung node's own) held the verdict, and the group's GPUs, for READ_PATIENCE_SECONDS.
DECIDED_WITHOUT_LOG = frozenset({POD_DISRUPTED, NODE_NOT_FOUND})
SCHEDULING_BLOCKED: Final = "SchedulingBlocked"  # pods the scheduler could not place (a node's reason too)
# The Job's reason when its pods were not made or not placed within the stall grace and no scheduler said why (a
# missing controller or scheduler, not the nodes: a scheduler's Unschedulable names them, SchedulingBlocked), or were
# placed but still not started within timeoutPerJob.
WORKLOAD_NOT_STARTED: Final = "WorkloadNotStarted"
# A Job's InProgress reason until its run's pods run; its message says why they do not yet (controllers/job.py).
WORKLOAD_PENDING: Final = "WorkloadPending"
# A diagnose group's reason when its Job failed HardwareFailureDetected on members cordoned before its workload started
# (a node cordoned between rounds, flagged at the Job's first look): it ran nothing, so it is no test, none of its nodes
# blamed; the cordoned members are excluded Cordoned and in no later round (controllers/unavailable.py).
CORDONED_BEFORE_START: Final = "CordonedBeforeStart"
# A failed group's reasons when no workload ran on it at all, or none whose result is taken (STOPPED_FOR_REFUSAL): its
# nodes were not tested (the report counts none of them validated).
NOT_RUN = frozenset({*NEVER_RAN, NODE_NOT_FOUND, NODE_BUSY, SCHEDULING_BLOCKED, WORKLOAD_NOT_STARTED, *STOPPED_FOR_REFUSAL, CORDONED_BEFORE_START})
# A failed run's reasons that say its workload never started: no pod made (refused, not reconciled, its namespace
# terminating), none placed, or none able to start its command. Its log holds no line because nothing ran to print
# one, not because a log was lost (views/waiting.no_output says so, and why).
NOTHING_STARTED = frozenset({WORKLOAD_NOT_CREATED, INVALID_SPEC, IMAGE_PULL_FAILED, COMMAND_NOT_FOUND, NAMESPACE_TERMINATING,
                             SCHEDULING_BLOCKED, WORKLOAD_NOT_STARTED})
# A category's reasons while it waits to create its Workflow: for its nodes (to appear, or an earlier category on
# them to finish), or for what an earlier Certification of the same name left to be collected. WAITING_FOR_NODES is also
# a Workflow's InProgress reason while every node it found is unavailable (busy as it started: discovery.NODE_WAIT).
WAITING_FOR_NODES: Final = "WaitingForNodes"
WAITING_FOR_LEFTOVERS: Final = "WaitingForLeftovers"
# The history's reason for a node a diagnosis left unjudged because every test failed far from the threshold (the
# report's thresholdOutOfReach): the threshold is wrong for the fleet, not the node.
THRESHOLD_OUT_OF_REACH: Final = "ThresholdOutOfReach"


def group_nodes_value(names: Iterable[str]) -> str:
    """The group-nodes annotation's value for these node names."""
    return ",".join(names)


class NodeState(StrEnum):
    """What is known about one node, in display order (legends, counts): most urgent first, so a header cut
    short by a narrow block still shows the failures."""

    FAILED = "failed"
    SUSPECT = "suspect"
    INCONCLUSIVE = "inconclusive"
    WAITING = "waiting"  # in a group whose pods do not run yet (unplaced, pulling images): not running, not judged
    RUNNING = "running"
    UNTESTED = "untested"
    PASSED = "passed"
    EXCLUDED = "excluded"

    @property
    def glyph(self) -> str:
        """One-cell symbol for the state (distinct shapes, readable without colour)."""
        return STATE_GLYPHS[self]

    @property
    def variable(self) -> str:
        """Theme variable holding the state's colour, without the `$`."""
        return f"verdict-{self.value}"


# Every glyph is one terminal cell and East-Asian-width "neutral" or "narrow", so it never turns double-width.
STATE_GLYPHS: Mapping[NodeState, str] = MappingProxyType({
    NodeState.FAILED: "✗", NodeState.SUSPECT: "!", NodeState.INCONCLUSIVE: "?", NodeState.WAITING: "◷", NodeState.RUNNING: "⋯",
    NodeState.UNTESTED: "◦", NodeState.PASSED: "✓", NodeState.EXCLUDED: "⊘",
})

# A running diagnosis's narrowing set, in the console's words (the wall's tally line, the dashboard's fleet line and
# failures title, the drill-down, the map's legend, a node's detail): not SUSPECT, which the wall, the report and
# `certification list` keep for a node blamed only with its whole group. The dashboard said "! 2 suspect (+2 under
# test)" where the wall said "2 ! under suspicion".
UNDER_SUSPICION: Final = "under suspicion"
TESTED_NOW: Final = "tested now"  # those of it the current round tests (drawn running, or waiting for their pods)

# Which state a node shows when its categories say several things. Not the display order, on purpose: a test
# running now outranks an older inconclusive verdict (the operator watches it change), a group waiting for its pods
# outranks the Workflow's word that it runs, and an exclusion outranks a pass elsewhere (the node is not certified
# for everything asked).
STATE_PRECEDENCE: tuple[NodeState, ...] = (
    NodeState.FAILED, NodeState.SUSPECT, NodeState.WAITING, NodeState.RUNNING, NodeState.INCONCLUSIVE,
    NodeState.EXCLUDED, NodeState.PASSED, NodeState.UNTESTED,
)

# Beside a state, not one: the node's software baseline changed since its last archived pass.
STALE_GLYPH = "↻"

# A certification's, category's or Job's phase as one glyph (reports and screens).
PHASE_GLYPHS: Mapping[str, str] = MappingProxyType({
    SUCCEEDED: "✓", FAILED: "✗", "Running": "⋯", IN_PROGRESS: "⋯", "Scheduling": "·", "Pending": "·",
})

# A certification's result (status.summary.result) as one glyph: INCOMPLETE is the excluded nodes' glyph.
RESULT_GLYPHS: Mapping[str, str] = MappingProxyType({RESULT_PASSED: "✓", RESULT_FAILED: "✗", RESULT_RUNNING: "⋯", RESULT_INCOMPLETE: "⊘"})
