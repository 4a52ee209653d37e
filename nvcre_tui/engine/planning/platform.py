"""Cloud platform and GPU architecture of a fleet, from Kubernetes Node objects (JSON shape).

Platform comes from `spec.providerID` (never from instance-type labels); architecture from the GPU
feature discovery label `nvidia.com/gpu.product`. Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.nodes import Node, gpu_replicas, node_labels, node_name
from nvcre_tui.engine.api.options import MAX_PER_NODE
from nvcre_tui.engine.api.vocabulary import (
    FORGE_SITE_LABEL, LABEL_GPU_CLIQUE, LABEL_GPU_PRODUCT, LABEL_GPU_REPLICAS, LABEL_HOSTNAME, NSCALE_RDMA_RESOURCE, RACK_TOPOLOGY_KEYS,
    RESOURCE_GPU, RESOURCE_MIG_PREFIX, TOGETHER_WORKER_LABEL,
)
from nvcre_tui.engine.units import parse_quantity

PLATFORMS: tuple[str, ...] = ("aws", "gcp", "azure", "oci", "onprem", "togetherai", "mistral", "forge", "nscale")
FALLBACK_PLATFORM = "onprem"
UNKNOWN_ARCHITECTURE = "unknown"


class PlatformError(ValueError):
    """Nodes that do not resolve to one platform; the message is one line."""


def _section(node: Node, *path: str) -> Mapping[str, Any]:
    """node[path[0]][path[1]]..., or {} where any step is missing or not a mapping."""
    current: Any = node
    for step in path:
        current = current.get(step) if isinstance(current, Mapping) else None
    return current if isinstance(current, Mapping) else {}


def _has_label(key: str) -> Callable[[Node], bool]:
    return lambda node: key in node_labels(node)


def _has_allocatable(resource: str) -> Callable[[Node], bool]:
    return lambda node: resource in _section(node, "status", "allocatable")


def _is_forge(node: Node) -> bool:
    return "forge" in str(node_labels(node).get(LABEL_HOSTNAME, "")) or FORGE_SITE_LABEL in node_labels(node)


@dataclass(frozen=True)
class ProviderRule:
    """A providerID prefix and its platform; with `requires`, a node failing it is `onprem` instead."""

    prefix: str
    platform: str
    requires: Callable[[Node], bool] | None = None


# First matching prefix wins. `metal3://` is a known trap: Cluster API + Metal3 on-prem sites land on mistral.
PROVIDER_RULES: tuple[ProviderRule, ...] = (
    ProviderRule("aws://", "aws"),
    ProviderRule("gce://", "gcp"),
    ProviderRule("azure://", "azure"),
    ProviderRule("ocid1.", "oci"),
    ProviderRule("openstack://", "nscale", _has_allocatable(NSCALE_RDMA_RESOURCE)),
    ProviderRule("kubevirt://", "togetherai", _has_label(TOGETHER_WORKER_LABEL)),
    ProviderRule("metal3://", "mistral"),
)
# An empty providerID (BCM and other bare metal) is Forge only when the node carries Forge's marks.
EMPTY_PROVIDER_RULE = ProviderRule("", "forge", _is_forge)


def detect_platform(node: Node) -> str:
    """The platform one node runs on."""
    provider_id = str(_section(node, "spec").get("providerID") or "").strip()
    if provider_id:
        rule = next((r for r in PROVIDER_RULES if provider_id.startswith(r.prefix)), None)
    else:
        rule = EMPTY_PROVIDER_RULE
    if rule is None or (rule.requires is not None and not rule.requires(node)):
        return FALLBACK_PLATFORM
    return rule.platform


def fleet_platform(nodes: Iterable[Node]) -> str:
    """The one platform all nodes share; PlatformError when they disagree or there are none."""
    by_platform: dict[str, list[str]] = {}
    for node in nodes:
        by_platform.setdefault(detect_platform(node), []).append(node_name(node) or "<unnamed>")
    if not by_platform:
        raise PlatformError("no nodes to detect a platform from")
    if len(by_platform) > 1:
        parts = [f"{p} ({', '.join(sorted(names))})" for p, names in sorted(by_platform.items())]
        raise PlatformError(f"heterogeneous platforms: {', '.join(parts)}")
    return next(iter(by_platform))


# ----------------------------------------------------------------------------- GPU architecture

RACK_SCALE_ARCHITECTURES = frozenset({"gb200", "gb300"})
# Per-platform rack key for NVL72 systems; platforms not listed use the clique label.
_NVIDIA_PREFIX = re.compile(r"^nvidia-", re.IGNORECASE)
_RTX_PRO_6000 = re.compile(r"^rtx-pro-6000", re.IGNORECASE)


def gpu_architecture(product: str | None) -> str:
    """`NVIDIA-H100-80GB-HBM3` -> h100, `NVIDIA-RTX-PRO-6000-...` -> rtxpro6000, missing -> unknown.

    Spaces become dashes first, as GFD does, so a DRA productName ("NVIDIA GB300") parses the same.
    """
    text = "-".join(str(product or "").split())
    rest = _NVIDIA_PREFIX.sub("", text)
    if _RTX_PRO_6000.match(rest):
        return "rtxpro6000"
    return rest.split("-", 1)[0].lower() or UNKNOWN_ARCHITECTURE


def node_gpu_architecture(node: Node) -> str:
    """A node's architecture from its `nvidia.com/gpu.product` label (`unknown` when unlabelled)."""
    return gpu_architecture(node_labels(node).get(LABEL_GPU_PRODUCT))


def majority_architecture(nodes: Iterable[Node]) -> str | None:
    """The architecture most labelled nodes have; a tie goes to the earliest node by name. None if none is labelled."""
    labelled = sorted((n for n in nodes if node_labels(n).get(LABEL_GPU_PRODUCT)), key=node_name)
    votes = Counter(node_gpu_architecture(n) for n in labelled)
    if not votes:
        return None
    top = max(votes.values())
    return next(arch for arch in map(node_gpu_architecture, labelled) if votes[arch] == top)


def topology_key(platform: str, architecture: str) -> str:
    """The node label that groups nodes into racks / NVLink domains for this platform and architecture."""
    if architecture in RACK_SCALE_ARCHITECTURES:
        return RACK_TOPOLOGY_KEYS.get(platform, LABEL_GPU_CLIQUE)
    return LABEL_GPU_CLIQUE


# ----------------------------------------------------------------------------- GPU count

def allocatable_gpus(node: Node) -> int | None:
    """`status.allocatable["nvidia.com/gpu"]` as an int; None when missing or unreadable (no whole count a node
    can have: at most MAX_PER_NODE, as gpusPerNode)."""
    value = _section(node, "status", "allocatable").get(RESOURCE_GPU)
    if value is None or isinstance(value, bool):
        return None
    try:
        count = parse_quantity(value)
    except ValueError:
        return None
    return int(count) if count == count.to_integral_value() and 0 <= count <= MAX_PER_NODE else None


def partitioned_gpus(node: Node) -> str | None:
    """How a node's GPUs are not whole GPUs (MIG slices, time-slicing or MPS replicas), or None. A run on them
    measures a slice or a share, never the node: GFD names the product `...-MIG-<profile>` (single strategy) or
    `...-SHARED`, sets nvidia.com/gpu.replicas, and the mixed strategy advertises nvidia.com/mig-* resources."""
    labels = node_labels(node)
    product = str(labels.get(LABEL_GPU_PRODUCT) or "")
    if "-MIG-" in product.upper():
        return f"MIG slices, not whole GPUs ({LABEL_GPU_PRODUCT}={product})"
    if product.upper().endswith("-SHARED"):
        return f"shared GPUs ({LABEL_GPU_PRODUCT}={product})"
    replicas = gpu_replicas(labels) or 1
    if replicas > 1:
        return f"each GPU shared {replicas} ways ({LABEL_GPU_REPLICAS}={replicas})"
    slices = sorted(key for key, value in _section(node, "status", "allocatable").items()
                    if str(key).startswith(RESOURCE_MIG_PREFIX) and _quantity(value))
    if slices:
        return f"MIG slices, not whole GPUs ({', '.join(slices[:3])}{' ...' if len(slices) > 3 else ''} allocatable)"
    return None


def _quantity(value: Any) -> float:
    try:
        return float(parse_quantity(value)) if not isinstance(value, bool) else 0.0
    except (ValueError, TypeError):
        return 0.0


def fleet_summary(nodes: Sequence[Node]) -> dict[str, str]:
    """{platform, architecture, topologyKey} for a fleet; raises PlatformError like `fleet_platform`."""
    platform = fleet_platform(nodes)
    architecture = majority_architecture(nodes) or UNKNOWN_ARCHITECTURE
    return {"platform": platform, "architecture": architecture, "topologyKey": topology_key(platform, architecture)}
