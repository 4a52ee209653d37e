"""Whether a Node could take a run's GPU pod by its own object: what it allocates, its taints, its cordon; and
whether it has room for it now, beside the pods already bound there (`held_by_others`).

Two readers: discovery leaves out a node that reports less of a requested resource than a pod asks for (a run
there could never start), or whose other pods hold what the pod asks (a shared cluster: NodeBusy), and the
Kubernetes runner, when no pod of a group was placed at all (a gang scheduler places all or none), blames only the
members that could not have taken theirs: the others waited for them (named with the pods holding their room).
Read-only, like every Node accessor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from nvcre_tui.engine.api.nodes import Node, is_cordoned, node_taints
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import FAILED, RESOURCE_GPU, SUCCEEDED
from nvcre_tui.engine.units import listed, parse_quantity

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only steers
CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}  # what a cordon means to a toleration


def _amount(value: int | str) -> str | None:
    text = str(value).strip()
    return None if text in ("", "0") else text


def extended_amounts(spec: WorkloadRunSpec) -> dict[str, str]:
    """GPU, NIC, EFA, RDMA ... amounts per node; a 0 means "do not request" (mlnxPerNode=0 opts out)."""
    amounts = {name: text for name, value in (spec.extended_resources or {}).items() if (text := _amount(value))}
    if RESOURCE_GPU not in amounts and spec.gpus_per_node:
        amounts[RESOURCE_GPU] = str(spec.gpus_per_node)
    if spec.nic_resource_name and spec.mlnx_per_node:
        amounts.setdefault(spec.nic_resource_name, str(spec.mlnx_per_node))
    return dict(sorted(amounts.items()))


def pod_requests(spec: WorkloadRunSpec) -> dict[str, str]:
    """What a GPU pod of the run asks of each resource, as the scheduler counts it: the run's `resources` (a limit
    alone stands for its request, as the API server sets it: cpu, memory, hugepages, a device given there) and its
    extended amounts (GPUs, NICs, EFA, RDMA ...), which the container asks as requests = limits (worker_resources)."""
    base = spec.resources.to_wire() if spec.resources else {}
    asked = {**(base.get("limits") or {}), **(base.get("requests") or {}), **extended_amounts(spec)}
    return {name: str(value) for name, value in sorted(asked.items())}


def _quantity(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return parse_quantity(value)
    except ValueError:
        return None


def allocatable(node: Node, resource: str) -> Decimal | None:
    """status.allocatable[resource] as a number; None when missing or unreadable."""
    status = node.get("status") if isinstance(node, Mapping) else None
    found = status.get("allocatable") if isinstance(status, Mapping) else None
    return _quantity(found.get(resource)) if isinstance(found, Mapping) else None


_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20))


def shown_quantity(value: Decimal, resource: str = "") -> str:
    """A quantity as Kubernetes writes it: whole numbers, millicores, and bytes in the largest binary unit that fits."""
    if value != value.to_integral_value():
        return f"{int(value * 1000)}m" if value * 1000 == (value * 1000).to_integral_value() else str(value)
    whole = int(value)
    if resource == "memory" or resource.startswith(("hugepages-", "ephemeral-storage")):
        for suffix, size in _BINARY:
            if whole and whole % size == 0:
                return f"{whole // size}{suffix}"
        if whole >= 2**30:  # "7.45Gi" rather than 8000000000: a reader compares it with the request
            return f"{whole / 2**30:.2f}Gi"
    return str(whole)


def shortfalls(node: Node, requests: Mapping[str, Any], *, missing_is_short: bool) -> list[str]:
    """`<have> <resource> allocatable, <want> requested` for each resource the node has less of than asked.
    Without `missing_is_short`, a missing amount is no shortfall (a Node that says nothing of it), nor is a zero of a
    device plugin's resource (a name with a domain: the plugin may be restarting); the kubelet's own (cpu, memory,
    hugepages-2Mi) it counts itself, and a node reporting 0 hugepages has none configured."""
    found = []
    for resource, wanted in sorted(requests.items()):
        want = _quantity(wanted)
        if want is None or want <= 0:
            continue
        have = allocatable(node, resource)
        if not missing_is_short and (have is None or (not have and "/" in resource)):
            continue
        if (have or Decimal(0)) < want:
            found.append(f"{shown_quantity(have or Decimal(0), resource)} {resource} allocatable, {shown_quantity(want, resource)} requested")
    return found


def pod_shortfalls(node: Node, requests: Mapping[str, Any], shares: Mapping[str, Decimal]) -> list[str]:
    """Why `node` cannot take a category's pod asking `requests` (pod_requests), one text a resource; empty: it can.
    The one rule of discovery, at render and in the Workflow controller. kube-scheduler's NodeResourcesFit places a pod
    where allocatable less the requests of the pods already bound there (daemonsets, others' workloads) covers it; nvcre
    reads only the Node's allocatable, so where a request was fitted to the nodes (`shares`: the catalog's
    fitRequests.share of each fitted resource) the node must allocate enough that the pod asks at most that share, the
    rest being its other pods' (a 79Gi node beside an 81Gi one whose 80% set the 64Gi asked: left out, not kept to be
    found unschedulable). A request given as is (no share) is checked against allocatable alone: other pods' requests
    may still leave it no room on a busy node, which no Node says (held_by_others reads them, where the pods can be
    read). A missing amount is no shortfall (shortfalls)."""
    found = []
    for resource, wanted in sorted(requests.items()):
        if short := shortfalls(node, {resource: wanted}, missing_is_short=False):
            found.extend(short)
            continue
        share, want, have = shares.get(resource), _quantity(wanted), allocatable(node, resource)
        if share is not None and want is not None and have and want > have * share:
            found.append(f"{shown_quantity(have, resource)} {resource} allocatable, {shown_quantity(want, resource)} requested: "
                         f"more than the {share:.0%} a pod may ask, the rest being the node's other pods' (daemonsets)")
    return found


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """Whether one of the tolerations matches the taint (the scheduler's rule: an empty key with Exists matches all)."""
    for toleration in tolerations:
        if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
            continue
        exists = (toleration.get("operator") or "Equal") == "Exists"
        if not toleration.get("key"):
            if exists:
                return True
            continue
        if toleration.get("key") == taint.get("key") and (exists or str(toleration.get("value") or "") == str(taint.get("value") or "")):
            return True
    return False


def taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint.get('value')}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def _requests(containers: Iterable[Any]) -> dict[str, Decimal]:
    """Each resource the containers request, summed (a limit alone stands for its request, as the API server sets it)."""
    requests: dict[str, Decimal] = {}
    for container in containers:
        resources = (container.get("resources") or {}) if isinstance(container, Mapping) else {}
        asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for resource, value in asked.items():
            if (amount := _quantity(value)) is not None:
                requests[resource] = requests.get(resource, Decimal(0)) + amount
    return requests


def pod_requested(pod: Mapping[str, Any]) -> dict[str, Decimal]:
    """What kube-scheduler counts a pod (a Pod object or its spec) as requesting: its containers' requests summed
    (native sidecars' too), or a plain init container's if more."""
    given = pod.get("spec")
    spec: Mapping[str, Any] = given if isinstance(given, Mapping) else pod
    inits = [init for init in spec.get("initContainers") or [] if isinstance(init, Mapping)]
    requests = _requests([*(spec.get("containers") or []), *(init for init in inits if init.get("restartPolicy") == "Always")])
    for init in inits:
        if init.get("restartPolicy") != "Always":
            for resource, amount in _requests([init]).items():
                requests[resource] = max(requests.get(resource, Decimal(0)), amount)
    return requests


def room_view(pod: Mapping[str, Any]) -> dict[str, Any]:
    """What held_by_others reads of a pod, and names it by: its name, namespace and uid, its node and phase, and its
    containers' resources (an init container's restartPolicy: a native sidecar's are summed). The rest of another
    team's pod (its managedFields, env, volumes) is not kept: a 1,000-node fleet holds tens of thousands."""
    meta, spec, status = (part if isinstance(part := pod.get(key), Mapping) else {} for key in ("metadata", "spec", "status"))

    def containers(key: str, *fields: str) -> list[dict[str, Any]]:
        return [{field: container[field] for field in fields if field in container}
                for container in spec.get(key) or [] if isinstance(container, Mapping)]

    view: dict[str, Any] = {"metadata": {key: meta[key] for key in ("name", "namespace", "uid") if key in meta},
                            "spec": {key: value for key, value in (("nodeName", spec.get("nodeName")),
                                                                   ("containers", containers("containers", "resources")),
                                                                   ("initContainers", containers("initContainers", "resources", "restartPolicy")))
                                     if value},
                            "status": {"phase": status["phase"]} if "phase" in status else {}}
    return view


def _holds_room(pod: Mapping[str, Any]) -> bool:
    """Whether a pod bound to a node counts against its room: every one but those finished (Succeeded, Failed)."""
    status = pod.get("status")
    return not (isinstance(status, Mapping) and status.get("phase") in (SUCCEEDED, FAILED))


def held_by_others(node: Node, requests: Mapping[str, Any], others: Iterable[Mapping[str, Any]]) -> list[str]:
    """Why `node`, which by its own object could take a pod asking `requests` (pod_shortfalls says nothing), has no
    room for it now: for each resource the requests of `others` (the pods bound to it, not the run's own; finished
    ones hold nothing) leave less of than asked, `8 of 8 nvidia.com/gpu requested by team-a/trainer-0, team-a/trainer-1`.
    kube-scheduler's NodeResourcesFit rule, as the Node's allocatable less its pods' requests; empty: room enough. A
    resource the Node does not list is judged by its own object (shortfalls), not here. The one rule for a busy node:
    discovery's NodeBusy and the Kubernetes runner's word on a pod left Pending."""
    holding = [(pod, pod_requested(pod)) for pod in others if isinstance(pod, Mapping) and _holds_room(pod)]
    found = []
    for resource, wanted in sorted(requests.items()):
        want, have = _quantity(wanted), allocatable(node, resource)
        if want is None or want <= 0 or have is None:
            continue
        holders = [(pod, asked[resource]) for pod, asked in holding if asked.get(resource, Decimal(0)) > 0]
        taken = sum((amount for _, amount in holders), Decimal(0))
        if taken and have - taken < want:
            names = [f"{pod_meta.get('namespace') or 'default'}/{pod_meta.get('name')}"
                     for pod, _ in sorted(holders, key=lambda held: -held[1])
                     if isinstance(pod_meta := pod.get("metadata"), Mapping)]
            found.append(f"{shown_quantity(taken, resource)} of {shown_quantity(have, resource)} {resource} requested by "
                         f"{listed(names, 3)}, {shown_quantity(want, resource)} needed")
    return found


def cannot_host(node: Node, pod: Mapping[str, Any]) -> str | None:
    """Why this node could never take `pod` (a pod spec), by its own object; None when nothing on it says so."""
    tolerations = [t for t in pod.get("tolerations") or [] if isinstance(t, Mapping)]
    if is_cordoned(node) and not tolerates(tolerations, CORDON_TAINT):  # the scheduler's NodeUnschedulable rule
        return "cordoned (spec.unschedulable)"
    refused = [taint_text(t) for t in node_taints(node)
               if isinstance(t, Mapping) and t.get("effect") in BLOCKING_EFFECTS and not tolerates(tolerations, t)]
    if refused:
        return f"taint {', '.join(refused)} not tolerated"
    short = shortfalls(node, pod_requested(pod), missing_is_short=True)
    return "; ".join(short) if short else None
