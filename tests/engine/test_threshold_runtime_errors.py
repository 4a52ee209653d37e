"""A threshold that cannot be evaluated on a number is refused when the manifest is read, in words (never cel-python's
text); one that still fails on a measurement (no probe can try every double) blames the expression, not the nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.judging import thresholds
from nvcre_tui.engine.judging.results import job_failures
from nvcre_tui.engine.judging.thresholds import INVALID_EXPRESSION, ThresholdError, compile_threshold, threshold_problems
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW

BUS = "busBandwidthGBps"
ROOT = Path(__file__).parents[2]
CELPY_WORDS = ("celpy", "Token(", "<class", "DoubleType", "no such overload", "does not support field selection", "RULE")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        # short-circuiting hid these from the old probes (0, 1, 1000.5): render passed, run blamed every node
        ("value < 1 || value.foo", 'CEL expression "value < 1 || value.foo" cannot be evaluated: value is a number, it has no field foo'),
        ("has(value.x)", 'CEL expression "has(value.x)" cannot be evaluated: value is a number, it has no field x'),
        # no CEL (has takes a field selection), and cel-python read it as true: a threshold that always passed
        ("has(value)", 'CEL expression "has(value)": has() takes a field selection, such as has(value.x)'),
        ("value > 1 || [1].all(x, has(x))", 'CEL expression "value > 1 || [1].all(x, has(x))": has() takes a field selection, such as has(value.x)'),
        ("value > 1 && value.size() > 0", 'CEL expression "value > 1 && value.size() > 0" cannot be evaluated: value is a number, it has no method size()'),
        ("value > 1 && value[0] > 1", 'CEL expression "value > 1 && value[0] > 1" cannot be evaluated: value is a number, it cannot be indexed'),
        ("value > 1 && size(value) > 0",
         'CEL expression "value > 1 && size(value) > 0" fails when value is 2: size() takes a list, map, string or bytes, not a number'),
        ("value < 1 || 1/0 == 1", 'CEL expression "value < 1 || 1/0 == 1" fails when value is 1: division by zero'),
        ("value / 0 > 1", 'invalid CEL expression "value / 0 > 1": operator / does not apply to double and int; write 0 as 0.0'),
        ("value < 1 || value % 2.0 == 0.0",
         'CEL expression "value < 1 || value % 2.0 == 0.0" fails when value is 1: operator % does not apply to double and double'),
        ("value > 1 && [1, 2][5] == 1", 'CEL expression "value > 1 && [1, 2][5] == 1" fails when value is 2: a list index is out of range'),
        ("value < 1e9 || int(value * 1e12) > 0",
         'CEL expression "value < 1e9 || int(value * 1e12) > 0" fails when value is 1000000000: int() is out of range'),
        ('value > 1 && duration(value) > duration("1s")',
         'CEL expression "value > 1 && duration(value) > duration("1s")" fails when value is 2: duration() takes a string such as "1s", not a number'),
        # the metric's own range: a goodput ratio is tried at 0.95, a bandwidth at hundreds of GB/s
        ("value < 0.94 || value > 0.96 || 1/0 == 1", 'CEL expression "value < 0.94 || value > 0.96 || 1/0 == 1" fails when value is 0.95: division by zero'),
    ],
)
def test_an_expression_that_fails_on_some_number_is_refused_in_words(expression: str, message: str) -> None:
    key = "goodputRatio" if "0.96" in expression else BUS
    with pytest.raises(ThresholdError) as caught:
        compile_threshold(key, expression)
    assert str(caught.value) == message
    assert caught.value.key == key
    assert not any(word in str(caught.value) for word in CELPY_WORDS)


def test_a_macro_variable_named_value_is_not_the_measurement() -> None:
    assert threshold_problems({BUS: "[{'x': 1.0}].all(value, value.x > 0.0)"}) == []


def _thresholds_in(node: Any) -> list[tuple[str, str]]:
    if isinstance(node, dict):
        found = [(key, text) for key, text in (node.get("thresholds") or {}).items() if isinstance(text, str)] \
            if isinstance(node.get("thresholds"), dict) else []
        return found + [pair for value in node.values() for pair in _thresholds_in(value)]
    if isinstance(node, list):
        return [pair for item in node for pair in _thresholds_in(item)]
    return []


# What the repository ships with thresholds, all inside it: its example manifests, catalog and recorded cases (nothing
# beside the checkout, which a fresh clone does not have)
SHIPPED = ("examples", "catalog", "tests/cases")


def test_every_threshold_the_repository_ships_still_validates() -> None:
    shipped = {folder: sorted((ROOT / folder).rglob("*.yaml")) for folder in SHIPPED}
    assert all(shipped.values()), {folder: len(files) for folder, files in shipped.items()}  # a folder moved is not skipped
    files = [path for paths in shipped.values() for path in paths]
    found = [pair for path in files for document in yaml.safe_load_all(path.read_text()) for pair in _thresholds_in(document)]
    assert len(found) >= 10
    assert [(key, text, threshold_problems({key: text})) for key, text in found if threshold_problems({key: text})] == []


@pytest.fixture
def lax_probes(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Validation that tries only 0 and 1: what slips past it is what a probe cannot foresee."""
    monkeypatch.setattr(thresholds, "value_probes", lambda key: (0.0, 1.0))
    thresholds._compile_cached.cache_clear()
    yield
    thresholds._compile_cached.cache_clear()


SLIPS_PAST = "value <= 1.0 || value.foo > 1.0 || 1 / 0 == 1"


def test_an_evaluation_error_on_a_measurement_is_the_expressions_and_speaks_plainly(lax_probes: None) -> None:
    # `value.foo` is refused by the parse tree whatever the probes; the division is not
    with pytest.raises(ThresholdError, match="it has no field foo"):
        compile_threshold(BUS, SLIPS_PAST)
    evidence = compile_threshold(BUS, "value <= 1.0 || 1 / 0 == 1").evaluate(481.954)
    assert (evidence.passed, evidence.reason) == (False, INVALID_EXPRESSION)
    assert evidence.message == ('Threshold "busBandwidthGBps" could not be evaluated on measured 481.954: division by zero, '
                                "expression: value <= 1.0 || 1 / 0 == 1")
    assert not any(word in evidence.message for word in CELPY_WORDS)


def test_evidence_that_could_not_be_evaluated_is_attached_to_no_node() -> None:
    missed = {"metric": BUS, "measured": 1.0, "expression": "value >= 9", "passed": False, "reason": "ThresholdViolated", "message": "m"}
    broken = {**missed, "metric": "algBandwidthGBps", "reason": INVALID_EXPRESSION, "message": "b"}
    job = {"status": {"evidence": [missed, broken], "failedNodes": [{"name": "n1", "reason": "ThresholdViolation", "message": "m"}]}}
    assert job_failures(job) == [{"name": "n1", "reason": "ThresholdViolation", "message": "m", "evidence": [missed]}]


CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: c, namespace: default}
spec:
  target: {nodeNames: [gpu-node-01, gpu-node-02]}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, thresholds: THRESHOLDS}
"""


async def _certify(thresholds_text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    try:
        cert = certification_from_text("c", CERT.replace("THRESHOLDS", thresholds_text), default_catalog()).to_wire()
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)
        await session.engine.run_until_settled(max_seconds=6 * 3600)
        [wf] = (await session.store.list(WORKFLOW, "default")).items
        return wf, (await session.store.list(JOB, "default")).items
    finally:
        await session.close()


async def test_a_threshold_that_cannot_be_evaluated_fails_the_job_and_blames_no_node(lax_probes: None) -> None:
    wf, jobs = await _certify("{busBandwidthGBps: 'value <= 1.0 || 1 / 0 == 1'}")
    assert jobs
    for job in jobs:
        failed = cond.find(job["status"]["conditions"], "Failed")
        assert failed is not None and failed["status"] == "True" and failed["reason"] == INVALID_EXPRESSION, job["status"]["conditions"]
        assert "division by zero, expression: value <= 1.0 || 1 / 0 == 1; no node blamed" in failed["message"]
        assert not job["status"].get("failedNodes")
        assert [e["reason"] for e in job["status"]["evidence"]] == [INVALID_EXPRESSION]
    assert cond.phase(wf) == "Failed" and not wf["status"].get("failedNodes")


async def test_a_broken_threshold_beside_a_missed_one_convicts_only_for_the_missed_one(lax_probes: None) -> None:
    wf, jobs = await _certify("{busBandwidthGBps: 'value >= 100000.0', algBandwidthGBps: 'value <= 1.0 || 1 / 0 == 1'}")
    for job in jobs:
        failed_nodes = job["status"]["failedNodes"]
        assert {f["reason"] for f in failed_nodes} == {"ThresholdViolation"}
        assert all("busBandwidthGBps" in f["message"] and "algBandwidthGBps" not in f["message"] for f in failed_nodes)
        assert {e["metric"] for entry in job_failures(job) for e in entry["evidence"]} == {BUS}


def test_a_bad_regular_expression_is_one_line_and_re2_writes_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    cert = tmp_path / "cert.yaml"
    cert.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: re}\nspec:\n"
        "  target: {nodeSelector: {nvidia.com/gpu.present: 'true'}}\n  categories:\n"
        "  - {domain: communication, variant: nccl-all-reduce, options: {thresholds: {busBandwidthGBps: 'value > 0.0 && \"a\".matches(\"(\")'}}}\n")
    done = subprocess.run([sys.executable, "-m", "nvcre_tui", "certification", "render", str(cert)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"{cert}: spec.categories[0].options.thresholds.busBandwidthGBps: CEL expression "
                                        "\"value > 0.0 && \"a\".matches(\"(\")\" fails when value is 0.5: matches() was given an invalid regular expression"]


@pytest.mark.parametrize(("options", "message"), [
    ("{thresholds: {avgTFLOPsPerGPU: 'value > 1'}}", "applies to no category: no category of the certification measures it"),
    ("{thresholds: {busBandwidthGBps: 'value > 1'}}", None),
])
def test_a_global_threshold_that_applies_to_no_category_is_refused(options: str, message: str | None) -> None:
    """A global threshold on a metric no category measures judged nothing, and the certification passed without it."""
    text = f"""
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: g}}
spec:
  target: {{nodeSelector: {{nvidia.com/gpu.present: "true"}}}}
  options: {options}
  categories:
    - {{domain: communication, variant: nccl-all-reduce}}
    - {{domain: communication, variant: nccl-all-gather, options: {{thresholds: {{busBandwidthGBps: 'value > 2'}}}}}}
"""
    if message is None:
        certification_from_text("g.yaml", text, default_catalog())
        return
    with pytest.raises(Exception) as caught:
        certification_from_text("g.yaml", text, default_catalog())
    assert str(caught.value).splitlines() == [f"g.yaml: spec.options.thresholds.avgTFLOPsPerGPU: {message}"]
    only_theirs = text.replace("- {domain: communication, variant: nccl-all-reduce}\n", "").replace("avgTFLOPsPerGPU", "busBandwidthGBps")
    with pytest.raises(Exception) as caught:
        certification_from_text("g.yaml", only_theirs, default_catalog())
    assert str(caught.value).splitlines() == [
        "g.yaml: spec.options.thresholds.busBandwidthGBps: applies to no category: communication/nccl-all-gather measures it "
        "but set thresholds of their own, which replace the global ones"]
