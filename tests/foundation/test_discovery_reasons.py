"""A target that selects no node says why: the nodeNames that are no Node, or how many Nodes it matched."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.api.base import TargetSpec
from nvcre_tui.engine.planning.discovery import unmatched_reason


def node(name: str, gpu: bool = True) -> dict:
    labels = {"nvidia.com/gpu.present": "true"} if gpu else {"kubernetes.io/os": "linux"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


@pytest.mark.parametrize(("target", "reason"), [
    ({"nodeNames": ["gpu-1", "nope"]}, "no Node named nope"),
    ({"nodeNames": [f"x-{i}" for i in range(7)]}, "no Node named x-0, x-1, x-2, x-3, x-4 (and 2 more)"),
    ({"nodeSelector": {"rack": "r9"}}, "none of the 3 Nodes matches the target"),
    ({"nodeSelector": {"kubernetes.io/os": "linux"}}, "1 Node(s) match the target but none is labelled nvidia.com/gpu.present=true"),
])
def test_why_a_target_selects_no_node(target: dict, reason: str) -> None:
    nodes = [node("gpu-1"), node("gpu-2"), node("cpu-1", gpu=False)]
    assert unmatched_reason(nodes, TargetSpec.model_validate(target)) == reason


def test_a_name_in_node_names_the_run_cannot_take_is_excluded_by_name() -> None:
    """`nodeNames: [nope, gpu-1, cpu-1]` ran on gpu-1 alone and PASSED, naming neither nope (a typo) nor cpu-1 (no GPU
    node): both are now excluded, which makes the certification INCOMPLETE."""
    from nvcre_tui.engine.planning.discovery import discover

    nodes = [node("gpu-1"), node("gpu-2"), node("cpu-1", gpu=False)]
    found = discover(nodes, TargetSpec.model_validate({"nodeNames": ["nope", "gpu-1", "gpu-1", "cpu-1"]}), lambda p, a: 1)
    assert found.names == ["gpu-1"]
    assert [(e.name, e.reason, e.message) for e in found.excluded] == [
        ("cpu-1", "NotGPUNode", "named in nodeNames and not labelled nvidia.com/gpu.present=true"),
        ("nope", "NodeNotFound", "no Node named nope on the cluster")]
    assert found.exclusion_reason() == "1 node: named in nodeNames and not labelled nvidia.com/gpu.present=true; 1 node: named in nodeNames and not on the cluster"
    assert discover(nodes, TargetSpec.model_validate({"nodeSelector": {"nvidia.com/gpu.present": "true"}}), lambda p, a: 1).excluded == []


def test_a_category_every_node_of_which_is_busy_is_refused_naming_the_first_ones_holders() -> None:
    """Every eligible node's GPUs held by others' pods: none is left (the Workflow waits NODE_WAIT for one, as for
    cordoned nodes, then fails NodesUnavailable, testing and blaming none: none_available), and the one line says what holds the first, as it does of the first node
    short of resources."""
    from nvcre_tui.engine.planning.discovery import discover, leave_out_busy

    nodes = [{**node(name), "status": {"allocatable": {"nvidia.com/gpu": "8"}}} for name in ("gpu-1", "gpu-2")]
    held = {name: [{"metadata": {"name": f"train-{name}", "namespace": "team-a"}, "spec": {"containers": [
        {"resources": {"requests": {"nvidia.com/gpu": "6"}}}]}}] for name in ("gpu-1", "gpu-2")}
    found = leave_out_busy(discover(nodes, TargetSpec(), lambda p, a: 8), {"nvidia.com/gpu": "8"}, held)
    assert found.names == [] and [(e.name, e.reason) for e in found.excluded] == [("gpu-1", "NodeBusy"), ("gpu-2", "NodeBusy")]
    assert found.none_available()
    assert found.exclusion_reason() == ("2 nodes: GPUs, CPUs or memory a pod needs held by other pods (not nvcre's) "
                                        "(the first, gpu-1: 6 of 8 nvidia.com/gpu requested by team-a/train-gpu-1, 8 needed)")
