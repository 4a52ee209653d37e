"""Performance thresholds: CEL expressions over one double `value`, compiled once, evaluated into evidence.

cel-python parses and evaluates but has no static type checker (cel-go rejects `value + 1` or `foo > 1`
when it compiles). We recover those checks at compile time in two steps:
  * free identifiers are read off the parse tree, so `value > 1 || foo` is refused even though
    short-circuiting would hide `foo` from any trial run;
  * the program is trial-evaluated with probe values; any result that is not a bool is refused.
The CEL helpers here (`build_program`, `require_bool`, ...) are shared with `nodehealth`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import celpy
import celpy.celtypes as ct

from nvcre_tui.engine.judging.cel import CelExpressionError, build_program, cel_type_name, one_line, require_bool, run_program
from nvcre_tui.engine.parsers.measurements import METRICS, Metric

VALUE_VARIABLE = "value"


# Probe values for the compile-time bool check: zero, one, and a value above typical bandwidth limits.
_VALUE_PROBES: tuple[float, ...] = (0.0, 1.0, 1000.5)


class ThresholdError(ValueError):
    """A threshold that cannot be used: unknown key or bad expression. `.key` names the threshold."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Evidence:
    """Why one threshold passed or failed."""

    metric: str
    measured: float | None
    expression: str
    passed: bool
    reason: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (camelCase, same as api.EvidenceRecord)."""
        return {
            "metric": self.metric, "measured": self.measured, "expression": self.expression,
            "passed": self.passed, "reason": self.reason, "message": self.message,
        }


def _as_measurement(measured: object) -> tuple[float | None, str | None]:
    """(finite float, None) or (None, why it is unusable). NaN and infinities are unusable: never a pass."""
    if measured is None:
        return None, "no measured value"
    if isinstance(measured, bool) or not isinstance(measured, (int, float)):
        return None, f"measured value {one_line(repr(measured), 40)} is not a number"
    try:
        value = float(measured)
    except OverflowError:  # an int beyond float range
        value = math.inf
    if not math.isfinite(value):
        return None, f"measured value {one_line(str(measured), 40)} is not a finite number"
    return value, None


@dataclass(frozen=True)
class CompiledThreshold:
    """A threshold compiled once; `evaluate` may run it any number of times."""

    key: str
    expression: str
    program: celpy.Runner = field(repr=False, compare=False)

    @property
    def metric(self) -> Metric:
        return METRICS[self.key]

    def evaluate(self, measured: float | None, *, unavailable_reason: str = "MeasurementUnavailable") -> Evidence:
        """Evaluate against one measurement; a missing or unusable measurement fails with `unavailable_reason`."""
        shown = one_line(self.expression)
        value, unusable = _as_measurement(measured)
        if value is None:
            message = f'Threshold "{self.key}" not evaluated: {unusable}, expression: {shown}'
            return Evidence(self.key, None, self.expression, False, unavailable_reason, message)
        result, error = run_program(self.program, {VALUE_VARIABLE: ct.DoubleType(value)})
        if error is None and not isinstance(result, ct.BoolType):
            error = f"gave {cel_type_name(result)}, not bool"
        if error is not None:
            message = f'Threshold "{self.key}" could not be evaluated: {error}, expression: {shown}'
            return Evidence(self.key, value, self.expression, False, "InvalidThresholdExpression", message)
        passed = bool(result)
        verdict, reason = ("met", "ThresholdMet") if passed else ("violated", "ThresholdViolated")
        message = f'Threshold "{self.key}" {verdict}: measured {value:.4f}, expression: {shown}'
        return Evidence(self.key, value, self.expression, passed, reason, message)


def _unknown_key_message(key: str) -> str:
    return f'unknown threshold key "{key}"; valid keys: {", ".join(sorted(METRICS))}'


@functools.lru_cache(maxsize=1024)
def _compile_cached(key: str, expression: str) -> CompiledThreshold:
    try:
        program = build_program(expression, VALUE_VARIABLE)
        probes = [{VALUE_VARIABLE: ct.DoubleType(p)} for p in _VALUE_PROBES]
        require_bool(program, expression, probes, must_evaluate=True)
    except CelExpressionError as err:
        raise ThresholdError(key, str(err)) from None
    return CompiledThreshold(key, expression, program)


def compile_threshold(key: str, expression: str) -> CompiledThreshold:
    """Compile one threshold (cached by key and expression); raise ThresholdError with a one-line message."""
    if key not in METRICS:
        raise ThresholdError(str(key), _unknown_key_message(str(key)))
    if not isinstance(expression, str):
        raise ThresholdError(key, f'threshold "{key}" must be a CEL expression string, got {type(expression).__name__}')
    return _compile_cached(key, expression)


def threshold_problems(mapping: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every (key, message) problem in a thresholds mapping, sorted by key; empty when all compile."""
    problems: list[tuple[str, str]] = []
    for key in sorted(mapping, key=str):
        try:
            compile_threshold(key, mapping[key])
        except ThresholdError as err:
            problems.append((err.key, str(err)))
    return problems


def compile_thresholds(mapping: Mapping[str, str]) -> dict[str, CompiledThreshold]:
    """Compile every threshold; raise ThresholdError for the first bad key in sorted order."""
    problems = threshold_problems(mapping)
    if problems:
        key, message = problems[0]
        raise ThresholdError(key, message)
    return {key: compile_threshold(key, mapping[key]) for key in sorted(mapping)}


def evaluate_thresholds(
    compiled: Mapping[str, CompiledThreshold],
    measurements: Mapping[str, float | None],
    *,
    unavailable_reason: str = "MeasurementUnavailable",
) -> list[Evidence]:
    """Evidence for every compiled threshold, sorted by key; an absent measurement fails."""
    return [
        compiled[key].evaluate(measurements.get(key), unavailable_reason=unavailable_reason)
        for key in sorted(compiled)
    ]


def violations(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence that did not pass, in the given order (the first supplies a condition's reason)."""
    return [e for e in evidence if not e.passed]
