"""A run whose workload Kueue hands to MultiKueue fails at once, naming the LocalQueue that did it, and leaves nothing.

Kueue's webhook sets spec.managedBy: kueue.x-k8s.io/multikueue on a job queued (kueue.x-k8s.io/queue-name) to a
ClusterQueue with a MultiKueue admission check: MultiKueue dispatches it to a worker cluster, and its pods, pinned to
this cluster's nodes by hostname, never run on the nodes under test. The run waited a minute and failed saying no Job
controller runs on this cluster (blaming kube-controller-manager, which had rightly skipped the Job). Now the runner
reads the workload the server returned (the webhook, here the emulator's mutator, applied) and fails the run then,
its workload deleted, nobody blamed; and a job another controller manages is never judged controller-less."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import LABEL_KUEUE_QUEUE, MULTIKUEUE_CONTROLLER
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import BATCH_JOB, WORKLOADRUN
from tests.runner.harness import denied, gpu_cluster, job_and_its_run
from tests.runner.test_release_dra import NODES, SPEC

Obj = dict[str, Any]
QUEUED = {**{k: v for k, v in SPEC.items() if k != "resourceClaims"}, "workloadMetadata": {"labels": {LABEL_KUEUE_QUEUE: "gpu-queue"}}}


async def _managed_by(folder: Path, manager: str, *, wait: float = 0.0) -> tuple[Obj, list[str], list[str]]:
    """One look at a batch-fallback run whose Job a webhook hands to `manager` (and suspends, as Kueue's does), another
    `wait` seconds later; the run's status, the batch Jobs left and the engine's requests `setup init` does not grant."""
    clock = ManualClock(SIM_START)

    def kueue_webhook(obj: Obj) -> None:
        obj["spec"].update(managedBy=manager, suspend=True)

    async with gpu_cluster(folder, clock) as (server, admin, engine):
        server.registry.mutators[("batch", "jobs")] = kueue_webhook
        _, created = await job_and_its_run(admin, QUEUED, NODES)
        runner = KubernetesRunner(engine, clock, engine, trainer=False)
        try:
            await runner.reconcile_run(created)
            if wait:
                job = await admin.get(BATCH_JOB, "cert-job-workload", "default")
                job["spec"]["suspend"] = False  # admitted by its queue
                await admin.update(BATCH_JOB, job)
                clock.advance(wait)
                await runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default"))
        finally:
            await runner.close()
        run = await admin.get(WORKLOADRUN, "cert-job-run", "default")
        jobs = sorted(j["metadata"]["name"] for j in (await admin.list(BATCH_JOB, "default")).items)
        return dict(run.get("status") or {}), jobs, denied(server.requests)


def test_a_run_multikueue_would_dispatch_elsewhere_fails_at_once_naming_the_local_queue(tmp_path: Path) -> None:
    status, jobs, refused = asyncio.run(_managed_by(tmp_path, MULTIKUEUE_CONTROLLER))
    assert (status["phase"], status["reason"]) == ("Failed", "WorkloadNotCreated"), status
    message = status["message"]
    assert f"spec.managedBy: {MULTIKUEUE_CONTROLLER}" in message and "LocalQueue default/gpu-queue" in message, message
    assert "MultiKueue admission check" in message and "\n" not in message, message
    assert "failedNode" not in status, status  # no node did anything wrong
    assert jobs == [], f"the dispatched Job stays: {jobs}"
    assert refused == []


def test_a_job_another_controller_manages_is_not_judged_controller_less(tmp_path: Path) -> None:
    status, jobs, _ = asyncio.run(_managed_by(tmp_path, "example.com/batch-controller", wait=120))
    assert status["phase"] == "Scheduling" and status.get("reason") != "JobNotSynced", status  # the pods' grace bounds it
    assert jobs, "its Job was deleted"


def test_a_job_another_controller_manages_is_said_to_wait_for_that_controller(tmp_path: Path) -> None:
    """Not for the Job controller (kube-controller-manager), which leaves a Job its spec.managedBy hands elsewhere."""
    status, _, _ = asyncio.run(_managed_by(tmp_path, "example.com/batch-controller", wait=120))
    assert status["message"] == ("no pods yet (0/2): waiting for example.com/batch-controller (the spec.managedBy of "
                                 "Job cert-job-workload) to create them"), status["message"]
