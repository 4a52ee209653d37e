"""Read-only accessors over Kubernetes Node objects (plain JSON dicts). Nothing here writes a Node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.bodies import labels_of

Node = Mapping[str, Any]  # read-only: functions taking nodes accept Sequence[Node]


def node_name(node: Node) -> str:
    """metadata.name."""
    return str(node.get("metadata", {}).get("name", ""))


def node_labels(node: Node) -> Mapping[str, str]:
    """metadata.labels (empty when absent)."""
    return labels_of(node)


def is_cordoned(node: Node) -> bool:
    """spec.unschedulable."""
    return bool(node.get("spec", {}).get("unschedulable"))


def node_taints(node: Node) -> list[Mapping[str, Any]]:
    """spec.taints (empty when absent)."""
    return list(node.get("spec", {}).get("taints") or [])


def by_name(nodes: Sequence[Node]) -> dict[str, Node]:
    """Index nodes by name."""
    return {node_name(node): node for node in nodes}
