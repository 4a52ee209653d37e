"""The measurements parsers report: each metric's key, unit and direction, written here once.

A threshold may name only these keys (judging.thresholds); the report, the diagnosis and the console read them
by these names, and show them with these units.
"""

from __future__ import annotations

from dataclasses import dataclass

BUS_BANDWIDTH = "busBandwidthGBps"
ALG_BANDWIDTH = "algBandwidthGBps"
GOODPUT = "goodputRatio"
TFLOPS_PER_GPU = "avgTFLOPsPerGPU"
STEP_TIME = "avgStepTimeSec"
DIAG_TESTS_RUN = "diagTestsRun"
DIAG_TESTS_SKIPPED = "diagTestsSkipped"

# The unit of both NCCL bandwidths, as nccl-tests prints it; views that label bandwidth axes and columns use it.
BANDWIDTH_UNIT = "GB/s"


@dataclass(frozen=True)
class Metric:
    """A measurement a threshold may refer to."""

    key: str
    unit: str
    description: str
    higher_is_better: bool
    count: bool = False  # a number of things (tests): a whole value is printed whole ("10 tests"), never "10.00"

    @property
    def shown_unit(self) -> str:
        """The unit written beside a value: none for a ratio."""
        return "" if self.unit == "0..1" else self.unit


METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(BUS_BANDWIDTH, BANDWIDTH_UNIT, "maximum NCCL bus bandwidth across message sizes", True),
        Metric(ALG_BANDWIDTH, BANDWIDTH_UNIT, "maximum NCCL algorithm bandwidth across message sizes", True),
        Metric(GOODPUT, "0..1", "share of wall time spent on useful training steps", True),
        Metric(TFLOPS_PER_GPU, "TFLOP/s", "average achieved TFLOP/s per GPU", True),
        Metric(STEP_TIME, "s", "average training step time", False),
        Metric(DIAG_TESTS_RUN, "tests", "DCGM diagnostic tests that ran on at least one GPU", True, count=True),
        Metric(DIAG_TESTS_SKIPPED, "tests", "DCGM diagnostic tests skipped or not run on every GPU", False, count=True),
    )
}


def shown_unit(key: str) -> str:
    """The unit written beside a measurement of `key` (none for a key not in METRICS)."""
    metric = METRICS.get(key)
    return metric.shown_unit if metric is not None else ""


def whole_count(key: str, value: float) -> str | None:
    """A measurement of a count metric (Metric.count) that is whole, as a whole number ("10"); None for any other: it is
    exact, so on its side of any threshold, where two decimals ("10.00") read as a rounded rate."""
    metric = METRICS.get(key)
    return f"{value:.0f}" if metric is not None and metric.count and float(value).is_integer() else None


def shown_value(key: str, value: float) -> str:
    """A measurement as people read it: a count whole ("7 tests"), anything else to two decimals with its unit."""
    number = whole_count(key, value) or f"{value:.2f}"
    return f"{number} {shown_unit(key)}".rstrip()
