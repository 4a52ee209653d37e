"""Every object the workload builders emit, for every catalog entry on every platform and architecture,
on both paths (Trainer and batch), passes the structural schema checks; and the checker itself fails on
misspelt fields and wrong types."""

from __future__ import annotations

import dataclasses
import json

import pytest

from nvcre_tui.engine.api.base import GangScheduler, TaintSelector
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.workloads import workload_manifests
from tests.workloads.matrix import architectures, gke_a3_mega, placement, run_spec
from tests.workloads.schema import Enum, check, check_object

GANG = GangScheduler(scheduler_name="kai-scheduler")
TAINTS = (TaintSelector(key="dedicated", value="gpu", effect="NoSchedule"),)


@pytest.mark.parametrize("entry", sorted(default_catalog().entries))
@pytest.mark.parametrize("trainer", [True, False], ids=["trainer", "batch"])
def test_every_emitted_field_exists_in_the_real_schema(entry: str, trainer: bool) -> None:
    problems = []
    for platform in PLATFORMS:
        for arch in architectures():
            for gang in (None, GANG):
                where = placement(entry, platform, arch, gang=gang, taint_selectors=TAINTS)
                for obj in workload_manifests(run_spec(entry, platform, arch), where, trainer=trainer):
                    problems += [f"{platform}/{arch}: {p}" for p in check_object(obj)]
    assert problems == []


def test_checker_rejects_a_misspelt_trainer_field() -> None:
    spec = run_spec("training/nemotron5-8b", "aws", "h100")
    train_job = workload_manifests(spec, placement("training/nemotron5-8b", "aws", "h100"))[-1]
    assert check_object(train_job) == []
    train_job["spec"]["trainer"]["numProcsPerNode"] = 8
    assert check_object(train_job) == ["TrainJob/cert-training-nemotron5-8b-job-workload.spec.trainer.numProcsPerNode: no such field"]


def test_checker_rejects_a_misspelt_pod_field_deep_inside_the_runtime() -> None:
    spec = run_spec("communication/nccl-all-reduce", "oci", "gb300")
    runtime = workload_manifests(spec, placement("communication/nccl-all-reduce", "oci", "gb300"))[-2]
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["resources"]["limit"] = {"cpu": "1"}
    pod["tolerations"][0]["operator"] = 1
    problems = sorted(check_object(runtime))
    assert len(problems) == 2
    assert problems[0].endswith("containers[0].resources.limit: no such field in V1ResourceRequirements")
    assert problems[1].endswith("tolerations[0].operator: expected str, got 1")


def test_checker_rejects_bad_enums_and_types() -> None:
    assert check({"status": "Done"}, {"status": Enum(("Ready",))}, "x") == ["x.status: 'Done' not one of ['Ready']"]
    assert check({"n": True}, {"n": int}, "x") == ["x.n: expected an integer, got True"]
    assert check({"completions": "2", "template": {}}, "V1JobSpec", "job") == ["job.completions: expected an integer, got '2'"]
    assert check_object({"apiVersion": "v1", "kind": "Pod"}) == ["('v1', 'Pod'): no schema for this kind"]


def test_long_names_are_shortened_to_valid_labels() -> None:
    from nvcre_tui.engine.workloads import Placement

    spec = run_spec("communication/nccl-all-reduce", "aws", "h100")
    where = Placement(job="9" + "x" * 70 + "-group-12-iter-3", namespace="default", nodes=("a", "b"), platform="aws", architecture="h100")
    for trainer in (True, False):
        for obj in workload_manifests(spec, where, trainer=trainer):
            assert check_object(obj) == []
            assert len(obj["metadata"]["name"]) <= 63


@pytest.mark.parametrize("trainer", [True, False], ids=["trainer", "batch"])
def test_pods_pass_the_rules_a_server_enforces(trainer: bool) -> None:
    from tests.workloads.schema import TRAINER_VOLUMES, pod_problems, pod_specs

    problems = []
    for entry in sorted(default_catalog().entries):
        for platform in PLATFORMS:
            for arch in architectures():
                for obj in workload_manifests(run_spec(entry, platform, arch), placement(entry, platform, arch, gang=GANG), trainer=trainer):
                    for pod in pod_specs(obj):
                        problems += [f"{entry} {platform}/{arch}: {p}" for p in pod_problems(pod, TRAINER_VOLUMES if trainer else frozenset())]
    assert problems == []


def test_pod_rules_can_fail() -> None:
    from tests.workloads.schema import pod_problems

    pod = {"volumes": [], "containers": [{"name": "node", "volumeMounts": [{"name": "dshm"}], "resources": {
        "limits": {"hugepages-2Mi": "10Mi", "nvidia.com/gpu": "0.5"}, "requests": {"nvidia.com/gpu": "0.5"}, "claims": [{"name": "cd"}]}}]}
    assert pod_problems(pod) == [
        "node: mount dshm has no volume", "node: claim cd not in pod resourceClaims",
        "node: hugepages-2Mi request None differs from its limit '10Mi'", "node: hugepages-2Mi without a cpu or memory limit",
        "node: nvidia.com/gpu='0.5' is not a whole number of devices",
    ]


def test_label_checker_can_fail() -> None:
    from tests.workloads.schema import label_problems

    assert label_problems({"metadata": {"labels": {"a": "x" * 64, "b": "-bad"}}}, "o") == [
        f"o.metadata.labels[a]: {'x' * 64!r} is not a valid label value", "o.metadata.labels[b]: '-bad' is not a valid label value"]


@pytest.mark.parametrize("trainer", [True, False], ids=["trainer", "batch"])
def test_gke_a3_high_objects_exist_in_the_real_schema(trainer: bool) -> None:
    """The matrix's GKE nodes are A3 Mega ones (GPUDirect-TCPXO); A3 High's get GPUDirect-TCPX's pieces instead."""
    for entry in ("communication/nccl-all-reduce", "communication/nccl-loopback", "training/nemotron5-8b"):
        where = placement(entry, "gcp", "h100")
        high = dataclasses.replace(where, node_objects={n: gke_a3_mega(n, networks=4, instance_type="a3-highgpu-8g") for n in where.nodes})
        objects = workload_manifests(run_spec(entry, "gcp", "h100"), high, trainer=trainer)
        assert "tcpx-daemon" in json.dumps(objects)
        assert [p for obj in objects for p in check_object(obj)] == []
