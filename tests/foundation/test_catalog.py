"""The catalog: every entry loads, renders on every platform and architecture, and follows its overrides."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.resources import Certification, Workflow, WorkloadRunSpec
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import load_catalog
from nvcre_tui.engine.planning.render import RenderError, largest_write, render_category

CATALOG = load_catalog()
PROVIDERS = {
    "aws": "aws:///us-east-1a/i-0", "gcp": "gce://p/z/n", "azure": "azure:///s/r/vm", "oci": "ocid1.instance.oc1..x",
    "onprem": "", "nscale": "openstack:///x", "togetherai": "kubevirt://x", "mistral": "metal3://x", "forge": "",
}
PRODUCTS = {
    "h100": "NVIDIA-H100-80GB-HBM3", "h200": "NVIDIA-H200-141GB-HBM3", "b200": "NVIDIA-B200", "a100": "NVIDIA-A100-SXM4-80GB",
    "l40s": "NVIDIA-L40S", "l40": "NVIDIA-L40", "gb200": "NVIDIA-GB200", "gb300": "NVIDIA-GB300-NVL72", "rtxpro6000": "NVIDIA-RTX-PRO-6000-Blackwell",
}


def fleet(platform: str, arch: str, count: int = 16) -> list[dict[str, Any]]:
    nodes = []
    for i in range(count):
        labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": PRODUCTS[arch], "nvidia.com/gpu.clique": f"c{i // 4}",
                  "kubernetes.io/hostname": f"{'forge-' if platform == 'forge' else ''}n{i:02d}"}
        if platform == "togetherai":
            labels["node-role.together.ai/worker"] = "true"
        allocatable = {"nvidia.com/gpu": "8"} | ({"nscale.com/rdmashare": "1"} if platform == "nscale" else {})
        nodes.append({"metadata": {"name": f"n{i:02d}", "labels": labels}, "spec": {"providerID": PROVIDERS[platform]}, "status": {"allocatable": allocatable}})
    return nodes


def cert_for(key: str, **options: Any) -> Certification:
    domain, variant = key.split("/")
    category = {"domain": domain, "variant": variant} | ({"options": options} if options else {})
    return Certification.model_validate({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "c"},
                                         "spec": {"target": {}, "categories": [category]}})


def run_of(workflow: Workflow) -> WorkloadRunSpec:
    run = workflow.spec.job_template.spec.workload.workload_run
    assert run is not None
    return run


def env_of(run: WorkloadRunSpec) -> dict[str, str]:
    assert run.env is not None
    return {e.name: e.value for e in run.env}


def test_catalog_has_the_eight_entries() -> None:
    assert sorted(CATALOG.entries) == sorted([
        "communication/nccl-all-reduce", "communication/nccl-all-gather", "communication/nccl-alltoall", "communication/nccl-loopback",
        "communication/nccl-loopback-nvswitch", "diagnostics/dcgm-level4", "training/nemotron5-8b", "training/nemotron5-56b"])


@pytest.mark.parametrize(("key", "platform", "arch"), list(itertools.product(sorted(CATALOG.entries), sorted(PROVIDERS), sorted(PRODUCTS))))
def test_every_entry_renders_everywhere(key: str, platform: str, arch: str) -> None:
    nodes = fleet(platform, arch, 16)
    rendered = render_category(cert_for(key), 0, nodes, CATALOG)
    run = rendered.workflow.spec.job_template.spec.workload.workload_run
    assert rendered.discovery.platform == platform and rendered.discovery.architecture == arch
    assert run is not None and run.image
    shape = CATALOG.gpu_defaults.shape(platform, arch)
    assert run.gpus_per_node == shape.gpus_per_node
    assert run.enable_mnnvl == shape.enable_mnnvl
    assert "${" not in rendered.workflow.model_dump_json()  # every placeholder filled


def test_aws_h100_all_reduce_uses_efa() -> None:
    run = run_of(render_category(cert_for("communication/nccl-all-reduce"), 0, fleet("aws", "h100"), CATALOG).workflow)
    assert run.extended_resources is not None and run.extended_resources["vpc.amazonaws.com/efa"] == 32
    assert run.framework.mpi is not None and run.framework.mpi.binary == "/opt/nccl-tests/build/all_reduce_perf"
    assert env_of(run)["FI_PROVIDER"] == "efa"


def test_gb200_gets_mnnvl_compute_domain_and_32g_sweep() -> None:
    run = run_of(render_category(cert_for("communication/nccl-all-reduce"), 0, fleet("onprem", "gb200"), CATALOG).workflow)
    assert run.resource_claims == ["compute-domain-channel"]
    assert env_of(run)["NCCL_MNNVL_ENABLE"] == "1"
    assert run.framework.mpi is not None and run.framework.mpi.args is not None and "32G" in run.framework.mpi.args


def test_oci_l40s_shape_and_user_override_wins() -> None:
    run = run_of(render_category(cert_for("communication/nccl-loopback"), 0, fleet("oci", "l40s"), CATALOG).workflow)
    assert (run.gpus_per_node, run.mlnx_per_node) == (4, 2)
    run = run_of(render_category(cert_for("communication/nccl-loopback", gpusPerNode=2), 0, fleet("oci", "l40s"), CATALOG).workflow)
    exec_ = run.framework.exec
    assert run.gpus_per_node == 2 and exec_ is not None and exec_.args is not None and "2" in exec_.args


def test_diagnose_uses_short_sweeps_and_fifteen_minutes() -> None:
    wf = render_category(cert_for("communication/nccl-all-reduce", testScale="diagnose"), 0, fleet("aws", "h100"), CATALOG).workflow
    mpi = run_of(wf).framework.mpi
    assert mpi is not None and mpi.args is not None
    args = mpi.args
    assert args[args.index("-n") + 1] == "5" and args[args.index("-N") + 1] == "1"
    assert wf.spec.orchestration.execution.timeout_per_job == "15m"
    assert wf.spec.orchestration.diagnose is not None


def test_training_sizes_nodes_per_job_from_model_constraints() -> None:
    from nvcre_tui.engine.planning.render import RenderError

    assert render_category(cert_for("training/nemotron5-56b"), 0, fleet("aws", "h100", 5), CATALOG).workflow.spec.orchestration.nodes_per_job == 5
    with pytest.raises(RenderError, match="needs at least 32 GPUs; 3 nodes x 8 GPUs is too few"):
        render_category(cert_for("training/nemotron5-56b"), 0, fleet("aws", "h100", 3), CATALOG)


def test_broken_catalog_entry_names_file_and_field(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(CATALOG.root, root)
    (root / "communication" / "nccl-all-reduce.yaml").write_text("title: x\ntestScales: [sideways]\n")
    with pytest.raises(InputError) as error:
        load_catalog(root)
    # A catalog of the user's own is named by its path (the file to fix), the shipped one as catalog/...
    assert any(m.startswith(f"{root}/communication/nccl-all-reduce.yaml: testScales[0]: must be one of") for m in error.value.messages)


def test_files_of_the_shipped_catalog_are_named_catalog_and_others_by_their_path(tmp_path: Path) -> None:
    from nvcre_tui.paths import shown_file

    assert shown_file("catalog", CATALOG.root, "training/nemotron5-8b.yaml") == "catalog/training/nemotron5-8b.yaml"
    assert shown_file("catalog", tmp_path / "site", "training/x.yaml") == f"{tmp_path}/site/training/x.yaml"


def test_an_option_minimum_for_no_template_option_is_refused(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(CATALOG.root, root)
    lib = root / "_lib" / "megatron-pretrain.yaml"
    lib.write_text(lib.read_text().replace("  maxSteps: {least: 20", "  maxStep: {least: 20"))
    with pytest.raises(InputError) as error:
        load_catalog(root)
    assert any("optionMinimums.maxStep" in m and "'maxStep' is not an option a template reads" in m for m in error.value.messages)


def test_a_least_above_the_requests_it_fits_is_refused(tmp_path: Path) -> None:
    """fitRequests.least over what the template requests would refuse every node, however large: refused at load."""
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(CATALOG.root, root)
    lib = root / "_lib" / "megatron-pretrain.yaml"
    lib.write_text(lib.read_text().replace("least: {cpu: \"16\", memory: 64Gi}", "least: {cpu: \"16\", memory: 600Gi}"))
    with pytest.raises(InputError) as error:
        load_catalog(root)
    assert error.value.messages == [f"{root}/training/nemotron5-56b.yaml: fitRequests.least: memory 600Gi is more than the "
                                    "template requests (500Gi) (in it or a file it extends)"]


def _replace(path: Path, pattern: str, text: str) -> None:
    import re

    changed, found = re.subn(pattern, text, path.read_text(), count=1)
    assert found, (path, pattern)
    path.write_text(changed)


@pytest.mark.parametrize(("change", "message"), [
    (lambda root: (root / "communication" / "NCCL_Bad.yaml").write_text((root / "communication" / "nccl-all-reduce.yaml").read_text()),
     "{root}/communication/NCCL_Bad.yaml: the file name 'NCCL_Bad' must be lowercase letters, digits and '-' (it names Workflows)"),
    (lambda root: (root / "training" / "nemotron5-8b.yaml").write_text("extends: [../../outside.yaml]\n"),
     "{root}/training/nemotron5-8b.yaml: extends: '../../outside.yaml' is not a file inside the catalog folder"),
    # A file it extends that is missing: the file that extends it is named too (only the missing target was)
    (lambda root: _replace(root / "training" / "nemotron5-8b.yaml", r"(?m)^extends:.*$", "extends: [_lib/nope.yaml]"),
     "{root}/training/nemotron5-8b.yaml: extends: '_lib/nope.yaml': no such file ({root}/_lib/nope.yaml)"),
    # A placeholder no render fills, in a file the entry extends: refused when the catalog loads, naming the entry.
    (lambda root: (root / "_lib" / "megatron-pretrain.yaml").write_text(
        (root / "_lib" / "megatron-pretrain.yaml").read_text().replace("${maxSteps}", "${maxStepz}", 1)),
     "{root}/training/nemotron5-56b.yaml: unknown placeholder ${{maxStepz}} (in it or a file it extends); known: exitDurationMins, "
     "gpuArchitecture, gpusPerNode, maxBytes, maxSteps, mlnxPerNode, mnnvl, nodesPerJob, numCycles, numIterations, platform, pp, "
     "saveInterval, saveRetainInterval, sourceRepo, toolTimeoutSeconds, tp, variant"),
    # A wrong type where a list is wanted: it raised TypeError (a traceback in the console), or a string was read
    # letter by letter ("_: no such file", one line per letter of `overrides: abc`).
    (lambda root: _replace(root / "training" / "nemotron5-8b.yaml", r"(?m)^extends:.*$", "extends: 1.5"),
     "{root}/training/nemotron5-8b.yaml: extends: must be a list, got 1.5"),
    (lambda root: _replace(root / "training" / "nemotron5-8b.yaml", r"(?m)^extends:.*$", "extends: _lib/megatron-pretrain.yaml"),
     "{root}/training/nemotron5-8b.yaml: extends: must be a list, got '_lib/megatron-pretrain.yaml'"),
    (lambda root: _replace(root / "communication" / "nccl-all-reduce.yaml", r"(?m)^overrides:", "overrides: abc\nunused:"),
     "{root}/communication/nccl-all-reduce.yaml: overrides: must be a list, got 'abc'"),
    # A template or default of the wrong type: refused at load, naming file and field (it was exit 70 at render).
    (lambda root: _replace(root / "communication" / "nccl-loopback.yaml", r"tolerations: \[.*\]", "tolerations: [5]"),
     "{root}/communication/nccl-loopback.yaml (rendered for aws, h100; template and overrides): tolerations[0]: must be a mapping, got 5"),
    (lambda root: _replace(root / "_defaults" / "gpu-defaults.yaml", r"h100: +\{gpusPerNode: 8,", "h100: {gpusPerNode: 65,"),
     "{root}/_defaults/gpu-defaults.yaml (h100 on aws): gpusPerNode: must be <= 64"),
])
def test_a_catalog_entry_is_named_as_workflows_are_and_extends_only_the_catalog(tmp_path: Path, change: Any, message: str) -> None:
    import shutil

    root = tmp_path / "a" / "catalog"
    shutil.copytree(CATALOG.root, root)
    (tmp_path / "outside.yaml").write_text("title: not the catalog's\n")
    change(root)
    with pytest.raises(InputError) as error:
        load_catalog(root)
    assert error.value.messages == [message.format(root=root)]


def test_a_plan_over_2048_nodes_is_not_recorded_in_the_workflow() -> None:
    """A recorded plan is a third copy of the node names in the Workflow: past 2,048 nodes the Workflow partitions
    itself (with the same code) rather than carry it toward the API server's object limit."""
    small = render_category(cert_for("communication/nccl-all-reduce", testScale="full-scale", nodesPerJob=8), 0, fleet("aws", "h100", 2048), CATALOG).workflow
    large = render_category(cert_for("communication/nccl-all-reduce", testScale="full-scale", nodesPerJob=8), 0, fleet("aws", "h100", 2049), CATALOG).workflow
    planned = small.spec.orchestration.planned_groups
    assert planned and sum(len(g.nodes) for g in planned) == 2048
    assert large.spec.orchestration.planned_groups is None
    orchestration = large.status.orchestration if large.status else None
    assert orchestration is not None and orchestration.groups is not None
    assert sum(len(g.nodes or []) for g in orchestration.groups) >= 2049  # render still shows the plan


def cloud_fleet(count: int) -> list[dict[str, Any]]:
    """`count` H100 nodes named as EKS names them (44 characters), in cliques of 8."""
    nodes = fleet("aws", "h100", count)
    for i, node in enumerate(nodes):
        name = f"ip-10-{100 + i // 65536}-{i // 256 % 256}-{i % 256}.us-west-2.compute.internal"
        node["metadata"]["name"] = node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        node["metadata"]["labels"]["nvidia.com/gpu.clique"] = f"c{i // 8}"
    return nodes


def test_a_workflow_that_would_outgrow_the_api_servers_object_limit_is_refused_before_it_runs() -> None:
    nodes = cloud_fleet(12_000)
    render_category(cert_for("communication/nccl-all-reduce", testScale="intra-rack"), 0, nodes, CATALOG)
    with pytest.raises(RenderError, match=r"^its Workflow would hold about 1\.\d\d MiB \(1500 groups of 12000 nodes, 2 iterations\) and the API "
                                          r"server stores at most 1\.5 MiB: split the target \(a nodeSelector per part\) or lower repeatCount$") as refused:
        render_category(cert_for("communication/nccl-all-reduce", testScale="intra-rack", repeatCount=2), 0, nodes, CATALOG)
    assert refused.value.field == "repeatCount"
    with pytest.raises(RenderError, match=r"\(12000 groups of 12000 nodes, 1 iteration\) .* split the target \(a nodeSelector per part\)$") as refused:
        render_category(cert_for("communication/nccl-all-reduce", testScale="intra-node"), 0, nodes, CATALOG)
    assert refused.value.field is None


def test_intra_node_fits_3300_cloud_named_nodes() -> None:
    """A finished Workflow's groups keep what they are and how they ended; their runs are in iterationHistory once."""
    render_category(cert_for("communication/nccl-all-reduce", testScale="intra-node"), 0, cloud_fleet(3_300), CATALOG)


def test_diagnose_of_10000_cloud_named_nodes_fits_well_under_the_limit_and_16000_does_not() -> None:
    """A diagnosing Workflow names each node once in its state (its groups leave their nodes out)."""
    rendered = render_category(cert_for("communication/nccl-all-reduce", testScale="diagnose"), 0, cloud_fleet(10_000), CATALOG)
    assert largest_write(rendered) < 1.1 * 2**20
    with pytest.raises(RenderError, match=r"\(2000 groups of 16000 nodes, 1 iteration\) and the API server stores at most 1\.5 MiB"):
        render_category(cert_for("communication/nccl-all-reduce", testScale="diagnose"), 0, cloud_fleet(16_000), CATALOG)


def test_a_catalog_folder_without_its_defaults_is_named_as_not_one(tmp_path: Path) -> None:
    (tmp_path / "entries" / "communication").mkdir(parents=True)
    with pytest.raises(InputError) as error:
        load_catalog(tmp_path / "entries")
    assert error.value.messages == [f"{tmp_path / 'entries'}: not a catalog folder (it has no _defaults/gpu-defaults.yaml; "
                                    "copy the shipped catalog/ and change it)"]
