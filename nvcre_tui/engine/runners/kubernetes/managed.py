"""Which controller runs a workload the engine made: its own (the Job controller, the Trainer's), or another that the
workload's spec.managedBy names. nvcre writes no spec.managedBy; Kueue's webhook writes `kueue.x-k8s.io/multikueue` on
a job queued to a ClusterQueue with a MultiKueue admission check, and MultiKueue then runs it on a worker cluster: its
pods, pinned to this cluster's nodes by hostname, would never run on the nodes being certified."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.vocabulary import KUEUE_DEFAULT_QUEUE, LABEL_KUEUE_QUEUE, MULTIKUEUE_CONTROLLER, OWN_WORKLOAD_CONTROLLERS

Obj = dict[str, Any]

__all__ = ["dispatch_refusal", "foreign_manager"]


def foreign_manager(workload: Obj) -> str | None:
    """The controller `workload`'s spec.managedBy hands it to when that is not its own (the Job controller's, the
    Trainer's), else None: such a workload has no status from its own controller, and that says nothing of it."""
    manager = str((workload.get("spec") or {}).get("managedBy") or "")
    return manager if manager and manager not in OWN_WORKLOAD_CONTROLLERS else None


def dispatch_refusal(workload: Obj) -> str | None:
    """Why the run of `workload` (a TrainJob or batch Job as the server returned it, admission webhooks applied) cannot
    certify this cluster's nodes: MultiKueue manages it (spec.managedBy), naming the LocalQueue whose ClusterQueue has
    the MultiKueue admission check that made Kueue's webhook set it; else None."""
    if foreign_manager(workload) != MULTIKUEUE_CONTROLLER:
        return None
    meta = workload["metadata"]
    namespace = meta.get("namespace") or "default"
    queue = (meta.get("labels") or {}).get(LABEL_KUEUE_QUEUE) or KUEUE_DEFAULT_QUEUE
    return (f"{workload.get('kind')} {namespace}/{meta['name']} was given spec.managedBy: {MULTIKUEUE_CONTROLLER} by Kueue's "
            f"webhook (LocalQueue {namespace}/{queue} feeds a ClusterQueue with a MultiKueue admission check): MultiKueue "
            "would run its pods on a worker cluster, not on this cluster's nodes under test; queue nvcre's runs to a "
            "LocalQueue whose ClusterQueue has no MultiKueue admission check")
