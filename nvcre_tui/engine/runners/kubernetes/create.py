"""Creating a run's workload objects on the cluster: what to create (workloads/ renders it), under
which kind, owned by the run's nvcre Job so deleting the Job cascades; idempotent across restarts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import COMPUTE_DOMAIN_GROUP, COMPUTE_DOMAIN_VERSION, DRA_GROUP, DRA_VERSIONS, JOBSET_GROUP, JOBSET_VERSION, TRAINER_GROUP, TRAINER_VERSION
from nvcre_tui.engine.names import NVCRE_GROUP
from nvcre_tui.engine.store.errors import AlreadyExists, Conflict, Forbidden, NotFound
from nvcre_tui.engine.store.protocol import BATCH_JOB, CONFIGMAP, JOB, NODE, SECRET, SERVICE, ResourceKind, ResourceStore
from nvcre_tui.engine.workloads import Placement, owner_reference, placement_for, workload_manifests, workload_name

Obj = dict[str, Any]
TRAINJOB = ResourceKind(TRAINER_GROUP, TRAINER_VERSION, "TrainJob", "trainjobs")
TRAINING_RUNTIME = ResourceKind(TRAINER_GROUP, TRAINER_VERSION, "TrainingRuntime", "trainingruntimes")
# The JobSet the Trainer's controller makes of each TrainJob (same name and namespace, owned by it): read only, to tell
# whether any Trainer controller reconciled the TrainJob (runners/kubernetes); nvcre never writes one.
JOBSET = ResourceKind(JOBSET_GROUP, JOBSET_VERSION, "JobSet", "jobsets")
COMPUTE_DOMAIN = ResourceKind(COMPUTE_DOMAIN_GROUP, COMPUTE_DOMAIN_VERSION, "ComputeDomain", "computedomains")
# A run's own DRA ResourceClaimTemplates (workloads/objects.py), in each version nvcre writes, newest first.
CLAIM_TEMPLATES = tuple(ResourceKind(DRA_GROUP, version, "ResourceClaimTemplate", "resourceclaimtemplates") for version in DRA_VERSIONS)
_KINDS = {(k.api_version, k.kind): k for k in (TRAINJOB, TRAINING_RUNTIME, COMPUTE_DOMAIN, *CLAIM_TEMPLATES, CONFIGMAP, SECRET, SERVICE, BATCH_JOB)}


class ForeignObject(Exception):
    """An object of the run's name exists and is not ours (another owner): never adopted, never replaced."""


def kind_for(obj: Mapping[str, Any]) -> ResourceKind:
    return _KINDS[(obj["apiVersion"], obj["kind"])]


def workload_kind(trainer: bool) -> ResourceKind:
    """The object that runs the pods: the TrainJob, or the batch/v1 Job of the fallback."""
    return TRAINJOB if trainer else BATCH_JOB


async def owner_of(store: ResourceStore, run: Obj) -> Obj:
    """The run's nvcre Job (its controller owner, by uid: not a new Job of the same name); a standalone WorkloadRun,
    or one whose Job is gone, owns its objects itself."""
    meta = run["metadata"]
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith(f"{NVCRE_GROUP}/"):
            try:
                job = await store.get(JOB, ref["name"], meta.get("namespace"))
            except NotFound:
                break
            if job["metadata"].get("uid") == ref.get("uid"):
                return job
            break
    return run


async def group_nodes(store: ResourceStore, names: Sequence[str]) -> list[Obj]:
    """The group's Node objects that exist (a missing one is for the caller to report)."""
    found = []
    for name in names:
        try:
            found.append(await store.get(NODE, name))
        except NotFound:
            continue
    return found


def placement(owner: Obj, nodes: Sequence[Obj], spec: WorkloadRunSpec, server_version: tuple[int, int] | None = None) -> Placement:
    return placement_for(owner, nodes, gang=spec.gang_scheduler, priority_class=spec.priority_class_name, server_version=server_version)


async def create_all(store: ResourceStore, spec: WorkloadRunSpec, where: Placement, *, trainer: bool,
                     ssh_keys: tuple[str, str] | None = None, dra_version: str = DRA_VERSIONS[0]) -> list[Obj]:
    """Create every object in order. An object that already exists and is controlled by the same Job (its controller
    ownerReference) is ours from an earlier try (a restart, a retried create): kept as it is. ForeignObject otherwise."""
    created = []
    owner_uid = (where.owner or {}).get("uid")
    for obj in workload_manifests(spec, where, trainer=trainer, ssh_keys=ssh_keys, dra_version=dra_version):
        kind = kind_for(obj)
        try:
            created.append(await store.create(kind, obj))
        except AlreadyExists:
            if kind is SECRET:  # never read (RBAC grants create only): its name carries this Job's uid (kept_name)
                created.append(obj)
                continue
            existing = await store.get(kind, obj["metadata"]["name"], obj["metadata"].get("namespace"))
            # ours only by its controller reference, as Kubernetes controllers adopt (a plain one is anyone's to write)
            owners = {ref.get("uid") for ref in existing["metadata"].get("ownerReferences") or [] if isinstance(ref, dict) and ref.get("controller") is True}
            if owner_uid not in owners:
                raise ForeignObject(f"{obj['kind']} {obj['metadata']['namespace']}/{obj['metadata']['name']} exists and "
                                    f"is not owned by {where.job}: delete it or rename the certification") from None
            created.append(existing)
    return created


async def delete_owned(store: ResourceStore, kind: ResourceKind, name: str, namespace: str, owner_uid: str) -> None:
    """Delete the object if it names `owner_uid` among its owners, by its uid (never a namesake made meanwhile)."""
    try:
        found = await store.get(kind, name, namespace)
        if owner_uid and owner_uid in {ref.get("uid") for ref in found["metadata"].get("ownerReferences") or []}:
            await store.delete(kind, name, namespace, uid=found["metadata"].get("uid"))
    except (NotFound, Conflict):
        pass  # never made, already gone (a garbage collector was first), or not ours
    except Forbidden:
        pass  # RBAC trimmed below what `setup init` grants: left for a garbage collector, the run still goes


async def delete_workload(store: ResourceStore, run: Obj, owner: Obj, kinds: Sequence[ResourceKind]) -> None:
    """Delete the TrainJob / batch Job `owner` made for `run`: the garbage collector deletes its pods (frees the GPUs)."""
    for kind in kinds:
        await delete_owned(store, kind, workload_name(owner["metadata"]["name"]), run["metadata"].get("namespace") or "default",
                           str(owner["metadata"].get("uid") or ""))


__all__ = ["CLAIM_TEMPLATES", "COMPUTE_DOMAIN", "ForeignObject", "TRAINING_RUNTIME", "TRAINJOB", "create_all", "delete_owned", "delete_workload",
           "group_nodes", "kind_for", "owner_of", "owner_reference", "placement", "workload_kind"]
