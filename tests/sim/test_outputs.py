"""Simulated output read back by the real parsers (engine.measure) gives what the physics planned."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.parsers import parse_nccl
from nvcre_tui.engine.runners.simulated import render_output
from nvcre_tui.engine.sim.outputs import LAYOUTS, NcclFormat, kubelet_prefix
from nvcre_tui.engine.sim.physics import RunPlan
from nvcre_tui.engine.sim.scenario import default_scenario

from .helpers import ALL_NODES, dcgm_run, nccl_run, plan, scenario, training_run

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
DEFAULT = default_scenario()
PRINT_PRECISION = 0.01  # busbw cells print 2 decimals below 1000 GB/s; averages of rounded cells stay within this


def lines_of(run_plan: RunPlan, fmt: NcclFormat = NcclFormat()) -> list[str]:
    """The whole log as the runner serves it: kubelet-timestamped lines."""
    timed = render_output(run_plan, START, random.Random(f"out:{run_plan.spec.name}"), fmt)
    return [kubelet_prefix(START + timedelta(seconds=t)) + text for t, text in timed]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("strip_hash", [False, True])
@pytest.mark.parametrize(("nodes", "program", "test_type"), [
    (["gpu-node-07"], "all_reduce_perf", "all_reduce"),
    (ALL_NODES[:4], "all_gather_perf_mpi", "all_gather"),
    (ALL_NODES[8:16], "alltoall_perf", "alltoall"),
])
def test_nccl_round_trip_gives_the_planned_peak(layout: str, strip_hash: bool, nodes: list[str], program: str, test_type: str) -> None:
    run_plan = plan(DEFAULT, nccl_run(f"rt-{test_type}", nodes, program=program, test_type=test_type, env={"NCCL_DEBUG": "INFO"}))
    nccl = run_plan.nccl
    assert nccl is not None
    result = measure("nccl", lines_of(run_plan, NcclFormat(layout, strip_hash)))
    assert result.failure is None
    assert result.measurements["busBandwidthGBps"] == pytest.approx(nccl.measured_busbw, abs=PRINT_PRECISION)
    planned_alg = max(sum(nccl.algbw[(s, c)] for c in range(nccl.cycles)) / nccl.cycles for s in nccl.sizes)
    assert result.measurements["algBandwidthGBps"] == pytest.approx(planned_alg, abs=PRINT_PRECISION)


def test_nccl_output_names_every_rank_and_row() -> None:
    run_plan = plan(DEFAULT, nccl_run("ranks", ALL_NODES[:2]))
    parsed = parse_nccl(lines_of(run_plan))
    assert run_plan.nccl is not None
    assert parsed.row_count == len(run_plan.nccl.sizes) * run_plan.nccl.cycles
    assert sorted({device.host for device in parsed.ranks.values()}) == ALL_NODES[:2] and len(parsed.ranks) == 16


def test_failed_nccl_run_shows_partial_rows_and_the_failing_host() -> None:
    scn = scenario(faults=[{"type": "xid", "node": "gpu-node-03", "gpu": 1, "at": "200s"}])
    run_plan = plan(scn, nccl_run("xid", ALL_NODES[:4]))
    assert run_plan.outcome.kind == "failed"
    lines = lines_of(run_plan)
    assert any("gpu-node-03" in line and "NCCL WARN" in line for line in lines)
    assert any("Exit code:    134" in line for line in lines)
    parsed = parse_nccl(lines)
    assert run_plan.nccl is not None
    assert 0 < parsed.row_count < len(run_plan.nccl.sizes) * run_plan.nccl.cycles


@pytest.mark.parametrize(("image", "json"), [
    ("nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04", True),
    ("nvcr.io/nvidia/cloud-native/dcgm:3.3.9-1-ubuntu22.04", True),
    ("nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04", True),
    ("nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04", False),
])
def test_dcgm_round_trip_fails_only_the_xid_node(image: str, json: bool) -> None:
    scn = scenario(faults=[*[f.to_wire() for f in DEFAULT.faults], {"type": "xid", "node": "gpu-node-09", "gpu": 2}])
    slow = measure("dcgm", lines_of(plan(scn, dcgm_run("slow", "gpu-node-07", image=image, json=json))))
    assert slow.failure is None  # health checks pass while performance fails: the product's point
    broken = measure("dcgm", lines_of(plan(scn, dcgm_run("xid", "gpu-node-09", image=image, json=json))))
    assert broken.failure is not None and "GPU 2" in broken.failure.message


def test_training_round_trip_gives_the_planned_step_time_and_throughput() -> None:
    run_plan = plan(DEFAULT, training_run("train", ALL_NODES[:8], iters=60, save_interval=30))
    training = run_plan.training
    assert training is not None
    result = measure("training", lines_of(run_plan))
    assert result.failure is None
    steady = [sample.step_time_sec for sample in training.samples[1:]]  # Megatron's first interval is warmup
    assert result.measurements["avgStepTimeSec"] == pytest.approx(sum(steady) / len(steady), abs=1e-4)
    tflops = [sample.tflops_per_gpu for sample in training.samples[1:] if sample.tflops_per_gpu is not None]  # warm-up left out
    assert len(tflops) == len(training.samples) - 1  # every sample reports throughput
    assert result.measurements["avgTFLOPsPerGPU"] == pytest.approx(sum(tflops) / len(tflops), abs=0.1)
    assert 0 < result.measurements["goodputRatio"] < 1  # two checkpoint saves cost time


def test_failed_training_run_ends_with_the_torchrun_root_cause() -> None:
    scn = scenario(faults=[{"type": "flaky", "node": "gpu-node-05", "probability": 1.0}])
    lines = lines_of(plan(scn, training_run("flaky", ALL_NODES[:8])))
    assert "ChildFailedError" in "\n".join(lines) and any(line.endswith("  host      : gpu-node-05") for line in lines)
