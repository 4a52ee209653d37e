"""Whether a Node could take a pod by its own object (api/fit.py): the scheduler's toleration rule, the resources
it allocates, its cordon."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.api.fit import cannot_host, held_by_others, shortfalls, tolerates

Obj = dict[str, Any]
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.mark.parametrize(("toleration", "tolerated"), [
    ({"operator": "Exists"}, True),  # empty key, Exists: everything
    ({"operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}, True),
    ({"key": "nvidia.com/gpu", "value": "present"}, True),  # Equal by default
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "absent"}, False),
    ({"key": "sku", "operator": "Exists"}, False),
    ({"value": "present"}, False),  # an empty key needs Exists
])
def test_the_scheduler_s_toleration_rule(toleration: Obj, tolerated: bool) -> None:
    assert tolerates([toleration], GPU_TAINT) is tolerated


def node(allocatable: Obj, *, taints: list[Obj] | None = None, cordoned: bool = False) -> Obj:
    return {"metadata": {"name": "n"}, "spec": {"taints": taints or [], "unschedulable": cordoned}, "status": {"allocatable": allocatable}}


POD = {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "cpu": "128"},
                                     "requests": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "cpu": "64", "memory": "500Gi"}}}],
       "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}
ROOMY = {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "cpu": "191450m", "memory": "2015Gi"}


def test_a_node_that_could_take_the_pod() -> None:
    assert cannot_host(node(ROOMY, taints=[GPU_TAINT, {"key": "x", "effect": "PreferNoSchedule"}]), POD) is None


@pytest.mark.parametrize(("changed", "why"), [
    ({"allocatable": {**ROOMY, "vpc.amazonaws.com/efa": "4"}}, "4 vpc.amazonaws.com/efa allocatable, 32 requested"),
    ({"allocatable": {k: v for k, v in ROOMY.items() if k != "nvidia.com/gpu"}}, "0 nvidia.com/gpu allocatable, 8 requested"),
    ({"allocatable": {**ROOMY, "cpu": "48"}}, "48 cpu allocatable, 64 requested"),  # the request, not the limit
    ({"taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]}, "taint sku=gpu:NoSchedule not tolerated"),
    ({"cordoned": True}, "cordoned (spec.unschedulable)"),
])
def test_why_a_node_could_not(changed: Obj, why: str) -> None:
    args = {"allocatable": ROOMY, **changed}
    assert cannot_host(node(args.pop("allocatable"), **args), POD) == why


def test_discovery_keeps_a_missing_count_the_runner_does_not() -> None:
    """A device plugin may be restarting when planning (kept, as for GPUs); a pod that could not be placed is judged
    by what the node reports then."""
    assert shortfalls(node({}), {"vpc.amazonaws.com/efa": "32"}, missing_is_short=False) == []
    assert shortfalls(node({}), {"vpc.amazonaws.com/efa": "32"}, missing_is_short=True) == ["0 vpc.amazonaws.com/efa allocatable, 32 requested"]
    assert shortfalls(node({"vpc.amazonaws.com/efa": "4"}), {"vpc.amazonaws.com/efa": "32"}, missing_is_short=False) == [
        "4 vpc.amazonaws.com/efa allocatable, 32 requested"]


def test_the_scheduler_s_other_rules_a_cordon_tolerated_init_containers_and_units() -> None:
    everything = {**POD, "tolerations": [{"operator": "Exists"}]}
    assert cannot_host(node(ROOMY, cordoned=True), everything) is None  # NodeUnschedulable passes a pod tolerating it
    init = {**POD, "initContainers": [{"resources": {"requests": {"cpu": "200"}}}]}
    assert cannot_host(node(ROOMY), init) == "191450m cpu allocatable, 200 requested"  # the largest init container counts
    small = {**ROOMY, "memory": "8000000000"}
    assert cannot_host(node(small), {"containers": [{"resources": {"requests": {"memory": "8Gi"}}}]}) == (
        "7.45Gi memory allocatable, 8Gi requested")


def _pod(name: str, gpus: str, *, phase: str = "Running", memory: str | None = None) -> Obj:
    asked = {"nvidia.com/gpu": gpus, **({"memory": memory} if memory else {})}
    return {"metadata": {"name": name, "namespace": "team-a"}, "spec": {"containers": [{"resources": {"limits": asked}}]},
            "status": {"phase": phase}}


def test_a_node_whose_other_pods_hold_its_gpus_names_them_and_what_they_hold() -> None:
    """kube-scheduler's NodeResourcesFit as a busy node's one line: allocatable less its other pods' requests; a
    finished pod holds nothing, nor does a pod asking none of the resource."""
    others = [_pod("trainer-1", "4"), _pod("trainer-0", "4"), _pod("done", "8", phase="Succeeded"), _pod("cpu-only", "0")]
    assert held_by_others(node(ROOMY), {"nvidia.com/gpu": "8", "cpu": "64"}, others) == [
        "8 of 8 nvidia.com/gpu requested by team-a/trainer-1, team-a/trainer-0, 8 needed"]
    assert held_by_others(node(ROOMY), {"nvidia.com/gpu": "4"}, [_pod("trainer-0", "4")]) == []  # room for 4 left
    assert held_by_others(node(ROOMY), {"nvidia.com/gpu": "8"}, [_pod("done", "8", phase="Failed")]) == []
    # a daemonset's memory beside the share left: named with what it holds
    assert held_by_others(node(ROOMY), {"memory": "1900Gi"}, [_pod("agent", "0", memory="200Gi")]) == [
        "200Gi of 2015Gi memory requested by team-a/agent, 1900Gi needed"]
    assert held_by_others(node({}), {"nvidia.com/gpu": "8"}, [_pod("trainer-0", "8")]) == []  # a Node saying nothing: its own object judges
