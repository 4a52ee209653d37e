"""Whether a Node could take a pod by its own object (api/fit.py): the scheduler's toleration rule, the resources
it allocates, its cordon."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.api.fit import cannot_host, shortfalls, tolerates

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
