"""Container pieces of a run's GPU pods: env, resources (GPU, NIC, EFA, RDMA, DRA claims), config,
/dev/shm and the run's own volumes.

Everything here reads a WorkloadRunSpec, already rendered from the catalog, so its env, extended resources
and claims carry the per-platform and per-architecture overrides.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.fit import extended_amounts
from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import RESOURCE_NIC
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.names import config_key_problem
from nvcre_tui.engine.workloads.data import claim_data
from nvcre_tui.engine.workloads.placement import Placement, kept_name

Obj = dict[str, Any]
SHM_VOLUME = "dshm"
CONFIG_VOLUME = "config"
CONFIG_MOUNT = "/config"
CONTAINER = "node"  # Kubeflow Trainer injects its env and mounts into the container named "node"


class WorkloadError(InputError):
    """A WorkloadRun that cannot be expressed as manifests (bad input: one line naming the field)."""


def env_list(spec: WorkloadRunSpec, extra: list[Obj] | None = None) -> list[Obj]:
    """The run's env (name order as rendered), then `extra` entries whose names are not taken."""
    env = [{"name": var.name, "value": var.value} for var in spec.env or []]
    taken = {item["name"] for item in env}
    return env + [item for item in extra or [] if item["name"] not in taken]


def requested_nics(spec: WorkloadRunSpec) -> int:
    """How many NICs a GPU pod requests (nvidia.com/mlnxnics or the run's nicResourceName)."""
    amounts = extended_amounts(spec)
    value = amounts.get(spec.nic_resource_name or RESOURCE_NIC) or amounts.get(RESOURCE_NIC) or "0"
    return int(value) if value.isdigit() else 0


def worker_resources(spec: WorkloadRunSpec) -> Obj:
    """Container resources of a GPU pod: cpu/memory as given, extended resources as requests = limits."""
    base = spec.resources.to_wire() if spec.resources else {}
    amounts = extended_amounts(spec)
    resources: Obj = {
        "limits": {**(base.get("limits") or {}), **amounts},
        "requests": {**(base.get("requests") or {}), **amounts},
    }
    if claims := claimed(spec):
        resources["claims"] = [{"name": claim} for claim in claims]
    return resources


def claim_template_name(placement: Placement) -> str:
    """The ResourceClaimTemplate the ComputeDomain controller creates for this run's channel."""
    return kept_name(placement, "-channel")


def device_claim_template_name(placement: Placement, claim: str) -> str | None:
    """The run's own ResourceClaimTemplate (`<job><suffix>`) of a claim catalog/_workloads/claims.yaml names; None for
    any other claim (the ComputeDomain's channel)."""
    template = claim_data().find(claim)
    return kept_name(placement, template.suffix) if template else None


def channel_claims(spec: WorkloadRunSpec) -> list[str]:
    """The run's claims that take the ComputeDomain's channel (those claims.yaml does not name); none with MNNVL off
    (`enableMNNVL: false`): the channel is an IMEX channel, which only multi-node NVLink uses (NCCL_MNNVL_ENABLE=0 goes
    over the network between nodes), so such a run gets no ComputeDomain and needs no DRA driver for GPUs. The catalog
    gives GB200/GB300 runs the claim whatever their MNNVL option."""
    if spec.enable_mnnvl is False:
        return []
    return [claim for claim in spec.resource_claims or [] if claim_data().find(claim) is None]


def device_claims(spec: WorkloadRunSpec) -> list[str]:
    """The run's claims of its own ResourceClaimTemplates (those claims.yaml names: AWS GB300's RoCE NICs)."""
    return [claim for claim in spec.resource_claims or [] if claim_data().find(claim) is not None]


def claimed(spec: WorkloadRunSpec) -> list[str]:
    """The claims the run's GPU pods make, in the spec's order: its device claims, and its channel claims (channel_claims)."""
    taken = {*device_claims(spec), *channel_claims(spec)}
    return [claim for claim in spec.resource_claims or [] if claim in taken]


def pod_claims(spec: WorkloadRunSpec, placement: Placement) -> list[Obj] | None:
    """Pod resourceClaims: a claim claims.yaml names takes the run's own template of it (AWS GB300's RoCE NICs), every
    other the ComputeDomain's channel template."""
    if not (claims := claimed(spec)):
        return None
    return [{"name": claim, "resourceClaimTemplateName": device_claim_template_name(placement, claim) or claim_template_name(placement)}
            for claim in claims]


def config_map_name(placement: Placement) -> str:
    """The ConfigMap holding the run's inline config files (mounted at /config)."""
    return kept_name(placement, "-config")


def config_files(spec: WorkloadRunSpec) -> dict[str, str] | None:
    """Inline config files: `{inline: {file: text}}` or the map of files itself; None with a configMapRef."""
    config = spec.config or {}
    if not config or "configMapRef" in config:
        return None
    files = config.get("inline", config)
    if not isinstance(files, dict) or not all(isinstance(text, str) for text in files.values()):
        raise WorkloadError("spec.config: expected a map of file name to text (or inline / configMapRef)")
    for name in files:
        # the files become the keys of the run's ConfigMap; the API server refuses the ConfigMap (422) otherwise
        if (problem := config_key_problem(str(name))) is not None:
            raise WorkloadError(f"spec.config: file name {str(name)!r} {problem}")
    return {str(name): str(text) for name, text in files.items()}


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
