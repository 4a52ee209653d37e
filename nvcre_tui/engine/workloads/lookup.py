"""How the runner finds a run's objects on the cluster: the pods of a run, the pod whose log carries the
result (MPI launcher or rank 0), and whether the Trainer's kinds are served (else the batch fallback)."""

from __future__ import annotations

from collections.abc import Iterable

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import JOBSET_GROUP, JOBSET_VERSION, KEY_COMPLETION_INDEX, LABEL_JOB, LABEL_ROLE
from nvcre_tui.engine.workloads.placement import Placement

TRAINER_RESOURCES = frozenset({"trainjobs", "trainingruntimes"})
JOBSET_GROUP_VERSION = f"{JOBSET_GROUP}/{JOBSET_VERSION}"


def trainer_served(resources: Iterable[str]) -> bool:
    """Whether the resource names served under trainer.kubeflow.org/v1alpha1 (API discovery) include the
    TrainJob and TrainingRuntime kinds; otherwise the runner uses the batch fallback."""
    return TRAINER_RESOURCES <= set(resources)


def pods_selector(placement: Placement) -> str:
    """Label selector of every pod of the run."""
    return f"{LABEL_JOB}={placement.job_label}"


def result_pod_selector(spec: WorkloadRunSpec, placement: Placement, *, trainer: bool) -> str:
    """Label selector of the pod whose log the parser reads: the MPI launcher under the Trainer, else the
    pod of completion index 0 (rank 0 for torch, mpirun for the batch MPI fallback, the node for exec)."""
    if trainer and spec.framework.kind == "mpi":
        return f"{pods_selector(placement)},{LABEL_ROLE}=launcher"
    return f"{pods_selector(placement)},{LABEL_ROLE}=node,{KEY_COMPLETION_INDEX}=0"
