"""The platform x GPU architecture x framework matrix the catalog covers, rendered the way a
certification renders it (catalog overrides, GPU node shapes, placeholders), as WorkloadRunSpecs."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.planning.render import render_run_spec
from nvcre_tui.engine.planning.resolve import resolve_options
from nvcre_tui.engine.workloads import Placement

# One entry per framework for the goldens; the schema tests render every entry.
REPRESENTATIVES = {"mpi": "communication/nccl-all-reduce", "exec": "communication/nccl-loopback", "torch": "training/nemotron5-8b",
                   "dcgm": "diagnostics/dcgm-level4"}  # exec too, through the GPU Operator's hostengine Service
GROUP_NODES = ("gpu-node-01", "gpu-node-02")


def architectures() -> list[str]:
    """Every architecture with a node shape in catalog/_defaults/gpu-defaults.yaml."""
    return sorted(default_catalog().gpu_defaults.architectures)


def run_spec(entry_key: str, platform: str, architecture: str) -> WorkloadRunSpec:
    """The entry's WorkloadRun on a two-node group (one node for per-node entries)."""
    catalog = default_catalog()
    entry = catalog.entries[entry_key]
    options = resolve_options(catalog, entry, CategoryOptions(), platform, architecture)
    nodes = 1 if entry.per_node else len(GROUP_NODES)
    spec, _ = render_run_spec(entry, options, platform, architecture, nodes)
    return spec


def gke_a3_mega(name: str, networks: int = 8, instance_type: str = "a3-megagpu-8g") -> dict[str, Any]:
    """A GKE A3 Mega Node as GKE lists it: its machine type, and its GPU NIC networks in its allocatable
    (`networking.gke.io.networks/<network>` and `<network>.IP`), which GPUDirect-TCPXO's pods attach."""
    allocatable = {"nvidia.com/gpu": "8"}
    for index in range(1, networks + 1):
        allocatable |= {f"networking.gke.io.networks/vpc{index}": "1", f"networking.gke.io.networks/vpc{index}.IP": "1"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": instance_type, "kubernetes.io/hostname": name}},
            "spec": {"providerID": f"gce://project/us-central1-c/{name}"}, "status": {"allocatable": allocatable}}


def placement(entry_key: str, platform: str, architecture: str, **extra: object) -> Placement:
    """A group placement for the matrix (no owner: rendered offline); GKE's nodes are A3 Mega ones carrying what
    GPUDirect-TCPXO needs (the H100 entries render it)."""
    per_node = default_catalog().entries[entry_key].per_node
    job = f"cert-{entry_key.replace('/', '-')}-job"
    nodes = GROUP_NODES[:1] if per_node else GROUP_NODES
    if platform == "gcp":
        extra = {"node_objects": {name: gke_a3_mega(name) for name in nodes}, **extra}
    return Placement(job=job, namespace="gpu-tests", nodes=nodes,
                     platform=platform, architecture=architecture, **extra)  # type: ignore[arg-type]


def combinations() -> list[tuple[str, str]]:
    """(platform, architecture) pairs."""
    return [(p, a) for p in PLATFORMS for a in architectures()]
