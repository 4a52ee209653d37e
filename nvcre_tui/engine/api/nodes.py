"""Read-only accessors over Kubernetes Node objects (plain JSON dicts). Nothing here writes a Node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.bodies import conditions_of, labels_of, meta_of, node_spec
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_REPLICAS

# What a user who may not list Nodes (a team's nvcre-edit and nvcre-view bindings) is told wherever Nodes would be
# shown or planned on: the console's fleet line, map and wall, compose's plan, `certification run`.
NODES_WITHHELD = "this user may not list Nodes (get, list and watch on nodes: no namespaced role grants them)"

Node = Mapping[str, Any]  # read-only: functions taking nodes accept Sequence[Node]


def node_name(node: Node) -> str:
    """metadata.name."""
    return str(meta_of(node).get("name", ""))


def node_labels(node: Node) -> Mapping[str, str]:
    """metadata.labels (empty when absent)."""
    return labels_of(node)


def is_cordoned(node: Node) -> bool:
    """spec.unschedulable."""
    return bool(node_spec(node).get("unschedulable"))


def ready_status(node: Node) -> str | None:
    """The Ready condition's status (True, False, Unknown); None when the Node has none (no kubelet reported yet)."""
    conditions = conditions_of(node)
    ready = next((c for c in conditions if isinstance(c, dict) and c.get("type") == "Ready"), None) if isinstance(conditions, list) else None
    return str(ready.get("status")) if ready is not None else None


def node_taints(node: Node) -> list[Mapping[str, Any]]:
    """spec.taints (empty when absent)."""
    return list(node_spec(node).get("taints") or [])


def by_name(nodes: Sequence[Node]) -> dict[str, Node]:
    """Index nodes by name."""
    return {node_name(node): node for node in nodes}


def gpu_replicas(labels: Mapping[str, Any]) -> int | None:
    """nvidia.com/gpu.replicas (how many times GPU feature discovery advertises each GPU shared by time-slicing or
    MPS) as a whole number of at least 1, else None: absent, or no plain count (the label is anyone's text)."""
    text = str(labels.get(LABEL_GPU_REPLICAS) or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= 1 else None
