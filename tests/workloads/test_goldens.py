"""Golden manifests under tests/cases/workloads/:

- matrix/<platform>.yaml: for every GPU architecture of the catalog and every framework (mpi, exec, torch),
  a digest of what the run's pods get on both paths: image, commands, env, resources, tolerations, claims,
  volumes (the parts the per-platform / per-architecture catalog data decide);
- full/<case>.yaml: complete object streams for chosen cases (Trainer and batch, each framework, GB200
  ComputeDomain, a gang scheduler), exactly what `render --workloads` prints for one group.

NVCRE_UPDATE_GOLDEN=1 rewrites them from the current code; review the diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.engine.api.base import GangScheduler, TaintSelector
from nvcre_tui.engine.api.serialize import to_yaml
from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.workloads import workload_manifests
from tests.workloads.matrix import REPRESENTATIVES, architectures, placement, run_spec
from tests.workloads.schema import pod_specs

CASES = Path(__file__).resolve().parents[1] / "cases" / "workloads"
UPDATE = os.environ.get("NVCRE_UPDATE_GOLDEN") == "1"
OWNER = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "name": "owner", "uid": "00000000-0000-4000-8000-000000000001",
         "controller": True, "blockOwnerDeletion": True}
KAI = GangScheduler(scheduler_name="kai-scheduler")

# case name -> (entry, platform, architecture, trainer?, gang?)
FULL_CASES: dict[str, tuple[str, str, str, bool, bool]] = {
    "trainer-mpi-aws-h100": ("communication/nccl-all-reduce", "aws", "h100", True, False),
    "trainer-mpi-oci-gb300-kai": ("communication/nccl-all-gather", "oci", "gb300", True, True),
    "trainer-torch-aws-gb200": ("training/nemotron5-8b", "aws", "gb200", True, False),
    "trainer-torch-azure-h100-kai": ("training/nemotron5-56b", "azure", "h100", True, True),
    "trainer-exec-gcp-h100": ("communication/nccl-loopback", "gcp", "h100", True, False),
    "trainer-mpi-gcp-h100-tcpxo": ("communication/nccl-all-gather", "gcp", "h100", True, False),
    "trainer-mpi-aws-gb300-roce": ("communication/nccl-all-reduce", "aws", "gb300", True, False),
    "trainer-exec-dcgm-oci-h100": ("diagnostics/dcgm-level4", "oci", "h100", True, False),
    "batch-mpi-azure-h100": ("communication/nccl-alltoall", "azure", "h100", False, False),
    "batch-mpi-gcp-gb200-kai": ("communication/nccl-all-reduce", "gcp", "gb200", False, True),
    "batch-torch-onprem-gb300": ("training/nemotron5-8b", "onprem", "gb300", False, False),
    "batch-exec-forge-l40": ("communication/nccl-loopback-nvswitch", "forge", "l40", False, False),
    "batch-exec-dcgm-aws-h100": ("diagnostics/dcgm-level4", "aws", "h100", False, False),
}


def _compare(path: Path, text: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no {path.relative_to(CASES)}: run with NVCRE_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(), f"{path.relative_to(CASES)} differs (NVCRE_UPDATE_GOLDEN=1 rewrites it; review the diff)"


def _container_digest(container: dict[str, Any]) -> dict[str, Any]:
    digest: dict[str, Any] = {"image": container["image"]}  # commands: see trainer.command and full/
    digest["env"] = {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}
    digest["resources"] = container.get("resources", {}).get("limits", {})
    if container.get("securityContext", {}).get("privileged"):
        digest["privileged"] = True
    return digest


def _pod_digest(pod: dict[str, Any]) -> dict[str, Any]:
    digest = {"containers": [_container_digest(c) for c in pod["containers"]],
              "volumes": [v["name"] for v in pod.get("volumes", [])], "tolerations": pod.get("tolerations", [])}
    for key in ("resourceClaims", "hostNetwork", "initContainers"):
        if key in pod:
            digest[key] = [c["name"] for c in pod[key]] if key == "initContainers" else pod[key]
    return digest


def _templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    if obj["kind"] == "TrainingRuntime":
        return [job["template"]["spec"]["template"] for job in obj["spec"]["template"]["spec"]["replicatedJobs"]]
    return [obj["spec"]["template"]] if obj["kind"] == "Job" else []


def digest(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The parts of a run's objects the catalog's platform and architecture data decide."""
    result: dict[str, Any] = {"objects": [f"{o['kind']}/{o['metadata']['name']}" for o in objects]}
    for obj in objects:
        if obj["kind"] == "TrainJob":
            result["trainer"] = obj["spec"]["trainer"]
        for index, (template, pod) in enumerate(zip(_templates(obj), pod_specs(obj))):
            if index == 0:
                result["pod"] = _pod_digest(pod)
                if "annotations" in template["metadata"]:
                    result["pod"]["annotations"] = template["metadata"]["annotations"]
            else:  # the MPI launcher: the same env as the workers, no GPUs
                result["launcher"] = {"image": pod["containers"][0]["image"], "initContainers": [c["name"] for c in pod["initContainers"]]}
    return result


@pytest.mark.parametrize("platform", PLATFORMS)
def test_platform_matrix(platform: str) -> None:
    matrix: dict[str, Any] = {}
    for arch in architectures():
        for framework, entry in REPRESENTATIVES.items():
            spec = run_spec(entry, platform, arch)
            where = placement(entry, platform, arch)
            matrix.setdefault(arch, {})[framework] = {
                "trainer": digest(workload_manifests(spec, where, trainer=True)),
                "batch": digest(workload_manifests(spec, where, trainer=False)),
            }
    text = f"# {platform}: GPU architecture -> framework ({', '.join(f'{k}: {v}' for k, v in REPRESENTATIVES.items())})\n"
    text += yaml.dump(matrix, sort_keys=False, default_flow_style=None, width=140, allow_unicode=True)
    _compare(CASES / "matrix" / f"{platform}.yaml", text)


@pytest.mark.parametrize("case", sorted(FULL_CASES))
def test_full_manifests(case: str) -> None:
    entry, platform, arch, trainer, gang = FULL_CASES[case]
    where = placement(entry, platform, arch, owner=OWNER, gang=KAI if gang else None,
                      taint_selectors=(TaintSelector(key="nvidia.com/gpu", effect="NoSchedule"),))
    objects = workload_manifests(run_spec(entry, platform, arch), where, trainer=trainer)
    _compare(CASES / "full" / f"{case}.yaml", f"# {entry} on {platform}/{arch}{' under KAI' if gang else ''}\n{to_yaml(objects)}")


def test_every_golden_file_is_still_generated() -> None:
    expected = {f"matrix/{p}.yaml" for p in PLATFORMS} | {f"full/{c}.yaml" for c in FULL_CASES}
    found = {str(p.relative_to(CASES)) for p in CASES.rglob("*.yaml")}
    assert found == expected, "stale or missing golden files"
