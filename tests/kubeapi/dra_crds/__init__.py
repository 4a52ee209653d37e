"""NVIDIA's DRA driver for GPUs' ComputeDomain CustomResourceDefinition (github.com/NVIDIA/k8s-dra-driver-gpu,
deployments/helm/.../crds/resource.nvidia.com_computedomains.yaml, Apache License 2.0), gzipped, so the emulator serves
the real schema (required fields, enums, the `self == oldSelf` rule on spec) to the ComputeDomains the runner makes: the
first release that has it (v25.3.0: numNodes required), v25.8.1 (channel.allocationMode), and the main branch at 22407113
(2026-05-15: numNodes optional, minimum 0)."""

from __future__ import annotations

import copy
import gzip
from functools import cache
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
COMPUTE_DOMAIN_VERSIONS = ("v25.3.0", "v25.8.1", "main")


@cache
def _load(version: str) -> dict[str, Any]:
    text = gzip.decompress((HERE / f"resource.nvidia.com_computedomains-{version}.yaml.gz").read_bytes())
    return dict(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def compute_domain_crd(version: str) -> dict[str, Any]:
    """The ComputeDomain CRD of driver `version` (one of COMPUTE_DOMAIN_VERSIONS), a fresh copy each time."""
    return copy.deepcopy(_load(version))
