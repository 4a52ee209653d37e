"""What the engine reads of the JobSet Kubeflow Trainer makes of a TrainJob, to tell which controller a TrainJob with
no pods waits for: the Trainer's (no JobSet made) or JobSet's (a JobSet made, never reconciled). Read by name only,
with `get` on jobsets and batch Jobs, as `setup init` grants the engine; nvcre never writes a JobSet."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.vocabulary import JOBSET_CONTROLLER_NAME
from nvcre_tui.engine.runners.kubernetes.create import JOBSET
from nvcre_tui.engine.store.errors import NotFound, StoreError
from nvcre_tui.engine.store.protocol import BATCH_JOB, ResourceStore

Obj = dict[str, Any]

__all__ = ["jobset_of", "jobset_reconciled"]


async def jobset_of(store: ResourceStore, trainjob: Obj) -> tuple[bool, Obj | None]:
    """Whether the Trainer's controller made `trainjob`'s JobSet (its name and namespace), as it does on its first
    reconcile, and that JobSet when it was read. Made, unread (None), too where the engine cannot tell (not allowed to
    read JobSets, a read failing): never a false verdict of no controller."""
    meta = trainjob["metadata"]
    try:
        return True, await store.get(JOBSET, meta["name"], meta.get("namespace") or "default")
    except NotFound:
        return False, None
    except StoreError:
        return True, None


async def jobset_reconciled(store: ResourceStore, jobset: Obj) -> bool:
    """Whether a JobSet controller has reconciled `jobset`: its status written (replicatedJobsStatus, which its first
    reconcile writes; conditions, restarts) or a child Job of it made (`<jobset>-<replicatedJob>-0`, the name JobSet
    gives it, read by name: the engine may not list Jobs). True too where the engine cannot tell (a read failing) or
    where JobSet's controller is not meant to (spec.managedBy another, such as MultiKueue): never a false verdict of
    no controller. An empty status the server defaulted is none."""
    if any((jobset.get("status") or {}).values()):
        return True
    spec = jobset.get("spec") or {}
    if spec.get("managedBy") not in (None, "", JOBSET_CONTROLLER_NAME):
        return True
    meta = jobset["metadata"]
    for replicated in spec.get("replicatedJobs") or []:
        if not isinstance(replicated, dict) or not replicated.get("name") or replicated.get("replicas") == 0:
            continue
        try:
            await store.get(BATCH_JOB, f"{meta['name']}-{replicated['name']}-0", meta.get("namespace") or "default")
        except NotFound:
            continue
        except StoreError:
            return True
        return True
    return False
