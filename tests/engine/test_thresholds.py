"""Thresholds: CEL over `value`, compile-time checks, evaluation into evidence."""

from __future__ import annotations

import json
import math
from typing import Any

import celpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.judging import thresholds
from nvcre_tui.engine.judging.cel import MAX_EXPRESSION_LENGTH
from nvcre_tui.engine.judging.thresholds import (
    METRICS,
    Evidence,
    ThresholdError,
    compile_threshold,
    compile_thresholds,
    evaluate_thresholds,
    shown_measured,
    threshold_problems,
    violations,
)
from nvcre_tui.engine.parsers.measurements import shown_unit, shown_value
from nvcre_tui.engine.report import model

BUS = "busBandwidthGBps"


@pytest.mark.parametrize(
    ("expression", "measured", "passed"),
    [
        ("value >= 900", 950.0, True),  # int literal against a double value
        ("value >= 900", 812.34, False),
        ("value >= 900.0", 900.0, True),
        ("value == 900", 900.0, True),  # cross-type equality
        ("900 <= value", 899.9, False),  # int on the left
        ("value != 900", 900.0, False),
        ("value >= 100 && value <= 200", 150.0, True),
        ("value >= 100 && value <= 200", 99.99, False),
        ("value >= 100 && value <= 200", 200.01, False),
        ("value <= 3.0", 2.5, True),
        ("value >= 1u", 2.0, True),
    ],
)
def test_expression_decides_pass_or_fail(expression: str, measured: float, passed: bool) -> None:
    evidence = compile_threshold(BUS, expression).evaluate(measured)
    assert evidence.passed is passed
    assert evidence.reason == ("ThresholdMet" if passed else "ThresholdViolated")
    assert evidence.measured == measured


def test_violation_message_has_the_value_on_its_side_and_expression() -> None:
    """Two decimals, as every screen and report shows it (the message said 812.3400 beside the report's 812.34), or
    as many more as keep it on its side of the threshold."""
    evidence = compile_threshold(BUS, "value >= 900").evaluate(812.34)
    assert evidence.message == 'Threshold "busBandwidthGBps" violated: measured 812.34, expression: value >= 900'
    close = compile_threshold(BUS, "value >= 241.149").evaluate(241.145)
    assert close.message == 'Threshold "busBandwidthGBps" violated: measured 241.145, expression: value >= 241.149'
    assert shown_measured(BUS, "value >= 241.149", 241.145, False) == "241.145"


def test_unknown_key_lists_valid_keys() -> None:
    with pytest.raises(ThresholdError) as caught:
        compile_threshold("avgTFLOPSPerGPU", "value >= 1")
    assert caught.value.key == "avgTFLOPSPerGPU"
    assert str(caught.value) == (
        'unknown threshold key "avgTFLOPSPerGPU"; valid keys: '
        "algBandwidthGBps, avgStepTimeSec, avgTFLOPsPerGPU, busBandwidthGBps, diagTestsRun, diagTestsSkipped, goodputRatio"
    )


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("value + 1", 'CEL expression "value + 1" must give a bool, got double'),
        ("value", 'CEL expression "value" must give a bool, got double'),
        ("value > 1 ? true : 1", 'CEL expression "value > 1 ? true : 1" must give a bool, got int'),
        ("'yes'", "CEL expression \"'yes'\" must give a bool, got string"),
        ("value >= ", 'invalid CEL expression "value >= ": unexpected end of expression'),
        ("value @ 2", 'invalid CEL expression "value @ 2": unexpected character "@" at line 1, column 7'),
        ("size(value) > 1", 'invalid CEL expression "size(value) > 1": size() takes a list, map, string or bytes, not a number'),
        ("foo > 1", 'CEL expression "foo > 1" refers to undeclared "foo"; only "value" is available'),
        # short-circuiting hides `foo` from a trial run; the parse tree does not
        ("value > 1 || foo", 'CEL expression "value > 1 || foo" refers to undeclared "foo"; only "value" is available'),
        ("", "CEL expression is empty"),
        ("   ", "CEL expression is empty"),
        ("value >= 1e309", 'CEL expression "value >= 1e309": 1e309 is beyond any double (it reads as infinity)'),
        ("value > 1 && value < -2e400", 'CEL expression "value > 1 && value < -2e400": -2e400 is beyond any double (it reads as infinity)'),
        # bounds that come out infinite or NaN when written: every measurement fails them, and every node was blamed
        ("value >= 0.0/0.0", 'CEL expression "value >= 0.0/0.0": 0.0/0.0 is not a finite number (it evaluates to inf); '
                             "no measurement can be compared with it"),
        ('value >= double("NaN")', 'CEL expression "value >= double("NaN")": double("NaN") is not a finite number (it evaluates to nan); '
                                   "no measurement can be compared with it"),
        ("value > 1.0 && value <= 1e308 * 10.0", 'CEL expression "value > 1.0 && value <= 1e308 * 10.0": 1e308 * 10.0 is not a finite '
                                                 "number (it evaluates to inf); no measurement can be compared with it"),
    ],
)
def test_bad_expressions_are_refused_with_one_line(expression: str, message: str) -> None:
    with pytest.raises(ThresholdError) as caught:
        compile_threshold(BUS, expression)
    assert str(caught.value) == message
    assert caught.value.key == BUS


@pytest.mark.parametrize("expression", ["value >= 2.0 * 200.0", "value >= 400.0 - 0.5", "value < 1e300", "[100.0, 1e3 / 2.0].all(x, value >= x)"])
def test_finite_constant_bounds_are_taken(expression: str) -> None:
    assert compile_threshold(BUS, expression).evaluate(600.0).passed


def test_compile_error_spanning_lines_is_reported_on_one_line() -> None:
    with pytest.raises(ThresholdError) as caught:
        compile_threshold(BUS, "value >=\n\n 3 3")
    assert "\n" not in str(caught.value)
    assert "line 3" in str(caught.value)


def test_macro_variables_are_not_undeclared() -> None:
    evidence = compile_threshold(BUS, "[100.0, 200.0].all(limit, value >= limit)").evaluate(150.0)
    assert (evidence.passed, evidence.reason) == (False, "ThresholdViolated")


def test_length_limit_is_2048_characters() -> None:
    base = "value >= 1.0"
    at_limit = base + " " * (MAX_EXPRESSION_LENGTH - len(base))
    assert compile_threshold(BUS, at_limit).evaluate(2.0).passed
    with pytest.raises(ThresholdError, match="2049 characters; the limit is 2048"):
        compile_threshold(BUS, at_limit + " ")


def test_nested_comprehensions_are_refused_before_they_run() -> None:
    # Six nested .all() over 20-element lists is 64 million steps in 641 bytes: render hung while trying it.
    twenty = "[" + ",".join("1" * 20) + "]"
    nested = "value >= 0.0 && " + "".join(f"{twenty}.all(x{i}, " for i in range(6)) + "true" + ")" * 6
    with pytest.raises(ThresholdError, match="nests comprehension macros 6 deep; the limit is 1"):
        compile_threshold(BUS, nested)
    one = "[" + ",".join(["100.0"] * 300) + "].all(limit, value >= limit)"  # a long list, one level: quick
    assert compile_threshold(BUS, one).evaluate(150.0).passed
    chained = "[1.0, 200.0].filter(x, x > 10.0).all(x, value < x)"  # a chain runs n + n steps: not nested
    assert compile_threshold(BUS, chained).evaluate(150.0).passed


def test_non_string_expression_is_refused() -> None:
    with pytest.raises(ThresholdError, match='threshold "goodputRatio" must be a CEL expression string, got float'):
        compile_threshold("goodputRatio", 0.95)  # type: ignore[arg-type]


MISSING = st.one_of(
    st.none(), st.sampled_from([math.nan, math.inf, -math.inf, 10**400]), st.text(max_size=5), st.booleans()
)
EXPRESSIONS = st.sampled_from(
    ["value >= 900", "value <= 3.0", "!(value < 900)", "value != 900", "true", "value >= 0.0 || value < 0.0"]
)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(expression=EXPRESSIONS, measured=MISSING)
def test_missing_measurement_never_passes(expression: str, measured: object) -> None:
    evidence = compile_threshold(BUS, expression).evaluate(measured)  # type: ignore[arg-type]
    assert evidence.passed is False
    assert evidence.reason == "MeasurementUnavailable"
    assert evidence.measured is None


def test_unavailable_reason_is_the_callers() -> None:
    evidence = compile_threshold(BUS, "value >= 1").evaluate(None, unavailable_reason="MeasurementTimeout")
    assert (evidence.passed, evidence.reason) == (False, "MeasurementTimeout")


def test_runtime_error_fails_as_invalid_expression() -> None:
    # valid on every probe, divides by zero for value in (3, 4): no probe can try every double
    compiled = compile_threshold(BUS, "value < 3.0 || value > 4.0 || 10 / int(value - 3.5) >= 1")
    assert compiled.evaluate(5.0).passed
    evidence = compiled.evaluate(3.25)
    assert (evidence.passed, evidence.reason) == (False, "InvalidThresholdExpression")
    assert "division by zero" in evidence.message


def test_compiles_once_per_key_and_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = celpy.Environment.compile

    def counting(self: celpy.Environment, text: str) -> object:
        calls.append(text)
        return original(self, text)

    monkeypatch.setattr(celpy.Environment, "compile", counting)
    expression = "value >= 417.25"  # used by no other test, so the cache starts cold for it
    for _ in range(3):
        compiled = compile_threshold(BUS, expression)
        for measured in range(50):
            compiled.evaluate(float(measured))
    compile_thresholds({BUS: expression})
    assert calls == [expression]


def test_compile_thresholds_raises_first_bad_key_in_sorted_order() -> None:
    mapping = {"zeta": "value > 1", "goodputRatio": "value", "avgStepTimeSec": "value <= 3.0", "alpha": "x"}
    with pytest.raises(ThresholdError) as caught:
        compile_thresholds(mapping)
    assert caught.value.key == "alpha"
    assert [key for key, _ in threshold_problems(mapping)] == ["alpha", "goodputRatio", "zeta"]
    assert threshold_problems({"avgStepTimeSec": "value <= 3.0"}) == []


def test_evaluate_thresholds_sorted_and_violations() -> None:
    compiled = compile_thresholds(
        {"goodputRatio": "value >= 0.95", BUS: "value >= 900", "algBandwidthGBps": "value >= 400"}
    )
    evidence = evaluate_thresholds(compiled, {BUS: 950.0, "goodputRatio": 0.9, "unrelated": 1.0})
    assert [e.metric for e in evidence] == ["algBandwidthGBps", BUS, "goodputRatio"]
    assert [(e.metric, e.reason) for e in violations(evidence)] == [
        ("algBandwidthGBps", "MeasurementUnavailable"),
        ("goodputRatio", "ThresholdViolated"),
    ]


def test_evidence_dict_shape_is_json_ready() -> None:
    evidence = compile_threshold("avgStepTimeSec", "value <= 3.0").evaluate(2.5)
    data = evidence.to_dict()
    assert data == {
        "metric": "avgStepTimeSec",
        "measured": 2.5,
        "expression": "value <= 3.0",
        "passed": True,
        "reason": "ThresholdMet",
        "message": 'Threshold "avgStepTimeSec" met: measured 2.50, expression: value <= 3.0',
    }
    assert json.loads(json.dumps(data)) == data
    assert isinstance(evidence, Evidence)


def test_metric_table_matches_reference_units() -> None:
    assert {k: m.unit for k, m in METRICS.items()} == {
        "busBandwidthGBps": "GB/s",
        "algBandwidthGBps": "GB/s",
        "goodputRatio": "0..1",
        "avgTFLOPsPerGPU": "TFLOP/s",
        "avgStepTimeSec": "s",
        "diagTestsRun": "tests",
        "diagTestsSkipped": "tests",
    }
    assert METRICS["avgStepTimeSec"].higher_is_better is False
    assert METRICS["diagTestsSkipped"].higher_is_better is False


def test_deep_nesting_is_refused_not_crashed() -> None:
    # celpy's evaluator runs out of stack from about 55 parentheses: 200 is well past that and refused on the same path
    # as 1000 (trial evaluations that all raise RecursionError).
    with pytest.raises(ThresholdError) as caught:
        compile_threshold(BUS, "(" * 200 + "value > 1" + ")" * 200)
    assert str(caught.value).startswith('invalid CEL expression "(((')
    assert "\n" not in str(caught.value)


CEL_ALPHABET = st.sampled_from(list("value <>=!&|()?:+-*/% 0123456789.'\"[]{},") + ["value", "size", "true", "null", "x"])


@settings(derandomize=True, max_examples=150, deadline=None)
@given(expression=st.lists(CEL_ALPHABET, max_size=20).map("".join), measured=st.floats(allow_nan=True))
def test_any_text_compiles_or_is_refused_cleanly(expression: str, measured: float) -> None:
    try:
        compiled = compile_threshold(BUS, expression)
    except ThresholdError as err:
        assert err.key == BUS and "\n" not in str(err) and str(err)
        return
    evidence = compiled.evaluate(measured)
    assert evidence.reason in {"ThresholdMet", "ThresholdViolated", "InvalidThresholdExpression", "MeasurementUnavailable"}
    assert evidence.passed == (evidence.reason == "ThresholdMet")


def test_a_measurement_is_shown_with_its_unit_and_a_ratio_without_one() -> None:
    assert [shown_unit(key) for key in ("busBandwidthGBps", "avgTFLOPsPerGPU", "goodputRatio", "notAMetric")] == ["GB/s", "TFLOP/s", "", ""]
    assert [shown_value(key, value) for key, value in (("busBandwidthGBps", 401.234), ("diagTestsRun", 7.0), ("goodputRatio", 0.9))] == [
        "401.23 GB/s", "7 tests", "0.90"]


def test_a_whole_count_is_shown_whole_on_its_side_of_any_threshold() -> None:
    """The engine's message and the report said `diagTestsSkipped measured 9.00` where `history node` says 9: a count is
    exact, so whole is on its side; a count that is not whole (an average) and a rate keep their decimals."""
    assert compile_threshold("diagTestsSkipped", "value == 0").evaluate(9.0).message == \
        'Threshold "diagTestsSkipped" violated: measured 9, expression: value == 0'
    assert shown_measured("diagTestsRun", "value >= 12", 10.0, False) == "10"
    assert shown_measured("diagTestsRun", "value >= 9.6", 9.5, False) == "9.50"
    assert shown_measured("busBandwidthGBps", "value >= 300", 300.0, True) == "300.00"


def test_passes_is_evaluates_verdict_in_one_cel_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """`passes` decides as `evaluate` does (None where evaluate's reason is InvalidThresholdExpression; an unusable
    measurement fails) with one run of the expression, where evaluate's message runs it again to show the value on
    its side: the report asks it of every group (belowMin), 128 at an intra-rack run of 1,024 nodes."""
    compiled = compile_threshold(BUS, "value < 3.0 || value > 4.0 || 10 / int(value - 3.5) >= 1")
    for measured in (5.0, 2.0, 3.25, 3.75, float("nan"), float("inf"), None):
        evidence = compiled.evaluate(measured)
        assert compiled.passes(measured) == (None if evidence.reason == "InvalidThresholdExpression" else evidence.passed), measured
    at_300 = compile_threshold(BUS, "value >= 300")  # compiled (its probes run) before the count
    runs = counting_runs(monkeypatch)
    for measured in (299.994, 300.0, 412.5):
        at_300.passes(measured)
    assert len(runs) == 3


def counting_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every run of a compiled threshold's CEL program from now on."""
    runs: list[tuple[Any, ...]] = []
    run = thresholds.evaluate

    def counted(*args: Any) -> Any:
        runs.append(args)
        return run(*args)

    monkeypatch.setattr(thresholds, "evaluate", counted)
    return runs


def test_the_reports_below_min_runs_the_threshold_once_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    compile_threshold(BUS, "value >= 300.5")  # compiled (its probes run) before the count
    runs = counting_runs(monkeypatch)
    values = [299.0 + index / 7 for index in range(16)]  # about 300, each shown on its side of it in a message
    below = [model._low("value >= 300.5", value) for _ in range(2) for value in values]  # noqa: SLF001 - the report's verdict
    assert below == [value < 300.5 for value in values] * 2
    assert len(runs) == len(values)


@pytest.mark.parametrize(("expression", "constants"), [
    ("value * 2.0 >= 100.0 + 1.0", ["100.0 + 1.0"]),
    ("(value + 1.0) * 3.0 > 2.0 * 4.0", ["1.0", "2.0 * 4.0"]),
    ("[1.0, 2.0].exists(value, value * 2.0 > 3.0) && value > 1.0 + 2.0", ["1.0 + 2.0", "[1.0, 2.0].exists(value, value * 2.0 > 3.0)"]),
    ("((((value + 1.0)))) > 0.0", ["0.0", "1.0"]),
    ("[1.0].all(x, x + value > 2.0) || 3.0 * value < 1.0", ["1.0", "1.0", "2.0", "3.0", "x", "x"]),
])
def test_constant_operands_are_the_arithmetic_that_reads_no_measurement(expression: str, constants: list[str]) -> None:
    """The operands a threshold fixes when written (checked for infinity and NaN): found from each identifier that
    reads the measurement up (it was free_identifiers of every operand on the way down: a threshold of 1,000
    parentheses took 20 s to refuse). A macro's own `value` is not the measurement (that exists() reads none); `x + value` in all() reads it."""
    from nvcre_tui.engine.judging.cel import _environment, constant_operands

    tree = _environment().compile(expression)
    found = sorted(expression[op.meta.start_pos:op.meta.end_pos].strip() for op in constant_operands(tree, "value"))
    assert found == sorted(constants)


def test_a_value_judged_again_by_the_same_threshold_is_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`history node NAME` shows each row's values as their threshold judges them (history.queries.shown_value); where
    the stored evidence judged another run's value, the threshold ran again for every row: a CEL run per row of 15,000
    on a history of 10,000 certifications, the same few values over and over."""
    from nvcre_tui.engine.history.queries import shown_value as shown_in_history

    runs: list[float | None] = []
    evaluate = thresholds.CompiledThreshold.evaluate

    def counted(self: thresholds.CompiledThreshold, measured: float | None, **kwargs: Any) -> Evidence:
        runs.append(measured)
        return evaluate(self, measured, **kwargs)

    monkeypatch.setattr(thresholds.CompiledThreshold, "evaluate", counted)
    thresholds.shown_judged.cache_clear()
    category = {"evidence": [{"metric": BUS, "expression": "value >= 300.0625", "measured": 310.5, "passed": True}]}
    said = [shown_in_history(category, BUS, value) for value in (300.06249, 300.06249, 300.0625, 300.06249)]
    assert said == ["300.06", "300.06", "300.0625", "300.06"] and runs == [300.06249, 300.0625], (said, runs)
