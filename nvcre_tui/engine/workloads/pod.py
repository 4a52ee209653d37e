"""Pod pieces shared by the TrainJob and batch shapes: pinning to the group, tolerations, gang scheduling,
labels, platform annotations, object metadata."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import LABEL_HOSTNAME, LABEL_JOB, LABEL_MANAGED_BY, LABEL_ROLE
from nvcre_tui.engine.api.fit import extended_amounts
from nvcre_tui.engine.workloads.container import pod_claims, requested_nics, volumes
from nvcre_tui.engine.workloads.data import PerNic, PodOverride, pod_data
from nvcre_tui.engine.workloads.fabric import fabric_annotations
from nvcre_tui.engine.workloads.placement import Placement

Obj = dict[str, Any]
def affinity(placement: Placement, one_per_node: bool) -> Obj:
    """Pinned to the group's nodes; `one_per_node` also keeps two GPU pods of the run off one node."""
    hostnames = sorted({placement.hostname(node) for node in placement.nodes})
    result: Obj = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": LABEL_HOSTNAME, "operator": "In", "values": hostnames}]}]}}}
    if one_per_node:
        result["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {LABEL_JOB: placement.job_label, LABEL_ROLE: "node"}}, "topologyKey": LABEL_HOSTNAME}]}
    return result


def _pod_overrides(spec: WorkloadRunSpec, placement: Placement) -> list[PodOverride]:
    requested = extended_amounts(spec)
    return [item for item in pod_data().overrides
            if item.when.matches(placement.platform, placement.architecture) and (item.requires is None or item.requires in requested)]


def pod_annotations(spec: WorkloadRunSpec, placement: Placement) -> dict[str, str]:
    """Annotations of the GPU pods from catalog/_workloads/pods.yaml (secondary networks); a per-NIC
    network follows the NICs the pod actually requests (none for a run that takes no NICs, e.g. DCGM); then those of
    the run's fabric (fabrics.yaml), when its nodes let it be rendered."""
    nics = requested_nics(spec)
    result: dict[str, str] = {}
    for item in _pod_overrides(spec, placement):
        for key, value in item.annotations.items():
            if isinstance(value, PerNic):
                if not nics:
                    result.pop(key, None)
                    continue
                value = ",".join([value.per_nic] * nics)
            result[key] = value
    return {**result, **fabric_annotations(spec, placement)}


def pod_template(spec: WorkloadRunSpec, placement: Placement, role: str, pod: Obj) -> Obj:
    """A pod template: labels, the GPU pods' platform annotations, the spec."""
    meta: Obj = {"labels": pod_labels(placement, role)}
    if role == "node" and (annotations := pod_annotations(spec, placement)):
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": pod}


def tolerations(spec: WorkloadRunSpec, placement: Placement) -> list[Obj] | None:
    """The catalog's tolerations, the platform's, and one per taintSelector of the run's target or the placement
    (the target nodes all carry those taints). Every pod of a run, an MPI launcher too, is pinned to its nodes."""
    result = [dict(item) for item in spec.tolerations or []]
    result += [dict(t) for item in _pod_overrides(spec, placement) for t in item.tolerations if t not in result]
    selectors = [*((spec.target.taint_selectors or []) if spec.target else []), *placement.taint_selectors]
    for taint in selectors:
        toleration: Obj = {"key": taint.key, "operator": "Equal" if taint.value is not None else "Exists"}
        if taint.value is not None:
            toleration["value"] = taint.value
        if taint.effect:
            toleration["effect"] = taint.effect
        if toleration not in result:
            result.append(toleration)
    return result or None


def pod_labels(placement: Placement, role: str) -> dict[str, str]:
    """Labels on every pod: the nvcre Job, the pod's role, and the gang scheduler's queue."""
    labels = {LABEL_MANAGED_BY: "nvcre", LABEL_JOB: placement.job_label, LABEL_ROLE: role}
    return {**labels, **queue_label(placement)}


def queue_label(placement: Placement) -> dict[str, str]:
    """{queueLabelKey: queue} under a gang scheduler, else {}."""
    gang = placement.gang
    return {gang.queue_label_key: gang.queue} if gang else {}


def workload_labels(spec: WorkloadRunSpec, placement: Placement) -> dict[str, str]:
    """Labels of the workload object itself (TrainJob / batch Job): workloadMetadata's, then ours and the queue's, which
    it cannot replace (nvcre finds, collects and attributes its objects by them)."""
    extra = (spec.workload_metadata.labels if spec.workload_metadata else None) or {}
    return {**extra, LABEL_MANAGED_BY: "nvcre", LABEL_JOB: placement.job_label, **queue_label(placement)}


def metadata(name: str, placement: Placement, labels: dict[str, str] | None = None) -> Obj:
    """Top-level object metadata, owned by the nvcre Job."""
    meta: Obj = {"name": name, "namespace": placement.namespace,
                 "labels": labels or {LABEL_MANAGED_BY: "nvcre", LABEL_JOB: placement.job_label}}
    if placement.owner_references:
        meta["ownerReferences"] = placement.owner_references
    return meta


def pod_spec(spec: WorkloadRunSpec, placement: Placement, containers: list[Obj], *, role: str,
             restart_policy: str, init_containers: list[Obj] | None = None, extra_volumes: list[Obj] | None = None) -> Obj:
    """A pod spec pinned to the group, with tolerations, gang scheduler, pull secrets and claims."""
    # No workload calls the API server: the namespace's default ServiceAccount token stays out of its pods.
    pod: Obj = {"restartPolicy": restart_policy, "terminationGracePeriodSeconds": 30, "automountServiceAccountToken": False,
                "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                "affinity": affinity(placement, one_per_node=role == "node")}
    if placement.gang:
        pod["schedulerName"] = placement.gang.scheduler_name
    if placement.priority_class:
        pod["priorityClassName"] = placement.priority_class
    if (found := tolerations(spec, placement)) is not None:
        pod["tolerations"] = found
    if spec.image_pull_secrets:
        pod["imagePullSecrets"] = [secret.to_wire() for secret in spec.image_pull_secrets]
    if spec.host_network and role == "node":
        pod.update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
    if init_containers:
        pod["initContainers"] = init_containers
    pod["containers"] = containers
    pod["volumes"] = (volumes(spec, placement) if role == "node" else []) + (extra_volumes or [])
    if role == "node" and (claims := pod_claims(spec, placement)):
        pod["resourceClaims"] = claims
    return pod
