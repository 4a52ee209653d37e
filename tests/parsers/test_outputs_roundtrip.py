"""Write with sim.outputs, read with engine.parsers: the numbers come back within print precision."""

from __future__ import annotations

import os
import random
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.parsers import parse_dcgm, parse_nccl, parse_training
from nvcre_tui.engine.sim.outputs import (
    LAYOUTS,
    LEVEL4_TESTS,
    GpuOutcome,
    NcclFormat,
    NcclRun,
    StepSample,
    write_dcgm_json,
    write_dcgm_table,
    write_megatron_log,
    write_nccl_json,
    write_nccl_log,
    write_nemo_log,
)
from nvcre_tui.engine.sim.outputs.dcgm import DISPLAY_3X

# The suite is deterministic (derandomized, 60 examples); NVCRE_EXPLORE=<n> runs n fresh random examples instead.
EXPLORE = int(os.environ.get("NVCRE_EXPLORE", "0"))
PROPERTY = settings(max_examples=EXPLORE or 60, deadline=None, derandomize=not EXPLORE, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
PROGRAMS = ("all_reduce_perf_mpi", "all_gather_perf", "alltoall_perf_mpi", "sendrecv_perf", "reduce_scatter_perf")
START = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)


@st.composite
def nccl_runs(draw: st.DrawFn) -> tuple[NcclRun, NcclFormat, dict[int, list[float]]]:
    sizes = sorted(draw(st.sets(st.sampled_from([2**power for power in range(3, 35)]), min_size=1, max_size=10)))
    cycles = draw(st.integers(1, 3))
    ranks = draw(st.integers(2, 16))
    # Bandwidths below 10000 GB/s print with fixed decimals in every layout: print precision is <= 0.05.
    busbw = {(size, cycle): draw(st.floats(0.01, 9000.0)) for size in sizes for cycle in range(cycles)}
    wrong = {size: draw(st.sampled_from([0, 0, 0, 1, 7, 4096])) for size in sizes}
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    run = NcclRun(
        program=draw(st.sampled_from(PROGRAMS)),
        ranks=[(f"node-{rank // 8:02d}", rank % 8, "NVIDIA H100 80GB HBM3") for rank in range(ranks)],
        sizes=sizes,
        busbw=lambda size, cycle: busbw[(size, cycle)],
        cycles=cycles,
        wrong=wrong,
        check=layout != "modern" or draw(st.booleans()),
        dtype=draw(st.sampled_from(["float", "uint8", "half"])),
        redop=draw(st.sampled_from(["sum", None])),
    )
    fmt = NcclFormat(
        layout=layout,
        strip_hash=draw(st.booleans()),
        timestamps=START if draw(st.booleans()) else None,
        info_noise=draw(st.sampled_from([0.0, 0.3])),
        truncate_after=draw(st.none() | st.integers(0, len(sizes) * cycles)),
    )
    by_size = {size: [busbw[(size, cycle)] for cycle in range(cycles)] for size in sizes}
    return run, fmt, by_size


@PROPERTY
@given(nccl_runs(), st.integers(0, 2**32))
def test_nccl_table_round_trip(case: tuple[NcclRun, NcclFormat, dict[int, list[float]]], seed: int) -> None:
    run, fmt, by_size = case
    total = len(run.sizes) * run.cycles
    written = total if fmt.truncate_after is None else min(fmt.truncate_after, total)
    if written == 0:
        return  # a log cut before its first row has nothing to read back (covered by NoDataCollected tests)
    result = parse_nccl(write_nccl_log(run, random.Random(seed), fmt))
    assert result.row_count == written
    order = [size for _ in range(run.cycles) for size in run.sizes][:written]
    seen: dict[int, list[float]] = {}
    for size in order:
        seen.setdefault(size, []).append(by_size[size][len(seen.get(size, []))])
    expected = max(sum(values) / len(values) for values in seen.values())
    assert result.bus_bandwidth_gbps == pytest.approx(expected, abs=0.051)
    assert [(device.host, device.device, device.gpu_name) for _, device in sorted(result.ranks.items())] == \
        [tuple(rank) for rank in run.ranks]
    corrupt = run.check and any(run.wrong[size] for size in order)  # type: ignore[index]
    assert (result.failure is not None) == corrupt


@PROPERTY
@given(nccl_runs(), st.integers(0, 2**32))
def test_nccl_json_round_trip(case: tuple[NcclRun, NcclFormat, dict[int, list[float]]], seed: int) -> None:
    run, _, by_size = case
    result = parse_nccl(write_nccl_json(run, random.Random(seed)))
    assert result.row_count == len(run.sizes) * run.cycles
    expected = max(sum(values) / len(values) for values in by_size.values())
    assert result.bus_bandwidth_gbps == pytest.approx(expected, abs=1e-5)


WORDS = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)


@st.composite
def dcgm_cases(draw: st.DrawFn) -> tuple[list[int], dict[tuple[str, int], GpuOutcome], str]:
    gpus = list(range(draw(st.integers(1, 8))))
    tests = [name for _, name in LEVEL4_TESTS if name != "software"]
    outcomes = {}
    for _ in range(draw(st.integers(0, 6))):
        key = (draw(st.sampled_from(tests)), draw(st.sampled_from(gpus)))
        status = draw(st.sampled_from(["Fail", "Warn", "Skip", "Pass"]))
        warning = f"synthetic fault {draw(WORDS)} on GPU {key[1]}" if status in ("Fail", "Warn") else None
        outcomes[key] = GpuOutcome(status, warning)
    return gpus, outcomes, draw(st.sampled_from(["3", "4", "hybrid", "table3", "table4"]))


@PROPERTY
@given(dcgm_cases(), st.integers(0, 2**32))
def test_dcgm_round_trip(case: tuple[list[int], dict[tuple[str, int], GpuOutcome], str], seed: int) -> None:
    gpus, outcomes, version = case
    if version.startswith("table"):
        text = write_dcgm_table(gpus, outcomes, version=version[-1])
    else:
        text = write_dcgm_json(gpus, outcomes, random.Random(seed), version=version)
    shown = {key: value for key, value in outcomes.items() if version not in ("3", "table3") or key[0] in DISPLAY_3X}
    failed = sorted({gpu for (_, gpu), outcome in shown.items() if outcome.status == "Fail"})
    result = parse_dcgm(text)
    if not failed:
        assert result.passed, result.failure
        return
    assert result.failure is not None and list(result.failure.gpus) == failed
    first_test = min((key for key, outcome in shown.items() if outcome.status == "Fail"), key=_order)[0]
    reasons = [outcome.warning for (test, _), outcome in shown.items() if test == first_test and outcome.status == "Fail"]
    assert any(reason is not None and reason in result.failure.message for reason in reasons)


def _order(key: tuple[str, int]) -> tuple[int, int]:
    names = [name for _, name in LEVEL4_TESTS]
    return names.index(key[0]), key[1]


SAMPLES = st.lists(st.builds(StepSample, st.floats(0.1, 100.0), st.none() | st.floats(1.0, 2000.0),
                             st.floats(0.01, 20.0)), min_size=2, max_size=30)


@PROPERTY
@given(SAMPLES, st.sampled_from(["megatron", "nemo"]), st.integers(0, 2**32), st.data())
def test_training_round_trip(samples: list[StepSample], framework: str, seed: int, data: st.DataObject) -> None:
    interval = 10 if framework == "megatron" else 1
    first = interval
    steps = [first + index * interval for index in range(len(samples))]
    checkpoints = {step: data.draw(st.floats(0.5, 60.0)) for step in data.draw(st.sets(st.sampled_from(steps), max_size=3))}
    writer = write_megatron_log if framework == "megatron" else write_nemo_log
    lines = writer(samples, random.Random(seed), start=START, checkpoints=checkpoints, first_step=first)
    result = parse_training(lines)
    assert result.step_count == len(samples) and result.framework == framework
    precision = 5e-5 if framework == "megatron" else 5e-4
    body = samples[1:]  # warmup: the first logged step after the start (10 steps = 1 line for Megatron)
    assert result.avg_step_time_sec == pytest.approx(sum(s.step_time_sec for s in body) / len(body), abs=precision)
    tflops = [s.tflops_per_gpu for s in body if s.tflops_per_gpu is not None and s.tflops_per_gpu >= 0.05]  # warm-up left out
    if tflops:
        assert result.avg_tflops_per_gpu == pytest.approx(sum(tflops) / len(tflops), abs=0.051)
    assert result.goodput is not None and result.checkpoints_saved == len(checkpoints)
    assert result.goodput.checkpoint_save_sec == pytest.approx(sum(checkpoints.values()), abs=0.01)
    assert 0.0 <= result.goodput.ratio <= 1.0


def test_writers_replay_exactly_from_a_seed() -> None:
    """A scenario seed must reproduce the same bytes; a different seed must not."""
    run = NcclRun("all_reduce_perf_mpi", [("n1", d, "GPU") for d in range(4)], [1024, 4096], busbw={1024: 1.0, 4096: 3.0})
    fmt = NcclFormat(timestamps=START, info_noise=0.5)
    samples = [StepSample(2.0, 500.0, 9.0)] * 4
    writers = [
        lambda seed: "".join(write_nccl_log(run, random.Random(seed), fmt)),
        lambda seed: write_nccl_json(run, random.Random(seed)),
        lambda seed: write_dcgm_json([0, 1], {("memory", 1): GpuOutcome("Fail", "ECC")}, random.Random(seed)),
        lambda seed: "".join(write_megatron_log(samples, random.Random(seed), start=START)),
        lambda seed: "".join(write_nemo_log(samples, random.Random(seed), start=START)),
    ]
    for write in writers:
        assert write(11) == write(11) and write(11) != write(12)
