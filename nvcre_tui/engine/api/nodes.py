"""Read-only accessors over Kubernetes Node objects (plain JSON dicts). Nothing here writes a Node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.bodies import conditions_of, labels_of, meta_of, node_spec
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_REPLICAS

# What a user who may not list Nodes (a team's nvcre-edit and nvcre-view bindings) is told wherever Nodes would be
# shown or planned on: the console's fleet line, map and wall, compose's plan, `certification run`.
NODES_WITHHELD = "this user may not list Nodes (get, list and watch on nodes: no namespaced role grants them)"
# A cluster that registers no Node at all (an API server alone): `certification run` refuses, the console's fleet line says it.
NO_NODES = "the cluster has no Nodes at all (an API server without kubelets registers none): nothing to certify"
# The grant that reads Nodes, where a command names what it takes (`cluster info`, the notice of a session without them)
NODES_GRANT = "get, list and watch on nodes, which no namespaced role grants (a ClusterRole with them and a ClusterRoleBinding)"

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


# What the kubelet and the API server rewrite on a Node that stays what it was: the write's bookkeeping, each condition's
# heartbeat (a kubelet reports its Node's status at least every 5 minutes: 10 writes a second on a 3,000-node fleet),
# the images it holds and the volumes attached to it. Planning (discovery, platform, partition: planning/) reads none of
# them; a memo of what it computed over the Nodes holds across them (controllers.context.World.nodes_version).
CHURN_METADATA = frozenset({"resourceVersion", "managedFields"})
CHURN_STATUS = frozenset({"images", "volumesInUse", "volumesAttached"})
CHURN_CONDITION = "lastHeartbeatTime"


def _planned_part(node: Node) -> tuple[object, ...]:
    """The Node without its churn (CHURN_*): what two versions of it must share to plan the same."""
    status = node.get("status")
    status = status if isinstance(status, Mapping) else {}
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        conditions = [{k: v for k, v in c.items() if k != CHURN_CONDITION} if isinstance(c, Mapping) else c for c in conditions]
    return ({k: v for k, v in node.items() if k not in ("metadata", "status")},
            {k: v for k, v in meta_of(node).items() if k not in CHURN_METADATA},
            {k: v for k, v in status.items() if k not in CHURN_STATUS and k != "conditions"}, conditions)


def plans_the_same(old: Node | None, new: Node | None) -> bool:
    """Whether two versions of a Node differ in churn alone (CHURN_*: a heartbeat, an image pulled), so that planning
    over either gives the same answer; a Node added or removed never does."""
    return old is not None and new is not None and _planned_part(old) == _planned_part(new)
