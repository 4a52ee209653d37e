"""AWS GB300's RoCE NICs (catalog/_workloads/claims.yaml): a ResourceClaimTemplate of the run's own beside its
ComputeDomain, and the GPU pods' claim of it; in the DRA version the server serves."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.workloads import WorkloadError, workload_manifests
from tests.workloads.matrix import placement, run_spec
from tests.workloads.schema import check_object

ASKED: dict[str, Any] = {"deviceClassName": "roce.networking.k8s.aws", "allocationMode": "ExactCount", "count": 8}
ROCE = {"name": "roce", "exactly": ASKED}


def _objects(entry: str, platform: str, arch: str, **options: Any) -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for obj in workload_manifests(run_spec(entry, platform, arch), placement(entry, platform, arch), **options)}


def _worker(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return objects["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


@pytest.mark.parametrize(("entry", "channel"), [("communication/nccl-all-reduce", "compute-domain-channel"),
                                                ("communication/nccl-loopback", "compute-domain-channel"),
                                                ("training/nemotron5-8b", "compute-domain")])
def test_aws_gb300_runs_claim_their_roce_nics_beside_the_compute_domain_channel(entry: str, channel: str) -> None:
    objects = _objects(entry, "aws", "gb300")
    template = objects["ResourceClaimTemplate"]
    job = placement(entry, "aws", "gb300").job
    assert (template["apiVersion"], template["metadata"]["name"]) == ("resource.k8s.io/v1", f"{job}-roce")
    assert template["spec"]["spec"]["devices"]["requests"] == [ROCE]
    assert objects["ComputeDomain"]["spec"]["channel"]["resourceClaimTemplate"]["name"] == f"{job}-channel"
    pod = _worker(objects)
    assert pod["resourceClaims"] == [{"name": channel, "resourceClaimTemplateName": f"{job}-channel"},
                                     {"name": "roce-channel", "resourceClaimTemplateName": f"{job}-roce"}]
    assert pod["containers"][0]["resources"]["claims"] == [{"name": channel}, {"name": "roce-channel"}]


@pytest.mark.parametrize(("platform", "arch"), [("aws", "gb200"), ("oci", "gb300"), ("gcp", "gb300")])
def test_other_gb_platforms_make_no_roce_template(platform: str, arch: str) -> None:
    objects = _objects("communication/nccl-all-reduce", platform, arch)
    assert "ResourceClaimTemplate" not in objects and "ComputeDomain" in objects


def test_older_dra_versions_get_their_own_shape_and_unknown_ones_are_refused() -> None:
    beta2 = _objects("communication/nccl-all-reduce", "aws", "gb300", dra_version="v1beta2")["ResourceClaimTemplate"]
    assert beta2["apiVersion"] == "resource.k8s.io/v1beta2" and beta2["spec"]["spec"]["devices"]["requests"] == [ROCE]
    beta1 = _objects("communication/nccl-all-reduce", "aws", "gb300", dra_version="v1beta1")["ResourceClaimTemplate"]
    assert beta1["spec"]["spec"]["devices"]["requests"] == [{"name": "roce", **ASKED}]  # v1beta1: no `exactly`
    assert check_object(beta2) == [] and check_object(beta1) == []
    with pytest.raises(WorkloadError, match="resource.k8s.io/v1alpha3: nvcre writes ResourceClaimTemplates of v1, v1beta2, v1beta1 only"):
        _objects("communication/nccl-all-reduce", "aws", "gb300", dra_version="v1alpha3")


def test_a_standalone_run_on_aws_gb300_claims_the_roce_nics_unless_it_names_its_claims() -> None:
    from nvcre_tui.engine.api.resources import WorkloadRunSpec
    from nvcre_tui.engine.workloads import standalone_spec

    user = WorkloadRunSpec.model_validate({"image": "img", "numNodes": 2, "framework": {"torch": {"script": "train.py"}}})
    assert standalone_spec(user, "aws", "gb300").resource_claims == ["compute-domain", "roce-channel"]
    assert standalone_spec(user, "aws", "gb200").resource_claims == ["compute-domain"]
    own = user.model_copy(update={"resource_claims": ["compute-domain"]})
    assert standalone_spec(own, "aws", "gb300").resource_claims == ["compute-domain"]
