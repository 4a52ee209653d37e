"""A Workflow's orchestration spec + its discovered nodes -> the groups of its first iteration.

The one place the plan is made: `certification render` and the compose preview (both through render.py) call
`partition`; render records the groups in the Workflow's `spec.orchestration.plannedGroups`, and the Workflow
controller's `partition` consumes them, so what a reviewer saw is what the engine creates, even when a newer
engine would cut the groups differently. A plan the nodes no longer fit (a node cordoned or gone since, a
hand-written plan with a duplicate) is replaced by a fresh partition and the reason is kept in
`Partition.replanned`. Diagnose plans its first wave here too (with its state), not with a second screening
implementation; its state is recomputed (it is deterministic) and must give the planned wave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
    replanned: str | None = None  # why the recorded plan was not used, when there was one


def topology_key(orchestration: Mapping[str, Any]) -> str:
    """The label that names a node's topology domain (clique) for this Workflow."""
    chosen = (orchestration.get("diagnose") or orchestration.get("topology") or {}).get("topologyKey")
    return str(chosen or LABEL_GPU_CLIQUE)


def partition(nodes: Sequence[Node], orchestration: Mapping[str, Any]) -> Partition:
    """Group `nodes` (already discovered) as `orchestration` (a Workflow's spec.orchestration) asks.

    PartitionError when they cannot be grouped (too few nodes, missing topology labels, bad diagnose options).
    """
    recorded = orchestration.get("plannedGroups")
    if not recorded:
        return _plan(nodes, orchestration)
    planned = [Group(str(g["name"]), tuple(g["nodes"]), tuple(g.get("domains") or ()), bool(g.get("overflow"))) for g in recorded]
    problem = plan_problem(planned, {node_name(node) for node in nodes})
    if problem is None and orchestration.get("testScale") != "diagnose":
        return Partition(planned, _job_size(planned, nodes, orchestration))
    fresh = _plan(nodes, orchestration)
    if problem is None and fresh.groups != planned:
        problem = "the diagnose state gives another first wave than the one planned"
    return fresh if problem is None else replace(fresh, replanned=problem)


def plan_problem(planned: Sequence[Group], eligible: set[str]) -> str | None:
    """Why a recorded plan cannot run on the `eligible` nodes, or None when it can."""
    names = [group.name for group in planned]
    if len(set(names)) < len(names):
        return f"group {next(n for n in names if names.count(n) > 1)} is planned twice"
    in_plan = {node for group in planned for node in group.nodes}
    for changed, what in ((in_plan - eligible, "no longer eligible"), (eligible - in_plan, "eligible but not in the plan")):
        if changed:
            shown = sorted(changed)
            return f"{', '.join(shown[:5])}{' ...' if len(shown) > 5 else ''} {what}"
    seen: set[str] = set()
    for group in planned:
        if not group.nodes:
            return f"group {group.name} has no nodes"
        if not group.overflow and not seen.isdisjoint(group.nodes):
            return f"group {group.name} shares {sorted(seen & set(group.nodes))[0]} with another group"
        seen.update(group.nodes)
    return None


def _plan(nodes: Sequence[Node], orchestration: Mapping[str, Any]) -> Partition:
    scale = orchestration.get("testScale") or "full-scale"
    key = topology_key(orchestration)
    npj = _nodes_per_job(nodes, orchestration)
    if scale != "diagnose":
        groups = plan_groups(nodes, scale, nodes_per_job=npj, topology_key=key, per_node=bool(orchestration.get("perNode")))
        return Partition(groups, _job_size(groups, nodes, orchestration))
    limit = int((orchestration.get("execution") or {}).get("maxConcurrent") or 0)
    try:
        spec = orchestration.get("diagnose") or {}
        state = diagnose.start(_domains(nodes, key), int(spec.get("minGroupSize", 2)), limit, spec.get("withinDomains") is True)
    except diagnose.DiagnoseError as error:
        raise PartitionError(str(error)) from None
    groups = diagnose.plan_round(state)
    return Partition(groups, _job_size(groups, nodes, orchestration), state.to_dict())


def _nodes_per_job(nodes: Sequence[Node], orchestration: Mapping[str, Any]) -> int:
    return min(int(orchestration.get("nodesPerJob") or len(nodes)), len(nodes))


def _job_size(groups: Sequence[Group], nodes: Sequence[Node], orchestration: Mapping[str, Any]) -> int:
    """The status's nodes per job: where the groups follow the topology (intra-rack: a clique each) or diagnose's first
    wave, the largest group, not the spec's count (all nodes there, which NVCRE reports and no Job has)."""
    if orchestration.get("testScale") in ("intra-rack", "diagnose") and groups:
        return max(len(group.nodes) for group in groups)
    return _nodes_per_job(nodes, orchestration)


def _domains(nodes: Sequence[Node], key: str) -> dict[str, list[str]]:
    """Nodes by topology domain; all under "" (unlabelled) unless every node carries the label."""
    if all(key in node_labels(node) for node in nodes):
        return domains_of(nodes, key)
    return {"": sorted(node_name(node) for node in nodes)}
