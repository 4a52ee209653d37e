"""Fabrics whose pod pieces depend on what the group's Nodes carry (catalog/_workloads/fabrics.yaml): GKE A3 Mega's
GPUDirect-TCPXO (A3 High's GPUDirect-TCPX alike) takes the receive-datapath daemon as a sidecar, the plugin's host
volumes, its env, and secondary networks eth1..eth8 (eth1..eth4) whose GKE network names only the nodes' allocatable
tells; the nodes' machine type says which of the two.

A fabric applies to a run when its `when` matches the placement and the run's env sets its `usedBy` variable; it is
rendered only when every node of the group carries what it needs and the API server runs its daemons as native
sidecars (Kubernetes 1.29 on; a server whose version is not known is taken to), else nothing of it is (a half-rendered fabric
would not start, or hang NCCL), and `FabricOutcome.note` says why: the runner records it in an Event on the run and
in its FabricNotRendered condition (a note on its result: the report and the console say it), `render --workloads`
prints it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from nvcre_tui.engine.api.fit import allocatable
from nvcre_tui.engine.api.nodes import node_labels
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.workloads.data import Fabric, NetworksNeed, fabric_data
from nvcre_tui.engine.workloads.placement import Placement

Obj = dict[str, Any]
SIDECAR_RESTART = "Always"  # an init container that restarts is a native sidecar (Kubernetes 1.29 on)
# SidecarContainers, on by default from Kubernetes 1.29: an older API server drops an init container's restartPolicy,
# and the daemon, never exiting, then keeps the pod's init from finishing (or, as a container, the pod from completing).
SIDECAR_SINCE = (1, 29)


@dataclass(frozen=True)
class FabricOutcome:
    """The fabric of a run: the networks its pods attach, or why it is not rendered (`fabric` then the first one tried,
    `tried` the names of all that applied)."""

    fabric: Fabric
    networks: tuple[str, ...] = ()
    problem: str | None = None
    wrong_machine: bool = False  # not rendered because a node is another machine type (another fabric's, maybe)
    tried: tuple[str, ...] = ()

    @property
    def note(self) -> str | None:
        """The one line said of a run it is not rendered for; None when it is."""
        if self.problem is None:
            return None
        return f"{' or '.join(self.tried or (self.fabric.name,))} not rendered: {self.problem}; NCCL between the nodes goes over TCP on eth0"


def _natural(text: str) -> list[str | int]:
    return [int(part) if index % 2 else part for index, part in enumerate(re.split(r"(\d+)", text))]


def node_networks(node: Obj, need: NetworksNeed) -> list[str]:
    """The networks a node's allocatable lists (`<prefix><network>` > 0; a network's `.IP` entry and the `leading`
    ones left out), in natural name order."""
    status = node.get("status") or {}
    found = status.get("allocatable") if isinstance(status, dict) else None
    skip = {item.get("network") for item in need.leading}
    names = [key[len(need.resource_prefix):] for key in (found or {}) if isinstance(key, str) and key.startswith(need.resource_prefix)]
    return sorted((name for name in names if name and "." not in name and name not in skip
                   and (allocatable(node, need.resource_prefix + name) or 0) > 0), key=_natural)


def _label_problem(fabric: Fabric, name: str, node: Obj) -> str | None:
    need = fabric.node_label
    if need is None:
        return None
    value = node_labels(node).get(need.key)
    if value in need.values:
        return None
    if value is None:
        return f"node {name} has no {need.key} label ({fabric.name} needs {' or '.join(need.values)})"
    return f"node {name} is {need.key}={value}, not {' or '.join(need.values)}"


def _version_problem(fabric: Fabric, version: tuple[int, int] | None) -> str | None:
    """Why this API server cannot run the fabric's daemons as native sidecars (too old), or None (also when unknown)."""
    if not fabric.sidecars or version is None or version >= SIDECAR_SINCE:
        return None
    names = ", ".join(str(sidecar.get("name")) for sidecar in fabric.sidecars)
    return (f"this API server is Kubernetes {version[0]}.{version[1]}, and its daemon {names} runs as a native "
            f"sidecar (an init container with restartPolicy: Always), from Kubernetes {SIDECAR_SINCE[0]}.{SIDECAR_SINCE[1]} on: "
            "an older server drops that field, and the daemon, never exiting, would hold the pod until the Job's timeout")


def _outcome(fabric: Fabric, spec: WorkloadRunSpec, placement: Placement) -> FabricOutcome:
    for name in placement.nodes:  # another machine type first: the fabric is then not the nodes' at all
        node = placement.node_objects.get(name)
        if node is None:
            return FabricOutcome(fabric, problem=f"node {name}'s Node was not read")
        if (problem := _label_problem(fabric, name, dict(node))) is not None:
            return FabricOutcome(fabric, problem=problem, wrong_machine=True)
    if (problem := _version_problem(fabric, placement.server_version)) is not None:
        return FabricOutcome(fabric, problem=problem)
    networks: tuple[str, ...] | None = None
    first = ""
    for name in placement.nodes:
        node = placement.node_objects[name]
        need = fabric.networks
        if need is None:
            continue
        found = tuple(node_networks(dict(node), need))
        if len(found) != len(need.interfaces):
            listed = ", ".join(found) or "none"
            return FabricOutcome(fabric, problem=(
                f"node {name}'s allocatable lists {len(found)} GKE networks ({need.resource_prefix}*: {listed}), "
                f"not the {len(need.interfaces)} it attaches to {need.interfaces[0]}..{need.interfaces[-1]}"))
        if networks is not None and found != networks:
            return FabricOutcome(fabric, problem=f"nodes {first} and {name} list different networks ({', '.join(networks)}; {', '.join(found)})")
        networks, first = found, first or name
    # a volume of the run's own by a name the fabric's takes (its own, already added, is the same)
    own = {str(volume.get("name")): volume for volume in spec.volumes or []}
    taken = sorted(str(v.get("name")) for v in fabric.volumes if str(v.get("name")) in own and own[str(v.get("name"))] != v)
    if taken:
        return FabricOutcome(fabric, problem=f"the run's own volume {', '.join(taken)} has the name of one it adds")
    return FabricOutcome(fabric, networks=networks or ())


def fabric_outcome(spec: WorkloadRunSpec, placement: Placement) -> FabricOutcome | None:
    """The fabric that applies to the run on this placement: the first of fabrics.yaml whose `when` matches, whose
    `usedBy` the run sets, and whose needs every node meets; else why none is rendered: what the fabric of the nodes'
    machine type lacks, or, the nodes being of none's, what each needs. None when no fabric applies."""
    env = {var.name for var in spec.env or []}
    tried = [_outcome(fabric, spec, placement) for fabric in fabric_data().fabrics
             if fabric.when.matches(placement.platform, placement.architecture) and fabric.used_by in env]
    if not tried:
        return None
    if (rendered := next((outcome for outcome in tried if outcome.problem is None), None)) is not None:
        return rendered
    names = tuple(outcome.fabric.name for outcome in tried)
    if (theirs := next((outcome for outcome in tried if not outcome.wrong_machine), None)) is not None:
        return replace(theirs, tried=(theirs.fabric.name,))
    if len(tried) == 1:
        return replace(tried[0], tried=names)
    return replace(tried[0], problem="; ".join(f"{outcome.fabric.name}: {outcome.problem}" for outcome in tried), tried=names)


def with_fabric(spec: WorkloadRunSpec, placement: Placement) -> WorkloadRunSpec:
    """`spec` with its fabric's env (names the run sets stay its own), sidecars (after the run's init containers),
    volumes and GPU-container mounts added when it is rendered; `spec` itself otherwise."""
    outcome = fabric_outcome(spec, placement)
    if outcome is None or outcome.problem is not None:
        return spec
    fabric = outcome.fabric
    wire = spec.to_wire()
    taken = {var.name for var in spec.env or []}
    wire["env"] = [*wire.get("env", []), *({"name": name, "value": value} for name, value in fabric.env.items() if name not in taken)]
    sidecars = [{**sidecar, "restartPolicy": SIDECAR_RESTART} for sidecar in fabric.sidecars]
    wire["initContainers"] = [*wire.get("initContainers", []), *(c for c in sidecars if c not in (spec.init_containers or []))]
    wire["volumes"] = [*wire.get("volumes", []), *(v for v in fabric.volumes if v not in (spec.volumes or []))]
    wire["volumeMounts"] = [*wire.get("volumeMounts", []), *(m for m in fabric.volume_mounts if m not in (spec.volume_mounts or []))]
    return WorkloadRunSpec.model_validate(json.loads(json.dumps(wire)))


def fabric_annotations(spec: WorkloadRunSpec, placement: Placement) -> dict[str, str]:
    """The GPU pods' annotations of the run's rendered fabric: its own, and the networks' interface list."""
    outcome = fabric_outcome(spec, placement)
    if outcome is None or outcome.problem is not None:
        return {}
    fabric = outcome.fabric
    result = dict(fabric.annotations)
    if (need := fabric.networks) is not None:
        attached = [*need.leading, *({"interfaceName": nic, "network": net} for nic, net in zip(need.interfaces, outcome.networks))]
        result[need.annotation] = json.dumps(attached, separators=(",", ":"))
    return result
