"""A node's software baseline, read from its Node: what must not change under a certified node unnoticed.

status.nodeInfo gives kubelet, kernel, OS image and container runtime; GPU Feature Discovery (the GPU
Operator) labels give the driver, the CUDA runtime, the GPU product and the MIG strategy. GFD writes
`nvidia.com/cuda.driver-version.{full,major,minor,revision}` and `nvidia.com/cuda.runtime-version.{full,
major,minor}`; older releases only the deprecated `nvidia.com/cuda.driver.{major,minor,rev}` and
`nvidia.com/cuda.runtime.{major,minor}`: both are read, the current names first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvcre_tui.engine.api.bodies import labels_of, node_status
from nvcre_tui.engine.api.vocabulary import (
    LABEL_CUDA_DRIVER,
    LABEL_CUDA_DRIVER_OLD_PARTS,
    LABEL_CUDA_DRIVER_PARTS,
    LABEL_CUDA_RUNTIME,
    LABEL_CUDA_RUNTIME_OLD_PARTS,
    LABEL_CUDA_RUNTIME_PARTS,
    LABEL_GPU_PRODUCT,
    LABEL_MIG_STRATEGY,
)

Baseline = dict[str, str]

# (baseline field, what the tables call it)
FIELDS: tuple[tuple[str, str], ...] = (
    ("driver", "driver"), ("cuda", "CUDA"), ("gpuProduct", "GPU"), ("migStrategy", "MIG"),
    ("kernel", "kernel"), ("osImage", "OS"), ("kubelet", "kubelet"), ("containerRuntime", "runtime"),
)
NODE_INFO = {"kubelet": "kubeletVersion", "kernel": "kernelVersion", "osImage": "osImage", "containerRuntime": "containerRuntimeVersion"}


def _joined(labels: Mapping[str, str], *keys: str) -> str | None:
    parts = [labels.get(key) for key in keys]
    present = [part for part in parts if part]
    return ".".join(present) if present and parts[0] else None


def _version(labels: Mapping[str, str], full: str, current: tuple[str, ...], deprecated: tuple[str, ...]) -> str | None:
    return labels.get(full) or _joined(labels, *current) or _joined(labels, *deprecated)


def baseline_of(node: Mapping[str, Any]) -> Baseline:
    """The node's baseline: only the fields the Node states (an absent label is not a version)."""
    labels = labels_of(node)
    info = node_status(node).get("nodeInfo")
    info = info if isinstance(info, dict) else {}  # a damaged Node states no baseline, rather than failing the archive
    found: dict[str, str | None] = {field: info.get(key) for field, key in NODE_INFO.items()}
    found["driver"] = _version(labels, LABEL_CUDA_DRIVER, LABEL_CUDA_DRIVER_PARTS, LABEL_CUDA_DRIVER_OLD_PARTS)
    found["cuda"] = _version(labels, LABEL_CUDA_RUNTIME, LABEL_CUDA_RUNTIME_PARTS, LABEL_CUDA_RUNTIME_OLD_PARTS)
    found["gpuProduct"] = labels.get(LABEL_GPU_PRODUCT)
    found["migStrategy"] = labels.get(LABEL_MIG_STRATEGY)
    return {field: str(value) for field, _ in FIELDS if isinstance((value := found.get(field)), str) and value}


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[str | None, str | None]]:
    """Fields whose value differs, field -> (before, after); a field neither states is no change."""
    return {field: (before.get(field), after.get(field)) for field, _ in FIELDS if before.get(field) != after.get(field)}


def describe(change: Mapping[str, tuple[str | None, str | None]]) -> str:
    """`driver 550.54.15 → 570.124.06, kernel ...`."""
    names = dict(FIELDS)
    return ", ".join(f"{names[field]} {old or '-'} → {new or '-'}" for field, (old, new) in change.items())
