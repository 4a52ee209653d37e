"""The platform x GPU architecture x framework matrix the catalog covers, rendered the way a
certification renders it (catalog overrides, GPU node shapes, placeholders), as WorkloadRunSpecs."""

from __future__ import annotations

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


def placement(entry_key: str, platform: str, architecture: str, **extra: object) -> Placement:
    """A group placement for the matrix (no owner: rendered offline)."""
    per_node = default_catalog().entries[entry_key].per_node
    job = f"cert-{entry_key.replace('/', '-')}-job"
    return Placement(job=job, namespace="gpu-tests", nodes=GROUP_NODES[:1] if per_node else GROUP_NODES,
                     platform=platform, architecture=architecture, **extra)  # type: ignore[arg-type]


def combinations() -> list[tuple[str, str]]:
    """(platform, architecture) pairs."""
    return [(p, a) for p in PLATFORMS for a in architectures()]
