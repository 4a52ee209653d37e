"""The objects a run needs besides its workload: the config ConfigMap and, on NVL72-class systems
(GB200 / GB300), the DRA ComputeDomain whose channel claim gives the pods multi-node NVLink, and the DRA
ResourceClaimTemplates of its other claims (catalog/_workloads/claims.yaml: AWS GB300's RoCE NICs)."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import COMPUTE_DOMAIN_API_VERSION, DRA_GROUP, DRA_VERSIONS
from nvcre_tui.engine.workloads.container import (WorkloadError, channel_claims, claim_template_name, config_files, config_map_name,
                                                  device_claim_template_name)
from nvcre_tui.engine.workloads.data import DeviceRequest, claim_data
from nvcre_tui.engine.workloads.placement import Placement, kept_name
from nvcre_tui.engine.workloads.pod import metadata

Obj = dict[str, Any]


def compute_domain_name(placement: Placement) -> str:
    """`<job>-compute-domain`."""
    return kept_name(placement, "-compute-domain")


def compute_domain(spec: WorkloadRunSpec, placement: Placement) -> Obj | None:
    """The ComputeDomain when the catalog gave the run a channel claim (comm variant
    `compute-domain-channel`, torch variant `compute-domain`); None otherwise."""
    if not channel_claims(spec):
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


def _request(request: DeviceRequest, version: str) -> Obj:
    """A device request as the DRA version writes it: v1 and v1beta2 under `exactly`, v1beta1 flat."""
    asked: Obj = {"deviceClassName": request.device_class_name, "allocationMode": "ExactCount", "count": request.count}
    return {"name": request.name, **asked} if version == "v1beta1" else {"name": request.name, "exactly": asked}


def device_claim_templates(spec: WorkloadRunSpec, placement: Placement, dra_version: str = DRA_VERSIONS[0]) -> list[Obj]:
    """The run's own ResourceClaimTemplates, one per claim claims.yaml names, in `resource.k8s.io/<dra_version>`."""
    if dra_version not in DRA_VERSIONS:
        raise WorkloadError(f"resource.k8s.io/{dra_version}: nvcre writes ResourceClaimTemplates of {', '.join(DRA_VERSIONS)} only")
    result = []
    for claim in spec.resource_claims or []:
        template, name = claim_data().find(claim), device_claim_template_name(placement, claim)
        if template is None or name is None:
            continue
        requests = [_request(request, dra_version) for request in template.requests]
        result.append({"apiVersion": f"{DRA_GROUP}/{dra_version}", "kind": "ResourceClaimTemplate", "metadata": metadata(name, placement),
                       "spec": {"spec": {"devices": {"requests": requests}}}})
    return result
