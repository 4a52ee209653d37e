"""`nvcre certification render` golden cases: tests/cases/render/<case>/cert.yaml (+ nodes.yaml or
scenario.yaml) -> expected.json, a digest of each Workflow. NVCRE_UPDATE_GOLDEN=1 rewrites the goldens."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from tests.foundation.partition_harness import partitioned

CASES = sorted(p for p in (Path(__file__).resolve().parents[1] / "cases" / "render").iterdir() if p.is_dir())


def digest(workflow: dict[str, Any]) -> dict[str, Any]:
    """What a reviewer checks: names, scale, sizing, groups, exclusions, detection, thresholds, image."""
    spec, status = workflow["spec"], workflow["status"]["orchestration"]
    run = spec["jobTemplate"]["spec"]["workload"]["workloadRun"]
    return {
        "name": workflow["metadata"]["name"], "testScale": spec["orchestration"]["testScale"], "iterations": spec["orchestration"]["iterations"],
        "nodesPerJob": status["nodesPerJob"], "platform": status.get("detectedPlatform"), "gpu": status.get("detectedGPUArchitecture"),
        "groups": {g["name"]: g["nodes"] for g in status["groups"]}, "excluded": {e["name"]: e["reason"] for e in status.get("excludedNodes", [])},
        "thresholds": spec["jobTemplate"]["spec"].get("thresholds", {}), "image": run["image"], "gpusPerNode": run["gpusPerNode"],
        "timeoutPerJob": spec["orchestration"]["execution"]["timeoutPerJob"], "topology": spec["orchestration"].get("topology"),
        "overrides": [o["when"] for o in status.get("appliedOverrides", [])],
    }


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_render_golden(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["certification", "render", str(case / "cert.yaml"), "-o", "json"]
    if (case / "nodes.yaml").exists():
        argv += ["--nodes", str(case / "nodes.yaml")]
    if (case / "scenario.yaml").exists():
        argv += ["--scenario", str(case / "scenario.yaml")]
    assert main(argv) == 0, capsys.readouterr().err
    documents = json.loads(capsys.readouterr().out)["items"]
    actual = [digest(wf) for wf in documents]
    expected_file = case / "expected.json"
    if os.environ.get("NVCRE_UPDATE_GOLDEN") == "1":
        expected_file.write_text(json.dumps(actual, indent=2) + "\n")
    assert actual == json.loads(expected_file.read_text())


def test_yaml_output_is_the_same_workflows(capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[0]
    assert main(["certification", "render", str(case / "cert.yaml")]) == 0
    as_yaml = list(yaml.safe_load_all(capsys.readouterr().out))
    assert main(["certification", "render", str(case / "cert.yaml"), "-o", "json"]) == 0
    assert as_yaml == json.loads(capsys.readouterr().out)["items"]


def test_render_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((CASES[0] / "cert.yaml").read_text()))
    assert main(["certification", "render", "-"]) == 0
    assert "kind: Workflow" in capsys.readouterr().out


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_render_shows_the_groups_the_engine_creates(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What `render` (and the compose preview, which renders the same way) shows is what the Workflow runs."""
    import asyncio

    from nvcre_tui.cli.certification import target_nodes

    argv = ["certification", "render", str(case / "cert.yaml"), "-o", "json"]
    nodes_file = str(case / "nodes.yaml") if (case / "nodes.yaml").exists() else None
    scenario_file = str(case / "scenario.yaml") if (case / "scenario.yaml").exists() else None
    argv += ["--nodes", nodes_file] if nodes_file else []
    argv += ["--scenario", scenario_file] if scenario_file else []
    assert main(argv) == 0, capsys.readouterr().err
    rendered = json.loads(capsys.readouterr().out)["items"]
    shown = {wf["metadata"]["name"]: {g["name"]: g["nodes"] for g in wf["status"]["orchestration"]["groups"]} for wf in rendered}
    assert shown and all(shown.values())
    nodes = target_nodes(nodes_file, scenario_file)
    assert all(wf["spec"]["orchestration"]["plannedGroups"] for wf in rendered), "render records the plan in the Workflow"
    assert {name: run.groups for name, run in asyncio.run(partitioned(rendered, nodes)).items()} == shown
    # ... and the engine's own partition of a Workflow written without a plan agrees with it
    unplanned = [{**wf, "spec": {**wf["spec"], "orchestration": {k: v for k, v in wf["spec"]["orchestration"].items() if k != "plannedGroups"}}}
                 for wf in rendered]
    assert {name: run.groups for name, run in asyncio.run(partitioned(unplanned, nodes)).items()} == shown


def test_a_nic_resource_name_is_what_the_gpu_pods_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On-prem RDMA NICs come from the cluster's device plugin (nvidia.com/hostdev, rdma/ib): the option was taken
    and dropped, so the pods asked for GPUs alone and NCCL fell back to sockets."""
    cert = tmp_path / "nic.yaml"
    cert.write_text(yaml.safe_dump({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "nic"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "categories": [
            {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node", "nicResourceName": "nvidia.com/hostdev"}}]}}))
    assert main(["certification", "render", str(cert), "--workloads"]) == 0
    pods = [doc for doc in yaml.safe_load_all(capsys.readouterr().out) if doc and doc.get("kind") == "TrainingRuntime"]
    limits = [container["resources"]["limits"] for runtime in pods for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]
              if job["name"] == "node" for container in job["template"]["spec"]["template"]["spec"]["containers"]]
    assert limits and all(limit.get("nvidia.com/hostdev") == "8" for limit in limits)  # mlnxPerNode's default for H100


def test_workload_metadata_labels_cannot_replace_nvcres_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nvcre finds, collects and attributes its workload objects by its labels: a certification's workloadMetadata
    relabelled a TrainJob as another Job's."""
    cert = tmp_path / "labels.yaml"
    cert.write_text(yaml.safe_dump({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "labels"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "categories": [
            {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node", "workloadMetadata": {
                "labels": {"nvcre.nvidia.com/job": "victim-job", "app.kubernetes.io/managed-by": "helm", "team": "a"}}}}]}}))
    assert main(["certification", "render", str(cert), "--workloads"]) == 0
    jobs = [doc for doc in yaml.safe_load_all(capsys.readouterr().out) if doc and doc.get("kind") == "TrainJob"]
    assert jobs and all(job["metadata"]["labels"]["nvcre.nvidia.com/job"] != "victim-job" and job["metadata"]["labels"]["team"] == "a"
                        and job["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "nvcre" for job in jobs)


def test_the_56b_recomputes_its_activations_on_80_gb_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """At TP 8 on H100 the 56B needs about 119-129 GB a GPU without recompute (Megatron's own estimate): every rank ran
    out of memory and every node of the group was blamed."""
    cert = tmp_path / "56b.yaml"
    cert.write_text(yaml.safe_dump({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "big"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "categories": [{"domain": "training", "variant": "nemotron5-56b"}]}}))
    assert main(["certification", "render", str(cert), "--workloads"]) == 0
    out = capsys.readouterr().out
    env = {e["name"]: e["value"] for doc in yaml.safe_load_all(out) if doc and doc.get("kind") == "TrainingRuntime"
           for job in doc["spec"]["template"]["spec"]["replicatedJobs"] for c in job["template"]["spec"]["template"]["spec"]["containers"]
           for e in c.get("env") or []}
    assert env["FULL_RECOMPUTE"] == "1" and env["DISTRIBUTED_TIMEOUT_MINUTES"] == "230"
    assert "--sequence-parallel" in out and '--distributed-timeout-minutes "$DISTRIBUTED_TIMEOUT_MINUTES"' in out


@pytest.mark.parametrize(("product", "says"), [
    ("NVIDIA-H100-80GB-HBM3", "; GPU feature discovery labels a node's NVLink clique only where NVLink spans nodes (GB200/GB300 "
                              "NVL72 racks): others form no rack to test intra-rack (testScale full-scale or intra-node tests them)"),
    ("NVIDIA-GB200", "; on GB200/GB300 GPU feature discovery labels it once the node's GPUs have joined the NVLink fabric (the "
                     "fabric manager running): a node without it is not in a rack yet"),
])
def test_intra_rack_on_nodes_without_a_clique_says_why_they_have_none(product: str, says: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """intra-rack on two DGX H100 (GPU feature discovery sets no clique: NVLink ends at the node) or on GB200 trays whose
    fabric is not read yet was refused with "nodes without label nvidia.com/gpu.clique (or with an empty value): a, b"
    alone: the SRE could not tell a broken GPU Operator from a test that cannot apply."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {
        "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product, "nvidia.com/gpu.count": "8"}},
        "status": {"allocatable": {"nvidia.com/gpu": "8"}}} for i in (1, 2)]
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes}))
    (tmp_path / "cert.yaml").write_text(yaml.safe_dump({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "rack"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-rack"}}]}}))
    assert main(["certification", "render", str(tmp_path / "cert.yaml"), "--nodes", str(tmp_path / "nodes.yaml")]) == 2
    err = capsys.readouterr().err
    assert err == (f"{tmp_path / 'cert.yaml'}: spec.categories[0]: nodes without label nvidia.com/gpu.clique (or with an empty "
                   f"value): n1, n2{says}\n"), err
