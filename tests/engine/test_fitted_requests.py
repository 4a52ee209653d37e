"""Training's cpu and memory requests follow the nodes (catalog `fitRequests`): Megatron's 64 CPUs and 500Gi on nodes
with room, 80% of the smallest node's allocatable on nodes allocating less (an 8x L40S server of 512 GB), so the pods
can be scheduled there; nodes leaving less than the workload's least are refused when the category is planned."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
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


def test_nodes_leaving_less_than_the_workloads_least_are_refused_in_one_line() -> None:
    nodes = l40s_nodes({"cpu": "64", "memory": "480Gi"}, {"cpu": "64", "memory": "60Gi"})
    with pytest.raises(InputError) as refused:
        requests(nodes)
    assert refused.value.messages == [
        "c.yaml: spec.categories[0]: training/nemotron5-8b needs at least 64Gi memory a pod, and node gpu-node-02 allocates "
        "60Gi, of which it may ask 80% (48Gi; the rest is its daemonsets'): target nodes with more"]


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
