"""The same certification on the simulator and on the emulator (Kubernetes runner + test kubelet) ends in
the same verdicts and the same blamed nodes: the engine finds the node at fault in the pods' output and
status, never in a field the simulator hands it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.runner.harness import comparable, emulator_report, simulator_report

# case -> what it covers; each case's expected.json (the simulator's golden) pins the verdict itself.
CASES = {
    "threshold-pass-two-metrics": "success",
    "slow-gpu-intra-node": "a slow rank (slow GPU): threshold violation on its node",
    "unschedulable-intra-node": "pods unschedulable: SchedulingBlocked naming the node",
    "xid-mid-run-full-scale": "an XID mid-run: the NCCL WARN line names the node",
    "dcgm-xid-names-test-and-gpu": "an XID in the dcgmi log",
    "flaky-every-iteration": "a flaky node, every iteration",
    "training-slow-gpu-tflops": "Megatron output, a slow GPU",
    "hang-full-scale-timeout": "a hang: the Job times out and the runner stops the run",
    "hang-training-stalled": "a training that stops logging steps: WorkloadStalled, read from the pods' logs as it runs",
    "cordon-mid-run-full-scale": "a node cordoned mid-run: the node health CEL, on the Node watch event, fails the Job",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_batch_fallback_gives_the_simulators_verdicts(case: str, tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, case, trainer=False))
    assert comparable(report) == comparable(simulator_report(case))
    if case != "unschedulable-intra-node":
        assert "batch/jobs" in objects["created"] and "trainer.kubeflow.org/trainjobs" not in objects["created"]
    failed_runs = [r for r in objects["WorkloadRun"] if r["status"]["phase"] == "Failed"]
    deleted = [item for item in objects["deleted"] if item.startswith("batch/jobs/")]
    # A failed (or stopped) run's workload is deleted to free the GPUs; a finished one keeps its pods for the logs.
    assert len(deleted) == len(failed_runs)
    assert objects["denied"] == [], "the engine needs only what `nvcre setup init` grants"
    assert (objects["warned"], objects["incomplete"]) == ([], []), "every object written whole, as the server's schemas take it"
    if case == "xid-mid-run-full-scale":
        # The log names the pod's hostname (`<job>-workload-2`), never the node: the runner maps it.
        run = objects["WorkloadRun"][0]["status"]
        tail = objects["Job"][0]["status"]["failureLog"]["tail"]
        assert run["failedNode"] == "gpu-node-03" and "-workload-2:" in tail and "gpu-node-03:" not in tail
    if case == "cordon-mid-run-full-scale":
        # The cordon reached the engine as a Node watch event (another client wrote it); the CEL flagged it.
        job = objects["Job"][0]["status"]
        assert [(f["name"], f["reason"]) for f in job["failedNodes"]] == [("gpu-node-02", "HardwareFailureDetected")]
        assert any(c["type"] == "HardwareFailed" and c["status"] == "True" for c in job["conditions"])


@pytest.mark.parametrize("case", ["xid-mid-run-full-scale", "slow-gpu-intra-node", "dcgm-xid-names-test-and-gpu", "training-slow-gpu-tflops"])
def test_trainjobs_give_the_simulators_verdicts(case: str, tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, case, trainer=True))
    assert comparable(report) == comparable(simulator_report(case))
    assert {"trainer.kubeflow.org/trainjobs", "trainer.kubeflow.org/trainingruntimes"} <= set(objects["created"])
    assert "batch/jobs" not in objects["created"]
    assert objects["denied"] == [], "the engine needs only what `nvcre setup init` grants"
    assert (objects["warned"], objects["incomplete"]) == ([], []), "every object written whole, as the server's schemas take it"
