"""Training's cpu and memory requests follow the nodes (catalog `fitRequests`): Megatron's 64 CPUs and 500Gi on nodes
with room, 80% of the smallest node's allocatable on nodes allocating less (an 8x L40S server of 512 GB), so the pods
can be scheduled there; nodes leaving less than the workload's least are refused when the category is planned."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import ANNOTATION_FITTED_SHARE, ANNOTATION_TEST_SCALE
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import RenderedCategory, render_certification
from nvcre_tui.engine.sim.scenario import Scenario, build_nodes
from tests.certifications import on_every_gpu_node

CERT = on_every_gpu_node("{domain: training, variant: VARIANT, options: OPTIONS}")


def l40s_nodes(*allocatable: dict[str, str]) -> list[dict[str, Any]]:
    """On-prem 8x L40S nodes, the n-th allocating `allocatable[n]` (cpu, memory); an empty map: neither said."""
    scenario = Scenario.model_validate({"name": "l40s", "seed": 1, "nodes": [
        {"count": len(allocatable), "gpuProduct": "NVIDIA-L40S", "providerID": "onprem://{index}"}]})
    nodes = build_nodes(scenario)
    for node, amounts in zip(nodes, allocatable, strict=True):
        have = node["status"]["allocatable"]
        del have["cpu"], have["memory"]
        have.update(amounts)
    return nodes


def requests(nodes: list[dict[str, Any]], variant: str = "nemotron5-8b", options: str = "{}") -> dict[str, Any]:
    catalog = default_catalog()
    cert = certification_from_text("c.yaml", CERT.replace("VARIANT", variant).replace("OPTIONS", options), catalog)
    spec = render_certification(cert, nodes, catalog, "c.yaml")[0].workflow.spec.job_template.spec.workload.workload_run
    assert spec is not None and spec.resources is not None
    return spec.resources.to_wire()


@pytest.mark.parametrize("variant", ["nemotron5-8b", "nemotron5-56b"])
def test_nodes_allocating_less_than_the_catalog_asks_get_a_share_of_the_smallest(variant: str) -> None:
    nodes = l40s_nodes(*[{"cpu": "127900m", "memory": "491Gi"}] * 3, {"cpu": "95", "memory": "470Gi"})
    # 80% of the smallest: 376Gi of 470Gi; cpu 76 of 95 is more than the catalog's 64, which stays. Limits stay.
    assert requests(nodes, variant) == {"limits": {"cpu": "128", "memory": "800Gi"}, "requests": {"cpu": "64", "memory": "376Gi"}}


def test_nodes_with_room_get_the_catalogs_figures() -> None:
    nodes = l40s_nodes({"cpu": "192", "memory": "2000Gi"}, {"cpu": "192", "memory": "2000Gi"})
    assert requests(nodes)["requests"] == {"cpu": "64", "memory": "500Gi"}


def test_nodes_that_say_nothing_of_cpu_or_memory_get_the_catalogs_figures() -> None:
    assert requests(l40s_nodes({}, {}))["requests"] == {"cpu": "64", "memory": "500Gi"}


def test_fewer_cpus_are_asked_too() -> None:
    nodes = l40s_nodes({"cpu": "48", "memory": "2000Gi"}, {"cpu": "47500m", "memory": "2000Gi"})
    assert requests(nodes)["requests"] == {"cpu": "38", "memory": "500Gi"}  # 80% of 47.5, whole CPUs


def test_the_categorys_own_resources_are_taken_as_given() -> None:
    nodes = l40s_nodes({"cpu": "64", "memory": "256Gi"}, {"cpu": "64", "memory": "256Gi"})
    given = "{resources: {requests: {cpu: '60', memory: 250Gi}}}"
    assert requests(nodes, options=given) == {"requests": {"cpu": "60", "memory": "250Gi"}}


def rendered(nodes: list[dict[str, Any]], variant: str = "nemotron5-8b", options: str = "{}") -> RenderedCategory:
    catalog = default_catalog()
    cert = certification_from_text("c.yaml", CERT.replace("VARIANT", variant).replace("OPTIONS", options), catalog)
    return render_certification(cert, nodes, catalog, "c.yaml")[0]


def excluded(category: RenderedCategory) -> dict[str, tuple[str, str]]:
    return {item.name: (item.reason, item.message) for item in category.discovery.excluded}


def test_a_node_leaving_less_than_the_workloads_least_is_left_out_and_named_the_others_run() -> None:
    """A DIMM gone on one node of three: the other two are certified at the catalog's figures, the small one named,
    never planned (its pod could never be placed) and never refused for all."""
    nodes = l40s_nodes({"cpu": "128", "memory": "2000Gi"}, {"cpu": "128", "memory": "60Gi"}, {"cpu": "128", "memory": "2000Gi"})
    category = rendered(nodes)
    assert category.discovery.names == ["gpu-node-01", "gpu-node-03"]
    assert excluded(category) == {"gpu-node-02": ("InsufficientResources", "60Gi memory allocatable, 500Gi requested")}
    assert [node for group in category.groups for node in group.nodes] == ["gpu-node-01", "gpu-node-03"]
    assert requests(nodes)["requests"] == {"cpu": "64", "memory": "500Gi"}
    status = category.workflow.status
    assert status is not None and status.orchestration is not None
    assert status.orchestration.exclusion_reason == ("1 node: less allocatable than a pod requests "
                                                     "(the first, gpu-node-02: 60Gi memory allocatable, 500Gi requested)")


def test_the_requests_fit_the_smallest_node_that_can_run_the_workload() -> None:
    """80% of 100Gi (80Gi) is more than the least: that node sets the request, and the 79Gi one, whose 80% (63Gi) is
    below it, is left out, short of the 80Gi asked; cpu likewise."""
    nodes = l40s_nodes({"cpu": "128", "memory": "100Gi"}, {"cpu": "128", "memory": "79Gi"}, {"cpu": "19", "memory": "2000Gi"},
                       {"cpu": "128", "memory": "2000Gi"})
    category = rendered(nodes)
    assert category.discovery.names == ["gpu-node-01", "gpu-node-04"]
    assert excluded(category) == {"gpu-node-02": ("InsufficientResources", "79Gi memory allocatable, 80Gi requested"),
                                  "gpu-node-03": ("InsufficientResources", "19 cpu allocatable, 64 requested")}
    assert requests(nodes)["requests"] == {"cpu": "64", "memory": "80Gi"}


def test_a_node_allocating_more_than_asked_but_whose_share_is_less_is_left_out() -> None:
    """80% of 81Gi sets the 64Gi asked (the least); the 79Gi node allocates more than that, but a pod may ask only
    80% of it (63Gi), the rest its other pods': kept, it would be unschedulable beside its daemonsets and blamed."""
    nodes = l40s_nodes({"cpu": "128", "memory": "81Gi"}, {"cpu": "128", "memory": "79Gi"}, {"cpu": "128", "memory": "2000Gi"})
    category = rendered(nodes)
    assert category.discovery.names == ["gpu-node-01", "gpu-node-03"]
    assert excluded(category) == {"gpu-node-02": ("InsufficientResources", "79Gi memory allocatable, 64Gi requested: more than the 80% "
                                                  "a pod may ask, the rest being the node's other pods' (daemonsets)")}
    assert requests(nodes)["requests"] == {"cpu": "64", "memory": "64Gi"}
    assert category.workflow.metadata.annotations == {ANNOTATION_TEST_SCALE: "full-scale", ANNOTATION_FITTED_SHARE: "0.8"}


def test_the_categorys_own_resources_leave_out_only_nodes_allocating_less() -> None:
    """Requests given as is have no share: a node allocating what they ask is kept, and no share is recorded."""
    nodes = l40s_nodes({"cpu": "64", "memory": "256Gi"}, {"cpu": "64", "memory": "250Gi"}, {"cpu": "64", "memory": "249Gi"})
    category = rendered(nodes, options="{resources: {requests: {cpu: '60', memory: 250Gi}}}")
    assert category.discovery.names == ["gpu-node-01", "gpu-node-02"]
    assert excluded(category) == {"gpu-node-03": ("InsufficientResources", "249Gi memory allocatable, 250Gi requested")}
    assert category.workflow.metadata.annotations == {ANNOTATION_TEST_SCALE: "full-scale"}


def test_nodes_all_leaving_less_than_the_workloads_least_are_refused_in_one_line() -> None:
    nodes = l40s_nodes({"cpu": "64", "memory": "50Gi"}, {"cpu": "64", "memory": "60Gi"})
    with pytest.raises(InputError) as refused:
        requests(nodes)
    assert refused.value.messages == [
        "c.yaml: spec.categories[0]: training/nemotron5-8b needs at least 64Gi memory a pod, and the largest of its 2 nodes, "
        "gpu-node-02, allocates 60Gi, of which it may ask 80% (48Gi; the rest is its daemonsets'): target nodes with more"]


def test_a_single_node_too_small_is_refused_naming_it() -> None:
    with pytest.raises(InputError) as refused:
        requests(l40s_nodes({"cpu": "64", "memory": "60Gi"}))
    assert refused.value.messages == [
        "c.yaml: spec.categories[0]: training/nemotron5-8b needs at least 64Gi memory a pod, and node gpu-node-01 allocates "
        "60Gi, of which it may ask 80% (48Gi; the rest is its daemonsets'): target nodes with more"]


def test_a_node_short_of_the_categorys_own_resources_is_left_out_naming_each() -> None:
    """The category's own `resources` (taken as given, not fitted) and its devices (RDMA NICs here) are checked against
    each node too; a node saying nothing of a resource is kept (a device plugin reporting none may be restarting)."""
    given = "{resources: {requests: {cpu: '60', memory: 250Gi}}, nicResourceName: rdma/ib, mlnxPerNode: 8}"
    room = {"cpu": "64", "memory": "256Gi", "rdma/ib": "8"}
    nodes = l40s_nodes(room, {**room, "memory": "200Gi"}, {**room, "cpu": "32", "rdma/ib": "4"}, {"cpu": "64"})
    category = rendered(nodes, options=given)
    assert category.discovery.names == ["gpu-node-01", "gpu-node-04"]
    assert excluded(category) == {
        "gpu-node-02": ("InsufficientResources", "200Gi memory allocatable, 250Gi requested"),
        "gpu-node-03": ("InsufficientResources", "32 cpu allocatable, 60 requested; 4 rdma/ib allocatable, 8 requested")}


def test_aws_gb200_nccl_memory_follows_the_nodes_too() -> None:
    """Its 800Gi memory request (which its hugepages need) on nodes allocating 850Gi: 80%, 680Gi; hugepages kept."""
    scenario = Scenario.model_validate({"name": "gb200", "seed": 1, "nodes": [
        {"count": 4, "gpuProduct": "NVIDIA-GB200", "gpusPerNode": 4, "providerID": "aws:///us-east-1a/i-{index:05d}"}]})
    nodes = build_nodes(scenario)
    for node in nodes:
        node["status"]["allocatable"]["memory"] = "850Gi"
    catalog = default_catalog()
    cert = certification_from_text("c.yaml", CERT.replace("training, variant: VARIANT, options: OPTIONS",
                                                          "communication, variant: nccl-all-reduce"), catalog)
    spec = render_certification(cert, nodes, catalog, "c.yaml")[0].workflow.spec.job_template.spec.workload.workload_run
    assert spec is not None and spec.resources is not None
    assert spec.resources.to_wire() == {"limits": {"memory": "800Gi"}, "requests": {"memory": "680Gi"}}
    assert (spec.extended_resources or {}).get("hugepages-2Mi") == "10256Mi"


def test_a_scenarios_pools_say_what_their_nodes_allocate() -> None:
    """`allocatableCpu` / `allocatableMemory` of a scenario pool (`render --scenario`, the simulated fleet)."""
    scenario = Scenario.model_validate({"name": "l40s", "seed": 1, "nodes": [
        {"count": 2, "gpuProduct": "NVIDIA-L40S", "providerID": "onprem://{index}", "allocatableCpu": "64", "allocatableMemory": "491Gi"}]})
    assert requests(build_nodes(scenario))["requests"] == {"cpu": "51", "memory": "392Gi"}


def test_own_resources_no_node_allocates_are_refused_in_one_line_naming_the_shortfall() -> None:
    """It said `5 nodes: less allocatable than a pod requests`, not which resource nor how much."""
    nodes = l40s_nodes({"cpu": "64", "memory": "256Gi"}, {"cpu": "64", "memory": "256Gi"})
    with pytest.raises(InputError) as refused:
        requests(nodes, options="{resources: {requests: {cpu: '60', memory: 300Gi}}}")
    assert refused.value.messages == [
        "c.yaml: spec.target: no eligible nodes match (2 nodes: less allocatable than a pod requests (the first, gpu-node-01: "
        "256Gi memory allocatable, 300Gi requested))"]


def test_an_aws_gb200_node_without_hugepages_is_left_out() -> None:
    """Its NCCL pods ask 10256Mi of hugepages-2Mi: a node whose kubelet reports 0 has none configured (the kubelet
    counts them itself: no device plugin to wait for) and could never take the pod; one saying nothing is kept."""
    scenario = Scenario.model_validate({"name": "gb200", "seed": 1, "nodes": [
        {"count": 3, "gpuProduct": "NVIDIA-GB200", "gpusPerNode": 4, "providerID": "aws:///us-east-1a/i-{index:05d}"}]})
    nodes = build_nodes(scenario)
    nodes[0]["status"]["allocatable"]["hugepages-2Mi"] = "20Gi"
    nodes[1]["status"]["allocatable"]["hugepages-2Mi"] = "0"
    catalog = default_catalog()
    cert = certification_from_text("c.yaml", CERT.replace("training, variant: VARIANT, options: OPTIONS",
                                                          "communication, variant: nccl-all-reduce"), catalog)
    category = render_certification(cert, nodes, catalog, "c.yaml")[0]
    assert category.discovery.names == ["gpu-node-01", "gpu-node-03"]
    assert excluded(category) == {"gpu-node-02": ("InsufficientResources", "0 hugepages-2Mi allocatable, 10256Mi requested")}
