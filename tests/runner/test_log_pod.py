"""The pod whose log holds a failure: when the result pod (rank 0) never ran and says nothing, the log of the
pod on the node at fault is read before the pods go, and `status.logRef` names that pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvcre_tui.engine.store.protocol import BATCH_JOB, POD, WORKLOADRUN
from tests.runner.harness import batch_runner_on_gpu_nodes, pods_caught_up

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"  # as the Job controller sets it
SPEC = {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "numNodes": 2, "gpusPerNode": 8,
        "target": {"nodeNames": ["gpu-node-01", "gpu-node-02"]}, "framework": {"torch": {"script": "train.py"}}}


def _pod(job: dict, index: int, status: dict, node: str | None) -> dict:
    template = job["spec"]["template"]
    labels = {**template["metadata"]["labels"], COMPLETION_INDEX: str(index)}
    spec = {**template["spec"], **({"nodeName": node} if node else {})}
    return {"apiVersion": "v1", "kind": "Pod", "status": status, "spec": spec,
            "metadata": {"name": f"{job['metadata']['name']}-{index}", "namespace": "default", "labels": labels,
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
                                              "uid": job["metadata"]["uid"], "controller": True}]}}


RUNNING = {"phase": "Running", "containerStatuses": [{"name": "node", "image": SPEC["image"], "ready": True,
                                                   "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}


async def _spec_run_started(store: Any, runner: Any, name: str) -> dict:
    """WorkloadRun `name` of SPEC in default, looked at once by `runner` (the batch fallback): its workload, the batch Job."""
    run = await store.create(WORKLOADRUN, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
                                           "metadata": {"name": name, "namespace": "default"}, "spec": SPEC})
    await runner.reconcile_run(run)
    workload: dict = (await store.list(BATCH_JOB, "default")).items[0]
    return workload


async def _pods_running(store: Any, workload: dict) -> list[dict]:
    """The pods of `workload`'s two indexes, on SPEC's gpu-node-01 and gpu-node-02, made and Running (as the Job
    controller, the scheduler and the kubelet would leave them); as their status was written."""
    pods = []
    for index, node in ((0, "gpu-node-01"), (1, "gpu-node-02")):
        created = await store.create(POD, _pod(workload, index, RUNNING, node))
        pods.append(await store.patch_status(POD, created["metadata"]["name"], "default", RUNNING))
    return pods


async def test_the_pod_on_the_blamed_node_is_the_log_pod_when_rank_zero_never_ran(tmp_path: Path) -> None:
    async with batch_runner_on_gpu_nodes(tmp_path) as (server, store, runner):
        job = await _spec_run_started(store, runner, "oom-run")
        waiting = {"phase": "Pending", "containerStatuses": [{"name": "node", "image": SPEC["image"], "ready": False,
                                                               "state": {"waiting": {"reason": "ContainerCreating"}}}]}
        oom = {"phase": "Failed", "containerStatuses": [{"name": "node", "image": SPEC["image"], "ready": False, "state": {
            "terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": "2026-01-01T00:01:00Z"}}}]}
        for index, status, node in ((0, waiting, None), (1, oom, "gpu-node-02")):
            created = await store.create(POD, _pod(job, index, status, node))
            await store.patch_status(POD, created["metadata"]["name"], "default", status)
        server.set_pod_log("default", f"{job['metadata']['name']}-1",
                           "2026-01-01T00:00:59.000000000Z torch.OutOfMemoryError: CUDA out of memory on rank 1\n")
        await pods_caught_up(runner, store)
        await runner.reconcile_run(await store.get(WORKLOADRUN, "oom-run", "default"))
        state = (await store.get(WORKLOADRUN, "oom-run", "default"))["status"]
        assert (state["phase"], state["reason"], state["failedNode"]) == ("Failed", "OOMKilled", "gpu-node-02")
        assert state["logRef"] == f"{job['metadata']['name']}-1"
        finished = await store.get(WORKLOADRUN, "oom-run", "default")
        assert any("CUDA out of memory" in line for line in await runner.logs(finished))


def test_a_long_lived_runner_keeps_the_latest_result_pods_only() -> None:
    """`nvcre controller` runs for weeks: one pod object per run it ever saw grew toward its memory limit."""
    from types import SimpleNamespace

    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.kube.podlogs import MAX_PODS
    from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
    from nvcre_tui.engine.store import MemoryStore

    clock = ManualClock()
    runner = KubernetesRunner(MemoryStore(clock), clock, SimpleNamespace(_transport=None))
    for index in range(MAX_PODS + 10):
        runner._remember({"metadata": {"uid": f"run-{index}"}}, {"metadata": {"name": f"pod-{index}"}})
    kept = runner._result_pods
    assert len(kept) == MAX_PODS and "run-9" not in kept and "run-10" in kept and f"run-{MAX_PODS + 9}" in kept
