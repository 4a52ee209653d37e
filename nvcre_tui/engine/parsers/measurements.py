"""The measurements parsers report: each metric's key, unit and direction, written here once.

A threshold may name only these keys (judging.thresholds); the report, the diagnosis and the console read them
by these names, and show them with these units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
class Bound:
    """The values a metric can take on any hardware shipping today, with ample room: a value outside is no measurement
    (a misread or mangled output, a broken timer), never judged by a threshold (1e308 GB/s met `value >= 400`)."""

    least: float
    most: float
    why: str  # what puts the most where it is, said beside a value above it
    least_excluded: bool = False  # the least itself is outside too (a step of 0 s)

    def refused(self, value: float) -> str | None:
        """Why `value` is outside ("above 10000"), or None for a plausible one (NaN and infinities never are)."""
        if not math.isfinite(value):
            return "not a finite number"
        if value < self.least or (self.least_excluded and value == self.least):
            return f"{'not above' if self.least_excluded else 'below'} {self.least:g}"
        if value > self.most:
            return f"above {self.most:g}"
        return None


@dataclass(frozen=True)
class Metric:
    """A measurement a threshold may refer to."""

    key: str
    unit: str
    description: str
    higher_is_better: bool
    bound: Bound  # the plausible values: one outside fails its run, unmeasured (parsers.plausible)
    count: bool = False  # a number of things (tests): a whole value is printed whole ("10 tests"), never "10.00"

    @property
    def shown_unit(self) -> str:
        """The unit written beside a value: none for a ratio."""
        return "" if self.unit == "0..1" else self.unit


# The most bus bandwidth any run can measure: NVLink 5 (GB200 NVL72), the fastest GPU interconnect shipping, carries
# 900 GB/s a direction per GPU (its all-reduce busbw reaches 800-900); over ten times that is room for what comes next.
MOST_BUS_BANDWIDTH = 10_000.0
_DIAG_TESTS = Bound(0, 1_000, "dcgmi diag runs a few dozen tests")

METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(BUS_BANDWIDTH, BANDWIDTH_UNIT, "maximum NCCL bus bandwidth across message sizes", True,
               Bound(0, MOST_BUS_BANDWIDTH, "past any GPU interconnect shipping (NVLink 5: 900 GB/s a direction per GPU)")),
        # on two ranks or more, algbw is at most twice busbw (all-gather's factor (n-1)/n is 1/2 at its least)
        Metric(ALG_BANDWIDTH, BANDWIDTH_UNIT, "maximum NCCL algorithm bandwidth across message sizes", True,
               Bound(0, 2 * MOST_BUS_BANDWIDTH, "twice the most bus bandwidth any GPU interconnect carries")),
        Metric(GOODPUT, "0..1", "share of wall time spent on useful training steps", True, Bound(0, 1, "a share of wall time")),
        Metric(TFLOPS_PER_GPU, "TFLOP/s", "average achieved TFLOP/s per GPU", True,
               Bound(0, 40_000, "past any GPU shipping (B300: 15,000 TFLOP/s dense FP4)")),
        Metric(STEP_TIME, "s", "average training step time", False, Bound(0, 86_400, "a step of over a day", least_excluded=True)),
        Metric(DIAG_TESTS_RUN, "tests", "DCGM diagnostic tests that ran on at least one GPU", True, _DIAG_TESTS, count=True),
        Metric(DIAG_TESTS_SKIPPED, "tests", "DCGM diagnostic tests skipped or not run on every GPU", False, _DIAG_TESTS, count=True),
    )
}


def implausible(key: str, value: float) -> str | None:
    """Why a measurement of `key` is no measurement ("busBandwidthGBps 1e+308 GB/s is above 10000 GB/s, past any GPU
    interconnect shipping (...)"), or None for a plausible value or a key not in METRICS."""
    metric = METRICS.get(key)
    refused = metric.bound.refused(float(value)) if metric is not None else None
    if refused is None:
        return None
    unit = f" {metric.shown_unit}" if metric is not None and metric.shown_unit else ""
    why = f", {metric.bound.why}" if metric is not None and refused.startswith("above") else ""
    return f"{key} {float(value):g}{unit} is {refused}{unit}{why}: implausible, no measurement"


def shown_unit(key: str) -> str:
    """The unit written beside a measurement of `key` (none for a key not in METRICS)."""
    metric = METRICS.get(key)
    return metric.shown_unit if metric is not None else ""


def whole_count(key: str, value: float) -> str | None:
    """A measurement of a count metric (Metric.count) that is whole, as a whole number ("10"); None for any other: it is
    exact, so on its side of any threshold, where two decimals ("10.00") read as a rounded rate."""
    metric = METRICS.get(key)
    return f"{value:.0f}" if metric is not None and metric.count and float(value).is_integer() else None


def with_unit(key: str, number: str) -> str:
    """A measured number of `key` (already shown: on its side of a threshold, or a span "183.59-186.63") with its unit,
    as every report, command and screen writes it: "243.18 GB/s", "7 tests", "0.92" (a ratio has none). The one place a
    value meets its unit: a diagnosis's record read "failed 3 of 3 tests (r0-screen-0 at 243.18, ...)"."""
    return f"{number} {shown_unit(key)}".rstrip()


def with_unit_once(shown: Sequence[str]) -> str:
    """Values of one metric, each as with_unit wrote it ("399.40 GB/s"), as one list that says their unit once, at its
    end: "399.40, 402.50 and 401.00 GB/s" (a diagnosis's record read "passed at 399.40 GB/s, 402.50 GB/s, ..."). Values
    with no unit (a ratio) or not all of one are listed as they are."""
    units = {text.rpartition(" ")[2] if " " in text else "" for text in shown}
    unit = next(iter(units)) if len(units) == 1 else ""
    numbers = [text.rpartition(" ")[0] for text in shown] if unit else list(shown)
    joined = f"{', '.join(numbers[:-1])} and {numbers[-1]}" if len(numbers) > 1 else "".join(numbers)
    return f"{joined} {unit}".rstrip()


def shown_value(key: str, value: float) -> str:
    """A measurement as people read it: a count whole ("7 tests"), anything else to two decimals with its unit."""
    return with_unit(key, whole_count(key, value) or f"{value:.2f}")
