"""A simulated fleet, described as data: nodes, physical figures, faults, seed and speed.

Scenario files are YAML; `default_scenario()` is the fleet the console opens on when no cluster is
configured: 32 nodes x 8 H100 in 4 cliques, one slow GPU (gpu-node-07) and one degraded NIC (gpu-node-12).
"""

from __future__ import annotations

import copy
import re
import string
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, BeforeValidator, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, ValidationInfo,
                      field_validator, model_serializer, model_validator)
from pydantic_core import PydanticCustomError

from nvcre_tui.engine.api.base import Condition, Duration, LabelValue, Name, ResourceQuantity, WireModel, check_label_keys
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.api.vocabulary import (
    LABEL_CUDA_DRIVER,
    LABEL_CUDA_DRIVER_OLD_PARTS,
    LABEL_CUDA_DRIVER_PARTS,
    LABEL_CUDA_RUNTIME,
    LABEL_CUDA_RUNTIME_OLD_PARTS,
    LABEL_CUDA_RUNTIME_PARTS,
    LABEL_GPU_CLIQUE,
    LABEL_GPU_COUNT,
    LABEL_GPU_PRESENT,
    LABEL_GPU_PRODUCT,
    LABEL_HOSTNAME,
    LABEL_MIG_STRATEGY,
    RESOURCE_GPU,
    RESOURCE_NIC,
)
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs import load_yaml_documents
from nvcre_tui.engine.names import DNS_SUBDOMAIN, is_label_name
from nvcre_tui.engine.units import listed

FaultType = Literal[
    "slow-gpu", "degraded-link", "degraded-nic", "xid", "hang", "flaky", "unschedulable", "cordon", "degraded-fabric",
    "diag-skipped",
]


# Ranges (README, "Ranges"): figures past these are typos, and would overflow the simulator's arithmetic.
MAX_NODES = 20_000
MAX_RATE = 1e5  # GB/s, TFLOP/s
MAX_SECONDS = 86_400.0  # one step, start-up, scheduling, DCGM base time
MAX_LATENCY_US = 1e6
MAX_SPEED = 1e5  # simulated seconds per real second
_TEMPLATE_SPEC = r"^0?[0-9]{0,2}[dxX]?$"  # {index:05d}, {index}, {index:x}
# Generated names must be valid Kubernetes names and label values (and so carry no escape sequences).
_NAME_PREFIX = r"^([a-z0-9][-a-z0-9.]*)?$"
_LABEL_PREFIX = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?$"
_PRINTABLE = r"^[^\x00-\x1f\x7f-\x9f]*$"
MAX_NODE_NAME = 63  # a label value's length; a node name is the value of its kubernetes.io/hostname label
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MAX_ANNOTATION = 256 * 1024  # the API server's limit on all of an object's annotations together


class _Model(WireModel):
    """Scenario models: no NaN or infinity (YAML's .nan / .inf) anywhere."""

    model_config = ConfigDict(allow_inf_nan=False)


def _label_keys(labels: dict[str, Any] | None) -> dict[str, Any] | None:
    """Every key a Kubernetes label (or annotation) key: [prefix/]name, as the API server takes it."""
    check_label_keys(labels)
    return labels


def _annotation_text(value: str) -> str:
    """Any text but control characters (newlines and tabs are fine: an annotation may hold a document)."""
    if _CONTROL_BUT_LINES.search(value):
        shown = repr(value) if len(value) <= 60 else repr(value[:57]) + "..."
        raise ValueError(f"must be text without control characters (newlines and tabs are fine), got {shown}")
    return value


def _version_label(value: str) -> str:
    """A version GPU Feature Discovery writes into labels, whole and split at '.': each a label value."""
    if not value or not all(is_label_name(part) for part in [value, *filter(None, value.split("."))]):
        raise ValueError(f"must be a version such as 570.124.06 (letters, digits, '-', '_', '.'; a letter or digit "
                         f"at each end of every part), got {value[:60]!r}")
    return value


def _timestamp(value: Any) -> Any:
    """YAML reads an unquoted 2026-09-28T23:32:09Z as a date: back to the RFC 3339 text it was."""
    if isinstance(value, date):  # a datetime too; without a timezone it is then refused as no RFC 3339 time
        return re.sub(r"\+00:00$", "Z", value.isoformat())
    return value


def _check_timestamp(value: str) -> str:
    try:
        parse_time(value)
    except ValueError:
        raise ValueError(f"must be an RFC 3339 time such as 2026-11-29T10:00:00Z, got {value[:60]!r}") from None
    return value


Timestamp = Annotated[str, BeforeValidator(_timestamp), AfterValidator(_check_timestamp)]
Version = Annotated[str, Field(max_length=63), AfterValidator(_version_label)]
Text = Annotated[str, Field(min_length=1, max_length=200, pattern=_PRINTABLE)]


def _check_template(template: str) -> str:
    """providerID: literal text with {index} fields (an integer format such as {index:05d})."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ValueError(f"not a template like aws:///us-east-1a/i-{{index:05d}}: {error}") from None
    for _, field, spec, conversion in fields:
        if field is None:
            continue
        if field != "index" or conversion or not re.match(_TEMPLATE_SPEC, spec or ""):
            raise ValueError(f"only {{index}} fields with an integer format such as {{index:05d}} are allowed, got {{{field}{':' + spec if spec else ''}}}")
    return template


class SoftwareBaseline(_Model):
    """A node's software baseline (status.nodeInfo and the GPU Operator's feature-discovery labels), as a
    pool sets it and a change alters it; None: the BASELINE default (or unchanged). Left None so a
    scenario written before these fields compares equal to itself."""

    kubelet_version: Text | None = None
    kernel_version: Text | None = None
    os_image: Text | None = None
    container_runtime_version: Text | None = None
    driver_version: Version | None = None  # also labels (nvidia.com/cuda.driver-version.*)
    cuda_runtime_version: Version | None = None
    mig_strategy: LabelValue | None = None


NODE_ROOM = {"cpu": "192", "memory": "2000Gi"}  # what a pool's Nodes allocate of cpu and memory unless it says


class NodePool(SoftwareBaseline):
    """`count` identical nodes named <namePrefix><index>, spread evenly over `cliques`."""

    count: Annotated[int, Field(ge=1, le=MAX_NODES)]
    name_prefix: Annotated[str, Field(max_length=200, pattern=_NAME_PREFIX)] = "gpu-node-"
    first_index: Annotated[int, Field(ge=0, le=999_999)] = 1
    name_digits: Annotated[int, Field(ge=1, le=6)] = 2
    gpu_product: LabelValue = "NVIDIA-H100-80GB-HBM3"
    gpus_per_node: Annotated[int, Field(ge=1, le=16)] = 8
    allocatable_gpus: Annotated[int, Field(ge=0, le=64)] | None = None
    # What each Node allocates of cpu and memory (a server of 512 GB keeps under 500Gi): a workload's requests follow
    # them (planning/fitting.py), and a pod asking more is never placed (physics.plan_outcome). None: NODE_ROOM's.
    allocatable_cpu: ResourceQuantity | None = None
    allocatable_memory: ResourceQuantity | None = None
    nics_per_node: Annotated[int, Field(ge=0, le=64)] = 8
    cliques: Annotated[int, Field(ge=1, le=MAX_NODES)] = 1
    clique_prefix: Annotated[str, Field(max_length=50, pattern=_LABEL_PREFIX)] = "clique-"
    provider_id: Annotated[str, Field(max_length=200), AfterValidator(_check_template)] = Field(
        default="aws:///us-east-1a/i-{index:05d}", alias="providerID")
    labels: dict[Annotated[str, Field(max_length=317, pattern=_PRINTABLE)], LabelValue] = Field(
        default_factory=dict)
    gpu_present: bool = True

    _label_keys = field_validator("labels")(_label_keys)

    @model_validator(mode="after")
    def _allocatable_within_installed(self) -> NodePool:
        if self.allocatable_gpus is not None and self.allocatable_gpus > self.gpus_per_node:
            raise ValueError(f"allocatableGpus ({self.allocatable_gpus}) cannot exceed the GPUs installed (gpusPerNode {self.gpus_per_node})")
        if self.cliques > self.count:  # else fewer cliques than asked, without a word
            raise ValueError(f"cliques ({self.cliques}) cannot exceed the pool's nodes (count {self.count}): a clique holds one node at least")
        if LABEL_GPU_PRESENT in self.labels:  # the field writes it last: the label would be dropped without a word
            raise ValueError(f"labels: {LABEL_GPU_PRESENT} is the pool's gpuPresent (true or false), not a label to set")
        return self

    @model_validator(mode="after")
    def _names_a_server_takes(self) -> NodePool:
        """Every node name a DNS subdomain of at most 63 characters (it is also the kubernetes.io/hostname label's
        value). The names differ in their digits only, so the last, the longest, stands for all."""
        last = self.node_name(self.first_index + self.count - 1)
        if len(last) > MAX_NODE_NAME:
            problem = (f"gives node names of up to {len(last)} characters; a node name is also its {LABEL_HOSTNAME} "
                       f"label value, of at most {MAX_NODE_NAME}")
        elif not re.fullmatch(DNS_SUBDOMAIN, last):
            problem = (f"gives node names such as {last!r}, which no API server takes: each part between dots must "
                       f"start and end with a letter or digit")
        else:
            return self
        raise PydanticCustomError("node_name", "{problem}", {"key": "namePrefix", "problem": problem})

    def node_name(self, index: int) -> str:
        """The name of the pool's node numbered `index`."""
        return f"{self.name_prefix}{index:0{self.name_digits}d}"


class Taint(_Model):
    """A Node taint as the API server takes it: a label key, an optional label value, one of the three effects."""

    key: Annotated[str, Field(min_length=1, max_length=317, pattern=_PRINTABLE)]
    value: LabelValue | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

    @field_validator("key")
    @classmethod
    def _key(cls, key: str) -> str:
        check_label_keys({key: ""})
        return key


class NodeChange(SoftwareBaseline):
    """One node's Node object as the scenario changes it, from time `at` (absent: from the start).

    What an administrator or NVSentinel does to a Node: upgrade its driver, label, annotate or taint it.
    Labels and annotations are merged (a null value removes the key); taints, when given, replace them all.
    Keys, values and taints follow the API server's rules, so every change is one a cluster would take.
    """

    node: str = Field(min_length=1)
    at: Duration | None = None
    labels: dict[Annotated[str, Field(max_length=317, pattern=_PRINTABLE)], LabelValue | None] | None = None
    annotations: dict[Annotated[str, Field(max_length=317, pattern=_PRINTABLE)],
                      Annotated[str, Field(max_length=MAX_ANNOTATION), AfterValidator(_annotation_text)] | None] | None = None
    taints: Annotated[list[Taint], Field(max_length=100)] | None = None

    _label_keys = field_validator("labels", "annotations")(_label_keys)

    @field_validator("taints")
    @classmethod
    def _one_taint_per_key_and_effect(cls, taints: list[Taint] | None) -> list[Taint] | None:
        seen = Counter((taint.key, taint.effect) for taint in taints or [])
        twice = [f"{key}:{effect}" for (key, effect), count in seen.items() if count > 1]
        if twice:
            raise ValueError(f"must be unique by key and effect: {', '.join(twice)} is given twice")
        return taints


class Physics(_Model):
    """Healthy figures the model scales faults from (GB/s of nccl-tests bus bandwidth).

    The `*Gbps` fields are GB/s (bytes), as every bandwidth nvcre shows: a 400 Gb/s NIC is `nicGbps: 50`. The names
    stay as the first scenario files spelt them (a renamed field would make every stored fleet another scenario).
    """

    nvlink_bus_gbps: Annotated[float, Field(gt=0, le=MAX_RATE)] = 480.0
    nic_gbps: Annotated[float, Field(gt=0, le=MAX_RATE)] = 50.0
    rack_fabric_efficiency: Annotated[float, Field(gt=0, le=1)] = 0.92
    noise: Annotated[float, Field(ge=0, le=0.2)] = 0.01
    tflops_per_gpu: Annotated[float, Field(gt=0, le=MAX_RATE)] = 620.0
    step_time_sec: Annotated[float, Field(gt=0, le=MAX_SECONDS)] = 2.9
    startup_sec: Annotated[float, Field(ge=0, le=MAX_SECONDS)] = 45.0
    # Fixed cost of one collective: the small-message floor of the nccl-tests size curve.
    nvlink_latency_us: Annotated[float, Field(ge=0, le=MAX_LATENCY_US)] = 25.0
    network_latency_us: Annotated[float, Field(ge=0, le=MAX_LATENCY_US)] = 60.0
    # Nodes without RDMA NICs fall back to TCP sockets over the host network.
    socket_gbps: Annotated[float, Field(gt=0, le=MAX_RATE)] = 3.0
    # Share of a healthy training step spent in communication (the rest scales with the slowest GPU).
    training_comm_share: Annotated[float, Field(ge=0, le=1)] = 0.2
    # The first logged training interval is slower (graph capture, allocator warm-up).
    training_warmup_factor: Annotated[float, Field(ge=1, le=100)] = 1.8
    # Pod start after scheduling, and dcgmi diag time beyond the configured test durations: unset, a run lasts what
    # engine/dcgm_time's phase table says (as planning's least timeoutPerJob reads it); set, a scenario's own.
    scheduling_sec: Annotated[float, Field(ge=0, le=MAX_SECONDS)] = 5.0
    dcgm_base_sec: Annotated[float, Field(ge=0, le=MAX_SECONDS)] | None = None


# Validation context of a scenario a user wrote (load_scenario): a field its fault type does not take is refused even
# at its default value, which only a state written by an earlier nvcre may carry (see same_fleet).
USER_FILE = "userFile"

# The optional fields each fault type takes (besides type, at, and node, or cliques for degraded-fabric): what the
# physics (sim/physics.py) and the fleet (sim/fleet.py) read of it. Any other is refused, not ignored: a `probability`
# on a cordon or a `factor` on a hang would otherwise do nothing, silently (only the defaults, factor 0.5 and xid 79,
# pass on any type in a stored state, whose wire form once wrote them on every fault; never in a user's file). `probability` is what every per-run fault
# takes ("persistent unless probability is given"); a cordon happens once, at `at`. A slow GPU's `gpu` says which GPU.
FAULT_FIELDS: dict[str, frozenset[str]] = {
    "slow-gpu": frozenset({"gpu", "factor", "probability"}),
    "degraded-link": frozenset({"factor", "probability"}),
    "degraded-nic": frozenset({"factor", "probability"}),
    "degraded-fabric": frozenset({"factor", "probability"}),
    "xid": frozenset({"gpu", "xid", "probability"}),
    "flaky": frozenset({"gpu", "probability"}),
    "hang": frozenset({"probability"}),
    "unschedulable": frozenset({"probability"}),
    "diag-skipped": frozenset({"probability"}),
    "cordon": frozenset(),
}


OPTIONAL_FAULT_FIELDS = frozenset().union(*FAULT_FIELDS.values())


class Fault(_Model):
    """Something wrong with a node, from time `at` (simulated time since the fleet epoch; absent: from the start).

    xid: runs on the node that are running at `at` fail then, later ones fail early (the GPU is gone);
    cordon: the fleet sets spec.unschedulable at `at`; diag-skipped: dcgmi diag on the node skips every test
    but the software checks (a pass that proves little, marked as such); the other types apply to runs starting at or after `at`.
    degraded-fabric names `cliques` instead of a node: with two, a multi-node run spanning both (and only such a
    run) gets `factor` on its bus bandwidth; with one, every run leaving that clique does. Persistent unless
    `probability` is given (flaky: 0.5 when not given).
    FAULT_FIELDS says which of gpu, factor, xid and probability a type takes.
    """

    type: FaultType
    node: str = ""
    cliques: Annotated[list[str], Field(min_length=1, max_length=2)] | None = None
    gpu: Annotated[int, Field(ge=0, le=63)] | None = None
    factor: Annotated[float, Field(gt=0, le=1)] = 0.5
    at: Duration | None = None
    xid: Annotated[int, Field(ge=0, le=65_535)] = 79
    probability: Annotated[float, Field(ge=0, le=1)] | None = None

    @field_validator(*sorted(OPTIONAL_FAULT_FIELDS))
    @classmethod
    def _taken_by_the_type(cls, value: Any, info: ValidationInfo) -> Any:
        kind = info.data.get("type")  # absent when the type itself is wrong: that error is the one to read
        if kind in FAULT_FIELDS and info.field_name is not None and info.field_name not in FAULT_FIELDS[kind]:
            if value == cls.model_fields[info.field_name].default and not (info.context or {}).get(USER_FILE):
                return value  # a state written before the wire form left them out holds factor 0.5 and xid 79 on every fault
            takes = ["cliques" if kind == "degraded-fabric" else "node", "at", *sorted(FAULT_FIELDS[kind])]
            raise ValueError(f"a {kind} fault does not take {info.field_name} (it takes {', '.join(takes[:-1])} and {takes[-1]})")
        return value

    @model_serializer(mode="wrap")
    def _only_its_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields its type takes: a dump written to a file loads back, where a user's file may not carry others."""
        data: dict[str, Any] = handler(self)
        for name in OPTIONAL_FAULT_FIELDS - FAULT_FIELDS[self.type]:
            data.pop(name, None)  # each a single word: its wire name is its field name
        return data

    @model_validator(mode="after")
    def _target(self) -> Fault:
        if self.type == "degraded-fabric":
            if not self.cliques or self.node:
                raise ValueError("a degraded-fabric fault names one or two cliques (cliques: [clique-1, clique-2]) and no node")
            if len(set(self.cliques)) != len(self.cliques):
                raise ValueError("a degraded-fabric fault names two different cliques")
        elif not self.node or self.cliques:
            raise ValueError(f"a {self.type} fault names a node (node: gpu-node-01) and no cliques")
        return self


# NVSentinel's ValidationRequest (nvsentinel.nvidia.com/v1alpha1, its Go types in api/nvsentinel/v1alpha1), as far
# as a scenario writes one: what the console reads (engine/history/nvsentinel.py) and the fields around it, checked
# as the CRD's schema checks them, so a request the simulator registers is one NVSentinel could have written.
Phase = Literal["Pending", "Running", "Succeeded", "Failed"]


class RequestMetadata(_Model):
    name: Name
    labels: dict[Annotated[str, Field(max_length=317, pattern=_PRINTABLE)], LabelValue] | None = None
    annotations: dict[Annotated[str, Field(max_length=317, pattern=_PRINTABLE)],
                      Annotated[str, Field(max_length=MAX_ANNOTATION), AfterValidator(_annotation_text)]] | None = None

    _label_keys = field_validator("labels", "annotations")(_label_keys)


class RequestNode(_Model):
    name: Name


class RequestSpec(_Model):
    nodes: Annotated[list[RequestNode], Field(min_length=1, max_length=MAX_NODES)]
    tests: Annotated[list[Text], Field(max_length=100)] | None = None


class RequestAttempt(_Model):
    object_name: Name | None = None
    phase: Phase | None = None
    failure_reason: Literal["TestFailed", "TestTimeout", "NodeReadinessViolation", "BatchMinimumNotMet"] | None = None
    failed_nodes: Annotated[list[Name], Field(max_length=MAX_NODES)] | None = None
    start_time: Timestamp | None = None
    end_time: Timestamp | None = None


class RequestTestGroup(_Model):
    name: Text
    provider: Text
    phase: Phase | None = None
    nodes: Annotated[list[Name], Field(max_length=MAX_NODES)] | None = None
    tests: Annotated[list[Text], Field(max_length=100)] | None = None
    attempts: Annotated[list[RequestAttempt], Field(max_length=100)] | None = None


class RequestSkipped(_Model):
    nodes: Annotated[list[Name], Field(max_length=MAX_NODES)] | None = None
    tests: Annotated[list[Text], Field(max_length=100)] | None = None


class RequestCondition(Condition):
    """A status condition, its time read as the request's other times are (an unquoted YAML time is a time)."""

    last_transition_time: Timestamp | None = None


class RequestStatus(_Model):
    phase: Phase | None = None
    test_groups: Annotated[list[RequestTestGroup], Field(max_length=1000)] | None = None
    skipped: RequestSkipped | None = None
    start_time: Timestamp | None = None
    completion_time: Timestamp | None = None
    conditions: Annotated[list[RequestCondition], Field(max_length=100)] | None = None


class ValidationRequest(_Model):
    """A cluster-scoped ValidationRequest the fleet registers (as NVSentinel's lifecycle manager would create it)."""

    api_version: Literal["nvsentinel.nvidia.com/v1alpha1"] | None = None
    kind: Literal["ValidationRequest"] | None = None
    metadata: RequestMetadata
    spec: RequestSpec
    status: RequestStatus | None = None

    @model_validator(mode="after")
    def _nodes_of_the_request(self) -> ValidationRequest:
        """Test groups and failed nodes are among spec.nodes (else the console would show them nowhere)."""
        named = {node.name for node in self.spec.nodes}
        for g, group in enumerate(self.status.test_groups or [] if self.status else []):
            places = [(f"status.testGroups[{g}].nodes", group.nodes or [])]
            places += [(f"status.testGroups[{g}].attempts[{a}].failedNodes", attempt.failed_nodes or [])
                       for a, attempt in enumerate(group.attempts or [])]
            for where, nodes in places:
                stray = next((node for node in nodes if node not in named), None)
                if stray is not None:
                    raise ValueError(f"{where} names {stray}, which spec.nodes does not")
        return self


class Scenario(_Model):
    """A whole simulated fleet."""

    name: Annotated[str, Field(max_length=200, pattern=_PRINTABLE)] = "custom"
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 1
    speed: Annotated[float, Field(gt=0, le=MAX_SPEED)] = 60.0
    nodes: Annotated[list[NodePool], Field(min_length=1, max_length=1000)]
    physics: Physics = Field(default_factory=Physics)
    faults: Annotated[list[Fault], Field(max_length=MAX_NODES)] = Field(default_factory=list)
    node_changes: Annotated[list[NodeChange], Field(max_length=MAX_NODES)] | None = None
    # Cluster-scoped NVSentinel ValidationRequests (nvsentinel.nvidia.com/v1alpha1) the fleet registers.
    validation_requests: Annotated[list[ValidationRequest], Field(max_length=MAX_NODES)] | None = None

    @field_validator("validation_requests")
    @classmethod
    def _one_request_per_name(cls, requests: list[ValidationRequest] | None) -> list[ValidationRequest] | None:
        seen = Counter(request.metadata.name for request in requests or [])
        twice = sorted(name for name, count in seen.items() if count > 1)
        if twice:
            raise ValueError(f"two ValidationRequests are named {twice[0]}: each needs a name of its own")
        return requests


DEFAULT_SCENARIO: dict[str, Any] = {
    "name": "default: 32 x H100, 4 cliques, one slow GPU, one degraded NIC",
    "seed": 7,
    "speed": 120.0,
    "nodes": [{"count": 32, "cliques": 4}],
    "faults": [
        {"type": "slow-gpu", "node": "gpu-node-07", "gpu": 3, "factor": 0.55},
        {"type": "degraded-nic", "node": "gpu-node-12", "factor": 0.4},
    ],
}


def same_fleet(held: Any, scenario: Scenario) -> bool:
    """Whether a state's stored scenario (its wire form) is this one: as stored, or as read back (an earlier nvcre
    wrote factor 0.5 and xid 79 on every fault)."""
    wire = scenario.to_wire()
    if held == wire:
        return True
    try:
        return isinstance(held, dict) and Scenario.model_validate(held).to_wire() == wire
    except ValidationError:
        return False


def default_scenario() -> Scenario:
    """The built-in scenario of the embedded console."""
    return Scenario.model_validate(DEFAULT_SCENARIO)


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario YAML file; InputError names the file and field of every problem."""
    name, documents = load_yaml_documents(str(path))
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise InputError(f"{name}: a scenario must be one YAML mapping")
    try:
        scenario = Scenario.model_validate(documents[0], context={USER_FILE: True})
    except ValidationError as error:
        raise InputError(validation_messages(error, name)) from None
    pools = build_pools(scenario)
    total = sum(len(pool) for pool in pools)
    if total > MAX_NODES:
        raise InputError(f"{name}: nodes: {total} nodes in all, more than the {MAX_NODES} a simulated fleet holds")
    seen = Counter(node_name for pool in pools for node_name in pool)
    twice = sorted(n for n, count in seen.items() if count > 1)
    if twice:
        raise InputError(f"{name}: nodes: pools name the same node twice ({listed(twice)}): give them different namePrefix or firstIndex")
    gpus = {node_name: pool.gpus_per_node for pool, names in zip(scenario.nodes, pools, strict=True) for node_name in names}
    known = set(seen)
    unknown = [f"{name}: faults[{i}].node: no node named {fault.node!r}" for i, fault in enumerate(scenario.faults) if fault.node and fault.node not in known]
    unknown += [f"{name}: faults[{i}].gpu: {fault.node} has GPUs 0 to {gpus[fault.node] - 1}, not {fault.gpu}" for i, fault in enumerate(scenario.faults)
                if fault.node in gpus and fault.gpu is not None and fault.gpu >= gpus[fault.node]]
    if any(fault.cliques for fault in scenario.faults):  # only then: building every Node is most of loading a large fleet
        cliques = {node["metadata"]["labels"][LABEL_GPU_CLIQUE] for node in build_nodes(scenario)}
        unknown += [f"{name}: faults[{i}].cliques: no clique named {clique!r}" for i, fault in enumerate(scenario.faults)
                    for clique in fault.cliques or [] if clique not in cliques]
    unknown += [f"{name}: nodeChanges[{i}].node: no node named {change.node!r}" for i, change in enumerate(scenario.node_changes or []) if change.node not in known]
    unknown += [f"{name}: validationRequests[{i}].spec.nodes[{j}].name: no node named {node.name!r}"
                for i, request in enumerate(scenario.validation_requests or []) for j, node in enumerate(request.spec.nodes) if node.name not in known]
    if unknown:
        raise InputError(unknown)
    return scenario


def build_pools(scenario: Scenario) -> list[list[str]]:
    """Node names per pool, in order."""
    return [
        [pool.node_name(index) for index in range(pool.first_index, pool.first_index + pool.count)]
        for pool in scenario.nodes
    ]


# The software every simulated node runs unless its pool or a node change says otherwise.
BASELINE = {
    "kubeletVersion": "v1.31.4", "kernelVersion": "6.8.0-1021-aws", "osImage": "Ubuntu 22.04.5 LTS",
    "containerRuntimeVersion": "containerd://1.7.24", "driverVersion": "570.124.06", "cudaRuntimeVersion": "12.8",
    "migStrategy": "single",
}
NODE_INFO_FIELDS = ("kubeletVersion", "kernelVersion", "osImage", "containerRuntimeVersion")


def software_labels(driver: str, cuda: str, mig: str) -> dict[str, str]:
    """GPU Feature Discovery's version labels (current names and the deprecated ones GFD still writes)."""
    parts = (driver.split(".") + ["", "", ""])[:3]
    runtime = (cuda.split(".") + ["", ""])[:2]
    labels = {
        LABEL_CUDA_DRIVER: driver, **dict(zip(LABEL_CUDA_DRIVER_PARTS, parts, strict=True)), **dict(zip(LABEL_CUDA_DRIVER_OLD_PARTS, parts, strict=True)),
        LABEL_CUDA_RUNTIME: cuda, **dict(zip(LABEL_CUDA_RUNTIME_PARTS, runtime, strict=True)),
        **dict(zip(LABEL_CUDA_RUNTIME_OLD_PARTS, runtime, strict=True)), LABEL_MIG_STRATEGY: mig,
    }
    return {key: value for key, value in labels.items() if value}


def _software(source: NodePool | NodeChange, base: dict[str, str]) -> dict[str, str]:
    """`base` with the fields `source` sets."""
    wire = source.to_wire()
    return {key: wire.get(key, value) for key, value in base.items()}


def apply_change(node: dict[str, Any], change: NodeChange) -> dict[str, Any]:
    """The Node after a scenario change (a copy): software, labels, annotations, taints."""
    node = copy.deepcopy(node)
    metadata, status = node.setdefault("metadata", {}), node.setdefault("status", {})
    info = status.setdefault("nodeInfo", {})
    labels = metadata.setdefault("labels", {})
    current = {**BASELINE, **{k: info[k] for k in NODE_INFO_FIELDS if k in info},
               "driverVersion": labels.get(LABEL_CUDA_DRIVER, BASELINE["driverVersion"]),
               "cudaRuntimeVersion": labels.get(LABEL_CUDA_RUNTIME, BASELINE["cudaRuntimeVersion"]),
               "migStrategy": labels.get(LABEL_MIG_STRATEGY, BASELINE["migStrategy"])}
    software = _software(change, current)
    info.update({key: software[key] for key in NODE_INFO_FIELDS})
    labels.update(software_labels(software["driverVersion"], software["cudaRuntimeVersion"], software["migStrategy"]))
    for field, values in (("labels", change.labels), ("annotations", change.annotations)):
        target = metadata.setdefault(field, {})
        for key, value in (values or {}).items():
            if value is None:
                target.pop(key, None)
            else:
                target[key] = value
    if change.taints is not None:
        node.setdefault("spec", {})["taints"] = [taint.to_wire() for taint in change.taints]
    return node


def build_nodes(scenario: Scenario) -> list[dict[str, Any]]:
    """Kubernetes Node objects for the fleet (as a GPU Operator-labelled cluster shows them), with the
    untimed node changes applied."""
    nodes = []
    initial: dict[str, Any] = {}
    for change in scenario.node_changes or []:
        if change.at is None:
            initial.setdefault(change.node, []).append(change)
    # A cordon fault without a time is a node cordoned before the run; "unschedulable" faults are
    # pods that never schedule (GPUs held elsewhere) and leave the Node untouched.
    cordoned = {f.node for f in scenario.faults if f.type == "cordon" and f.at is None}
    # Clique numbers go on from pool to pool (per prefix): nodes of two pools (two GPU products) never share a clique.
    cliques_before: dict[str, int] = {}
    for pool, names in zip(scenario.nodes, build_pools(scenario), strict=True):
        per_clique = -(-pool.count // pool.cliques)
        first_clique = cliques_before.get(pool.clique_prefix, 0)
        cliques_before[pool.clique_prefix] = first_clique + -(-pool.count // per_clique)
        allocatable = pool.gpus_per_node if pool.allocatable_gpus is None else pool.allocatable_gpus
        software = _software(pool, BASELINE)
        pool_software_labels = {k: v for k, v in software_labels(software["driverVersion"], software["cudaRuntimeVersion"], software["migStrategy"]).items()
                                if k not in pool.labels}
        for position, name in enumerate(names):
            labels = {
                LABEL_HOSTNAME: name,
                LABEL_GPU_PRODUCT: pool.gpu_product,
                LABEL_GPU_COUNT: str(pool.gpus_per_node),
                LABEL_GPU_CLIQUE: f"{pool.clique_prefix}{first_clique + position // per_clique}",
                **pool.labels,
            }
            if pool.gpu_present:
                labels[LABEL_GPU_PRESENT] = "true"
            labels.update(pool_software_labels)
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {"providerID": pool.provider_id.format(index=position + pool.first_index), **({"unschedulable": True} if name in cordoned else {})},
                "status": {
                    "allocatable": {RESOURCE_GPU: str(allocatable), RESOURCE_NIC: str(pool.nics_per_node), "cpu": pool.allocatable_cpu or NODE_ROOM["cpu"],
                                    "memory": pool.allocatable_memory or NODE_ROOM["memory"]},
                    "conditions": [{"type": "Ready", "status": "True"}],
                    "nodeInfo": {key: software[key] for key in NODE_INFO_FIELDS} | {"architecture": "amd64", "operatingSystem": "linux"},
                },
            }
            for change in initial.get(name, ()):
                node = apply_change(node, change)
            nodes.append(node)
    return nodes
