"""Pod and container pieces shared by the TrainJob and batch shapes: placement, resources, volumes, env.

Everything here reads a WorkloadRunSpec (already rendered from the catalog, so its env, extended resources,
tolerations and claims carry the per-platform and per-architecture overrides) plus a Placement.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api import WorkloadRunSpec
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.platform import GPU_RESOURCE, HOSTNAME_LABEL
from nvcre_tui.engine.workloads.data import PerNic, PodOverride, pod_data
from nvcre_tui.engine.workloads.placement import LABEL_JOB, LABEL_MANAGED_BY, LABEL_ROLE, Placement, child_name

Obj = dict[str, Any]
SHM_VOLUME = "dshm"
CONFIG_VOLUME = "config"
CONFIG_MOUNT = "/config"
NIC_RESOURCE = "nvidia.com/mlnxnics"
CONTAINER = "node"  # Kubeflow Trainer injects its env and mounts into the container named "node"


class WorkloadError(InputError):
    """A WorkloadRun that cannot be expressed as manifests (bad input: one line naming the field)."""


def env_list(spec: WorkloadRunSpec, extra: list[Obj] | None = None) -> list[Obj]:
    """The run's env (name order as rendered), then `extra` entries whose names are not taken."""
    env = [{"name": var.name, "value": var.value} for var in spec.env or []]
    taken = {item["name"] for item in env}
    return env + [item for item in extra or [] if item["name"] not in taken]


def _amount(value: int | str) -> str | None:
    text = str(value).strip()
    return None if text in ("", "0") else text


def extended_amounts(spec: WorkloadRunSpec) -> dict[str, str]:
    """GPU, NIC, EFA, RDMA ... amounts per node; a 0 means "do not request" (mlnxPerNode=0 opts out)."""
    amounts = {name: text for name, value in (spec.extended_resources or {}).items() if (text := _amount(value))}
    if GPU_RESOURCE not in amounts and spec.gpus_per_node:
        amounts[GPU_RESOURCE] = str(spec.gpus_per_node)
    if spec.nic_resource_name and spec.mlnx_per_node:
        amounts.setdefault(spec.nic_resource_name, str(spec.mlnx_per_node))
    return dict(sorted(amounts.items()))


def requested_nics(spec: WorkloadRunSpec) -> int:
    """How many NICs a GPU pod requests (nvidia.com/mlnxnics or the run's nicResourceName)."""
    amounts = extended_amounts(spec)
    value = amounts.get(spec.nic_resource_name or NIC_RESOURCE) or amounts.get(NIC_RESOURCE) or "0"
    return int(value) if value.isdigit() else 0


def worker_resources(spec: WorkloadRunSpec) -> Obj:
    """Container resources of a GPU pod: cpu/memory as given, extended resources as requests = limits."""
    base = spec.resources.to_wire() if spec.resources else {}
    amounts = extended_amounts(spec)
    resources: Obj = {
        "limits": {**(base.get("limits") or {}), **amounts},
        "requests": {**(base.get("requests") or {}), **amounts},
    }
    if spec.resource_claims:
        resources["claims"] = [{"name": claim} for claim in spec.resource_claims]
    return resources


def claim_template_name(placement: Placement) -> str:
    """The ResourceClaimTemplate the ComputeDomain controller creates for this run's channel."""
    return child_name(placement.job, "-channel")


def pod_claims(spec: WorkloadRunSpec, placement: Placement) -> list[Obj] | None:
    """Pod resourceClaims: each claim the catalog names takes the ComputeDomain's channel template."""
    if not spec.resource_claims:
        return None
    template = claim_template_name(placement)
    return [{"name": claim, "resourceClaimTemplateName": template} for claim in spec.resource_claims]


def affinity(placement: Placement, one_per_node: bool) -> Obj:
    """Pinned to the group's nodes; `one_per_node` also keeps two GPU pods of the run off one node."""
    hostnames = sorted({placement.hostname(node) for node in placement.nodes})
    result: Obj = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": hostnames}]}]}}}
    if one_per_node:
        result["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {LABEL_JOB: placement.job_label, LABEL_ROLE: "node"}}, "topologyKey": HOSTNAME_LABEL}]}
    return result


def _pod_overrides(placement: Placement) -> list[PodOverride]:
    return [item for item in pod_data().overrides if item.when.matches(placement.platform, placement.architecture)]


def pod_annotations(spec: WorkloadRunSpec, placement: Placement) -> dict[str, str]:
    """Annotations of the GPU pods from catalog/_workloads/pods.yaml (secondary networks); a per-NIC
    network follows the NICs the pod actually requests (none for a run that takes no NICs, e.g. DCGM)."""
    nics = requested_nics(spec)
    result: dict[str, str] = {}
    for item in _pod_overrides(placement):
        for key, value in item.annotations.items():
            if isinstance(value, PerNic):
                if not nics:
                    result.pop(key, None)
                    continue
                value = ",".join([value.per_nic] * nics)
            result[key] = value
    return result


def pod_template(spec: WorkloadRunSpec, placement: Placement, role: str, pod: Obj) -> Obj:
    """A pod template: labels, the GPU pods' platform annotations, the spec."""
    meta: Obj = {"labels": pod_labels(placement, role)}
    if role == "node" and (annotations := pod_annotations(spec, placement)):
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": pod}


def tolerations(spec: WorkloadRunSpec, placement: Placement, role: str = "node") -> list[Obj] | None:
    """The catalog's tolerations, the platform's (GPU pods), and one per taintSelector (the target nodes
    all carry those taints)."""
    result = [dict(item) for item in spec.tolerations or []]
    if role == "node":
        result += [dict(t) for item in _pod_overrides(placement) for t in item.tolerations if t not in result]
    for taint in placement.taint_selectors:
        toleration: Obj = {"key": taint.key, "operator": "Equal" if taint.value is not None else "Exists"}
        if taint.value is not None:
            toleration["value"] = taint.value
        if taint.effect:
            toleration["effect"] = taint.effect
        if toleration not in result:
            result.append(toleration)
    return result or None


def config_map_name(placement: Placement) -> str:
    """The ConfigMap holding the run's inline config files (mounted at /config)."""
    return child_name(placement.job, "-config")


def config_files(spec: WorkloadRunSpec) -> dict[str, str] | None:
    """Inline config files: `{inline: {file: text}}` or the map of files itself; None with a configMapRef."""
    config = spec.config or {}
    if not config or "configMapRef" in config:
        return None
    files = config.get("inline", config)
    if not isinstance(files, dict) or not all(isinstance(text, str) for text in files.values()):
        raise WorkloadError("spec.config: expected a map of file name to text (or inline / configMapRef)")
    return dict(files)


def volumes(spec: WorkloadRunSpec, placement: Placement) -> list[Obj]:
    """/dev/shm as an in-memory emptyDir, the config ConfigMap, then the run's own volumes."""
    shm: Obj = {"medium": "Memory"}
    if spec.shm_size_limit:
        shm["sizeLimit"] = spec.shm_size_limit
    result: list[Obj] = [{"name": SHM_VOLUME, "emptyDir": shm}]
    config = spec.config or {}
    if config:
        ref = config.get("configMapRef")
        name = ref.get("name") if isinstance(ref, dict) else config_map_name(placement)
        result.append({"name": CONFIG_VOLUME, "configMap": {"name": name, "defaultMode": 0o755}})
    return result + [dict(item) for item in spec.volumes or []]


def volume_mounts(spec: WorkloadRunSpec) -> list[Obj]:
    """Mounts matching `volumes`."""
    result: list[Obj] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    if spec.config:
        result.append({"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT})
    return result + [dict(item) for item in spec.volume_mounts or []]


def pod_labels(placement: Placement, role: str) -> dict[str, str]:
    """Labels on every pod: the nvcre Job, the pod's role, and the gang scheduler's queue."""
    labels = {LABEL_MANAGED_BY: "nvcre", LABEL_JOB: placement.job_label, LABEL_ROLE: role}
    return {**labels, **queue_label(placement)}


def queue_label(placement: Placement) -> dict[str, str]:
    """{queueLabelKey: queue} under a gang scheduler, else {}."""
    gang = placement.gang
    return {gang.queue_label_key: gang.queue} if gang else {}


def workload_labels(spec: WorkloadRunSpec, placement: Placement) -> dict[str, str]:
    """Labels of the workload object itself (TrainJob / batch Job): ours, workloadMetadata, the queue."""
    extra = (spec.workload_metadata.labels if spec.workload_metadata else None) or {}
    return {LABEL_MANAGED_BY: "nvcre", LABEL_JOB: placement.job_label, **extra, **queue_label(placement)}


def metadata(name: str, placement: Placement, labels: dict[str, str] | None = None) -> Obj:
    """Top-level object metadata, owned by the nvcre Job."""
    meta: Obj = {"name": name, "namespace": placement.namespace,
                 "labels": labels or {LABEL_MANAGED_BY: "nvcre", LABEL_JOB: placement.job_label}}
    if placement.owner_references:
        meta["ownerReferences"] = placement.owner_references
    return meta


def worker_container(spec: WorkloadRunSpec, command: list[str] | None, env: list[Obj]) -> Obj:
    """The GPU container: image, command, env, resources, /dev/shm; IPC_LOCK for RDMA memory registration."""
    container: Obj = {"name": CONTAINER, "image": spec.image}
    if command:
        container["command"] = command
    container.update(env=env, resources=worker_resources(spec), volumeMounts=volume_mounts(spec))
    security: Obj = {"capabilities": {"add": ["IPC_LOCK"]}}
    if spec.privileged:
        security["privileged"] = True
    container["securityContext"] = security
    return container


def pod_spec(spec: WorkloadRunSpec, placement: Placement, containers: list[Obj], *, role: str,
             restart_policy: str, init_containers: list[Obj] | None = None, extra_volumes: list[Obj] | None = None) -> Obj:
    """A pod spec pinned to the group, with tolerations, gang scheduler, pull secrets and claims."""
    pod: Obj = {"restartPolicy": restart_policy, "terminationGracePeriodSeconds": 30,
                "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                "affinity": affinity(placement, one_per_node=role == "node")}
    if placement.gang:
        pod["schedulerName"] = placement.gang.scheduler_name
    if (found := tolerations(spec, placement, role)) is not None:
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
