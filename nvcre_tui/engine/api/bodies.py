"""Typed views of raw bodies: what the engine, the reports and the console read from a stored object.

Objects travel as plain JSON dicts (wire bodies, as the store and the API server give them). These
TypedDicts name the fields the code reads, with the camelCase keys of the pydantic models in
resources.py / base.py (a test keeps them in step), and Kubernetes' own for Pods, Nodes and Leases.
They are views, in the spirit of kopf's Body / Meta / Spec / Status: the accessors below return the
very dict inside the body (no copy, no validation; the pydantic models remain the validators), or a
fresh empty one when the part is absent, so `.get()` on the result never needs an `or {}`.

Every view is total=False: the wire form leaves unset fields out.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from nvcre_tui.engine.api.resources import CategoryPhase, ExclusionReason, NodeFailureReason, Phase
from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES, LABEL_GROUP

Raw = Mapping[str, Any]  # a raw body, or any part of one, not (yet) given a view
ConditionStatus = Literal["True", "False", "Unknown"]

# --------------------------------------------------------------------------- shared parts (base.py)


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    finalizers: list[str]
    ownerReferences: list[OwnerReference]


class Condition(TypedDict, total=False):
    """A status condition (ours, and the shape of Kubernetes' Pod and Node conditions too)."""

    type: str
    status: ConditionStatus
    reason: str
    message: str
    lastTransitionTime: str
    observedGeneration: int


class ObjectReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    namespace: str


class TypedLocalObjectReference(TypedDict, total=False):
    apiGroup: str
    kind: str
    name: str


class TargetSpec(TypedDict, total=False):
    nodeSelector: dict[str, str]
    matchExpressions: list[dict[str, Any]]
    nodeNames: list[str]
    taintSelectors: list[dict[str, Any]]


class EvidenceRecord(TypedDict, total=False):
    metric: str
    measured: float | None
    expression: str
    passed: bool
    reason: str
    message: str


class FailedNode(TypedDict, total=False):
    name: str
    reason: NodeFailureReason
    message: str
    evidence: list[EvidenceRecord]


# --------------------------------------------------------------------------- Certification


class Category(TypedDict, total=False):
    domain: str
    variant: str
    options: dict[str, Any]
    target: TargetSpec


class CertificationSpec(TypedDict, total=False):
    """Options may also sit inline in spec (NVCRE's newest form); read those through the raw spec."""

    target: TargetSpec
    categories: list[Category]
    gangScheduler: dict[str, Any]
    options: dict[str, Any]


class CategoryStatus(TypedDict, total=False):
    domain: str
    variant: str
    workflowRef: ObjectReference
    status: CategoryPhase
    reason: str
    message: str
    waitingSince: str  # when the category began waiting for eligible nodes (its NODE_WAIT grace counts from then)
    succeededNodesRef: TypedLocalObjectReference
    failedNodesRef: TypedLocalObjectReference


class CertificationSummary(TypedDict, total=False):
    passedCategories: str
    failedNodes: int
    excludedNodes: int
    result: Literal["PASSED", "INCOMPLETE", "FAILED", "RUNNING"]


class CertificationStatus(TypedDict, total=False):
    conditions: list[Condition]
    categoryStatuses: list[CategoryStatus]
    summary: CertificationSummary
    observedGeneration: int
    startTime: str
    completionTime: str
    createdResourceVersion: str  # its resourceVersion when the engine first wrote its status: orders those created in one second


# --------------------------------------------------------------------------- WorkloadRun


class Framework(TypedDict, total=False):
    torch: dict[str, Any]
    mpi: dict[str, Any]
    exec: dict[str, Any]


class MeasurementSpec(TypedDict, total=False):
    parser: Literal["nccl", "dcgm", "training"]
    testType: str
    sampleInterval: str


class WorkloadRunSpec(TypedDict, total=False):
    target: TargetSpec
    image: str
    framework: Framework
    numNodes: int
    config: dict[str, Any]
    gpusPerNode: int
    mlnxPerNode: int
    nicResourceName: str
    resources: dict[str, Any]
    env: list[dict[str, Any]]
    enableMNNVL: bool
    orchestration: dict[str, Any]
    thresholds: dict[str, str]
    measurement: MeasurementSpec
    gangScheduler: dict[str, Any]
    workloadMetadata: dict[str, Any]


class WorkloadRunStatus(TypedDict, total=False):
    conditions: list[Condition]
    phase: Literal["Pending", "Scheduling", "Running", "Succeeded", "Failed"]
    reason: str
    message: str
    nodes: list[str]
    pendingSince: str
    blockedNodes: list[str]
    startTime: str
    completionTime: str
    exitCode: int
    failedNode: str
    logRef: str
    measurements: dict[str, float]
    parseFailure: str
    workflowRef: ObjectReference
    detectedPlatform: str
    detectedGPUArchitecture: str
    resolvedGpusPerNode: int
    succeededNodesRef: TypedLocalObjectReference
    failedNodesRef: TypedLocalObjectReference


# --------------------------------------------------------------------------- Job


class CelExpression(TypedDict, total=False):
    expression: str


class NodeHealthMonitor(TypedDict, total=False):
    cel: CelExpression


class JobWorkload(TypedDict, total=False):
    workloadRun: WorkloadRunSpec
    trainJob: dict[str, Any]


class JobSpec(TypedDict, total=False):
    workload: JobWorkload
    nodeHealthMonitor: NodeHealthMonitor
    checkpoint: dict[str, Any]
    stallMultiplier: int
    startupStallTimeoutSeconds: int
    thresholds: dict[str, str]
    measurementTimeout: str
    timeout: str
    schedulingStallGraceSeconds: int
    workloadMetadata: dict[str, Any]


class FailureLog(TypedDict, total=False):
    podName: str
    nodeName: str
    exitCode: int
    reason: str
    tail: str


class TrainingProgress(TypedDict, total=False):
    runUid: str
    mark: str
    since: str


class JobStatus(TypedDict, total=False):
    conditions: list[Condition]
    failedNodes: list[FailedNode]
    workloadRef: ObjectReference
    restartCount: int
    failureLog: FailureLog
    workloadStartTime: str
    trainingProgress: TrainingProgress
    completionTime: str
    measurements: dict[str, float]
    evidence: list[EvidenceRecord]


# --------------------------------------------------------------------------- Workflow


class JobTemplate(TypedDict, total=False):
    metadata: dict[str, Any]
    spec: JobSpec


class TopologySpec(TypedDict, total=False):
    topologyKey: str
    strictDomain: bool


class DiagnoseSpec(TypedDict, total=False):
    minGroupSize: int
    topologyKey: str
    withinDomains: bool


class ExecutionSpec(TypedDict, total=False):
    maxConcurrent: int
    timeoutPerJob: str
    retryFailedGroups: int


class OnFailureSpec(TypedDict, total=False):
    diagnose: DiagnoseSpec


class PlannedGroup(TypedDict, total=False):
    name: str
    nodes: list[str]
    domains: list[str]
    overflow: bool


class OrchestrationSpec(TypedDict, total=False):
    target: TargetSpec
    topology: TopologySpec
    diagnose: DiagnoseSpec
    onFailure: OnFailureSpec
    execution: ExecutionSpec
    iterations: int
    nodesPerJob: int
    perNode: bool
    testScale: str
    plannedGroups: list[PlannedGroup]


class PerformanceValidation(TypedDict, total=False):
    enabled: bool
    thresholds: dict[str, str]
    measurementTimeout: str


class Validation(TypedDict, total=False):
    performance: PerformanceValidation


class WorkflowSpec(TypedDict, total=False):
    namespace: str
    jobTemplate: JobTemplate
    orchestration: OrchestrationSpec
    dependencies: list[dict[str, Any]]
    overrides: list[dict[str, Any]]
    validation: Validation
    gangScheduler: dict[str, Any]


class GroupOutcome(TypedDict, total=False):
    name: str
    domains: list[str]
    domainNodeCounts: dict[str, int]
    overflow: bool
    phase: Phase
    retries: int
    jobRef: str
    startTime: str
    completionTime: str
    reason: str
    message: str
    measurements: dict[str, float]
    blamedFor: str
    blamedMembers: list[int]


class GroupStatus(GroupOutcome, total=False):
    nodes: list[str]


class IterationRecord(TypedDict, total=False):
    iteration: int
    groups: list[GroupOutcome]
    startTime: str
    completionTime: str


class AppliedOverride(TypedDict, total=False):
    index: int
    when: str
    patches: str
    noOp: bool


class ExcludedNode(TypedDict, total=False):
    name: str
    reason: ExclusionReason
    message: str


class DiagnoseStatus(TypedDict, total=False):
    """The model is open: diagnose/state.py stores its whole state here; these are the keys read outside it
    (the node lists of diagnose.state.STATUS_KEYS among them)."""

    stage: str
    round: int
    healthyNodes: list[str]
    suspectNodes: list[str]
    faultyNodes: list[str]
    inconclusiveNodes: list[str]
    intermittentNodes: list[str]
    untestedNodes: list[str]


class OrchestrationStatus(TypedDict, total=False):
    totalNodes: int
    nodesPerJob: int
    totalGroups: int
    currentIteration: int
    completedIterations: int
    iterationHistory: list[IterationRecord]
    detectedPlatform: str
    detectedGPUArchitecture: str
    excludedNodes: list[ExcludedNode]
    exclusionReason: str
    appliedOverrides: list[AppliedOverride]
    diagnose: DiagnoseStatus
    groups: list[GroupStatus]


class WorkflowStatus(TypedDict, total=False):
    conditions: list[Condition]
    namespace: str
    succeededNodesRef: TypedLocalObjectReference
    failedNodesRef: TypedLocalObjectReference
    failedNodes: list[FailedNode]
    orchestration: OrchestrationStatus
    startTime: str
    completionTime: str


# --------------------------------------------------------------------------- Kubernetes: Pod, Node, Lease


class ContainerStateWaiting(TypedDict, total=False):
    reason: str
    message: str


class ContainerStateRunning(TypedDict, total=False):
    startedAt: str


class ContainerStateTerminated(TypedDict, total=False):
    exitCode: int
    signal: int
    reason: str
    message: str
    startedAt: str
    finishedAt: str


class ContainerState(TypedDict, total=False):
    waiting: ContainerStateWaiting
    running: ContainerStateRunning
    terminated: ContainerStateTerminated


class ContainerStatus(TypedDict, total=False):
    name: str
    image: str
    ready: bool
    restartCount: int
    state: ContainerState
    lastState: ContainerState


class PodSpec(TypedDict, total=False):
    nodeName: str
    hostname: str
    hostNetwork: bool
    containers: list[dict[str, Any]]
    initContainers: list[dict[str, Any]]
    nodeSelector: dict[str, str]


class PodStatus(TypedDict, total=False):
    phase: Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"]
    reason: str
    message: str
    startTime: str
    conditions: list[Condition]
    containerStatuses: list[ContainerStatus]
    initContainerStatuses: list[ContainerStatus]


class Taint(TypedDict, total=False):
    key: str
    value: str
    effect: str


class NodeSpec(TypedDict, total=False):
    unschedulable: bool
    taints: list[Taint]
    providerID: str


class NodeStatus(TypedDict, total=False):
    conditions: list[Condition]
    capacity: dict[str, str]
    allocatable: dict[str, str]
    nodeInfo: dict[str, str]


class LeaseSpec(TypedDict, total=False):
    holderIdentity: str
    leaseDurationSeconds: int
    acquireTime: str
    renewTime: str
    leaseTransitions: int


# --------------------------------------------------------------------------- accessors
# Each returns the part inside the body itself (a view: a write to it is a write to the body), or a fresh
# empty dict when the part is absent or null. A raw body's values are Any, so no cast is needed here.


def meta_of(body: Raw) -> ObjectMeta:
    """metadata."""
    return body.get("metadata") or {}


def labels_of(body: Raw) -> dict[str, str]:
    """metadata.labels ({} when absent, or not a mapping: a damaged object read from a file is left unlabelled)."""
    labels = meta_of(body).get("labels")
    return labels if isinstance(labels, dict) else {}


def annotations_of(body: Raw) -> dict[str, str]:
    """metadata.annotations ({} when absent, or not a mapping)."""
    annotations = meta_of(body).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def conditions_of(body: Raw) -> list[Condition]:
    """status.conditions (of any kind: ours, Pods', Nodes')."""
    status = body.get("status") or {}
    return status.get("conditions") or []


# Per kind: its spec and status.


def certification_spec(body: Raw) -> CertificationSpec:
    return body.get("spec") or {}


def certification_status(body: Raw) -> CertificationStatus:
    return body.get("status") or {}


def creation_order(cert: Raw) -> tuple[str, int, str, str]:
    """Which certification was created first: its creationTimestamp (whole seconds), then the order the store created
    it in (status.createdResourceVersion, which the engine records from the resourceVersion it first sees; before any
    status, the resourceVersion itself), then namespace and name (a store whose resourceVersions are no numbers).
    Certifications created in one second were listed, queued and shown newest by name. Kubernetes calls resourceVersion
    opaque: it is compared here only as a tiebreak inside one second, where it is a number (etcd's revision, and every
    store of ours); one that is not sorts after those that are, and a label edited before the engine's first status
    write can swap two certifications of the same second."""
    meta = meta_of(cert)
    status = cert.get("status")
    sequence = status.get("createdResourceVersion") if isinstance(status, Mapping) else None
    if sequence is None and not status:
        sequence = meta.get("resourceVersion")
    number = int(sequence) if isinstance(sequence, str) and sequence.isdigit() else sys.maxsize  # unknown: after those known
    return (str(meta.get("creationTimestamp") or ""), number, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def workflow_spec(body: Raw) -> WorkflowSpec:
    return body.get("spec") or {}


def workflow_status(body: Raw) -> WorkflowStatus:
    return body.get("status") or {}


def orchestration_of(workflow: Raw) -> OrchestrationStatus:
    """A Workflow's status.orchestration."""
    return workflow_status(workflow).get("orchestration") or {}


def job_template_spec(workflow: Raw) -> JobSpec:
    """A Workflow's spec.jobTemplate.spec: what every Job it creates runs."""
    return (workflow_spec(workflow).get("jobTemplate") or {}).get("spec") or {}


RUN_SUFFIX = "-run"  # a Job's one WorkloadRun is named after it


def run_name(job_name: str) -> str:
    """The name of the WorkloadRun a Job creates."""
    return f"{job_name}{RUN_SUFFIX}"


def job_name_of_run(name: str) -> str:
    """The name of the Job whose WorkloadRun this is."""
    return name.removesuffix(RUN_SUFFIX)


def workload_run_of(spec: JobSpec) -> WorkloadRunSpec:
    """The WorkloadRun template in a Job spec (a Job's own, or a Workflow's job template)."""
    return (spec.get("workload") or {}).get("workloadRun") or {}


def measurement_of(workflow: Raw) -> MeasurementSpec:
    """How a Workflow's runs are measured (its job template's measurement): `parser` says by which tool's output."""
    return workload_run_of(job_template_spec(workflow)).get("measurement") or {}


def job_spec(body: Raw) -> JobSpec:
    return body.get("spec") or {}


def job_status(body: Raw) -> JobStatus:
    return body.get("status") or {}


def run_spec(body: Raw) -> WorkloadRunSpec:
    """A WorkloadRun's spec."""
    return body.get("spec") or {}


def run_status(body: Raw) -> WorkloadRunStatus:
    """A WorkloadRun's status."""
    return body.get("status") or {}


def pod_spec(body: Raw) -> PodSpec:
    return body.get("spec") or {}


def pod_status(body: Raw) -> PodStatus:
    return body.get("status") or {}


def node_spec(body: Raw) -> NodeSpec:
    return body.get("spec") or {}


def node_status(body: Raw) -> NodeStatus:
    return body.get("status") or {}


def lease_spec(body: Raw) -> LeaseSpec:
    return body.get("spec") or {}


def group_nodes(obj: Mapping[str, Any]) -> list[str]:
    """The node names a Job's group-nodes annotation lists ([] when it has none)."""
    annotations = annotations_of(obj)
    text = annotations.get(ANNOTATION_GROUP_NODES) if isinstance(annotations, Mapping) else None
    return [name for name in text.split(",") if name] if isinstance(text, str) else []


def job_label(job: Mapping[str, Any]) -> str:
    """A Job as people name it: its node when its group is one node, else its group and how many nodes."""
    nodes = group_nodes(job)
    if len(nodes) == 1:
        return nodes[0]
    return f"{labels_of(job).get(LABEL_GROUP) or job['metadata']['name']} ({len(nodes)} nodes)"
