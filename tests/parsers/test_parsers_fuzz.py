"""Any input either parses or raises ParseError, and a parsed number is always one the input printed."""

from __future__ import annotations

import math
import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.parsers import PARSERS, DcgmResult, NcclResult, ParseError, ParseResult, TrainingResult
from nvcre_tui.engine.parsers.prefixes import strip_line_prefixes
from tests.parsers.golden import fixture_text, inputs

EXPLORE = int(os.environ.get("NVCRE_EXPLORE", "0"))
FUZZ = settings(max_examples=EXPLORE or 150, deadline=None, derandomize=not EXPLORE, database=None,
                suppress_health_check=[HealthCheck.too_slow])
NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
LOGS = {path.name: fixture_text(path.name) for path in inputs()}

# Words that steer random lines into the parsers' deeper branches.
VOCABULARY = [
    "#", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "error", "N/A", "0e+00",
    "-1", "0", "8", "1024", "12.5", "1.2e+07", "float", "sum", "Rank", "Group", "Pid", "on", "device", "[0x18]",
    "Out of bounds values :", "Avg bus bandwidth :", "Collective test starting:", "|", "GPU0: Fail", "Pass - All",
    "Fail - GPU: 1", "Warning", "+-----  Hardware  ----+", "{", "}", '"DCGM Diagnostic"', ":", "iteration",
    "10/ 50 |", "elapsed time per iteration (ms): 2874.6 |", "throughput per GPU (TFLOP/s/GPU): 612.4 |",
    "lm loss: 9.4E+00 |", "Training epoch 0, iteration 3/9 |", "global_step: 3 |", "train_step_timing in s: 2.1 |",
    "[2026-03-02 11:42:07.5]", "2026-03-02T10:15:04.123456789Z", "using world size: 8,", "\r", "\t", "nan", "inf",
    "saving checkpoint at iteration 10 to /c", "Save duration: 3.2s", "[NeMo I 2026-03-02 13:00:05 nemo_logging:1]",
    "0:", "12: ", "[1,0]<stdout>:", "2e-07", "3e-02", "NCCL WARN", "unhandled system error", "half", "int32",
    "elapsed time per iteration (s): 2.5 |", "TFLOPs: 148.3 |", "global_step=4.000,", "train_step_timing in s=2.19]",
    "+-----+-----+", "| Diagnostic | Result |", "Xid 79 on GPU 3", "Skip",
]
SOUP = st.lists(st.lists(st.sampled_from(VOCABULARY), max_size=16).map(" ".join), max_size=30).map("\n".join)
TEXT = st.text(max_size=400) | SOUP


@st.composite
def mutated_logs(draw: st.DrawFn) -> tuple[str, str]:
    """A fixture with random damage: slices dropped, bytes inserted, lines duplicated, digits changed."""
    name = draw(st.sampled_from(sorted(LOGS)))
    text = LOGS[name]
    for _ in range(draw(st.integers(1, 5))):
        at = draw(st.integers(0, len(text)))
        operation = draw(st.sampled_from(["drop", "insert", "digit", "duplicate", "cut"]))
        if operation == "drop":
            text = text[:at] + text[at + draw(st.integers(1, 80)) :]
        elif operation == "insert":
            text = text[:at] + draw(TEXT) + text[at:]
        elif operation == "digit" and at < len(text) and text[at].isdigit():
            text = text[:at] + draw(st.sampled_from("0123456789.e-")) + text[at + 1 :]
        elif operation == "duplicate":
            lines = text.splitlines(keepends=True)
            index = draw(st.integers(0, max(len(lines) - 1, 0)))
            text = "".join(lines[: index + 1] + lines[index:])
        elif operation == "cut":
            text = text[:at]
    return name.split("_", 1)[0], text


def numbers_in(text: str) -> set[float]:
    return {float(token) for token in NUMBER.findall(text) if math.isfinite(float(token))}


def printed(value: float | None, numbers: set[float], scale: float = 1.0) -> bool:
    return value is None or value in numbers or any(math.isclose(value * scale, n, rel_tol=1e-12) for n in numbers)


def check_provenance(result: ParseResult, text: str) -> None:
    """Every reported number was printed in the input (averages lie between printed values)."""
    numbers = numbers_in(text)
    if isinstance(result, NcclResult):
        for row in result.rows:
            for half in (row.out_of_place, row.in_place):
                values = (half.time_us, half.algbw, half.busbw, half.wrong, half.error)
                assert all(printed(value, numbers) for value in values)
            assert row.size in numbers and row.count in numbers
        assert min(numbers) <= result.bus_bandwidth_gbps <= max(numbers)
    elif isinstance(result, TrainingResult):
        # A terminal-wrapped step line is read rejoined: its numbers were printed across the wrap.
        numbers |= numbers_in("".join(strip_line_prefixes(line).rstrip("\n") for line in text.splitlines(True)))
        for step in result.recent_steps:
            assert printed(step.tflops_per_gpu, numbers) and printed(step.loss, numbers)
            assert printed(step.step_time_sec, numbers) or printed(step.step_time_sec, numbers, scale=1000.0)
            assert step.step in numbers
    elif isinstance(result, DcgmResult):
        assert all(gpu in numbers for gpu in result.gpus if not _all_gpus_row(result, gpu))


def _all_gpus_row(result: DcgmResult, gpu: int) -> bool:
    """GPUs of a 3.x "All" row come from the count of detected device ids, not from a printed index."""
    return any(entity.entity == "all GPUs" and gpu in entity.gpus for test in result.tests for entity in test.results)


def parse_or_parse_error(kind: str, text: str) -> None:
    try:
        result = PARSERS[kind](text)
    except ParseError as error:
        assert error.reason in ("NoDataCollected", "WrongFormat") and error.message
        return
    check_provenance(result, text)
    assert isinstance(result.to_dict(), dict) and isinstance(result.measurements(), dict)


@FUZZ
@given(st.sampled_from(sorted(PARSERS)), TEXT)
def test_random_text(kind: str, text: str) -> None:
    parse_or_parse_error(kind, text)


@FUZZ
@given(mutated_logs(), st.sampled_from([None, *sorted(PARSERS)]))
def test_mutated_real_logs(case: tuple[str, str], other_kind: str | None) -> None:
    """Damaged fixtures, read by their own parser and by the others (wrong-kind input)."""
    kind, text = case
    parse_or_parse_error(other_kind or kind, text)


@FUZZ
@given(mutated_logs())
def test_mutated_logs_through_the_batched_reader(case: tuple[str, str]) -> None:
    """Damaged logs repeated past a batch, read with no raw rows kept: the batched fast path."""
    _, text = case
    try:
        result = PARSERS["nccl"]((text + "\n") * 40, max_rows=0)
    except ParseError as error:
        assert error.reason in ("NoDataCollected", "WrongFormat") and error.message
        return
    check_provenance(result, text)


@FUZZ
@given(st.lists(st.text(max_size=60), max_size=20), st.sampled_from(sorted(PARSERS)))
def test_line_iterables_behave_like_text(lines: list[str], kind: str) -> None:
    """Lines without newlines (splitlines output) are accepted like a text."""
    try:
        PARSERS[kind](lines)
    except ParseError:
        pass


def test_bytes_instead_of_text_is_a_parse_error() -> None:
    for kind in PARSERS:
        try:
            PARSERS[kind]([b"not text\n"])
        except ParseError as error:
            assert error.reason == "WrongFormat"
        else:
            raise AssertionError(f"{kind} accepted bytes")
