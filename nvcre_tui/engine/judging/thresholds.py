"""Performance thresholds: CEL expressions over one double `value`, compiled once, evaluated into evidence.

cel-python parses and evaluates but has no static type checker (cel-go rejects `value + 1` or `foo > 1`
when it compiles). We recover those checks at compile time in three steps:
  * free identifiers are read off the parse tree, so `value > 1 || foo` is refused even though
    short-circuiting would hide `foo` from any trial run;
  * so is a field, method or index on `value` (`value < 1 || value.foo`, `has(value.x)`): a number has none;
  * the program is trial-evaluated with probe values (zero, small and huge numbers and the metric's own
    range); any error or any result that is not a bool is refused, in words (celpy's text never leaks).
A threshold that still cannot be evaluated on a measurement (a probe cannot try every double) gives
evidence with reason INVALID_EXPRESSION, which convicts no node (controllers/job.py).
The CEL helpers here (`build_program`, `plain_reason`, ...) are shared with `nodehealth`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import celpy
import celpy.celtypes as ct

from nvcre_tui.engine.judging.cel import CelExpressionError, build_program, cel_type_name, evaluate, one_line, plain_reason
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, METRICS, Metric, whole_count, with_unit

VALUE_VARIABLE = "value"
#: The evidence reason of a threshold that could not be evaluated on a measurement: the expression is at fault,
#: not the nodes, so the Job fails and no node is blamed for it.
INVALID_EXPRESSION = "InvalidThresholdExpression"
#: The evidence reason of a threshold whose metric the output does not hold: the check fails (never a pass), and
#: convicts no node.
MEASUREMENT_UNAVAILABLE = "MeasurementUnavailable"
#: The evidence reason of a threshold evaluated, met or missed (a missed one is also its Job's ValidationFailed reason).
THRESHOLD_MET = "ThresholdMet"
THRESHOLD_VIOLATED = "ThresholdViolated"


# Probe values for the compile-time check, every one a measurement may take (measurements are never negative):
# zero, fractions, small counts, a value above typical bandwidth limits and a huge one; then each metric's range
# by its unit. Every probe must give a bool: an error on any of them would fail a Job at run time.
_VALUE_PROBES: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 1000.5, 1e9)
_UNIT_PROBES: dict[str, tuple[float, ...]] = {
    "GB/s": (12.5, 48.0, 96.25, 240.0, 481.954, 900.0, 3200.0),
    "TFLOP/s": (50.0, 312.5, 989.4, 2250.0),
    "s": (0.05, 0.75, 3.5, 60.0, 3600.0),
    "tests": (3.0, 5.0, 8.0, 12.0),
    "0..1": (0.1, 0.25, 0.9, 0.95, 0.999),
}


def value_probes(key: str) -> tuple[float, ...]:
    """The values a threshold on `key` is tried with before it is accepted."""
    metric = METRICS.get(key)
    return _VALUE_PROBES + (_UNIT_PROBES.get(metric.unit, ()) if metric else ())


def _shown(value: float) -> str:
    """A probe or measurement as a user writes it: 0, 0.5, 1000000000."""
    return format(value, ".15g")


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

    def evaluate(self, measured: float | None, *, unavailable_reason: str = MEASUREMENT_UNAVAILABLE) -> Evidence:
        """Evaluate against one measurement; a missing or unusable measurement fails with `unavailable_reason`."""
        shown = one_line(self.expression)
        value, unusable = _as_measurement(measured)
        if value is None:
            message = f'Threshold "{self.key}" not evaluated: {unusable}, expression: {shown}'
            return Evidence(self.key, None, self.expression, False, unavailable_reason, message)
        passed, problem = self._run(value)
        if passed is None:
            # The expression is at fault, not the measurement: this evidence convicts no node (controllers/job.py).
            message = f'Threshold "{self.key}" could not be evaluated on measured {_shown(value)}: {problem}, expression: {shown}'
            return Evidence(self.key, value, self.expression, False, INVALID_EXPRESSION, message)
        verdict, reason = ("met", THRESHOLD_MET) if passed else ("violated", THRESHOLD_VIOLATED)
        message = f'Threshold "{self.key}" {verdict}: measured {self.on_its_side(value, passed)}, expression: {shown}'
        return Evidence(self.key, value, self.expression, passed, reason, message)

    def passes(self, measured: float | None) -> bool | None:
        """`evaluate(measured).passed`, None where its reason would be InvalidThresholdExpression, without the message
        (which runs the expression again, once or more, to show the value on its side): for a verdict alone, such as
        the report's per-group `belowMin`."""
        value, _ = _as_measurement(measured)
        return False if value is None else self._run(value)[0]

    def _run(self, value: float) -> tuple[bool | None, str | None]:
        """(whether `value` meets the expression, None), or (None, why the expression cannot be evaluated on it)."""
        result, error = evaluate(self.program, {VALUE_VARIABLE: ct.DoubleType(value)})
        problem = plain_reason(error) if error is not None else None
        if problem is None and not isinstance(result, ct.BoolType):
            problem = f"gave {cel_type_name(result)}, not bool"
        return (None, problem) if problem is not None else (bool(result), None)

    def on_its_side(self, value: float, passed: bool) -> str:
        """`value` with two decimals, or as many more as it takes to be seen on its side of the threshold (a 241.145
        that missed `value >= 241.149` must not read 241.15): one rule for the engine's messages and every screen.
        A whole count is whole (whole_count: "9", exact, so on its side of any threshold; it read "9.00")."""
        whole = whole_count(self.key, value)
        if whole is not None:
            return whole
        for digits in (2, 3, 4, 6):
            text = f"{value:.{digits}f}"
            result, error = evaluate(self.program, {VALUE_VARIABLE: ct.DoubleType(float(text))})
            if error is not None or not isinstance(result, ct.BoolType) or bool(result) == passed:
                return text
        return _shown(value)


@functools.lru_cache(maxsize=8192)  # the failures pane shows every failed node's values at each refresh: a CEL run each
def shown_measured(key: str, expression: str, value: float, passed: bool) -> str:
    """`value` as CompiledThreshold.on_its_side shows it; two decimals when the expression does not compile."""
    try:
        return compile_threshold(key, expression).on_its_side(value, passed)
    except ThresholdError:
        return f"{value:.2f}"


def value_shower(key: str, expression: str | None) -> Callable[[float, bool], str]:
    """(value, passed) -> the value as `expression` judged it, on its side (shown_measured), with its unit ("243.18
    GB/s"): for a diagnosis's records, which know each test's verdict but not the threshold. Six significant digits
    without an expression."""
    if not expression:
        return lambda value, passed: with_unit(key, f"{value:g}")
    return lambda value, passed: with_unit(key, shown_measured(key, expression, value, passed))


def diagnosis_values(thresholds: Mapping[str, str] | None) -> Callable[[float, bool], str]:
    """How a diagnosis's records print its tests' values: as its category's bus-bandwidth threshold judged them
    (`thresholds`: the Workflow's jobTemplate thresholds)."""
    return value_shower(BUS_BANDWIDTH, (thresholds or {}).get(BUS_BANDWIDTH))


@functools.lru_cache(maxsize=8192)  # `history node NAME` judged every row whose evidence judged another run's value: a CEL run each
def shown_judged(key: str, expression: str, value: float) -> str:
    """`value` judged by `expression`, then shown on its side (shown_measured): a value no evidence judged (another
    run's, a diagnosis test that failed otherwise); two decimals when the expression does not compile."""
    try:
        passed = compile_threshold(key, expression).evaluate(value).passed
    except ThresholdError:
        return f"{value:.2f}"
    return shown_measured(key, expression, value, passed)


def _unknown_key_message(key: str) -> str:
    return f'unknown threshold key "{key}"; valid keys: {", ".join(sorted(METRICS))}'


@functools.lru_cache(maxsize=1024)
def _compile_cached(key: str, expression: str) -> CompiledThreshold:
    try:
        program = build_program(expression, VALUE_VARIABLE, number=True)
        _require_bool_everywhere(program, expression, value_probes(key))
    except CelExpressionError as err:
        raise ThresholdError(key, str(err)) from None
    return CompiledThreshold(key, expression, program)


def _require_bool_everywhere(program: celpy.Runner, expression: str, probes: Sequence[float]) -> None:
    """Refuse the program unless every probe gives a bool: a result of another type first (the expression's
    type is wrong), else the first error (`value < 1 || 1/0 == 1` divides by zero once value is 1)."""
    quoted = one_line(expression)
    failed: list[tuple[float, Exception]] = []
    for probe in probes:
        result, error = evaluate(program, {VALUE_VARIABLE: ct.DoubleType(probe)})
        if error is not None:
            failed.append((probe, error))
        elif not isinstance(result, ct.BoolType):
            raise CelExpressionError(f'CEL expression "{quoted}" must give a bool, got {cel_type_name(result)}')
    if len(failed) == len(probes):  # no number at all: what cel-go's type checker calls a compile error
        raise CelExpressionError(f'invalid CEL expression "{quoted}": {plain_reason(failed[0][1])}')
    if failed:
        probe, error = failed[0]
        raise CelExpressionError(f'CEL expression "{quoted}" fails when value is {_shown(probe)}: {plain_reason(error)}')


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
    unavailable_reason: str = MEASUREMENT_UNAVAILABLE,
) -> list[Evidence]:
    """Evidence for every compiled threshold, sorted by key; an absent measurement fails."""
    return [
        compiled[key].evaluate(measurements.get(key), unavailable_reason=unavailable_reason)
        for key in sorted(compiled)
    ]


def violations(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence that did not pass, in the given order (the first supplies a condition's reason)."""
    return [e for e in evidence if not e.passed]
