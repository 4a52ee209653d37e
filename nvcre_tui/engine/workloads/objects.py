"""The objects a run needs besides its workload: the config ConfigMap and, on NVL72-class systems
(GB200 / GB300), the DRA ComputeDomain whose channel claim gives the pods multi-node NVLink."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import COMPUTE_DOMAIN_API_VERSION
from nvcre_tui.engine.workloads.container import claim_template_name, config_files, config_map_name
from nvcre_tui.engine.workloads.placement import Placement, kept_name
from nvcre_tui.engine.workloads.pod import metadata

Obj = dict[str, Any]


def compute_domain_name(placement: Placement) -> str:
    """`<job>-compute-domain`."""
    return kept_name(placement, "-compute-domain")


def compute_domain(spec: WorkloadRunSpec, placement: Placement) -> Obj | None:
    """The ComputeDomain when the catalog gave the run a channel claim (comm variant
    `compute-domain-channel`, torch variant `compute-domain`); None otherwise."""
    if not spec.resource_claims:
        return None
    return {"apiVersion": COMPUTE_DOMAIN_API_VERSION, "kind": "ComputeDomain", "metadata": metadata(compute_domain_name(placement), placement),
            # channel.allocationMode is left to its default (Single): drivers before it existed would refuse the field
            "spec": {"numNodes": spec.num_nodes, "channel": {"resourceClaimTemplate": {"name": claim_template_name(placement)}}}}


def config_map(spec: WorkloadRunSpec, placement: Placement) -> Obj | None:
    """The ConfigMap of the run's inline config files; None without inline config."""
    files = config_files(spec)
    if files is None:
        return None
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(config_map_name(placement), placement), "data": files}
