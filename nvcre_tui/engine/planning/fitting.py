"""A workload's cpu and memory requests fitted to the nodes it runs on (a catalog entry's `fitRequests`).

The catalog's figures (Megatron's 64 CPUs and 500Gi) suit the servers they were written for; a node allocating less
(an 8x L40S server of 512 GB keeps under 500Gi allocatable, and clouds reserve more) could never take the pod, and the
run would wait out its pending bound to fail Unschedulable with nothing learnt. So a pod asks the catalog's figure, or,
where the category's smallest node allocates less, `share` of that node's allocatable, the rest left to the
daemonsets every node runs. Below the entry's `least` the workload cannot run at all: refused when it is planned.
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
    """The category's smallest node leaves its pods less than the workload's least."""


def _rounded_down(value: Decimal, resource: str) -> str:
    """A request as a quantity, rounded down: whole CPUs (millicores below one), whole Gi of memory (Mi below one)."""
    if resource == "cpu":
        whole = value.to_integral_value(ROUND_FLOOR)
        return str(int(whole)) if whole >= 1 else f"{int((value * 1000).to_integral_value(ROUND_FLOOR))}m"
    if value >= _GIB:
        return f"{int((value / _GIB).to_integral_value(ROUND_FLOOR))}Gi"
    return f"{int((value / _MIB).to_integral_value(ROUND_FLOOR))}Mi"


def _smallest(nodes: Sequence[Node], resource: str) -> tuple[str, Decimal] | None:
    """The node allocating least of `resource`, and how much; None when no node says (an unknown amount is no limit)."""
    found = [(amount, node_name(node)) for node in nodes if (amount := allocatable(node, resource))]
    if not found:
        return None
    amount, name = min(found)
    return name, amount


def fit_requests(spec: WorkloadRunSpec, entry: CatalogEntry, nodes: Sequence[Node]) -> WorkloadRunSpec:
    """`spec` with its cpu and memory requests fitted to `nodes` by the entry's `fitRequests` (as it is without one,
    and for a resource it requests none of). FitError when a fitted request is below the entry's least."""
    fit, resources = entry.fit_requests, spec.resources
    if fit is None or resources is None or resources.requests is None:
        return spec
    requests = resources.requests.to_wire()
    for resource in FITTED:
        if (wanted := requests.get(resource)) is None or (smallest := _smallest(nodes, resource)) is None:
            continue
        name, have = smallest
        room = have * Decimal(str(fit.share))
        if room < parse_quantity(wanted):
            requests[resource] = _rounded_down(room, resource)
        least = getattr(fit.least, resource)
        if least is not None and parse_quantity(requests[resource]) < parse_quantity(least):
            raise FitError(f"{entry.key} needs at least {least} {resource} a pod, and node {name} allocates "
                           f"{shown_quantity(have, resource)}, of which it may ask {fit.share:.0%} "
                           f"({requests[resource]}; the rest is its daemonsets'): target nodes with more")
    fitted = ResourceRequirements.model_validate({**resources.to_wire(), "requests": requests})
    return spec.model_copy(update={"resources": fitted})
