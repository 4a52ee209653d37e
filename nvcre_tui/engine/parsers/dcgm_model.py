"""What `dcgmi diag` reports, per test and GPU, and the node verdict drawn from it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from nvcre_tui.engine.parsers.base import NO_DATA, WRONG_FORMAT, Failure
from nvcre_tui.engine.parsers.measurements import DIAG_TESTS_RUN, DIAG_TESTS_SKIPPED

TEST_FAILED = "DcgmTestFailed"
RUNTIME_ERROR = "DcgmRuntimeError"
NOTHING_RAN = "DcgmNothingRan"

PASS, FAIL, WARN, SKIP, NOT_RUN, UNKNOWN = "Pass", "Fail", "Warn", "Skip", "Not Run", "Unknown"

# Spellings across DCGM 2.x-4.x; anything else is UNKNOWN, which fails: a new spelling must never pass.
_STATUS = {"pass": PASS, "passed": PASS, "fail": FAIL, "failed": FAIL, "warn": WARN, "warning": WARN,
           "skip": SKIP, "skipped": SKIP, "not run": NOT_RUN, "notrun": NOT_RUN, "not_run": NOT_RUN}
FAILING = frozenset({FAIL, UNKNOWN})

# DCGM 3.x display names -> the 4.x plugin names, so one test has one name in every report.
_TEST_NAMES = {"gpu memory": "memory", "diagnostic": "diagnostic", "pcie": "pcie", "sm stress": "sm_stress",
               "targeted stress": "targeted_stress", "targeted power": "targeted_power",
               "memory bandwidth": "memory_bandwidth", "memtest": "memtest", "pulse test": "pulse_test",
               "context create": "context_create", "eud test": "eud", "cpu eud test": "cpu_eud",
               "nvbandwidth": "nvbandwidth", "nccl tests": "nccl_tests"}


def normalize_status(raw: object) -> str:
    """One of Pass/Fail/Warn/Skip/Not Run, or Unknown."""
    if not isinstance(raw, str):
        return UNKNOWN
    return _STATUS.get(" ".join(raw.split()).lower(), UNKNOWN)


def normalize_test_name(raw: str) -> str:
    """`GPU Memory` -> `memory`; 4.x names pass through; others are lower_snake_cased."""
    key = " ".join(raw.split()).lower()
    return _TEST_NAMES.get(key, key.replace(" ", "_"))


@dataclass(frozen=True)
class DcgmWarning:
    """A warning or error DCGM attached to a result."""

    message: str
    error_id: int | None = None
    category: int | None = None
    severity: int | None = None


@dataclass(frozen=True)
class DcgmEntityResult:
    """The status of one test on one entity (a GPU, a set of GPUs, a CPU, or all of them)."""

    entity: str  # "GPU 1", "GPUs 0,1,2", "CPU 0", "all GPUs"
    gpus: tuple[int, ...]
    status: str
    warnings: tuple[DcgmWarning, ...] = ()
    info: tuple[str, ...] = ()


@dataclass(frozen=True)
class DcgmTest:
    """One test of one diagnostic run (one iteration with --iterations)."""

    category: str
    name: str
    status: str  # the test summary, or the worst entity status when DCGM gives none
    results: tuple[DcgmEntityResult, ...]
    warnings: tuple[DcgmWarning, ...] = ()  # summary-level: not tied to an entity
    iteration: int = 0


def summary_status(results: tuple[DcgmEntityResult, ...]) -> str:
    """The worst status among `results` (Fail/Unknown > Warn > Pass > Skip > Not Run)."""
    statuses = {result.status for result in results}
    for status in (UNKNOWN, FAIL, WARN, PASS, SKIP):
        if status in statuses:
            return status
    return NOT_RUN


@dataclass(frozen=True)
class DcgmResult:
    """A whole `dcgmi diag` output and its node verdict (`failure` is None when the node passed)."""

    format: str  # "3.x", "4.x", "hybrid" or "table"
    version: str | None
    driver: str | None
    tests: tuple[DcgmTest, ...]
    runtime_error: str | None
    iterations: int
    overall: str | None  # "Overall Result" of --iterations output
    failure: Failure | None
    incomplete: str | None = None  # a text table cut off before its closing frame: why (a pass of part of a run is none)
    ignored: tuple[str, ...] = ()  # lines of other text after the JSON documents

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def skipped_tests(self) -> tuple[str, ...]:
        """Tests that ran on no entity (skipped or not run), by name, in report order."""
        return tuple(dict.fromkeys(test.name for test in self.tests if test.status in (SKIP, NOT_RUN)))

    @property
    def verdict(self) -> str:
        """"passed", "passed, 7 of 8 tests skipped", or "failed": a pass with skipped tests is marked."""
        if self.failure is not None:
            return "failed"
        names = dict.fromkeys(test.name for test in self.tests)
        skipped = self.skipped_tests
        return f"passed, {len(skipped)} of {len(names)} tests skipped" if skipped else "passed"

    @property
    def gpus(self) -> tuple[int, ...]:
        """Every GPU index any result names."""
        return tuple(sorted({gpu for test in self.tests for result in test.results for gpu in result.gpus}))

    def measurements(self) -> dict[str, float]:
        """How many distinct tests ran and how many were skipped, so a threshold (`diagTestsSkipped`:
        `value == 0`) or the report can tell "passed" from "passed, 7 of 8 tests skipped"."""
        names = dict.fromkeys(test.name for test in self.tests)
        skipped = len(self.skipped_tests)
        return {DIAG_TESTS_RUN: float(len(names) - skipped), DIAG_TESTS_SKIPPED: float(skipped)}

    def notes(self) -> tuple[str, ...]:
        """The marked verdict of a pass with skipped tests, naming them, and text after the results that was not
        read as results."""
        ignored = (f"text after the dcgmi diag results, not read as results: {self.ignored[0][:120]!r}"
                   + (f" and {len(self.ignored) - 1} more lines" if len(self.ignored) > 1 else ""),) if self.ignored else ()
        if self.failure is not None or not self.skipped_tests:
            return ignored
        return (f"dcgmi diag {self.verdict}: {', '.join(self.skipped_tests)}", *ignored)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["passed"] = self.passed
        data["gpus"] = list(self.gpus)
        data["skipped_tests"] = list(self.skipped_tests)
        data["verdict"] = self.verdict
        for name in ("incomplete", "ignored"):
            if not data[name]:
                del data[name]
        return data


def _where(gpus: tuple[int, ...]) -> str:
    if not gpus:
        return ""
    if len(gpus) == 1:
        return f" on GPU {gpus[0]}"
    return " on GPUs " + ", ".join(str(gpu) for gpu in gpus)


_XID = re.compile(r"\bXid\b", re.IGNORECASE)
_GPU_NAMED = re.compile(r"\bGPU\s*(\d{1,4})\b", re.ASCII)


def _xid_gpus(test: DcgmTest, failing: list[DcgmEntityResult]) -> tuple[int, ...]:
    """GPUs that the Xid messages of a failing test name."""
    messages = [warning.message for result in failing for warning in result.warnings]
    messages += [warning.message for warning in test.warnings]
    named = {int(index) for message in messages if _XID.search(message) for index in _GPU_NAMED.findall(message)}
    return tuple(sorted(named))


def _reason_text(test: DcgmTest, failing: list[DcgmEntityResult], gpus: tuple[int, ...]) -> str:
    """The warning that best explains the failure: one naming the GPU, else the first one given."""
    warnings = [warning for result in failing for warning in result.warnings] + list(test.warnings)
    for warning in warnings:
        if any(f"GPU {gpu}" in warning.message for gpu in gpus):
            return warning.message
    if warnings:
        return warnings[0].message
    odd = [result.status for result in failing if result.status == UNKNOWN]
    return "unrecognised status reported" if odd or test.status == UNKNOWN else "no reason given"


#: The section whose checks are of the node's software, not of a GPU: the 3.x text table prints them without GPUs.
NODE_LEVEL = frozenset({"Deployment"})


def unmeasured(tests: tuple[DcgmTest, ...], node_level: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Tests that report a pass (or a warning) with no result on any entity: they show nothing measured. Tests of the
    `node_level` categories are exempt (node-wide checks the output ties to no GPU)."""
    return tuple(dict.fromkeys(_run_name(test) for test in tests
                               if test.status in (PASS, WARN) and not test.results and test.category not in node_level))


def _run_name(test: DcgmTest) -> str:
    return f"{test.name} (iteration {test.iteration + 1})" if test.iteration else test.name


def verdict(tests: tuple[DcgmTest, ...], runtime_error: str | None, overall: str | None,
            overall_warning: str | None, *, unreadable: tuple[str, ...] = (),
            node_level: frozenset[str] = frozenset()) -> Failure | None:
    """The node verdict: a runtime error, any failing test or entity, or a failed overall result; else, blaming no
    node, result entries that cannot be read (`unreadable`: WrongFormat) or a passing test with no entity result
    (NoDataCollected): neither is evidence of a pass."""
    if runtime_error:
        return Failure(RUNTIME_ERROR, f"dcgmi diag could not run: {runtime_error}")
    messages: list[str] = []
    failed_gpus: set[int] = set()
    for test in tests:
        failing = [result for result in test.results if result.status in FAILING]
        if not failing and test.status not in FAILING:
            continue
        gpus = tuple(sorted({gpu for result in failing for gpu in result.gpus}))
        if not failing or any(len(result.gpus) != 1 for result in failing):
            # DCGM tied the failure to no single GPU (a summary, "all GPUs", a grouped 3.x result):
            # an Xid message that names the GPU is the more precise evidence.
            gpus = _xid_gpus(test, failing) or gpus
        failed_gpus.update(gpus)
        run = f" (iteration {test.iteration + 1})" if test.iteration else ""
        messages.append(f"{test.name} failed{_where(gpus)}{run}: {_reason_text(test, failing, gpus)}")
    if messages:
        more = f" (and {len(messages) - 1} more failures)" if len(messages) > 1 else ""
        return Failure(TEST_FAILED, messages[0] + more, tuple(sorted(failed_gpus)))
    if overall is not None and normalize_status(overall) in FAILING:
        return Failure(TEST_FAILED, f"diagnostic overall result {overall}: {overall_warning or 'no reason given'}")
    if unreadable:
        more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
        return Failure(WRONG_FORMAT, f"unreadable dcgmi diag result: {unreadable[0]}{more}")
    if empty := unmeasured(tests, node_level):
        names = ", ".join(empty)
        return Failure(NO_DATA, f"{names} reported {'a pass' if len(empty) == 1 else 'passes'} with no per-GPU result: "
                                "nothing measured")
    if not any(test.status in (PASS, WARN) for test in tests):
        # Everything skipped proves nothing about the hardware: not a pass.
        return Failure(NOTHING_RAN, "no diagnostic test ran on this node (all skipped or not run)")
    return None
