"""A Workflow's orchestration spec + its discovered nodes -> the groups of its first iteration.

The one place the plan is made: `certification render`, the compose preview (both through render.py) and
the Workflow controller all call `partition`, so what a reviewer sees is what the engine creates. Diagnose
plans its first wave here too (with its state), not with a second screening implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine import diagnose
from nvcre_tui.engine.api.nodes import Node, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE
from nvcre_tui.engine.planning.grouping import Group, PartitionError, domains_of, plan_groups


@dataclass(frozen=True)
class Partition:
    """The first iteration's groups, the nodes per job they were cut for, and diagnose's state when it plans."""

    groups: list[Group]
    nodes_per_job: int
    diagnose: dict[str, Any] | None = None


def topology_key(orchestration: Mapping[str, Any]) -> str:
    """The label that names a node's topology domain (clique) for this Workflow."""
    chosen = (orchestration.get("diagnose") or orchestration.get("topology") or {}).get("topologyKey")
    return str(chosen or LABEL_GPU_CLIQUE)


def partition(nodes: Sequence[Node], orchestration: Mapping[str, Any]) -> Partition:
    """Group `nodes` (already discovered) as `orchestration` (a Workflow's spec.orchestration) asks.

    PartitionError when they cannot be grouped (too few nodes, missing topology labels, bad diagnose options).
    """
    scale = orchestration.get("testScale") or "full-scale"
    key = topology_key(orchestration)
    npj = min(int(orchestration.get("nodesPerJob") or len(nodes)), len(nodes))
    if scale != "diagnose":
        groups = plan_groups(nodes, scale, nodes_per_job=npj, topology_key=key, per_node=bool(orchestration.get("perNode")))
        return Partition(groups, npj)
    limit = int((orchestration.get("execution") or {}).get("maxConcurrent") or 0)
    try:
        state = diagnose.start(_domains(nodes, key), int((orchestration.get("diagnose") or {}).get("minGroupSize", 2)), limit)
    except diagnose.DiagnoseError as error:
        raise PartitionError(str(error)) from None
    return Partition(diagnose.plan_round(state), npj, state.to_dict())


def _domains(nodes: Sequence[Node], key: str) -> dict[str, list[str]]:
    """Nodes by topology domain; all under "" (unlabelled) unless every node carries the label."""
    if all(key in node_labels(node) for node in nodes):
        return domains_of(nodes, key)
    return {"": sorted(node_name(node) for node in nodes)}
