"""testScale -> node groups. Pure: the same nodes and options always give the same groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nvcre_tui.engine.api.nodes import Node, node_labels, node_name
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE
from nvcre_tui.engine.planning.platform import RACK_SCALE_ARCHITECTURES, node_gpu_architecture
from nvcre_tui.engine.units import listed


# After the nodes that lack the clique label, why: "nodes without label" alone left the SRE to guess whether its GPU
# Operator was broken. A DGX H100 has none (its NVLink ends at the node); a GB200/GB300 tray without one has its fabric unread.
NO_CLIQUE = ("; GPU feature discovery labels a node's NVLink clique only where NVLink spans nodes (GB200/GB300 NVL72 racks): "
             "others form no rack to test intra-rack (testScale full-scale or intra-node tests them)")
NO_CLIQUE_READ = ("; on GB200/GB300 GPU feature discovery labels it once the node's GPUs have joined the NVLink fabric (the "
                  "fabric manager running): a node without it is not in a rack yet")


class PartitionError(ValueError):
    """The nodes cannot be grouped as asked (too few nodes, missing topology labels)."""


@dataclass(frozen=True)
class Group:
    """A set of nodes that run one Job together."""

    name: str
    nodes: tuple[str, ...]
    domains: tuple[str, ...] = ()
    overflow: bool = False


def chunk(names: Sequence[str], size: int) -> list[Group]:
    """Full chunks of `size`; a remainder borrows the previous chunk's last nodes (an overflow group)."""
    if not names:
        return []
    if len(names) <= size:
        return [Group("group-0", tuple(names))]
    groups = [Group(f"group-{i}", tuple(names[start : start + size])) for i, start in enumerate(range(0, len(names) - size + 1, size))]
    remainder = len(names) % size
    if remainder:
        tail = names[-remainder:]
        borrowed = names[len(names) - remainder - (size - remainder) : len(names) - remainder]
        groups.append(Group(f"group-{len(groups)}-overflow", tuple(borrowed) + tuple(tail), overflow=True))
    return groups


def domains_of(nodes: Sequence[Node], topology_key: str) -> dict[str, list[str]]:
    """Node names by topology label value, sorted; PartitionError names nodes without the label."""
    missing = [node_name(n) for n in nodes if not node_labels(n).get(topology_key)]  # an empty value names no domain
    if missing:
        rack_scale = any(node_gpu_architecture(n) in RACK_SCALE_ARCHITECTURES for n in nodes if not node_labels(n).get(topology_key))
        why = (NO_CLIQUE_READ if rack_scale else NO_CLIQUE) if topology_key == LABEL_GPU_CLIQUE else ""
        raise PartitionError(f"nodes without label {topology_key} (or with an empty value): {listed(missing)}{why}")
    domains: dict[str, list[str]] = {}
    for node in sorted(nodes, key=node_name):
        domains.setdefault(node_labels(node)[topology_key], []).append(node_name(node))
    return dict(sorted(domains.items()))


def per_domain(domains: Mapping[str, list[str]], prefix: str) -> list[Group]:
    """One group per topology domain, in domain order."""
    return [Group(f"{prefix}-{i}", tuple(names), domains=(domain,)) for i, (domain, names) in enumerate(domains.items())]


def plan_groups(
    nodes: Sequence[Node],
    test_scale: str,
    *,
    nodes_per_job: int,
    topology_key: str,
    per_node: bool = False,
) -> list[Group]:
    """The groups a testScale gives on these (already discovered, name-sorted) nodes; diagnose plans its own
    (engine/planning/partition.py hands it over)."""
    names = sorted(node_name(n) for n in nodes)
    if per_node or test_scale == "intra-node":
        return [Group(f"group-{i}", (name,)) for i, name in enumerate(names)]
    if test_scale == "intra-rack":
        return per_domain(domains_of(nodes, topology_key), "group")
    if nodes_per_job > len(names):
        raise PartitionError(f"{nodes_per_job} nodes per job but only {len(names)} eligible nodes")
    return chunk(names, nodes_per_job)
