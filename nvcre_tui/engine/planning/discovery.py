"""Which nodes a category runs on: target selection, then the exclusions that make a run INCOMPLETE.

Order (reference 1.2, fixed for determinism): nodeSelector -> matchExpressions -> nodeNames -> taints ->
GPU nodes only -> drop cordoned, not Ready and partitioned-GPU nodes (excluded, reported; NODE_EXCLUSIONS) ->
majority GPU architecture (others excluded) -> GPU capacity (nodes short of GPUs excluded) -> the other resources
a pod asks for (memory, CPUs, hugepages, EFA, NICs, RDMA: a node allocating less excluded) -> a NoExecute taint the
pods do not tolerate (excluded: someone is evicting workloads from that node; the target's taintSelectors name the
ones to go through) -> sort by name. Then, where the pods bound to the nodes can be read (a cluster, as the Workflow
starts: `leave_out_busy`), a node whose other pods hold the GPUs, CPUs or memory a pod asks (NodeBusy).
The reference drops only cordoned nodes: a NotReady node (its pods never start) or one whose GPUs are MIG slices
or time-sliced replicas (a run measures a slice, not the node) would fail its group and be blamed for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from nvcre_tui.engine.api.base import NodeSelectorRequirement, TaintSelector, TargetSpec
from nvcre_tui.engine.api.fit import held_by_others, pod_shortfalls, taint_text, tolerates
from nvcre_tui.engine.api.nodes import Node, is_cordoned, node_labels, node_name, node_taints, ready_status
from nvcre_tui.engine.api.resources import ExcludedNode, ExclusionReason
from nvcre_tui.engine.api.fit import allocatable
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_PRESENT, NODE_BUSY, NODE_NOT_FOUND, RESOURCE_EFA, RESOURCE_GPU, UNAVAILABLE_STATES
from nvcre_tui.engine.planning.platform import (
    allocatable_gpus, fleet_platform, majority_architecture, node_gpu_architecture, partitioned_gpus,
)
from nvcre_tui.engine.units import count, format_duration, listed

_OPERATORS: dict[str, Callable[[Mapping[str, str], NodeSelectorRequirement], bool]] = {
    "In": lambda labels, req: labels.get(req.key) in (req.values or []),
    "NotIn": lambda labels, req: labels.get(req.key) not in (req.values or []),
    "Exists": lambda labels, req: req.key in labels,
    "DoesNotExist": lambda labels, req: req.key not in labels,
}

# Devices a GPU pod takes every one of on its node: AWS's EFA interfaces, over which NCCL's aws-ofi-nccl plugin
# spreads its traffic (p4d has 4, p5 and p5e 32, p5en 16, p6-b200 8). The catalog's amount is the default, replaced
# by what the target's nodes report (node_device_counts): a fixed 32 left every p4d, p5en and p6 node out.
NODE_COUNTED_DEVICES = (RESOURCE_EFA,)

LEFT_TARGET = "LeftTarget"  # excluded by the Workflow controller: a node a sibling category ran on, no longer found
EXCLUSION_TEXT = {
    "Cordoned": "cordoned (spec.unschedulable)",
    "NotReady": "not Ready (its kubelet reports the node unusable)",
    "PartitionedGPUs": "GPUs partitioned (MIG) or shared (time-slicing, MPS)",
    "OtherGPUArchitecture": "GPU architecture differs from the fleet majority",
    "InsufficientGPUs": "fewer allocatable GPUs than gpusPerNode",
    "InsufficientResources": "less allocatable than a pod requests",
    "NoExecuteTaint": "a NoExecute taint the pods do not tolerate (name it in the target's taintSelectors to certify the node)",
    NODE_BUSY: "GPUs, CPUs or memory a pod needs held by other pods (not nvcre's)",
    "LeftTarget": "ran in another category and no longer matches the target",
    NODE_NOT_FOUND: "named in nodeNames and not on the cluster",
    "NotGPUNode": f"named in nodeNames and not labelled {LABEL_GPU_PRESENT}=true",
}


@dataclass(frozen=True)
class Discovery:
    """The outcome of node discovery for one category."""

    nodes: list[Node]
    excluded: list[ExcludedNode] = field(default_factory=list)
    platform: str | None = None
    architecture: str | None = None

    @property
    def names(self) -> list[str]:
        """Eligible node names, sorted."""
        return [node_name(node) for node in self.nodes]

    def none_available(self) -> bool:
        """No node left, and every node the target selects left out for its own state (busy, cordoned, not Ready:
        UNAVAILABLE_STATES), none for the category's fit or the target's names: nothing can be tested and no node is at
        fault (NODES_UNAVAILABLE: nothing measured, so not certified, yet none blamed), where a category no node could ever
        fit is refused (its spec at fault)."""
        return not self.nodes and bool(self.excluded) and all(item.reason in UNAVAILABLE_STATES for item in self.excluded)

    def exclusion_reason(self) -> str | None:
        """One text for all exclusions, e.g. "2 nodes: cordoned (spec.unschedulable); 1 node: fewer allocatable GPUs ...".
        Nodes short of resources say the first one's shortfall: which resource differs from one category to the next,
        and a category refused because every node is short names what to change (its request or the target); busy
        nodes the first one's holders."""
        if not self.excluded:
            return None
        counts: dict[str, int] = {}
        for item in self.excluded:
            counts[item.reason] = counts.get(item.reason, 0) + 1
        firsts: dict[str, ExcludedNode] = {reason: next(item for item in self.excluded if item.reason == reason)
                  for reason in ("InsufficientResources", NODE_BUSY) if reason in counts}
        return "; ".join(excluded_text(n, reason) + (f" (the first, {first.name}: {first.message})" if (first := firsts.get(reason)) else "")
                         for reason, n in counts.items())


# How long a category none of whose target nodes is available (Discovery.none_available: every one cordoned, not Ready
# or busy with others' pods) waits for one before it fails NodesUnavailable, testing and blaming none; one rule, whichever
# the state and wherever it is found: cordoned and not Ready as the category is planned (controllers/certification.py,
# on the Nodes), busy as its Workflow starts (controllers/workflow.py, on the pods bound there). Each of those states
# usually passes within minutes (a node drained for a driver patch is uncordoned, another team's training ends or is
# preempted), and a category failed for it at once was a certification to run again. The reference waits for none
# (NodeDiscoveryError at once); a target that matches no node at all waits as long (a node may be joining).
NODE_WAIT = timedelta(minutes=5)


def unavailable_said(found: Discovery, *, waiting: bool) -> str:
    """What a category none of whose nodes is available says, the one wording of both places that find it: while it
    waits (`waiting`: NODE_WAIT at most) and once it failed for it (NodesUnavailable), naming why and the nodes."""
    names = listed([item.name for item in found.excluded])
    said = f"every one the target selects unavailable ({found.exclusion_reason()}; {names})"
    if waiting:
        return f"no node to test yet, {said}: waiting for one, up to {format_duration(NODE_WAIT.total_seconds())}"
    return f"no node to test, {said}: nothing tested, no node blamed"


def excluded_text(nodes: int, reason: str) -> str:
    """How many nodes were left out for one reason: "1 node: GPUs partitioned (MIG) or shared (time-slicing, MPS)"."""
    return f"{count(nodes, 'node')}: {EXCLUSION_TEXT.get(reason, reason)}"


def _taint_matches(taint: Mapping[str, Any], wanted: TaintSelector) -> bool:
    return (taint.get("key") == wanted.key and (wanted.value is None or taint.get("value") == wanted.value)
            and (wanted.effect is None or taint.get("effect") == wanted.effect))


def _has_taint(node: Node, wanted: TaintSelector) -> bool:
    return any(_taint_matches(taint, wanted) for taint in node_taints(node))


def matches_target(node: Node, target: TargetSpec) -> bool:
    """Whether a node is selected by the target (before exclusions)."""
    labels = node_labels(node)
    if any(labels.get(key) != value for key, value in (target.node_selector or {}).items()):
        return False
    if not all(_OPERATORS[req.operator](labels, req) for req in target.match_expressions or []):
        return False
    if target.node_names is not None and node_name(node) not in target.node_names:
        return False
    return all(_has_taint(node, taint) for taint in target.taint_selectors or [])


def unmatched_reason(nodes: Sequence[Node], target: TargetSpec) -> str:
    """Why no node is selected at all, in words: that there is no Node, the nodeNames that are no Node, else how many
    Nodes match the target and how many of those are GPU nodes."""
    if not nodes:  # "none of the 0 Nodes matches the target" blamed the target
        return "there is no Node at all: an API server without kubelets registers none"
    names = {node_name(node) for node in nodes}
    missing = [name for name in target.node_names or [] if name not in names]
    if missing:
        return f"no Node named {', '.join(missing[:5])}" + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else "")
    matching = [node for node in nodes if matches_target(node, target)]
    if not matching:
        if not any(is_gpu_node(node) for node in nodes):
            # Nodes made by hand (an API server alone: no GPU feature discovery) labelled with their product, count and
            # clique but not this: "matches the target" named a target --category wrote, not the label every run needs
            return (f"none of the {len(nodes)} Nodes matches the target, and none is labelled {LABEL_GPU_PRESENT}=true, which "
                    "every run's nodes need: GPU feature discovery (the GPU Operator) sets it; label Nodes made by hand so")
        return f"none of the {len(nodes)} Nodes matches the target"
    return f"{len(matching)} Node(s) match the target but none is labelled {LABEL_GPU_PRESENT}=true"


def is_gpu_node(node: Node) -> bool:
    """Labelled nvidia.com/gpu.present=true by GPU feature discovery."""
    return node_labels(node).get(LABEL_GPU_PRESENT) == "true"


def _untolerated_no_execute(node: Node, tolerations: Sequence[Mapping[str, Any]], selectors: Sequence[TaintSelector]) -> str | None:
    """The node's NoExecute taints neither the pods' tolerations nor a taintSelector (which becomes one) cover."""
    refused = [taint_text(taint) for taint in node_taints(node)
               if isinstance(taint, Mapping) and taint.get("effect") == "NoExecute" and not tolerates(tolerations, taint)
               and not any(_taint_matches(taint, wanted) for wanted in selectors)]
    return f"taint {', '.join(refused)} not tolerated: name it in the target's taintSelectors to certify this node" if refused else None


def _not_ready(node: Node) -> str | None:
    status = ready_status(node)
    # None: no kubelet has reported (a Node registered by hand, as on an API server alone): kept, as the reference does
    return None if status in (None, "True") else f"Ready condition {status}"


# Exclusions of a single node, in order: reason -> why this node (None: not excluded).
NODE_EXCLUSIONS: tuple[tuple[ExclusionReason, Callable[[Node], str | None]], ...] = (
    ("Cordoned", lambda node: EXCLUSION_TEXT["Cordoned"] if is_cordoned(node) else None),
    ("NotReady", _not_ready),
    ("PartitionedGPUs", partitioned_gpus),
)


def node_exclusion(node: Node) -> ExcludedNode | None:
    """The first NODE_EXCLUSIONS that drops this node, or None."""
    for reason, why in NODE_EXCLUSIONS:
        if (message := why(node)) is not None:
            return ExcludedNode(name=node_name(node), reason=reason, message=message)
    return None


def node_device_counts(nodes: Iterable[Node], target: TargetSpec) -> dict[str, str]:
    """For each NODE_COUNTED_DEVICES resource, the allocatable count most of the target's usable GPU nodes report (a
    tie: the larger); a node reporting none does not vote (its device plugin may be restarting). A node reporting fewer
    is then left out (InsufficientResources), one reporting more runs with that many."""
    voters = [node for node in nodes if matches_target(node, target) and is_gpu_node(node) and node_exclusion(node) is None]
    counts = {}
    for resource in NODE_COUNTED_DEVICES:
        votes = Counter(int(have) for node in voters if (have := allocatable(node, resource)) and have == int(have))
        if votes:
            counts[resource] = str(max(votes, key=lambda amount: (votes[amount], amount)))
    return counts


def _named_and_left_out(nodes: Sequence[Node], target: TargetSpec) -> list[ExcludedNode]:
    """Nodes `nodeNames` lists that the run cannot take: not on the cluster (a typo, a node gone), or selected and
    no GPU node. Named, so the certification is INCOMPLETE rather than pass without them."""
    by_name = {node_name(node): node for node in nodes}
    left_out = []
    for name in sorted(set(target.node_names or ())):
        node = by_name.get(name)
        if node is None:
            left_out.append(ExcludedNode(name=name, reason=NODE_NOT_FOUND, message=f"no Node named {name} on the cluster"))
        elif matches_target(node, target) and not is_gpu_node(node):
            left_out.append(ExcludedNode(name=name, reason="NotGPUNode", message=EXCLUSION_TEXT["NotGPUNode"]))
    return left_out


def discover(nodes: Iterable[Node], target: TargetSpec, gpus_needed: Callable[[str, str], int],
             requests_needed: Callable[[str, str], Mapping[str, str]] | None = None,
             tolerations: Callable[[str, str], Sequence[Mapping[str, Any]]] | None = None,
             shares: Mapping[str, Decimal] | None = None) -> Discovery:
    """Select, exclude and sort. `gpus_needed(platform, architecture)` gives the per-node GPU request,
    `requests_needed` what a pod asks of the other resources (fit.pod_requests: memory, CPUs, hugepages, EFA, NICs
    ...), `tolerations` the pods' own (the catalog's; the target's taintSelectors are added here), `shares` the share
    of a node's allocatable a pod may ask of each request fitted to the nodes (fit.pod_shortfalls, the one rule). A
    node that cannot take the pod is left out and named (InsufficientResources), not planned to fail its group; one
    saying nothing of a resource is kept (an unknown amount is no limit).

    Raises PlatformError when the selected nodes span several platforms.
    """
    nodes = list(nodes)
    selected = sorted((n for n in nodes if matches_target(n, target) and is_gpu_node(n)), key=node_name)
    excluded = _named_and_left_out(nodes, target)
    schedulable = []
    for node in selected:
        exclusion = node_exclusion(node)
        if exclusion is None:
            schedulable.append(node)
        else:
            excluded.append(exclusion)
    if not schedulable:
        return Discovery(nodes=[], excluded=excluded)
    architecture = majority_architecture(schedulable) or "unknown"
    platform = fleet_platform(schedulable)
    same_arch = []
    votes = Counter(node_gpu_architecture(n) for n in schedulable) - Counter({"unknown": len(schedulable)})
    for node in schedulable:
        arch = node_gpu_architecture(node)
        if arch not in (architecture, "unknown"):
            tie = votes[arch] == votes[architecture]
            message = (f"{arch}, as many nodes as {architecture}, which the first node by name holds" if tie
                       else f"{arch}, fleet majority is {architecture}")
            excluded.append(ExcludedNode(name=node_name(node), reason="OtherGPUArchitecture", message=message))
        else:
            same_arch.append(node)
    needed = gpus_needed(platform, architecture)
    asked = {name: amount for name, amount in (requests_needed(platform, architecture) if requests_needed else {}).items()
             if name != RESOURCE_GPU}
    tolerated = tolerations(platform, architecture) if tolerations else ()
    eligible = []
    for node in same_arch:
        have = allocatable_gpus(node)
        # A missing or zero count is kept: the device plugin may be restarting (reference A.3).
        if have and have < needed:
            excluded.append(ExcludedNode(name=node_name(node), reason="InsufficientGPUs", message=f"{have} allocatable GPUs, {needed} needed"))
        elif short := pod_shortfalls(node, asked, shares or {}):  # a missing count is kept, as for GPUs
            excluded.append(ExcludedNode(name=node_name(node), reason="InsufficientResources", message="; ".join(short)))
        elif evicting := _untolerated_no_execute(node, tolerated, target.taint_selectors or []):
            excluded.append(ExcludedNode(name=node_name(node), reason="NoExecuteTaint", message=evicting))
        else:
            eligible.append(node)
    excluded.sort(key=lambda item: item.name)
    return Discovery(nodes=eligible, excluded=excluded, platform=platform, architecture=architecture)


def leave_out_busy(found: Discovery, requests: Mapping[str, str], others: Mapping[str, Sequence[Mapping[str, Any]]]) -> Discovery:
    """`found` with each node whose other pods (`others`: node name -> the pods bound to it that are not nvcre's)
    hold what a pod asking `requests` (fit.pod_requests: GPUs, cpu, memory ...) needs left out (NodeBusy, naming the
    pods: fit.held_by_others, the one rule): kube-scheduler would leave its pod Pending until they end, which may be
    never (another team's training), and its group, waiting, would test none of its nodes. Not faulty, never blamed,
    never certified: the category is INCOMPLETE. A node `others` says nothing of is kept."""
    busy = {node_name(node): held for node in found.nodes if (held := held_by_others(node, requests, others.get(node_name(node), ())))}
    if not busy:
        return found
    excluded = [*found.excluded, *(ExcludedNode(name=name, reason=NODE_BUSY, message="; ".join(held)) for name, held in busy.items())]
    return Discovery(nodes=[node for node in found.nodes if node_name(node) not in busy], excluded=sorted(excluded, key=lambda item: item.name),
                     platform=found.platform, architecture=found.architecture)
