"""nvcre.nvidia.com/v1alpha1: Certification -> Workflow -> Job -> WorkloadRun, spec and status.

Field names, enums, defaults and validation follow NVCRE (reference section 1); where we go further
(per-node evidence, SchedulingBlocked, Timeout attribution, planned groups) the additions are optional
fields, so NVCRE-shaped objects still validate.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, JsonValue, model_validator
from pydantic_core import PydanticCustomError

from nvcre_tui.engine.api.base import (
    API_VERSION,
    QUALIFIED_NAME_MAX,
    Condition,
    Duration,
    GangScheduler,
    LocalObjectReference,
    Name,
    ObjectMeta,
    ObjectReference,
    OpenModel,
    ResourceRequirements,
    TargetSpec,
    TypedLocalObjectReference,
    WireModel,
)
from nvcre_tui.engine.api.options import Category, CategoryOptions, WorkloadMetadata, option_aliases
from nvcre_tui.engine.api.vocabulary import RESULT_RUNNING

# Literal takes no constants: tests/test_vocabulary.py checks these spell the vocabulary's (phases, reasons, results).
Phase = Literal["Pending", "Running", "Succeeded", "Failed"]
CategoryPhase = Literal["Pending", "InProgress", "Succeeded", "Failed"]
NodeFailureReason = Literal[
    "HardwareFailureDetected", "ThresholdViolation", "WorkloadFailed", "Timeout", "SchedulingBlocked"
]
RawObject = dict[str, JsonValue]


class Resource(WireModel):
    """A top-level object: apiVersion, kind, metadata, spec, status."""

    KIND: ClassVar[str] = ""
    PLURAL: ClassVar[str] = ""
    # kubectl's short names; none may be another common CRD's, or `kubectl get` picks one with a warning
    # (cert-manager's Certificate is `cert`/`certs`, Argo's Workflow `wf`): ours carry the `nv` prefix.
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ()

    api_version: str = API_VERSION
    kind: str = ""
    metadata: ObjectMeta

    @model_validator(mode="before")
    @classmethod
    def _check_kind(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data.setdefault("kind", cls.KIND)
            data.setdefault("apiVersion", API_VERSION)
            if data["kind"] != cls.KIND:
                raise PydanticCustomError("kind", "must be {expected}, got {got}", {"key": "kind", "expected": cls.KIND, "got": repr(data["kind"])})
            if data["apiVersion"] != API_VERSION:
                raise PydanticCustomError(
                    "api_version", "must be {expected}, got {got}", {"key": "apiVersion", "expected": API_VERSION, "got": repr(data["apiVersion"])}
                )
        return data


class EvidenceRecord(WireModel):
    """Why a threshold passed or failed: the metric, what was measured, the expression."""

    metric: str
    measured: float | None = None
    expression: str
    passed: bool
    reason: str
    message: str = ""


class FailedNode(WireModel):
    """A node blamed for a failure, with its reason. A Job's entries are NVCRE's {name, reason, message}: the
    thresholds they missed are the Job's status.evidence, once (judging.results.job_failures joins them); a
    diagnosis's verdict carries its convicting test's evidence, as do entries an older engine wrote."""

    name: str
    reason: NodeFailureReason
    message: str = ""
    evidence: list[EvidenceRecord] | None = None


# --------------------------------------------------------------------------- Certification


class CategoryStatus(WireModel):
    """Per-category progress on a Certification (what NVSentinel's certification monitor reads)."""

    domain: str
    variant: str
    workflow_ref: ObjectReference | None = None
    status: CategoryPhase = "Pending"
    reason: str | None = None
    message: str | None = None
    # When it began waiting for eligible nodes: the 5-minute grace counts from then, not from the certification's
    # start (after an hour held by another certification, a brief "no eligible node" failed it at once).
    waiting_since: str | None = None
    succeeded_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes_ref: TypedLocalObjectReference | None = None


class CertificationSummary(WireModel):
    """Counts for `kubectl get` columns and dashboards."""

    passed_categories: str = "0/0"
    failed_nodes: int = 0
    excluded_nodes: int = 0
    result: Literal["PASSED", "INCOMPLETE", "FAILED", "RUNNING"] = RESULT_RUNNING


class CertificationSpec(CategoryOptions):
    """What a user writes: target nodes and categories. Global options go in `options`
    (the walkthrough's form) or inline in spec (NVCRE's newest form); both are accepted."""

    target: TargetSpec
    categories: Annotated[list[Category], Field(min_length=1, max_length=64)]
    gang_scheduler: GangScheduler | None = None
    options: CategoryOptions | None = None

    @model_validator(mode="after")
    def _no_option_twice(self) -> CertificationSpec:
        if self.options is None:
            return self
        inline = set(CategoryOptions.set_fields(self))
        both = sorted(inline & set(self.options.set_fields()))
        if both:
            field = CategoryOptions.model_fields[both[0]]
            raise PydanticCustomError(
                "option_twice", "set both inline in spec and in spec.options; keep one", {"key": field.alias or both[0]}
            )
        return self

    def global_options(self) -> CategoryOptions:
        """Inline and spec.options options, combined."""
        inline = CategoryOptions.model_validate(CategoryOptions.set_fields(self))
        return inline.merged_with(self.options)

    def category_options(self, index: int) -> CategoryOptions:
        """The options of category `index`: global, overridden by its own."""
        return self.global_options().merged_with(self.categories[index].options)


class CertificationStatus(WireModel):
    """Conditions plus one CategoryStatus per category."""

    conditions: list[Condition] | None = None
    category_statuses: list[CategoryStatus] | None = None
    summary: CertificationSummary | None = None
    observed_generation: int | None = None
    start_time: str | None = None
    completion_time: str | None = None
    # Its resourceVersion when the engine first wrote its status (its creation's, unless edited before): orders the
    # certifications created in one second (creationTimestamp has whole seconds) as they were created.
    created_resource_version: str | None = None


class Certification(Resource):
    """The certification a user asks for."""

    KIND: ClassVar[str] = "Certification"
    PLURAL: ClassVar[str] = "certifications"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("nvcert", "nvcerts")

    spec: CertificationSpec
    status: CertificationStatus | None = None

    @model_validator(mode="after")
    def _name_fits_a_label(self) -> Certification:
        if len(self.metadata.name) > NAME_MOST:
            raise PydanticCustomError("name_length", NAME_TOO_LONG, {"key": "metadata.name"})
        return self


# A Certification's name is stamped into label values of every child (nvcre.nvidia.com/certification): 63 at most.
NAME_MOST = 63
NAME_TOO_LONG = f"must be at most {NAME_MOST} characters (it becomes a label value)"


# --------------------------------------------------------------------------- WorkloadRun


class TorchFramework(WireModel):
    """torchrun a script or a module."""

    script: str | None = None
    module: str | None = None
    args: list[str] | None = None

    @model_validator(mode="after")
    def _script_xor_module(self) -> TorchFramework:
        if (self.script is None) == (self.module is None):
            raise PydanticCustomError("one_of", "set exactly one of script or module", {})
        return self


class MpiFramework(WireModel):
    """mpirun a binary across the group."""

    binary: str = Field(min_length=1)
    args: list[str] | None = None
    mpi_args: list[str] | None = None
    mpi_implementation: Literal["OpenMPI", "Intel", "MPICH"] = "OpenMPI"
    mpirun_path: str = "/usr/local/mpi/bin/mpirun"


class ExecFramework(WireModel):
    """Run a command as is (one process per node)."""

    command: Annotated[list[str], Field(min_length=1)]
    args: list[str] | None = None


class Framework(WireModel):
    """Exactly one of torch, mpi, exec."""

    torch: TorchFramework | None = None
    mpi: MpiFramework | None = None
    exec: ExecFramework | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Framework:
        chosen = [name for name in ("torch", "mpi", "exec") if getattr(self, name) is not None]
        if len(chosen) != 1:
            raise PydanticCustomError("one_of", "set exactly one of torch, mpi or exec (got {n})", {"n": len(chosen)})
        return self

    @property
    def kind(self) -> str:
        """torch, mpi or exec."""
        return next(name for name in ("torch", "mpi", "exec") if getattr(self, name) is not None)


class EnvVar(WireModel):
    """An environment variable."""

    name: str = Field(min_length=1)
    value: str = ""


class RunOrchestration(WireModel):
    """How a standalone WorkloadRun spreads over nodes (no diagnose)."""

    test_scale: Literal["intra-node", "intra-rack", "full-scale"] = "full-scale"
    repeat_count: Annotated[int, Field(ge=1)] = 1
    max_concurrent: Annotated[int, Field(ge=0)] = 0
    timeout_per_job: Duration = "24h"


class MeasurementSpec(WireModel):
    """Which parser reads the run's output and what it measures."""

    parser: Literal["nccl", "dcgm", "training"]
    test_type: str | None = None
    sample_interval: Duration = "30s"


class WorkloadRunSpec(WireModel):
    """One distributed run: an image, a framework, a set of nodes."""

    target: TargetSpec | None = None
    image: Annotated[str, Field(min_length=1, max_length=512)]
    framework: Framework
    num_nodes: Annotated[int, Field(ge=1)]
    config: RawObject | None = None
    gpus_per_node: Annotated[int, Field(ge=1)] | None = None
    mlnx_per_node: Annotated[int, Field(ge=0)] | None = None
    nic_resource_name: Annotated[str, Field(max_length=QUALIFIED_NAME_MAX)] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    env: list[EnvVar] | None = None
    volumes: list[RawObject] | None = None
    volume_mounts: list[RawObject] | None = None
    enable_mnnvl: bool | None = Field(default=None, alias="enableMNNVL")
    resources: ResourceRequirements | None = None
    extended_resources: dict[str, int | str] | None = None
    shm_size_limit: str | None = None
    init_containers: list[RawObject] | None = None
    orchestration: RunOrchestration | None = None
    thresholds: dict[str, str] | None = None
    measurement: MeasurementSpec | None = None
    gang_scheduler: GangScheduler | None = None
    workload_metadata: WorkloadMetadata | None = None
    tolerations: list[RawObject] | None = None
    privileged: bool | None = None
    host_network: bool | None = None
    resource_claims: list[str] | None = None
    priority_class_name: Name | None = None


class WorkloadRunStatus(WireModel):
    """Where the run is: phase, timing, exit, and what its output measured."""

    conditions: list[Condition] | None = None
    phase: Literal["Pending", "Scheduling", "Running", "Succeeded", "Failed"] | None = None
    reason: str | None = None
    message: str | None = None
    nodes: list[str] | None = None
    pending_since: str | None = None
    blocked_nodes: list[str] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    exit_code: int | None = None
    failed_node: str | None = None
    log_ref: str | None = None
    measurements: dict[str, float] | None = None
    parse_failure: str | None = None
    workflow_ref: ObjectReference | None = None
    detected_platform: str | None = None
    detected_gpu_architecture: str | None = Field(default=None, alias="detectedGPUArchitecture")
    resolved_gpus_per_node: int | None = None
    succeeded_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes_ref: TypedLocalObjectReference | None = None


class WorkloadRun(Resource):
    """One distributed run (torch, mpi or exec); the Job creates one per group and iteration."""

    KIND: ClassVar[str] = "WorkloadRun"
    PLURAL: ClassVar[str] = "workloadruns"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("nvwlr",)

    spec: WorkloadRunSpec
    status: WorkloadRunStatus | None = None


# --------------------------------------------------------------------------- Job


class CelExpression(WireModel):
    """A CEL expression (node health: true means the node is unhealthy)."""

    expression: Annotated[str, Field(min_length=1, max_length=2048)]


class NodeHealthMonitor(WireModel):
    """Node health CEL run on the Job's nodes while it runs."""

    cel: CelExpression


class JobWorkload(WireModel):
    """Discriminated union with exactly one field: our WorkloadRun template, or a raw Kubeflow TrainJob."""

    workload_run: WorkloadRunSpec | None = None
    train_job: RawObject | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> JobWorkload:
        if (self.workload_run is None) == (self.train_job is None):
            raise PydanticCustomError("one_of", "set exactly one of workloadRun or trainJob", {})
        return self


class CheckpointSpec(WireModel):
    """Restart from checkpoint."""

    pvc_name: str = Field(min_length=1)
    max_restarts: Annotated[int, Field(ge=0)] = 0


STARTUP_STALL_SECONDS = 1200  # a training's first step may take this long (NVCRE's default; judging/stall.py)


class JobSpec(WireModel):
    """One group's run: the workload, health monitor, thresholds and budgets."""

    workload: JobWorkload
    node_health_monitor: NodeHealthMonitor | None = None
    checkpoint: CheckpointSpec | None = None
    stall_multiplier: Annotated[int, Field(ge=1)] | None = None
    startup_stall_timeout_seconds: Annotated[int, Field(ge=1)] = STARTUP_STALL_SECONDS
    thresholds: dict[str, str] | None = None
    measurement_timeout: Duration = "5m"
    timeout: Duration | None = None
    scheduling_stall_grace_seconds: Annotated[int, Field(ge=1)] = 300
    workload_metadata: WorkloadMetadata | None = None


class FailureLog(WireModel):
    """The tail of the failing pod's log."""

    pod_name: str | None = None
    node_name: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    tail: Annotated[str, Field(max_length=32768)] = ""


class TrainingProgress(WireModel):
    """What a running training's log last showed of its progress, and when the engine first saw that: the stall
    clock of engine/judging/stall.py, kept so that a restarted engine goes on from it."""

    run_uid: str  # the WorkloadRun it was seen in (a retry starts again)
    mark: str | None = None  # None: no step logged yet
    since: str


class JobStatus(WireModel):
    """Conditions, per-node failures with evidence, and the run's measurements."""

    conditions: list[Condition] | None = None
    failed_nodes: list[FailedNode] | None = None
    workload_ref: ObjectReference | None = None
    restart_count: int | None = None
    failure_log: FailureLog | None = None
    workload_start_time: str | None = None
    training_progress: TrainingProgress | None = None
    completion_time: str | None = None
    measurements: dict[str, float] | None = None
    evidence: list[EvidenceRecord] | None = None


class Job(Resource):
    """An nvcre Job (not batch/v1): one group of nodes, one iteration."""

    KIND: ClassVar[str] = "Job"
    PLURAL: ClassVar[str] = "jobs"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("nvjob",)

    spec: JobSpec
    status: JobStatus | None = None


# --------------------------------------------------------------------------- Workflow


class JobTemplate(WireModel):
    """metadata + spec stamped into every Job."""

    metadata: RawObject | None = None
    spec: JobSpec


class TopologySpec(WireModel):
    """Group by a node label (cliques, racks)."""

    topology_key: str = Field(min_length=1)
    strict_domain: bool = False


class DiagnoseSpec(WireModel):
    """Adaptive fault isolation."""

    min_group_size: Annotated[int, Field(ge=1)] = 2
    topology_key: str | None = None
    # No test spans two domains: set at render for onFailure of intra-rack runs on NVL domains with MNNVL on.
    within_domains: bool = False


class ExecutionSpec(WireModel):
    """Concurrency, budgets and retries."""

    max_concurrent: Annotated[int, Field(ge=0)] = 0
    timeout_per_job: Duration | None = None
    retry_failed_groups: Annotated[int, Field(ge=0)] = 0


class OnFailureSpec(WireModel):
    """What a Workflow does when its groups fail: diagnose narrows the failed groups down to per-node verdicts."""

    diagnose: DiagnoseSpec | None = None


class PlannedGroup(WireModel):
    """A group as planned when the Workflow was created: what `certification render` showed."""

    name: str = Field(min_length=1)
    nodes: list[str] = Field(min_length=1)
    domains: list[str] | None = None
    overflow: bool = False


class OrchestrationSpec(WireModel):
    """How nodes become groups and groups become Jobs.

    `plannedGroups` is the first iteration's plan, recorded by the Certification controller at creation; the
    Workflow runs exactly these groups while every node in them is still eligible (else it partitions again and
    says why in a PlanChanged event). A Workflow written without it (or planned over more than 2,048 nodes, whose
    plan is not recorded) is partitioned when it starts.
    """

    target: TargetSpec | None = None
    topology: TopologySpec | None = None
    diagnose: DiagnoseSpec | None = None
    on_failure: OnFailureSpec | None = None
    execution: ExecutionSpec = Field(default_factory=ExecutionSpec)
    iterations: Annotated[int, Field(ge=1)] = 1
    nodes_per_job: Annotated[int, Field(ge=1)] | None = None
    per_node: bool = False
    test_scale: str | None = None
    planned_groups: list[PlannedGroup] | None = None


class StringMatch(WireModel):
    """equals / in / notIn."""

    equals: str | None = None
    in_: list[str] | None = Field(default=None, alias="in")
    not_in: list[str] | None = None


class WhenSpec(WireModel):
    """When an override or dependency applies; empty always matches."""

    gpu_architecture: StringMatch | None = Field(default=None, alias="gpuArchitecture")
    platform: StringMatch | None = None
    workload_kind: str | None = None
    expression: str | None = None


class Dependency(OpenModel):
    """A raw object created with the Workflow, with an optional condition."""

    when: WhenSpec | None = None


class Override(WireModel):
    """A patch applied when its `when` matches."""

    when: WhenSpec
    job_template: RawObject | None = None
    job_template_patch: list[RawObject] | None = None
    dependencies: list[Dependency] | None = None
    orchestration: RawObject | None = None


class PerformanceValidation(WireModel):
    """Thresholds checked once a Job's workload succeeds."""

    enabled: bool = False
    thresholds: dict[str, str] | None = None
    measurement_timeout: Duration | None = None


class Validation(WireModel):
    """validation.performance."""

    performance: PerformanceValidation | None = None


class WorkflowSpec(WireModel):
    """One category on its nodes: the Job template and how to orchestrate it."""

    namespace: str | None = None
    job_template: JobTemplate
    orchestration: OrchestrationSpec
    dependencies: list[Dependency] | None = None
    overrides: list[Override] | None = None
    validation: Validation | None = None
    gang_scheduler: GangScheduler | None = None


class GroupOutcome(WireModel):
    """A group of a finished iteration: where it ended (iterationHistory; its nodes are the current group's of that
    name, or diagnose's test of that name: a copy per iteration would outgrow the object at 10,000 nodes)."""

    name: str
    domains: list[str] | None = None
    domain_node_counts: dict[str, int] | None = None
    overflow: bool = False
    phase: Phase = "Pending"
    retries: int = 0
    job_ref: str | None = None
    start_time: str | None = None
    completion_time: str | None = None
    reason: str | None = None
    message: str | None = None  # why a failed group tested no node (deleted, never created, a service down)
    measurements: dict[str, float] | None = None
    # Whom its Job blamed (failedNodes), kept so that a Job deleted by hand takes no blame with it: the reason, and
    # where not every node of the group (a culprit), their positions in the group's nodes (a name would be up to 63
    # bytes a group: a crash blamed on rank 0 in each of 1,250 cliques of 8 is 78 KiB of names at 10,000 nodes).
    blamed_for: str | None = None
    blamed_members: list[int] | None = None


class GroupStatus(GroupOutcome):
    """One group of nodes and where it is. A diagnosing Workflow leaves `nodes` (and `domains`) out: its diagnose
    plan names them, and a second copy took a 10,000-node diagnose near the object limit."""

    nodes: list[str] | None = None


class IterationRecord(WireModel):
    """A finished iteration's groups."""

    iteration: int
    groups: list[GroupOutcome]
    start_time: str | None = None
    completion_time: str | None = None


class AppliedOverride(WireModel):
    """An override that matched, and what it changed."""

    index: int
    when: str
    patches: str = ""
    no_op: bool = False


# Why discovery left a node out (planning/discovery.py says each in words).
ExclusionReason = Literal["Cordoned", "NotReady", "PartitionedGPUs", "OtherGPUArchitecture", "InsufficientGPUs", "InsufficientResources",
                          "NoExecuteTaint", "NodeBusy", "NotGPUNode", "LeftTarget", "NodeNotFound"]


class ExcludedNode(WireModel):
    """A node left out before the run, and why."""

    name: str
    reason: ExclusionReason
    message: str = ""


class DiagnoseStatus(OpenModel):
    """Fault-isolation state (stage, round, healthy / suspect / faulty nodes, verdicts)."""

    stage: str = "intra-screening"
    round: int = 0
    healthy_nodes: list[str] | None = None
    suspect_nodes: list[str] | None = None
    faulty_nodes: list[str] | None = None
    inconclusive_nodes: list[str] | None = None


class OrchestrationStatus(WireModel):
    """Groups, iterations, detection results and exclusions."""

    total_nodes: int = 0
    nodes_per_job: int = 0
    total_groups: int = 0
    current_iteration: int = 1
    completed_iterations: int = 0
    iteration_history: list[IterationRecord] | None = None
    detected_platform: str | None = None
    detected_gpu_architecture: str | None = Field(default=None, alias="detectedGPUArchitecture")
    excluded_nodes: list[ExcludedNode] | None = None
    exclusion_reason: str | None = None
    applied_overrides: list[AppliedOverride] | None = None
    diagnose: DiagnoseStatus | None = None
    groups: list[GroupStatus] | None = None

    @model_validator(mode="after")
    def _groups_name_their_nodes(self) -> OrchestrationStatus:
        # Only the diagnose plan may stand in for a group's nodes.
        if self.diagnose is None:
            for index, group in enumerate(self.groups or []):
                if group.nodes is None:
                    raise PydanticCustomError("missing", "required field is missing", {"key": f"groups[{index}].nodes"})
        return self


class WorkflowStatus(WireModel):
    """Conditions, result ConfigMap refs, orchestration state and per-node failures."""

    conditions: list[Condition] | None = None
    namespace: str | None = None
    succeeded_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes: list[FailedNode] | None = None  # a diagnosis's verdicts; other blames stay on the Jobs (controllers.iterations.blamed_nodes)
    orchestration: OrchestrationStatus | None = None
    start_time: str | None = None
    completion_time: str | None = None


class Workflow(Resource):
    """One category of a Certification."""

    KIND: ClassVar[str] = "Workflow"
    PLURAL: ClassVar[str] = "workflows"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("nvwf",)

    spec: WorkflowSpec
    status: WorkflowStatus | None = None


RESOURCES: tuple[type[Resource], ...] = (Certification, Workflow, Job, WorkloadRun)
RESOURCES_BY_KIND: dict[str, type[Resource]] = {model.KIND: model for model in RESOURCES}

__all__ = [
    "Category", "CategoryOptions", "Certification", "Condition", "FailedNode", "Job", "RESOURCES",
    "RESOURCES_BY_KIND", "Resource", "Workflow", "WorkloadRun", "option_aliases",
]
