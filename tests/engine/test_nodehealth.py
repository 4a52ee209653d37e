"""Node health CEL over whole Node objects: true means unhealthy; missing fields count as healthy."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.judging.nodehealth import DEFAULT_NODE_HEALTH, NodeHealthError, compile_node_health, flagged_nodes


def node(name: str, spec: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, **extra}
    if spec is not None:
        data["spec"] = spec
    return data


FLEET = [
    node("gpu-c", {"unschedulable": True, "providerID": "aws://x"}),
    node("gpu-a", {"unschedulable": True}),
    node("gpu-b", {"providerID": "aws://y"}),  # unschedulable omitted, as Kubernetes does when false
    node("gpu-d", {"unschedulable": False}),
    node("gpu-e"),  # no spec at all
]


def test_default_flags_only_cordoned_nodes_sorted() -> None:
    assert flagged_nodes(compile_node_health(), FLEET) == ["gpu-a", "gpu-c"]
    assert compile_node_health().expression == DEFAULT_NODE_HEALTH == "node.spec.unschedulable == true"


def test_missing_field_is_healthy_and_recorded() -> None:
    verdict = compile_node_health().assess(node("gpu-b", {}))
    assert verdict.unhealthy is False
    assert verdict.error is not None and "unschedulable" in verdict.error
    assert compile_node_health().assess(node("gpu-d", {"unschedulable": False})).error is None


def test_expression_over_labels_and_conditions() -> None:
    check = compile_node_health(
        "node.status.conditions.exists(c, c.type == 'Ready' && c.status != 'True')"
        " || (has(node.metadata.labels) && node.metadata.labels['nvidia.com/gpu.present'] == 'false')"
    )
    ready = {"conditions": [{"type": "Ready", "status": "True"}]}
    not_ready = {"conditions": [{"type": "Ready", "status": "False"}]}
    nodes = [
        node("n1", status=ready),
        node("n2", status=not_ready),
        {"metadata": {"name": "n3", "labels": {"nvidia.com/gpu.present": "false"}}, "status": ready},
    ]
    assert flagged_nodes(check, nodes) == ["n2", "n3"]


def test_non_json_node_is_not_flagged_but_explained() -> None:
    verdict = compile_node_health().assess(node("odd", {"unschedulable": True, "extra": object()}))
    assert verdict.unhealthy is False
    assert verdict.error is not None and verdict.error.startswith("node is not JSON data")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "node health: CEL expression is empty"),
        ("node.metadata.name", 'node health: CEL expression "node.metadata.name" must give a bool, got string'),
        ("value > 1", 'node health: CEL expression "value > 1" refers to undeclared "value"; only "node" is available'),
        (
            "node.spec.unschedulable ==",
            'node health: invalid CEL expression "node.spec.unschedulable ==": unexpected end of expression',
        ),
        ("true || " * 300 + "true", "node health: CEL expression is 2404 characters; the limit is 2048"),
    ],
)
def test_bad_expressions_refused_with_one_line(expression: str, message: str) -> None:
    with pytest.raises(NodeHealthError) as caught:
        compile_node_health(expression)
    assert str(caught.value) == message


def test_non_string_expression_refused() -> None:
    with pytest.raises(NodeHealthError, match="must be a string, got int"):
        compile_node_health(5)  # type: ignore[arg-type]


def test_compiled_once_per_expression() -> None:
    assert compile_node_health("node.spec.unschedulable") is compile_node_health("node.spec.unschedulable")


def test_a_verdict_is_not_reused_for_another_node_of_the_same_uid_and_resource_version() -> None:
    """Simulated sessions in one process repeat uids and resourceVersions: a fleet's gpu-node-02 was flagged by the
    verdict on another session's cordoned gpu-node-02 (the scenario goldens changed with the order they ran in)."""
    check = compile_node_health()
    meta = {"name": "gpu-node-02", "uid": "uid-of-gpu-node-02", "resourceVersion": "17"}
    cordoned = {"metadata": dict(meta), "spec": {"unschedulable": True}}
    healthy = {"metadata": dict(meta), "spec": {}}
    assert flagged_nodes(check, [cordoned]) == ["gpu-node-02"]
    assert flagged_nodes(check, [healthy]) == []
    assert flagged_nodes(check, [dict(cordoned)]) == ["gpu-node-02"]  # an equal body: the verdict kept
