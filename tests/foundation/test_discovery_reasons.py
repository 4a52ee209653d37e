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
