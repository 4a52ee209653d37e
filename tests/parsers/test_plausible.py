"""A value no hardware measures is no measurement: `nvcre parse` and the engine took any finite value, and one row's
busbw of 1e308 GB/s passed `value >= 400`. Each metric's plausible values are data beside its name and unit
(parsers.measurements.METRICS' bounds); through PARSERS a result outside them fails ImplausibleMeasurement, naming the
value and the bound. Real output is never refused: every fixture, and a GB200 NVL72's 850 GB/s, reads as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.judging.measure import UNMEASURED_REASONS, measure
from nvcre_tui.engine.parsers import IMPLAUSIBLE, PARSERS, ParseError
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, METRICS, STEP_TIME, implausible
from tests.parsers.golden import inputs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Two ranks, a whole run (its footer printed), the largest size's out-of-place busbw BUSBW.
NCCL = """\
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   4101 on gpu-node-01 device  0 [0000:18:00] NVIDIA GB200
#  Rank  1 Group  0 Pid   4102 on gpu-node-02 device  0 [0000:18:00] NVIDIA GB200
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    50.00   20.97   20.97      0    50.00   20.97   20.97      0
     2097152        524288     float     sum      -1    90.00   23.30   BUSBW      0    90.00   23.30   23.30      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 22.1
#
"""


def _kind(path: Path) -> str | None:
    return next((kind for kind in ("nccl", "dcgm", "training") if path.name.startswith(kind)), None)


def test_a_busbw_of_1e308_fails_nvcre_parse_naming_the_value_and_the_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "big.txt").write_text(NCCL.replace("BUSBW", "1e+308"))
    assert main(["parse", "nccl", str(tmp_path / "big.txt")]) == 1
    out = capsys.readouterr().out
    [verdict] = [line for line in out.splitlines() if line.startswith("verdict")]
    assert re.search(r"FAILED ImplausibleMeasurement: busBandwidthGBps 1e\+308 GB/s is above 10000 GB/s, past any GPU interconnect", verdict), verdict
    # the value as the verdict says it, not its 309 digits: they made the per-size table and the summary thousands of
    # columns wide
    [summary] = [line for line in out.splitlines() if line.startswith("busBandwidthGBps")]
    assert summary.split() == ["busBandwidthGBps", "1e+308"] and "0" * 20 not in out, summary


def test_a_gb200_nvl72s_bus_bandwidth_passes() -> None:
    result = PARSERS["nccl"](NCCL.replace("BUSBW", "850.12"))
    assert result.failure is None and result.measurements()[BUS_BANDWIDTH] == 850.12
    assert implausible(BUS_BANDWIDTH, 0.0) is None  # a single rank's busbw (its factor is 0)


def test_no_fixture_of_real_output_is_refused_as_implausible() -> None:
    read = 0
    for path in inputs():
        kind = _kind(path)
        if kind is None:
            continue
        try:
            result = PARSERS[kind](path.read_text(errors="replace"))
        except ParseError:
            continue
        read += bool(result.measurements())
        assert result.failure is None or result.failure.reason != IMPLAUSIBLE, (path.name, result.failure)
    assert read > 20, read


def test_a_step_time_of_zero_is_no_measurement() -> None:
    log = re.sub(r"elapsed time per iteration \(ms\): [0-9.]+", "elapsed time per iteration (ms): 0.0",
                 (FIXTURES / "training_megatron_8b.log").read_text())
    result = PARSERS["training"](log)
    assert result.failure is not None and result.failure.reason == IMPLAUSIBLE, result.failure
    assert f"{STEP_TIME} 0 s is not above 0 s" in result.failure.message, result.failure.message


def test_the_engine_stores_no_implausible_value_and_blames_no_node_for_it() -> None:
    """measure(): its failure is one that blames no node by itself (UNMEASURED_REASONS, as unreadable output), and the
    value is not kept among the measurements a threshold, the report or the history would read."""
    measured = measure("nccl", NCCL.replace("BUSBW", "1e+308").splitlines())
    failure = measured.finished_failure()
    assert failure is not None and failure.reason == IMPLAUSIBLE and failure.reason in UNMEASURED_REASONS
    assert BUS_BANDWIDTH not in measured.measurements and measured.measurements, measured.measurements


def test_every_metric_has_its_bound_and_negative_values_are_outside_it() -> None:
    for key in METRICS:
        assert implausible(key, -1.0) is not None and implausible(key, float("nan")) is not None, key
    assert implausible(BUS_BANDWIDTH, 900.0) is None and implausible("notAMetric", 1e308) is None
