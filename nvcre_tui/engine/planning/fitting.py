"""A workload's cpu and memory requests fitted to the nodes it runs on (a catalog entry's `fitRequests`).

The catalog's figures (Megatron's 64 CPUs and 500Gi) suit the servers they were written for; a node allocating less
(an 8x L40S server of 512 GB keeps under 500Gi allocatable, and clouds reserve more) could never take the pod, and the
run would wait out its pending bound to fail Unschedulable with nothing learnt. So a pod asks the catalog's figure, or,
where the category's smallest node allocates less, `share` of that node's allocatable, the rest left to the
daemonsets every node runs. A node whose share is below the entry's `least` cannot run the workload at all: the
requests are fitted to the smallest node that can, and discovery then leaves out each node of which they ask more than
`share` (fit.pod_shortfalls; InsufficientResources, named: a DIMM gone, a daemonset reserving more), so 254 nodes are
certified and the 2 small ones named rather than the whole category refused. Only where no node can is the category refused, in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_FLOOR, Decimal

from nvcre_tui.engine.api.base import ResourceRequirements
from nvcre_tui.engine.api.fit import allocatable, shown_quantity
from nvcre_tui.engine.api.nodes import Node, node_name
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.planning.catalog import CatalogEntry
from nvcre_tui.engine.units import parse_quantity

FITTED = ("cpu", "memory")
_GIB, _MIB = Decimal(2**30), Decimal(2**20)


class FitError(ValueError):
    """No node of the category leaves its pods the workload's least."""


def _rounded_down(value: Decimal, resource: str) -> str:
    """A request as a quantity, rounded down: whole CPUs (millicores below one), whole Gi of memory (Mi below one)."""
    if resource == "cpu":
        whole = value.to_integral_value(ROUND_FLOOR)
        return str(int(whole)) if whole >= 1 else f"{int((value * 1000).to_integral_value(ROUND_FLOOR))}m"
    if value >= _GIB:
        return f"{int((value / _GIB).to_integral_value(ROUND_FLOOR))}Gi"
    return f"{int((value / _MIB).to_integral_value(ROUND_FLOOR))}Mi"


def _amounts(nodes: Sequence[Node], resource: str) -> list[tuple[Decimal, str]]:
    """(allocatable, name) of each node saying how much of `resource` it allocates, smallest first (an unknown amount
    is no limit: such a node is not counted)."""
    return sorted((amount, node_name(node)) for node in nodes if (amount := allocatable(node, resource)))


def fitted_requests(spec: WorkloadRunSpec, entry: CatalogEntry, nodes: Sequence[Node]) -> dict[str, str] | None:
    """The requests of `spec` with its cpu and memory fitted by the entry's `fitRequests` to the smallest of `nodes`
    that can give a pod the entry's least (None without a fit: the entry has none, or the spec requests nothing).
    FitError when no node can."""
    fit, resources = entry.fit_requests, spec.resources
    if fit is None or resources is None or resources.requests is None:
        return None
    requests = resources.requests.to_wire()
    share = Decimal(str(fit.share))
    for resource in FITTED:
        if (wanted := requests.get(resource)) is None or not (sized := _amounts(nodes, resource)):
            continue
        least = getattr(fit.least, resource)

        def asked(have: Decimal, wanted: str = wanted, resource: str = resource) -> str:
            room = have * share
            return _rounded_down(room, resource) if room < parse_quantity(wanted) else wanted

        able = [have for have, _ in sized if least is None or parse_quantity(asked(have)) >= parse_quantity(least)]
        if not able:
            have, name = sized[-1]
            who = f"node {name}" if len(sized) == 1 else f"the largest of its {len(sized)} nodes, {name},"
            raise FitError(f"{entry.key} needs at least {least} {resource} a pod, and {who} allocates "
                           f"{shown_quantity(have, resource)}, of which it may ask {fit.share:.0%} "
                           f"({asked(have)}; the rest is its daemonsets'): target nodes with more")
        requests[resource] = asked(able[0])
    return requests


def fitted_shares(share: object) -> dict[str, Decimal]:
    """The share of a node's allocatable a pod may ask of each fitted resource (discovery's `shares`), from the
    entry's fitRequests.share or the Workflow's ANNOTATION_FITTED_SHARE; {} without one, or one not a share (an
    edited annotation: the nodes are then checked against allocatable alone)."""
    try:
        value = Decimal(str(share))
        return dict.fromkeys(FITTED, value) if share is not None and 0 < value <= 1 else {}
    except ArithmeticError:  # not a number (Decimal's InvalidOperation; a NaN refuses comparison)
        return {}


def with_requests(spec: WorkloadRunSpec, requests: dict[str, str] | None) -> WorkloadRunSpec:
    """`spec` asking `requests` (fitted_requests'; None: as it is), its limits kept."""
    if requests is None or spec.resources is None:
        return spec
    fitted = ResourceRequirements.model_validate({**spec.resources.to_wire(), "requests": requests})
    return spec.model_copy(update={"resources": fitted})
