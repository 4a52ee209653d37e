"""Nodes a run could only fail on are left out before it, named with their reason, never planned and blamed:
a Node its kubelet reports not Ready, and one whose GPUs are MIG slices or shared replicas (a run would measure a
slice, not the node). A Node no kubelet has reported on (registered by hand, as on an API server alone) is kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.planning.discovery import discover
from nvcre_tui.engine.planning.grouping import PartitionError, domains_of

H100 = "NVIDIA-H100-80GB-HBM3"
CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: exclusions}
spec:
  target: {}
  categories: [{domain: communication, variant: nccl-all-reduce}]
"""


def node(name: str, *, product: str = H100, ready: str | None = "True", labels: dict[str, str] | None = None,
         allocatable: dict[str, str] | None = None, cordoned: bool = False) -> dict[str, Any]:
    status: dict[str, Any] = {"allocatable": allocatable or {"nvidia.com/gpu": "8"}}
    if ready is not None:
        status["conditions"] = [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
                                                  "nvidia.com/gpu.count": "8", "nvidia.com/gpu.clique": "c1", **(labels or {})}},
            "spec": {"providerID": f"aws:///us-east-1a/i-{name}", **({"unschedulable": True} if cordoned else {})},
            "status": status}


FLEET = [
    node("n-ok"),
    node("n-unregistered", ready=None),  # no kubelet yet: kept
    node("n-down", ready="False"),
    node("n-unreachable", ready="Unknown"),
    node("n-mig-single", product=f"{H100}-MIG-1g.10gb", allocatable={"nvidia.com/gpu": "56"}),
    node("n-mig-mixed", labels={"nvidia.com/mig.strategy": "mixed"},
         allocatable={"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "56"}),
    node("n-mixed-whole", labels={"nvidia.com/mig.strategy": "mixed"},
         allocatable={"nvidia.com/gpu": "8", "nvidia.com/mig-1g.10gb": "0"}),  # mixed strategy, MIG off: whole GPUs
    node("n-shared", product=f"{H100}-SHARED", allocatable={"nvidia.com/gpu": "32"}),
    node("n-replicas", labels={"nvidia.com/gpu.replicas": "4"}, allocatable={"nvidia.com/gpu": "32"}),
    node("n-cordoned", cordoned=True, ready="False"),  # one reason per node: the first
]


def test_each_node_a_run_could_only_fail_on_is_excluded_with_its_reason() -> None:
    found = discover(FLEET, TargetSpec(), lambda platform, arch: 8)
    assert found.names == ["n-mixed-whole", "n-ok", "n-unregistered"]
    reasons = {e.name: e.reason for e in found.excluded}
    assert reasons == {"n-down": "NotReady", "n-unreachable": "NotReady", "n-mig-single": "PartitionedGPUs",
                       "n-mig-mixed": "PartitionedGPUs", "n-shared": "PartitionedGPUs", "n-replicas": "PartitionedGPUs",
                       "n-cordoned": "Cordoned"}
    messages = {e.name: e.message for e in found.excluded}
    assert messages["n-unreachable"] == "Ready condition Unknown"
    assert "nvidia.com/mig-1g.10gb" in messages["n-mig-mixed"] and "shared 4 ways" in messages["n-replicas"]
    assert "2 nodes: not Ready" in (found.exclusion_reason() or "")


def test_a_render_names_them_and_plans_none_of_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "NodeList", "items": FLEET}))
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT)
    code = main(["certification", "render", str(cert), "--nodes", str(nodes), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rendered = json.dumps(json.loads(out))
    for name in ("n-down", "n-unreachable", "n-mig-single", "n-mig-mixed", "n-shared", "n-replicas"):
        assert f'"name": "{name}", "reason"' in rendered, name


def test_cluster_info_counts_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "NodeList", "items": FLEET}))
    assert main(["cluster", "info", "--nodes", str(nodes), "-o", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["excluded"] == {"Cordoned": 1, "NotReady": 2, "PartitionedGPUs": 4} and found["cordoned"] == 1
    assert main(["cluster", "info", "--nodes", str(nodes)]) == 0
    assert "10 with GPUs, 1 cordoned, 2 not Ready, 4 with partitioned GPUs (excluded)" in capsys.readouterr().out
    # MIG slices and shared replicas are counted as the GPUs they are on (56 slices, 32 replicas of 8 GPUs each)
    products = {p["product"]: p["gpus"] for p in found["products"]}
    assert products[f"{H100}-MIG-1g.10gb"] == 8 and products[f"{H100}-SHARED"] == 8


def test_run_category_reads_the_product_of_the_nodes_it_would_use() -> None:
    """A cordoned node of another product made `run --category` refuse the whole fleet."""
    from nvcre_tui.cli.run.flags import gpu_product
    from nvcre_tui.engine.errors import InputError

    a100 = node("a-1", product="NVIDIA-A100-SXM4-80GB", cordoned=True)
    assert gpu_product([node("h-1"), node("h-2"), a100]) == H100
    with pytest.raises(InputError, match="2 products"):  # both usable: still refused
        gpu_product([node("h-1"), {**a100, "spec": {}}])


def test_an_empty_clique_value_is_no_clique() -> None:
    nodes = [node("g-1"), node("g-2", labels={"nvidia.com/gpu.clique": ""})]
    with pytest.raises(PartitionError, match="g-2"):
        domains_of(nodes, "nvidia.com/gpu.clique")


def _rendered(tmp_path: Path, capsys: pytest.CaptureFixture[str], fleet: list[dict[str, Any]]) -> tuple[Path, Path, dict[str, Any]]:
    """`certification render` of CERT on `fleet` as a --nodes file: the files (to render again) and its one Workflow."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "NodeList", "items": fleet}))
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT)
    assert main(["certification", "render", str(cert), "--nodes", str(nodes), "-o", "json"]) == 0
    [workflow] = json.loads(capsys.readouterr().out)["items"]
    return nodes, cert, workflow


def test_a_node_reporting_fewer_efa_devices_than_a_pod_asks_is_left_out_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """NCCL on AWS H100 asks 32 EFA devices per pod: a p4d node has 4, its pod never schedules and the node was
    blamed SchedulingBlocked. A node reporting none (its device plugin may be restarting) is kept, as for GPUs."""
    fleet = [node("p5-1", allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}),
             node("p4d-1", allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"}),
             node("starting-1", allocatable={"nvidia.com/gpu": "8"})]
    _, _, workflow = _rendered(tmp_path, capsys, fleet)
    [excluded] = workflow["status"]["orchestration"]["excludedNodes"]
    assert excluded == {"name": "p4d-1", "reason": "InsufficientResources", "message": "4 vpc.amazonaws.com/efa allocatable, 32 requested"}


def test_a_tie_of_architectures_is_not_called_a_majority() -> None:
    fleet = [node("a-1"), node("a-2"), node("b-1", product="NVIDIA-H200"), node("b-2", product="NVIDIA-H200")]
    found = discover(fleet, TargetSpec(), lambda platform, arch: 8)
    assert found.architecture == "h100" and found.names == ["a-1", "a-2"]
    assert {e.message for e in found.excluded} == {"h200, as many nodes as h100, which the first node by name holds"}
    lopsided = discover([*fleet, node("a-3")], TargetSpec(), lambda platform, arch: 8)
    assert {e.message for e in lopsided.excluded} == {"h200, fleet majority is h100"}


def _tainted(name: str, *taints: dict[str, str]) -> dict[str, Any]:
    found = node(name)
    found["spec"]["taints"] = list(taints)
    return found


def test_a_node_under_a_no_execute_taint_the_target_does_not_name_is_left_out_not_blamed(tmp_path: Path,
                                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A NoExecute taint evicts whatever runs on the node (a repair, a drain, a remediation): the pods no longer
    tolerate every taint, so such a node is left out before the run, named with the taint, instead of its pods being
    scheduled through it (or, not tolerated, left Pending and the node blamed SchedulingBlocked). NoSchedule taints
    (a GPU pool's, NVSentinel's quarantine) are gone through: the target chose the node. A taintSelector naming the
    NoExecute taint certifies the node, as before returning it to service."""
    repair = {"key": "example.com/repair", "value": "gpu", "effect": "NoExecute"}
    fleet = [node("n-ok"), _tainted("n-repair", repair),
             _tainted("n-quarantined", {"key": "nvsentinel.dgxc.nvidia.com/nvcre-cert-failed", "value": "true", "effect": "NoSchedule"}),
             _tainted("n-gpu-pool", {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})]
    nodes, cert, workflow = _rendered(tmp_path, capsys, fleet)
    assert sorted(n for g in workflow["status"]["orchestration"]["groups"] for n in g["nodes"]) == ["n-gpu-pool", "n-ok", "n-quarantined"]
    assert workflow["status"]["orchestration"]["excludedNodes"] == [{
        "name": "n-repair", "reason": "NoExecuteTaint",
        "message": "taint example.com/repair=gpu:NoExecute not tolerated: name it in the target's taintSelectors to certify this node"}]
    cert.write_text(CERT.replace("target: {}", "target: {taintSelectors: [{key: example.com/repair, effect: NoExecute}]}"))
    assert main(["certification", "render", str(cert), "--nodes", str(nodes), "-o", "json"]) == 0
    [workflow] = json.loads(capsys.readouterr().out)["items"]
    assert [n for g in workflow["status"]["orchestration"]["groups"] for n in g["nodes"]] == ["n-repair"]
    assert not workflow["status"]["orchestration"].get("excludedNodes")


@pytest.mark.parametrize(("efa", "asked"), [("16", "16"), ("4", "4"), ("8", "8"), ("32", "32")])
def test_the_efa_devices_the_nccl_pods_ask_are_those_the_nodes_report(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     efa: str, asked: str) -> None:
    """aws-ofi-nccl spreads NCCL's traffic over every EFA interface of the node: a p5en reports 16, a p4d 4, a p6-b200
    8, a p5 32. The catalog's 32 left every node but a p5's out (InsufficientResources, "no eligible nodes")."""
    fleet = [node(f"n-{i}", allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": efa}) for i in range(2)]
    nodes, cert, workflow = _rendered(tmp_path, capsys, fleet)
    run = workflow["spec"]["jobTemplate"]["spec"]["workload"]["workloadRun"]
    assert run["extendedResources"]["vpc.amazonaws.com/efa"] == asked
    assert not workflow["status"]["orchestration"].get("excludedNodes")
    assert main(["certification", "render", str(cert), "--nodes", str(nodes), "--workloads", "-o", "json"]) == 0
    assert f'"vpc.amazonaws.com/efa": "{asked}"' in capsys.readouterr().out


def test_the_efa_count_most_nodes_report_is_asked_and_a_node_reporting_fewer_is_left_out(tmp_path: Path,
                                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    fleet = [node("a-1", allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "16"}),
             node("a-2", allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "16"}),
             node("a-3", allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "15"}),  # an interface down
             node("a-4", allocatable={"nvidia.com/gpu": "8"})]  # its device plugin restarting: kept, no vote
    _, _, workflow = _rendered(tmp_path, capsys, fleet)
    assert workflow["spec"]["jobTemplate"]["spec"]["workload"]["workloadRun"]["extendedResources"]["vpc.amazonaws.com/efa"] == "16"
    assert workflow["status"]["orchestration"]["excludedNodes"] == [
        {"name": "a-3", "reason": "InsufficientResources", "message": "15 vpc.amazonaws.com/efa allocatable, 16 requested"}]
