"""WorkloadRun -> the Kubernetes objects that run it: a Kubeflow Trainer TrainJob + TrainingRuntime, or
(without the Trainer CRDs) a batch/v1 Indexed Job + headless Service; plus ConfigMap and ComputeDomain.

Pure functions of (WorkloadRunSpec, Placement): the Kubernetes runner creates what they return, in order;
`nvcre certification render --workloads` prints it.

May import api, planning, errors and inputs (the catalog's _workloads files are read by the one strict loader).
"""

from __future__ import annotations

import json
from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import DRA_VERSIONS, TRAINER_API_VERSION
from nvcre_tui.engine.workloads.batch import BATCH_API_VERSION, headless_service, indexed_job, service_name
from nvcre_tui.engine.workloads.batch import ssh_keys as batch_ssh_keys
from nvcre_tui.engine.workloads.container import WorkloadError
from nvcre_tui.engine.workloads.env import standalone_spec
from nvcre_tui.engine.workloads.fabric import FabricOutcome, fabric_outcome, with_fabric
from nvcre_tui.engine.workloads.lookup import pods_selector, result_pod_selector, trainer_served
from nvcre_tui.engine.workloads.data import claim_data
from nvcre_tui.engine.workloads.objects import compute_domain, compute_domain_name, config_map, device_claim_templates
from nvcre_tui.engine.workloads.placement import Placement, kept_name, owner_reference, placement_for, workload_name
from nvcre_tui.engine.workloads.trainjob import runtime_name, train_job, training_runtime

Obj = dict[str, Any]


def group_run_spec(spec: WorkloadRunSpec, nodes: list[str]) -> WorkloadRunSpec:
    """The spec of one group's WorkloadRun, as the Job controller writes it: its nodes and their count."""
    return spec.model_copy(update={"target": spec.target.model_copy(update={"node_names": list(nodes)}) if spec.target else None,
                                   "num_nodes": len(nodes)})


def workload_manifests(spec: WorkloadRunSpec, placement: Placement, *, trainer: bool = True,
                       ssh_keys: tuple[str, str] | None = None, dra_version: str = DRA_VERSIONS[0]) -> list[Obj]:
    """Every object of the run in creation order (what is referenced comes first).

    trainer=True: [ConfigMap], [ComputeDomain], [ResourceClaimTemplate...], TrainingRuntime, TrainJob.
    trainer=False: [ConfigMap], [ComputeDomain], [ResourceClaimTemplate...], [ssh key Secret (mpi)], Service, Job (batch/v1).
    ssh_keys = (private, public) fills the batch MPI key Secret; None leaves it empty (offline render).
    dra_version: the resource.k8s.io version the ResourceClaimTemplates are written in (the server's, by discovery).
    WorkloadError when the spec cannot be expressed (e.g. an MPI other than OpenMPI).
    """
    spec = with_fabric(spec, placement)  # what only the nodes tell (GKE's TCPXO networks): workloads/fabric.py
    objects = [obj for obj in (config_map(spec, placement), compute_domain(spec, placement)) if obj]
    objects += device_claim_templates(spec, placement, dra_version)
    if trainer:
        objects += [training_runtime(spec, placement), train_job(spec, placement)]
    else:
        if spec.framework.kind == "mpi":
            objects.append(batch_ssh_keys(placement, *(ssh_keys or ("", ""))))
        objects += [headless_service(placement, spec.framework.kind), indexed_job(spec, placement)]
    # Plain JSON data with no shared sub-objects: callers may patch one without touching another, and
    # YAML output has no anchors.
    return json.loads(json.dumps(objects))


def workload_object_names(job: str) -> list[tuple[str, str, str]]:
    """(apiVersion, kind, name) of the objects `workload_manifests` may make for the runs of nvcre Job `job` (or of
    a standalone WorkloadRun of that name) that the engine deletes when the Job goes and no garbage collector follows
    its ownerReferences, the pods' owners first: the TrainJob or batch Job, TrainingRuntime and Service; then those
    of `kept_object_names`. Its ConfigMaps and ssh key Secret stay for a garbage collector (the engine may not delete
    those kinds); their names carry the Job's uid, so a later Job of the same name never meets them (placement.kept_name)."""
    where = Placement(job=job, namespace="", nodes=(), platform="", architecture="")
    return [
        (TRAINER_API_VERSION, "TrainJob", workload_name(job)),
        (BATCH_API_VERSION, "Job", workload_name(job)),
        (TRAINER_API_VERSION, "TrainingRuntime", runtime_name(where)),
        ("v1", "Service", service_name(where)),
    ]


def kept_object_names(job: str, uid: str) -> list[tuple[str, str]]:
    """(kind, name) of the DRA objects `workload_manifests` may make for the runs of nvcre Job `job` of uid `uid` (or
    of a standalone WorkloadRun), named with that uid (placement.kept_name), that the engine deletes after its
    `workload_object_names` where no garbage collector does: its ComputeDomain and its own ResourceClaimTemplates (one
    per claim catalog/_workloads/claims.yaml names; not the ComputeDomain's channel template, its driver's). The
    API version is the server's to say (ResourceClaimTemplates are served in one of several)."""
    where = Placement(job=job, namespace="", nodes=(), platform="", architecture="", owner={"uid": uid})
    return [("ComputeDomain", compute_domain_name(where)),
            *(("ResourceClaimTemplate", kept_name(where, template.suffix)) for template in claim_data().templates)]


__all__ = [
    "FabricOutcome", "Placement", "WorkloadError", "fabric_outcome", "group_run_spec", "kept_object_names", "owner_reference", "placement_for", "pods_selector", "result_pod_selector",
    "standalone_spec", "trainer_served", "workload_manifests", "workload_name", "workload_object_names",
]
