"""Platform and GPU-architecture detection: unit rules plus golden fleets in tests/cases/platform/.

Golden cases: each directory holds `input.yaml` (a list of Node objects) and `expected.json`
({platform, architecture, topologyKey} or {error}). To rewrite every expected.json from the current
code, run `NVCRE_UPDATE_GOLDEN=1 python -m pytest tests/engine/test_platform.py` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE, LABEL_GPU_PRODUCT
from nvcre_tui.engine.planning.platform import (
    PLATFORMS,
    PlatformError,
    allocatable_gpus,
    detect_platform,
    fleet_platform,
    fleet_summary,
    gpu_architecture,
    majority_architecture,
    node_gpu_architecture,
    topology_key,
)

CASES = Path(__file__).resolve().parent.parent / "cases" / "platform"
UPDATE_GOLDEN = os.environ.get("NVCRE_UPDATE_GOLDEN") == "1"


def golden_result(nodes: list[dict[str, Any]]) -> dict[str, str]:
    try:
        return fleet_summary(nodes)
    except PlatformError as err:
        return {"error": str(err)}


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_case(case: str) -> None:
    nodes = yaml.safe_load((CASES / case / "input.yaml").read_text()) or []
    expected_path = CASES / case / "expected.json"
    actual = golden_result(nodes)
    if UPDATE_GOLDEN:
        expected_path.write_text(json.dumps(actual, indent=2) + "\n")
    assert actual == json.loads(expected_path.read_text())


def test_golden_cases_cover_every_platform_and_architecture() -> None:
    expected = [json.loads((d / "expected.json").read_text()) for d in CASES.iterdir() if d.is_dir()]
    assert {e["platform"] for e in expected if "platform" in e} == set(PLATFORMS)
    assert {e["architecture"] for e in expected if "architecture" in e} >= {
        "h100", "h200", "b200", "b300", "a100", "l40", "l40s", "gb200", "gb300", "rtxpro6000", "unknown",
    }


def node(provider_id: str | None, labels: dict[str, str], allocatable: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {"metadata": {"name": "n", "labels": labels}, "status": {"allocatable": allocatable}}
    if provider_id is not None:
        data["spec"] = {"providerID": provider_id}
    return data


@pytest.mark.parametrize(
    ("provider_id", "labels", "allocatable", "platform"),
    [
        ("aws:///us-west-2a/i-1", {}, {}, "aws"),
        ("gce://p/z/n", {}, {}, "gcp"),
        ("azure:///subscriptions/x", {}, {}, "azure"),
        ("ocid1.instance.oc1.phx.x", {}, {}, "oci"),
        ("openstack:///id", {}, {"nscale.com/rdmashare": "1"}, "nscale"),
        ("openstack:///id", {}, {}, "onprem"),
        ("kubevirt://vm", {"node-role.together.ai/worker": "true"}, {}, "togetherai"),
        ("kubevirt://vm", {}, {}, "onprem"),
        ("metal3://ns/bmh/x", {}, {}, "mistral"),
        ("", {"kubernetes.io/hostname": "forge-01"}, {}, "forge"),
        (None, {"nke.nvidia.com/site-name": "x"}, {}, "forge"),
        ("", {"kubernetes.io/hostname": "dgx-01"}, {}, "onprem"),
        ("kind://docker/kind/kind-worker", {"nke.nvidia.com/site-name": "x"}, {}, "onprem"),
        # labels never decide a cloud platform
        ("aws:///a/i", {"node.kubernetes.io/instance-type": "Standard_ND96"}, {}, "aws"),
    ],
)
def test_detect_platform(provider_id: str | None, labels: dict[str, str], allocatable: dict[str, str], platform: str) -> None:
    assert detect_platform(node(provider_id, labels, allocatable)) == platform


def test_fleet_platform_names_every_disagreeing_node() -> None:
    nodes = [
        {"metadata": {"name": "c"}, "spec": {"providerID": "gce://p/z/c"}},
        {"metadata": {"name": "b"}, "spec": {"providerID": "aws:///a/b"}},
        {"metadata": {"name": "a"}, "spec": {"providerID": "aws:///a/a"}},
    ]
    with pytest.raises(PlatformError, match=r"^heterogeneous platforms: aws \(a, b\), gcp \(c\)$"):
        fleet_platform(nodes)
    assert fleet_platform(nodes[1:]) == "aws"


@pytest.mark.parametrize(
    ("product", "architecture"),
    [
        ("NVIDIA-H100-80GB-HBM3", "h100"),
        ("NVIDIA-GB200", "gb200"),
        ("NVIDIA-GB200-NVL72", "gb200"),
        ("NVIDIA-GB300-NVL72", "gb300"),
        ("NVIDIA-H200-141GB-HBM3", "h200"),
        ("NVIDIA-B200", "b200"),
        ("NVIDIA-L40S", "l40s"),
        ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "rtxpro6000"),
        ("nvidia-rtx-pro-6000", "rtxpro6000"),
        ("RTX-PRO-6000", "rtxpro6000"),
        ("NVIDIA-RTX-6000-Ada-Generation", "rtx"),
        ("NVIDIA GB300", "gb300"),  # DRA productName, sanitized as GFD does
        ("Tesla-V100-SXM2-16GB", "tesla"),
        ("NVIDIA-", "unknown"),
        ("", "unknown"),
        (None, "unknown"),
    ],
)
def test_gpu_architecture(product: str | None, architecture: str) -> None:
    assert gpu_architecture(product) == architecture


def labelled(name: str, product: str | None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {LABEL_GPU_PRODUCT: product} if product else {}}}


def test_majority_architecture_rules() -> None:
    assert majority_architecture([]) is None
    assert majority_architecture([labelled("a", None), labelled("b", "")]) is None
    assert node_gpu_architecture(labelled("a", None)) == "unknown"
    tie = [labelled("z", "NVIDIA-B200"), labelled("m", "NVIDIA-H100-80GB-HBM3")]
    assert majority_architecture(tie) == "h100"
    assert majority_architecture([*tie, labelled("y", "NVIDIA-B200")]) == "b200"


@pytest.mark.parametrize(
    ("platform", "architecture", "key"),
    [
        ("aws", "gb200", "topology.k8s.aws/network-node-layer-1"),
        ("gcp", "gb300", "cloud.google.com/gce-topology-block"),
        ("azure", "gb300", "kubernetes.azure.com/ppg"),
        ("oci", "gb200", LABEL_GPU_CLIQUE),
        ("onprem", "gb300", LABEL_GPU_CLIQUE),
        ("aws", "h100", LABEL_GPU_CLIQUE),
        ("gcp", "unknown", LABEL_GPU_CLIQUE),
    ],
)
def test_topology_key(platform: str, architecture: str, key: str) -> None:
    assert topology_key(platform, architecture) == key


@pytest.mark.parametrize(
    ("allocatable", "count"),
    [
        ({"nvidia.com/gpu": "8"}, 8),
        ({"nvidia.com/gpu": 4}, 4),
        ({"nvidia.com/gpu": "0"}, 0),
        ({"nvidia.com/gpu": "7000m"}, 7),
        ({"nvidia.com/gpu": "64"}, 64),
        ({"nvidia.com/gpu": "1k"}, None),  # no node holds 1000 GPUs: unreadable, as gpusPerNode is at most 64
        ({"nvidia.com/gpu": "1.5"}, None),
        ({"nvidia.com/gpu": "eight"}, None),
        ({"nvidia.com/gpu": "8Q"}, None),
        ({"nvidia.com/gpu": True}, None),
        ({"cpu": "96"}, None),
        (None, None),
    ],
)
def test_allocatable_gpus(allocatable: dict[str, Any] | None, count: int | None) -> None:
    data: dict[str, Any] = {"metadata": {"name": "n"}}
    if allocatable is not None:
        data["status"] = {"allocatable": allocatable}
    assert allocatable_gpus(data) == count
