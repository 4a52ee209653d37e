"""Certification + nodes -> the Workflows it creates (one per category), with planned groups.

Used offline by `nvcre certification render` and by the Certification controller, so what a user
previews is exactly what runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from nvcre_tui.engine.api.base import MAX_ANNOTATIONS_BYTES, TargetSpec
from nvcre_tui.engine.api.fit import pod_requests
from nvcre_tui.engine.api.nodes import NODES_WITHHELD, Node, node_labels
from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.resources import (
    AppliedOverride,
    Certification,
    DiagnoseStatus,
    GroupStatus,
    OrchestrationStatus,
    PlannedGroup,
    Workflow,
    WorkflowStatus,
    WorkloadRunSpec,
)
from nvcre_tui.engine.api.vocabulary import ANNOTATION_FITTED_SHARE, ANNOTATION_GROUP_NODES, ANNOTATION_TEST_SCALE, LABEL_CERTIFICATION, LABEL_DOMAIN, LABEL_GPU_CLIQUE, LABEL_MANAGED_BY, LABEL_VARIANT, group_nodes_value
from nvcre_tui.engine import dcgm_time
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.judging.nodehealth import DEFAULT_NODE_HEALTH
from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT, METRICS
from nvcre_tui.engine.planning.catalog import PLACEHOLDER, TEMPLATE_VARIABLES, Catalog, CatalogEntry
from nvcre_tui.engine.planning.discovery import Discovery, discover, node_device_counts, unavailable_said, unmatched_reason
from nvcre_tui.engine.planning.fitting import FITTED, FitError, fitted_requests, fitted_shares, with_requests
from nvcre_tui.engine.planning.grouping import Group, PartitionError
from nvcre_tui.engine.planning.merge import deep_merge
from nvcre_tui.engine.planning.partition import Partition, partition
from nvcre_tui.engine.planning.platform import PlatformError, topology_key
from nvcre_tui.engine.planning.resolve import auto_nodes_per_job, resolve_options
from nvcre_tui.engine.units import count, format_duration, parse_duration

# A recorded plan is a copy of the node names in the Workflow's spec, beside the one its status groups hold and the
# one diagnose keeps: at 10,000 cloud names (about 0.5 MiB each) three copies pass the API server's 1.5 MiB object
# limit. Larger plans are not recorded; the Workflow partitions them with this same code.
RECORDED_PLAN_NODES = 2048
# Seconds of a Job's timeoutPerJob (counted from its workload's creation) its pods may take to start (scheduled, images
# pulled): a training run without a step limit needs them beyond its exitDurationMins, and a tool's own timeout
# (`${toolTimeoutSeconds}`) is the timeoutPerJob less them, so that the tool stops first.
RUN_START = 600.0
OBJECT_LIMIT = 1_572_864  # etcd's --max-request-bytes default: the largest object the API server stores
# Left free by the size estimate (conditions, managedFields and the like): a diagnosis's verdicts are fitted into
# what its last write leaves (controllers/workflow.py, judging.results.within_room), short of this.
OBJECT_HEADROOM = 64 * 1024
# A group's run, besides the Workflow's and the group's names: its Job's name, start and end times, reason and
# measurements (two NCCL bandwidths at 12 digits), as tests/engine/test_workflow_size.py measures the engine's writes.
RUN_BYTES_PER_GROUP = 240
# A failed group's record of whom its Job blamed, counted for every group (a threshold missed everywhere fails them
# all): the reason (`"blamedFor":"HardwareFailureDetected",`, the longest) and, in a group of several nodes, a
# culprit's position (`"blamedMembers":[<position>],`).
BLAME_BYTES_PER_GROUP = 40
CULPRIT_BYTES = len('"blamedMembers":[],')



class RenderError(ValueError):
    """A category cannot be rendered on these nodes; `field` is the option at fault, if any; `unavailable`: no node
    left, every one for its own state (Discovery.none_available: cordoned, not Ready), none at fault."""

    def __init__(self, message: str, field: str | None = None, *, unavailable: bool = False, waiting: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.unavailable = unavailable
        self.waiting = waiting  # what the category says while it waits for a node (`unavailable`: discovery.unavailable_said)


@dataclass(frozen=True)
class RenderedCategory:
    """One category's Workflow plus what the engine needs to run it."""

    workflow: Workflow
    entry: CatalogEntry
    options: CategoryOptions
    discovery: Discovery
    groups: list[Group]


def substitute(value: Any, variables: dict[str, Any], where: str) -> Any:
    """Fill ${name} placeholders in every string (values are written as text)."""
    if isinstance(value, dict):
        return {key: substitute(item, variables, where) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, variables, where) for item in value]
    if not isinstance(value, str):
        return value
    for name in PLACEHOLDER.findall(value):
        if name not in variables:
            raise InputError(f"{where}: unknown placeholder ${{{name}}}; known: {', '.join(sorted(variables))}")
    return PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), value)


def workflow_name(cert_name: str, domain: str, variant: str, suffix: str = "") -> str:
    """<cert>-<domain>-<variant>[-suffix], hashed down to 63 characters when longer."""
    name = f"{cert_name}-{domain}-{variant}{suffix}"
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-.')}-{digest}"  # a subdomain: no dot before the hash


def category_workflow_name(cert: Certification, index: int) -> str:
    """The deterministic Workflow name of category `index` (an index suffix when a category repeats)."""
    category = cert.spec.categories[index]
    repeated = sum(1 for c in cert.spec.categories if c.key == category.key) > 1
    return workflow_name(cert.metadata.name, category.domain, category.variant, f"-{index}" if repeated else "")


def render_run_spec(
    entry: CatalogEntry, options: CategoryOptions, platform: str, architecture: str, nodes_per_job: int
) -> tuple[WorkloadRunSpec, list[AppliedOverride]]:
    """The entry's WorkloadRun template with matching overrides applied and placeholders filled."""
    template: dict[str, Any] = dict(entry.template)
    applied = []
    for index, override in enumerate(entry.overrides):
        if override.when.matches(platform, architecture):
            patched = deep_merge(template, override.patch)
            applied.append(AppliedOverride(index=index, when=override.when.summary(), patches=", ".join(sorted(override.patch)), no_op=patched == template))
            template = patched
    parallel = entry.parallelism_for(architecture)
    variables = {
        "gpusPerNode": options.gpus_per_node, "mlnxPerNode": options.mlnx_per_node, "maxBytes": options.max_bytes,
        "numIterations": options.num_iterations, "numCycles": options.num_cycles, "mnnvl": int(bool(options.enable_mnnvl)),
        "nodesPerJob": nodes_per_job, "maxSteps": options.max_steps, "exitDurationMins": options.exit_duration_mins,
        "saveInterval": options.save_interval, "saveRetainInterval": options.save_retain_interval, "sourceRepo": options.source_repo,
        "tp": parallel.tp, "pp": parallel.pp, "variant": entry.variant, "platform": platform, "gpuArchitecture": architecture,
        "toolTimeoutSeconds": tool_timeout_seconds(options),
    }
    assert variables.keys() == TEMPLATE_VARIABLES  # what read_catalog checked each entry's placeholders against
    filled = substitute(template, variables, f"catalog/{entry.key}.yaml")
    env = filled.pop("env", None) or {}
    filled["env"] = [{"name": key, "value": str(value)} for key, value in sorted(env.items())]
    filled.update(numNodes=nodes_per_job, gpusPerNode=options.gpus_per_node, mlnxPerNode=options.mlnx_per_node,
                  enableMNNVL=bool(options.enable_mnnvl), measurement=entry.measurement.to_wire())
    if options.nic_resource_name:  # the NIC device plugin's resource (on-prem: nvidia.com/hostdev, rdma/ib ...)
        filled["nicResourceName"] = options.nic_resource_name
    if options.image:
        filled["image"] = options.image
    if options.resources:
        filled["resources"] = options.resources.to_wire()
    if options.image_pull_secrets:
        filled["imagePullSecrets"] = [secret.to_wire() for secret in options.image_pull_secrets]
    if options.workload_metadata:
        filled["workloadMetadata"] = options.workload_metadata.to_wire()
    return WorkloadRunSpec.model_validate(filled), applied


def _gpus_needed(catalog: Catalog, user: CategoryOptions):  # noqa: ANN202 - a small closure factory
    def needed(platform: str, architecture: str) -> int:
        return user.gpus_per_node or catalog.gpu_defaults.shape(platform, architecture).gpus_per_node or 1

    return needed


def _requests_needed(catalog: Catalog, entry: CatalogEntry, user: CategoryOptions, counted: dict[str, str],  # noqa: ANN202 - as _gpus_needed
                     fitted: dict[str, str] | None = None):
    """What a pod asks (fit.pod_requests), for discovery. Where the entry fits its cpu and memory to the nodes, those
    are left out until `fitted` (fitting.fitted_requests over the nodes discovery kept) says what they are."""
    def needed(platform: str, architecture: str) -> dict[str, str]:
        options = resolve_options(catalog, entry, user, platform, architecture)
        spec, _ = render_run_spec(entry, options, platform, architecture, 1)
        asked = pod_requests(with_requests(_with_node_counts(spec, counted), fitted))
        if fitted is None and _fits(entry, options) and spec.resources is not None and spec.resources.requests is not None:
            return {name: amount for name, amount in asked.items() if name not in FITTED}
        return asked

    return needed


def _fits(entry: CatalogEntry, options: CategoryOptions) -> bool:
    """Whether the category's cpu and memory requests are fitted to its nodes: the catalog's `fitRequests`, unless the
    category gives its own `resources` (taken as given: a node allocating less is left out)."""
    return entry.fit_requests is not None and not options.resources


def _with_node_counts(spec: WorkloadRunSpec, counted: dict[str, str]) -> WorkloadRunSpec:
    """`spec` asking, of each device it takes all of (discovery.NODE_COUNTED_DEVICES), what the nodes report
    (`counted`) instead of the catalog's default; one it does not ask for (or asks 0 of) stays unasked."""
    asked = spec.extended_resources or {}
    if not any(resource in asked and str(asked[resource]) not in ("", "0") for resource in counted):
        return spec
    resources = {name: (counted[name] if name in counted and str(value) not in ("", "0") else value) for name, value in asked.items()}
    return spec.model_copy(update={"extended_resources": resources})


def _tolerations_needed(catalog: Catalog, entry: CatalogEntry, user: CategoryOptions):  # noqa: ANN202 - as _gpus_needed
    def needed(platform: str, architecture: str) -> list[dict[str, Any]]:
        spec, _ = render_run_spec(entry, resolve_options(catalog, entry, user, platform, architecture), platform, architecture, 1)
        return [dict(item) for item in spec.tolerations or []]

    return needed


# Where the Nodes cannot be read (a team's nvcre-edit binding: no namespaced role grants them), nothing is planned
# before the certification is created: `certification run` and the console's compose say so in these words.
UNPLANNED = f"not planned here: {NODES_WITHHELD}; the engine plans it on the nodes it finds"


def check_category(cert: Certification, index: int, catalog: Catalog) -> tuple[CatalogEntry, CategoryOptions]:
    """The checks of render_category that need no Node (RenderError when category `index` could run on no nodes at
    all); its catalog entry, and its options as far as they are known without the nodes: resolved without their GPU
    shape (resolve.SHAPE_OPTIONS), which none of these checks reads. What they refuse, every node refuses; what the
    shape decides is render_category's, on the nodes. Run alone where the Nodes cannot be read (a user who may not
    list them), before anything is created."""
    category = cert.spec.categories[index]
    entry = catalog.find(category.domain, category.variant)
    if entry is None:
        raise RenderError(f"unknown category {category.key}", "variant")
    options = resolve_options(catalog, entry, cert.spec.category_options(index), None, None)
    if options.max_steps is not None and options.max_steps < 0 and "maxSteps" in entry.template_options:
        _check_no_step_limit(options)
    if "toolTimeoutSeconds" in entry.placeholders:
        _check_tool_timeout(entry, options)
    scale = options.test_scale or entry.test_scales[0]
    if options.on_failure == "diagnose" and (scale not in ("intra-rack", "full-scale") or entry.per_node):
        raise RenderError(f"onFailure: diagnose needs testScale intra-rack or full-scale (a multi-node test), not {scale}", "onFailure")
    return entry, options


def render_category(cert: Certification, index: int, nodes: Sequence[Node], catalog: Catalog) -> RenderedCategory:
    """Render category `index` of `cert` on `nodes`; RenderError when it cannot run there (check_category first,
    then what needs the nodes)."""
    category = cert.spec.categories[index]
    entry, _ = check_category(cert, index, catalog)
    user = cert.spec.category_options(index)
    target = category.target or cert.spec.target
    counted = node_device_counts(nodes, target)

    def discovered(fitted: dict[str, str] | None = None) -> Discovery:
        try:
            shares = fitted_shares(entry.fit_requests.share) if fitted is not None and entry.fit_requests else {}
            return discover(nodes, target, _gpus_needed(catalog, user), _requests_needed(catalog, entry, user, counted, fitted),
                            _tolerations_needed(catalog, entry, user), shares)
        except PlatformError as error:
            raise RenderError(str(error)) from None

    found = discovered()
    if not found.nodes:
        why = found.exclusion_reason() if found.excluded else unmatched_reason(nodes, target)
        if found.none_available():  # none at fault: named, as a Workflow's excludedNodes name them where one starts
            raise RenderError(unavailable_said(found, waiting=False), "target", unavailable=True, waiting=unavailable_said(found, waiting=True))
        raise RenderError(f"no eligible nodes match ({why})", "target")
    platform, arch = found.platform or "onprem", found.architecture or "unknown"
    options = resolve_options(catalog, entry, user, platform, arch)
    fitted = None
    if _fits(entry, options):  # fitted to the nodes found; those too small for it are then left out, named
        try:
            fitted = fitted_requests(render_run_spec(entry, options, platform, arch, 1)[0], entry, found.nodes)
        except FitError as error:
            raise RenderError(str(error)) from None  # not "target": no node arriving makes the largest larger
        found = discovered(fitted)
    scale = options.test_scale or entry.test_scales[0]
    gpus = options.gpus_per_node or 1
    if user.nodes_per_job and user.nodes_per_job > len(found.nodes):
        raise RenderError(f"{user.nodes_per_job} nodes per job but only {len(found.nodes)} eligible nodes match", "nodesPerJob")
    if user.min_group_size and user.min_group_size > len(found.nodes):  # a diagnosis could never split a group
        raise RenderError(f"groups of at least {user.min_group_size} nodes but only {len(found.nodes)} eligible nodes match", "minGroupSize")
    npj = 1 if (entry.per_node or scale == "intra-node") else (user.nodes_per_job or auto_nodes_per_job(entry, len(found.nodes), gpus, arch))
    if npj < 1:
        raise RenderError(f"{entry.key} needs at least {entry.min_gpus} GPUs; {len(found.nodes)} nodes x {gpus} GPUs is too few")
    key = LABEL_GPU_CLIQUE if scale in ("intra-rack", "diagnose") else topology_key(platform, arch)
    within_domains = _diagnose_paths(scale, options, found.nodes)
    spec, applied = render_run_spec(entry, options, platform, arch, npj)
    spec = _scheduled(_with_node_counts(with_requests(spec, fitted), counted), cert, target, options)
    workflow = _workflow(cert, index, entry, options, spec, scale, npj, key, within_domains)
    try:  # the engine's own partitioning of the same spec: what this shows is what the Workflow runs
        plan = partition(found.nodes, workflow.spec.orchestration.to_wire())
    except PartitionError as error:
        raise RenderError(str(error), "nodesPerJob" if "nodes per job" in str(error) else None) from None
    _check_group_sizes(plan.groups, scale)
    if sum(len(g.nodes) for g in plan.groups) <= RECORDED_PLAN_NODES:
        workflow.spec.orchestration.planned_groups = [
            PlannedGroup(name=g.name, nodes=list(g.nodes), domains=list(g.domains) or None, overflow=g.overflow) for g in plan.groups
        ]
    workflow.status = _planned(found, plan, applied)
    rendered = RenderedCategory(workflow=workflow, entry=entry, options=options, discovery=found, groups=plan.groups)
    _check_size(rendered)
    return rendered


def _check_group_sizes(groups: Sequence[Group], scale: str) -> None:
    """Refuse a group more nodes than its Job can name: the Job names them in its group-nodes annotation, and the API
    server takes at most 256 KiB of annotations an object (a full-scale group of some 6,000 cloud-named nodes). The
    Job's create would be refused at the group's turn, failing the Workflow with a ReconcileError."""
    room = MAX_ANNOTATIONS_BYTES - len(ANNOTATION_GROUP_NODES)
    for group in groups:
        size = len(group_nodes_value(group.nodes).encode())
        if size > room:
            longest = max(len(name.encode()) for name in group.nodes) + 1
            way = f": give nodesPerJob at most {room // longest}" if scale == "full-scale" else ": split the target (a nodeSelector per part)"
            raise RenderError(f"group {group.name} of {len(group.nodes)} nodes is more than one Job can name: its {ANNOTATION_GROUP_NODES} "
                              f"annotation would hold {size} bytes of node names, and the API server takes at most {MAX_ANNOTATIONS_BYTES} "
                              f"in an object's annotations{way}", "nodesPerJob" if scale == "full-scale" else None)


def _check_no_step_limit(options: CategoryOptions) -> None:
    """maxSteps -1 trains until exitDurationMins: a timeoutPerJob that ends the run first would fail every node of
    a healthy fleet with Timeout, so it must leave the run its duration and a start (RUN_START)."""
    duration = (options.exit_duration_mins or 0) * 60.0
    timeout = parse_duration(options.timeout_per_job or "1h")
    if duration + RUN_START > timeout:
        raise RenderError(f"-1 trains until exitDurationMins ({format_duration(duration)}) but timeoutPerJob "
                          f"{options.timeout_per_job} would end the run first: give timeoutPerJob at least "
                          f"{format_duration(duration + RUN_START)}, or a step count", "maxSteps")


def tool_timeout_seconds(options: CategoryOptions) -> int:
    """`${toolTimeoutSeconds}`: the seconds a tool may run by its own timeout (dcgmi diag --timeout), the category's
    timeoutPerJob less RUN_START. A diagnostic that hangs then stops by itself, and its host engine frees the GPUs,
    before the Job's timeout deletes the pod (which would leave a standalone host engine running the diagnostic)."""
    return int(parse_duration(options.timeout_per_job or "1h") - RUN_START)


def _check_tool_timeout(entry: CatalogEntry, options: CategoryOptions) -> None:
    """A timeoutPerJob that leaves the tool no time is refused here; for dcgmi, one that leaves it less than a healthy
    run takes (dcgm_time: its phases and test_duration parameters) and dcgm_time.MARGIN: every healthy node would fail
    Timeout (and one no more than its test_duration parameters dcgmi refuses at start, "The total test duration 2400
    is too high for the timeout 1200", on every node)."""
    seconds = tool_timeout_seconds(options)
    args = _dcgmi_args(entry)
    if args is not None:
        runs = dcgm_time.run_seconds(args)
        if seconds < dcgm_time.with_margin(runs):
            tests = sum(dcgm_time.test_durations(args).values())
            asked = f" (its test_duration parameters {format_duration(tests)})" if tests else ""
            raise RenderError(f"timeoutPerJob {options.timeout_per_job} leaves dcgmi {format_duration(max(seconds, 0))} "
                              f"after {format_duration(RUN_START)} for its pods to start, and dcgmi diag --run "
                              f"{dcgm_time.run_level(args)} runs about {format_duration(runs)}{asked}: give timeoutPerJob "
                              f"at least {format_duration(RUN_START + dcgm_time.with_margin(runs))} "
                              f"({int(dcgm_time.MARGIN * 100)}% over the run)", "timeoutPerJob")
    elif seconds <= 0:
        raise RenderError(f"timeoutPerJob {options.timeout_per_job} leaves {_tool(entry)} 0s after "
                          f"{format_duration(RUN_START)} for its pods to start, and it needs some: give timeoutPerJob "
                          f"at least {format_duration(60 + RUN_START)}", "timeoutPerJob")


def _dcgmi_args(entry: CatalogEntry) -> list[str] | None:
    """The arguments of an exec entry that runs `dcgmi diag`, else None."""
    framework = entry.template.get("framework")
    run = framework.get("exec") if isinstance(framework, dict) else None
    command = run.get("command") if isinstance(run, dict) else None
    if not isinstance(command, list) or [str(c) for c in command[:2]] != ["dcgmi", "diag"]:
        return None
    args = run.get("args") if isinstance(run, dict) else None
    return [str(a) for a in args] if isinstance(args, list) else []


def _tool(entry: CatalogEntry) -> str:
    """The program an exec entry runs (dcgmi), else "its tool"."""
    framework = entry.template.get("framework")
    run = framework.get("exec") if isinstance(framework, dict) else None
    command = run.get("command") if isinstance(run, dict) else None
    return str(command[0]) if isinstance(command, list) and command else "its tool"


def _scheduled(spec: WorkloadRunSpec, cert: Certification, target: TargetSpec, options: CategoryOptions) -> WorkloadRunSpec:
    """`spec` with what the pods need to be scheduled as the certification asks: its gang scheduler, the category's
    priority class, and its target's taint selectors (each becomes a toleration). The run's target carries only
    those: the Job names the run's nodes when it creates the run (controllers/job.py)."""
    taints = TargetSpec(taint_selectors=target.taint_selectors) if target.taint_selectors else None
    return spec.model_copy(update={"gang_scheduler": cert.spec.gang_scheduler, "priority_class_name": options.priority_class_name,
                                   "target": taints})


def largest_write(rendered: RenderedCategory) -> int:
    """An estimate of the bytes of the Workflow's largest write: the planned object and each group's run (its Job's
    name, times, measurements and whom it blamed) per iteration: in the current groups while it runs, then in its iterationHistory
    record (a finished Workflow's groups keep only what they are and how they ended). Diagnose's screening groups
    leave the status as their record is written, and name their nodes only in the diagnose state; onFailure adds a
    copy of the node names (that state)."""
    workflow, options = rendered.workflow, rendered.options
    diagnosing = workflow.spec.orchestration.test_scale == "diagnose"
    run = sum(len(workflow.metadata.name) + len(g.name) + RUN_BYTES_PER_GROUP + _blame_bytes(g.nodes) for g in rendered.groups)
    estimate = len(json.dumps(workflow.to_wire(), separators=(",", ":"))) + run * (1 if diagnosing else options.repeat_count or 1)
    if diagnosing:  # its groups are stored without their nodes, which the diagnose state names (controllers/iterations.py)
        estimate -= sum(len(json.dumps(list(g.nodes), separators=(",", ":"))) + len('"nodes":,') for g in rendered.groups)
    if options.on_failure == "diagnose":  # the node names once, and each iteration's groups as the diagnosis's first tests
        estimate += sum(len(n) + 3 for g in rendered.groups for n in g.nodes)
        estimate += (options.repeat_count or 1) * sum(IMPORTED_TEST_BYTES + len(g.name) for g in rendered.groups)
    return estimate


# One iteration's group as an onFailure diagnosis records it: {"r":0,"s":"screening","g":"<group>-iter-10",
# "n":[[a,b]],"p":false,"v":400.123}, its nodes as index ranges; failed, the reason a crash gives and the culprit its
# log names: ,"x":"WorkloadFailed","c":[12345].
IMPORTED_TEST_BYTES = 106


def _blame_bytes(nodes: Sequence[str]) -> int:
    """What a failed group's record of its Job's blame may take (BLAME_BYTES_PER_GROUP, CULPRIT_BYTES)."""
    return BLAME_BYTES_PER_GROUP + (CULPRIT_BYTES + len(str(len(nodes) - 1)) if len(nodes) > 1 else 0)


def _check_size(rendered: RenderedCategory) -> None:
    """Refuse a Workflow whose status would outgrow the largest object the API server stores, before it runs
    (it would otherwise stop at the write that passes the limit, hours in)."""
    estimate = largest_write(rendered)
    if estimate > OBJECT_LIMIT - OBJECT_HEADROOM:
        iterations = rendered.options.repeat_count or 1
        nodes = len({n for g in rendered.groups for n in g.nodes})
        raise RenderError(
            f"its Workflow would hold about {estimate / 2**20:.2f} MiB ({count(len(rendered.groups), 'group')} of {count(nodes, 'node')}, "
            f"{count(iterations, 'iteration')}) and the API server stores at most 1.5 MiB: split the target "
            "(a nodeSelector per part)" + (" or lower repeatCount" if iterations > 1 else ""),
            "repeatCount" if iterations > 1 else None)  # not "target": no node arriving would make it fit


def _diagnose_paths(scale: str, options: CategoryOptions, nodes: Sequence[Node]) -> bool:
    """Diagnose over several NVLink domains with MNNVL on compares tests that take different paths against one
    bandwidth threshold: inside a clique over NVLink, across cliques (the inter and link tests) over the network, far
    slower. Every cross-clique test would fail and name healthy links. testScale diagnose, and the onFailure
    narrowing of an intra-rack run (which only ever tested inside cliques), stay inside cliques (True; the report
    says the links between them were not tested); onFailure: diagnose of a full-scale run, which crossed them (its
    narrowing inside cliques would clear nodes over NVLink that failed over the network), is refused."""
    mnnvl = bool(options.enable_mnnvl)  # as the run spec carries it (gpu-defaults.yaml sets it per architecture)
    bandwidth = sorted(k for k in options.thresholds or {} if k in METRICS and METRICS[k].unit == BANDWIDTH_UNIT)
    cliques = {node_labels(node).get(LABEL_GPU_CLIQUE) for node in nodes} - {None, ""}
    if not (mnnvl and bandwidth and len(cliques) >= 2):
        return False
    paths = (f"its tests inside a clique run over NVLink and those across cliques over the network, so one threshold "
             f"({', '.join(bandwidth)}) cannot judge both")
    if scale == "full-scale" and options.on_failure == "diagnose":
        raise RenderError(f"onFailure: diagnose of a full-scale run with MNNVL on over {len(cliques)} cliques: {paths}; set "
                          "enableMNNVL: false (every test over the network), target one clique, or use testScale intra-rack",
                          "enableMNNVL")
    return scale == "diagnose" or (scale == "intra-rack" and options.on_failure == "diagnose")


def _workflow(
    cert: Certification, index: int, entry: CatalogEntry, options: CategoryOptions, spec: WorkloadRunSpec, scale: str,
    npj: int, key: str, within_domains: bool,
) -> Workflow:
    name = category_workflow_name(cert, index)
    owner = (
        [{"apiVersion": cert.api_version, "kind": "Certification", "name": cert.metadata.name, "uid": cert.metadata.uid, "controller": True}]
        if cert.metadata.uid else None
    )
    orchestration: dict[str, Any] = {
        "target": (cert.spec.categories[index].target or cert.spec.target).to_wire(), "iterations": options.repeat_count, "nodesPerJob": npj, "perNode": entry.per_node,
        "testScale": scale, "execution": {"maxConcurrent": options.max_concurrent, "timeoutPerJob": options.timeout_per_job},
    }
    if scale == "intra-rack":
        orchestration["topology"] = {"topologyKey": key, "strictDomain": True}
    if scale == "diagnose":
        orchestration["diagnose"] = {"minGroupSize": options.min_group_size, "topologyKey": key} | ({"withinDomains": True} if within_domains else {})
    if options.on_failure == "diagnose":
        narrowing = {"minGroupSize": options.min_group_size, "topologyKey": LABEL_GPU_CLIQUE}
        orchestration["onFailure"] = {"diagnose": narrowing | ({"withinDomains": True} if within_domains else {})}
    job_spec: dict[str, Any] = {
        "workload": {"workloadRun": spec.to_wire()},
        "nodeHealthMonitor": {"cel": {"expression": DEFAULT_NODE_HEALTH}},
        "measurementTimeout": options.measurement_timeout, "timeout": options.timeout_per_job,
        "schedulingStallGraceSeconds": options.scheduling_stall_grace_seconds,
    }
    if entry.stall_multiplier:
        job_spec["stallMultiplier"] = entry.stall_multiplier
        job_spec["startupStallTimeoutSeconds"] = options.startup_stall_timeout_seconds
    workflow: dict[str, Any] = {
        "metadata": {
            "name": name, "namespace": cert.metadata.namespace or "default", "ownerReferences": owner,
            "labels": {LABEL_MANAGED_BY: "nvcre", LABEL_CERTIFICATION: cert.metadata.name, LABEL_DOMAIN: entry.domain, LABEL_VARIANT: entry.variant},
            "annotations": {ANNOTATION_TEST_SCALE: scale,  # the share its discovery checks nodes by, as render did
                            **({ANNOTATION_FITTED_SHARE: str(entry.fit_requests.share)} if entry.fit_requests and _fits(entry, options) else {})},
        },
        "spec": {"jobTemplate": {"spec": job_spec}, "orchestration": orchestration},
    }
    if options.thresholds:
        job_spec["thresholds"] = dict(options.thresholds)
        workflow["spec"]["validation"] = {"performance": {"enabled": True, "thresholds": dict(options.thresholds), "measurementTimeout": options.measurement_timeout}}
    if cert.spec.gang_scheduler:
        workflow["spec"]["gangScheduler"] = cert.spec.gang_scheduler.to_wire()
    return Workflow.model_validate(workflow)


def _planned(found: Discovery, plan: Partition, applied: list[AppliedOverride]) -> WorkflowStatus:
    """The status the Workflow controller's partitioning writes, as a preview."""
    groups = plan.groups
    return WorkflowStatus(
        orchestration=OrchestrationStatus(
            total_nodes=len(found.nodes), nodes_per_job=plan.nodes_per_job, total_groups=len(groups), detected_platform=found.platform,
            detected_gpu_architecture=found.architecture, excluded_nodes=found.excluded or None,
            exclusion_reason=found.exclusion_reason(), applied_overrides=applied or None,
            diagnose=DiagnoseStatus.model_validate(plan.diagnose) if plan.diagnose is not None else None,
            groups=[GroupStatus(name=g.name, nodes=list(g.nodes), domains=list(g.domains) or None, overflow=g.overflow) for g in groups],
        )
    )


_T = TypeVar("_T")


def render_certification(cert: Certification, nodes: Sequence[Node], catalog: Catalog, where: str) -> list[RenderedCategory]:
    """Every category rendered; InputError lists each category that cannot run, with its field path."""
    return _each_category(cert, where, lambda index: render_category(cert, index, nodes, catalog))


def check_certification(cert: Certification, catalog: Catalog, where: str) -> list[CategoryOptions]:
    """check_category of every category, as render_certification tells its problems: what can be checked without
    the Nodes; each category's options as far as they are known without them."""
    return [options for _, options in _each_category(cert, where, lambda index: check_category(cert, index, catalog))]


def _each_category(cert: Certification, where: str, do: Callable[[int], _T]) -> list[_T]:
    """`do` of each category's index; InputError lists each category that raised RenderError, with its field path."""
    done, problems = [], []
    for index in range(len(cert.spec.categories)):
        try:
            done.append(do(index))
        except RenderError as error:
            target = f"spec.categories[{index}].target" if cert.spec.categories[index].target else "spec.target"
            field = {"target": target, None: f"spec.categories[{index}]"}.get(error.field, f"spec.categories[{index}].options.{error.field}")
            problems.append(f"{where}: {field}: {error}")
    if problems:
        raise InputError(list(dict.fromkeys(problems)))  # categories sharing spec.target share its problem: told once
    return done
