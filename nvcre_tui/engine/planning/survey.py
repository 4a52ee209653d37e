"""What a certification would find on a fleet (`nvcre cluster info`): the platform, the GPU products, and the GPU
nodes by the label intra-rack and diagnose group them by (`nvidia.com/gpu.clique`), counting those discovery excludes.

Read with the same rules as discovery (engine/planning/discovery.py and platform.py), so what this says is what
a run would do: GPU nodes are those labelled `nvidia.com/gpu.present=true`; cordoned ones, those not Ready and those
whose GPUs are partitioned are excluded (discovery.NODE_EXCLUSIONS).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nvcre_tui.engine.api.nodes import Node, is_cordoned, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE, LABEL_GPU_COUNT, LABEL_GPU_PRESENT, LABEL_GPU_PRODUCT, RESOURCE_GPU
from nvcre_tui.engine.planning.discovery import is_gpu_node, node_exclusion
from nvcre_tui.engine.planning.platform import (PlatformError, allocatable_gpus, fleet_platform, gpu_architecture,
                                                majority_architecture, partitioned_gpus)
from nvcre_tui.engine.units import count, listed

NO_DOMAIN = "(none)"  # a GPU node without the topology label: intra-rack leaves it out


@dataclass(frozen=True)
class Product:
    """One GPU product (`nvidia.com/gpu.product`) and the GPU nodes that carry it."""

    product: str
    architecture: str
    nodes: int
    gpus: int  # allocatable, summed (a partitioned node: its physical gpu.count; a missing or unreadable count adds none)


@dataclass(frozen=True)
class Domain:
    """The GPU nodes sharing one value of the topology label (a rack, an NVLink domain, a network block)."""

    name: str
    nodes: int
    gpus: int
    cordoned: int


@dataclass(frozen=True)
class Survey:
    """A fleet as a certification would see it."""

    nodes: int
    gpu_nodes: int
    cordoned: int                       # GPU nodes only: discovery excludes them
    platform: str                       # `heterogeneous` when the GPU nodes span several (a run then refuses them)
    platform_problem: str | None        # why the platform is not one, in words
    architecture: str | None            # the majority architecture, as discovery picks it (None: no product label)
    topology_key: str                   # what the domains are grouped by
    topology_key_detected: bool         # False: given by --topology-key
    products: list[Product] = field(default_factory=list)
    domains: list[Domain] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)  # GPU nodes discovery leaves out, by reason (Cordoned, NotReady, ...)
    # GPU nodes GPU feature discovery counts GPUs on (nvidia.com/gpu.count) with no allocatable nvidia.com/gpu: no
    # device plugin has advertised them (none deployed yet, or a Node made by hand), so they add no GPUs above
    unadvertised: list[str] = field(default_factory=list)
    # Nodes a device plugin advertises GPUs on (allocatable nvidia.com/gpu) without GPU feature discovery's
    # nvidia.com/gpu.present=true (no GFD there, or a Node made by hand): no GPU node to discovery, so left out above
    unlabelled: list[str] = field(default_factory=list)

    def unlabelled_note(self) -> str | None:
        """Why nodes with GPUs are no GPU nodes here, in one line (None: none such)."""
        if not self.unlabelled:
            return None
        return (f"{count(len(self.unlabelled), 'node')} ({listed(self.unlabelled)}) with allocatable {RESOURCE_GPU} but not labelled "
                f"{LABEL_GPU_PRESENT}=true, which GPU feature discovery (the GPU Operator) sets: no run plans "
                f"{'it' if len(self.unlabelled) == 1 else 'them'}, whatever its target")

    def unadvertised_note(self) -> str | None:
        """Why GPU nodes add no GPUs, in one line (None: none such)."""
        if not self.unadvertised:
            return None
        return (f"{count(len(self.unadvertised), 'GPU node')} ({listed(self.unadvertised)}) labelled {LABEL_GPU_COUNT} but no allocatable "
                f"{RESOURCE_GPU}, which the NVIDIA device plugin advertises: their GPUs are not counted; a run still plans them, as the reference "
                f"does (a device plugin may be restarting), and their pods wait for it")

    def to_json(self) -> dict[str, Any]:
        """The survey as `cluster info -o json|yaml` prints it (camelCase, as the API's fields)."""
        return {
            "nodes": self.nodes, "gpuNodes": self.gpu_nodes, "cordoned": self.cordoned,
            "platform": self.platform, **({"platformProblem": self.platform_problem} if self.platform_problem else {}),
            "gpuArchitecture": self.architecture, "topologyKey": self.topology_key, "topologyKeyDetected": self.topology_key_detected,
            "products": [{"product": p.product, "architecture": p.architecture, "nodes": p.nodes, "gpus": p.gpus} for p in self.products],
            "domains": [{"name": d.name, "nodes": d.nodes, "gpus": d.gpus, "cordoned": d.cordoned} for d in self.domains],
            "excluded": dict(self.excluded),
            **({"withoutAllocatableGPUs": list(self.unadvertised)} if self.unadvertised else {}),
            **({"withoutGPUPresentLabel": list(self.unlabelled)} if self.unlabelled else {}),
        }


def survey(nodes: Iterable[Node], key: str | None = None) -> Survey:
    """The fleet's platform, products and domains by `key` (None: the clique label, as intra-rack and diagnose)."""
    everything = list(nodes)
    gpu = sorted((n for n in everything if is_gpu_node(n)), key=node_name)
    exclusions = {node_name(n): exclusion.reason for n in gpu if (exclusion := node_exclusion(n)) is not None}
    schedulable = [n for n in gpu if node_name(n) not in exclusions]
    counted = schedulable or gpu  # a fleet cordoned whole is still described
    problem = None
    try:
        platform = fleet_platform(counted)
    except PlatformError as error:
        platform, problem = ("unknown" if not counted else "heterogeneous"), str(error)
        if everything and not counted:  # "no nodes" beside "Nodes: 4 (0 with GPUs)": it is GPU nodes there are none of
            problem = f"no GPU node (labelled {LABEL_GPU_PRESENT}=true) to detect a platform from"
    architecture = majority_architecture(counted)
    chosen = key or LABEL_GPU_CLIQUE
    return Survey(len(everything), len(gpu), sum(1 for n in gpu if is_cordoned(n)), platform, problem, architecture, chosen, key is None,
                  _products(gpu), _domains(gpu, chosen), dict(sorted(Counter(exclusions.values()).items())),
                  [node_name(n) for n in gpu if _unadvertised(n)],
                  sorted(node_name(n) for n in everything if not is_gpu_node(n) and allocatable_gpus(n)))


def _unadvertised(node: Node) -> bool:
    """GPU feature discovery saw GPUs on the node (its count label) and no device plugin advertises them."""
    return LABEL_GPU_COUNT in node_labels(node) and not partitioned_gpus(node) and not allocatable_gpus(node)


def _gpus(node: Node) -> int:
    """The node's GPUs: allocatable, but for partitioned GPUs (MIG slices, shared replicas, each allocatable on its own)
    the physical count GPU feature discovery labels."""
    if partitioned_gpus(node):
        try:
            return int(str(node_labels(node).get(LABEL_GPU_COUNT)))
        except ValueError:
            pass
    return allocatable_gpus(node) or 0


def _products(gpu: list[Node]) -> list[Product]:
    nodes: Counter[str] = Counter()
    gpus: Counter[str] = Counter()
    for node in gpu:
        product = node_labels(node).get(LABEL_GPU_PRODUCT) or "(unlabelled)"
        nodes[product] += 1
        gpus[product] += _gpus(node)
    return [Product(p, gpu_architecture(p) if p != "(unlabelled)" else "unknown", n, gpus[p]) for p, n in sorted(nodes.items())]


def _domains(gpu: list[Node], key: str) -> list[Domain]:
    """Domains by name, the unlabelled last."""
    found: dict[str, list[Node]] = {}
    for node in gpu:
        found.setdefault(node_labels(node).get(key) or NO_DOMAIN, []).append(node)
    order = sorted(found, key=lambda name: (name == NO_DOMAIN, name))
    return [Domain(name, len(found[name]), sum(_gpus(n) for n in found[name]), sum(1 for n in found[name] if is_cordoned(n)))
            for name in order]

