"""How long a simulated Megatron run trains, as the catalog's train.sh runs Megatron: --train-iters (maxSteps; -1 is
no step limit), --exit-duration-in-mins (exitDurationMins, checked after every step, startup included) and a line
every 10th step. What it prints is read by the same parser as a cluster's log, and bad lengths are refused up front."""

from __future__ import annotations

import random
import re
import subprocess
from datetime import UTC, datetime

import pytest

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.sim.outputs.training import write_megatron_log
from nvcre_tui.engine.sim.physics import UNLIMITED_STEPS, PlanError, RunPlan
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from tests.certifications import on_every_gpu_node

from .helpers import ALL_NODES, plan, training_plan, training_run

DEFAULT = default_scenario()
START = datetime(2026, 1, 1, tzinfo=UTC)


def _log(run_plan: RunPlan) -> list[str]:
    training = run_plan.training
    assert training is not None
    return [line.rstrip("\n") for line in write_megatron_log(
        training.samples, random.Random(1), start=START, log_interval=training.log_interval, total_steps=training.total_steps,
        checkpoints=training.checkpoints, startup_sec=run_plan.startup, exit_after=training.exit_after,
        exit_minutes=training.exit_minutes)]


def test_a_step_count_below_the_log_interval_logs_no_step() -> None:
    assert training_plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=5)).samples == ()
    assert len(training_plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=25)).samples) == 2  # steps 10 and 20


def test_no_step_limit_trains_until_the_exit_duration_and_says_so() -> None:
    run_plan = plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=-1, exit_mins=10))
    training = run_plan.training
    assert training is not None and training.total_steps == UNLIMITED_STEPS and len(training.samples) > 3
    assert training.exit_minutes is not None and 10 < training.exit_minutes < 10.5  # the first step past 10 minutes
    assert 600 < run_plan.duration < 640
    log = _log(run_plan)
    assert re.search(r"\[exiting program after 10\.\d+ minutes\] datetime: ", log[-1])
    measured = measure("training", log)
    assert measured.finished_failure() is None  # Megatron's own stop is a whole run
    assert set(measured.measurements) == {"goodputRatio", "avgTFLOPsPerGPU", "avgStepTimeSec"}


def test_an_exit_duration_before_the_step_limit_ends_the_run_early() -> None:
    limited = training_plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=500, exit_mins=5))
    assert limited.exit_after is not None and len(limited.samples) < 50
    whole = training_plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=50, exit_mins=30))
    assert whole.exit_after is None and len(whole.samples) == 5


def test_an_exit_duration_shorter_than_the_first_logged_step_measures_nothing_and_says_why() -> None:
    run_plan = plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=50, exit_mins=1))
    assert run_plan.training is not None and run_plan.training.samples == ()
    failure = measure("training", _log(run_plan)).finished_failure()
    assert failure is not None and failure.reason == "NoDataCollected"
    assert "Megatron stopped on its own limit first (exiting program after 1." in failure.message


def test_no_step_limit_without_an_exit_duration_is_a_plan_error() -> None:
    with pytest.raises(PlanError, match="TRAIN_ITERS -1 .* needs EXIT_DURATION_MINS"):
        plan(DEFAULT, training_run("t", ALL_NODES[:8], iters=-1))


CERT = on_every_gpu_node("{domain: training, variant: nemotron5-8b, options: {maxSteps: STEPS}}")


@pytest.mark.parametrize("steps", [0, 5, 9, 10, 15, 19])
def test_a_step_count_that_leaves_nothing_to_measure_is_refused(steps: int) -> None:
    """Below 20 a run logs nothing (fewer than 10) or step 10 alone, a warm-up step: nothing measured, never a pass. One
    line, naming the least that is taken (it said 'at least 10' of maxSteps 5, and 10 was refused then: 'at least 20')."""
    with pytest.raises(InputError) as caught:
        certification_from_text("c.yaml", CERT.replace("STEPS", str(steps)), default_catalog())
    assert str(caught.value) == (f"c.yaml: spec.categories[0].options.maxSteps: training/nemotron5-8b needs maxSteps of at least 20, "
                                 f"got {steps}: Megatron logs every 10th step and the first 10 are warm-up, so fewer measure no "
                                 "goodput, TFLOP/s or step time, which never passes (-1: no step limit)")
    certification_from_text("c.yaml", CERT.replace("STEPS", "20"), default_catalog())  # the least it names is taken


@pytest.mark.parametrize("steps", [-1, 20, 50])
def test_no_limit_and_enough_steps_are_taken(steps: int) -> None:
    certification_from_text("c.yaml", CERT.replace("STEPS", str(steps)), default_catalog())


def test_the_catalog_train_script_turns_no_step_limit_into_megatrons_largest() -> None:
    script = default_catalog().find("training", "nemotron5-8b").template["config"]["train.sh"]  # type: ignore[union-attr,index,call-overload]
    guard = next(line.strip() for line in str(script).splitlines() if "TRAIN_ITERS" in line and line.strip().startswith("if "))
    for given, passed in (("-1", str(UNLIMITED_STEPS)), ("50", "50")):
        result = subprocess.run(["bash", "-euc", f'{guard}\necho "$TRAIN_ITERS"'], env={"TRAIN_ITERS": given},
                                capture_output=True, text=True, check=True)
        assert result.stdout.strip() == passed


def test_the_limit_passing_during_a_logged_step_stops_the_run_after_its_line() -> None:
    """Megatron logs step 10, then checks the duration after that same step: its line is out before it stops."""
    calm = DEFAULT.model_copy(update={"physics": DEFAULT.physics.model_copy(update={"noise": 0.0})})
    plan0 = training_plan(calm, training_run("t", ALL_NODES[:8], iters=50))
    first = plan0.samples[0].step_time_sec  # the warm-up step time, the same every run without noise
    startup = plan(calm, training_run("t", ALL_NODES[:8], iters=50)).startup
    exit_seconds = startup + first * 9.5  # passed during the tenth step
    minutes = exit_seconds / 60
    scenario = calm.model_copy(update={"physics": calm.physics.model_copy(update={"startup_sec": startup})})
    run = training_run("t", ALL_NODES[:8], iters=50)
    run["spec"]["env"].append({"name": "EXIT_DURATION_MINS", "value": f"{minutes:.6f}"})
    limited = training_plan(scenario, run)
    assert len(limited.samples) == 1 and limited.exit_after == 0.0


CERT_OPTIONS = CERT.replace("{maxSteps: STEPS}", "OPTIONS")


@pytest.mark.parametrize(("options", "refused"), [
    ("{maxSteps: -1, timeoutPerJob: 20m}", "give timeoutPerJob at least 40m00s"),
    ("{maxSteps: -1, exitDurationMins: 55}", "give timeoutPerJob at least 1h05m"),
    ("{maxSteps: -1}", None), ("{maxSteps: -1, exitDurationMins: 45}", None), ("{maxSteps: 50, timeoutPerJob: 20m}", None),
])
def test_no_step_limit_needs_a_timeout_beyond_its_duration(options: str, refused: str | None) -> None:
    cert = certification_from_text("c.yaml", CERT_OPTIONS.replace("OPTIONS", options), default_catalog())
    if refused is None:
        render_certification(cert, build_nodes(DEFAULT), default_catalog(), "c.yaml")
        return
    with pytest.raises(InputError) as caught:
        render_certification(cert, build_nodes(DEFAULT), default_catalog(), "c.yaml")
    assert str(caught.value).startswith("c.yaml: spec.categories[0].options.maxSteps: -1 trains until exitDurationMins")
    assert refused in str(caught.value)


@pytest.mark.parametrize("steps", [10, 15, 19])
def test_a_step_count_that_logs_only_warm_up_is_refused_thresholds_or_not(tmp_path: object, steps: int,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """maxSteps 10 to 19 logs step 10 alone, a warm-up step: no goodput, TFLOP/s or step time, and no measurement is never
    a pass. It was a smoke run that passed without a threshold; it is refused before anything is created, either way."""
    from pathlib import Path

    from nvcre_tui.cli import main

    folder = Path(str(tmp_path))
    cert = folder / "cert.yaml"
    body = ("apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: short}\nspec:\n"
            "  target: {nodeNames: [gpu-node-01, gpu-node-02]}\n  categories:\n    - domain: training\n"
            f"      variant: nemotron5-8b\n      options: {{maxSteps: {steps}THRESHOLD}}\n")
    argv = ["certification", "run", "--sim", "--cert-file", str(cert), "--wait", "--state", str(folder / "s.db"),
            "--history", str(folder / "h.db")]
    for threshold, named in ((", thresholds: {avgTFLOPsPerGPU: 'value >= 100'}", "avgTFLOPsPerGPU"),
                             ("", "avgStepTimeSec and avgTFLOPsPerGPU and goodputRatio")):
        cert.write_text(body.replace("THRESHOLD", threshold))
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert (f"needs maxSteps of at least 20, got {steps}: Megatron logs every 10th step and the first 10 are warm-up, so "
                "fewer measure no goodput, TFLOP/s or step time, which never passes (-1: no step limit)") in err, named
        assert len(err.splitlines()) == 1, err  # one line, not the catalog's least and the thresholds' both
    assert not (folder / "s.db").exists() or "short" not in (folder / "s.db").read_bytes().decode("latin-1")


def test_a_run_that_ends_in_warm_up_fails_unblamed_without_a_threshold(tmp_path: object) -> None:
    """An exit duration that ends the run after its first (warm-up) interval measured nothing: without a threshold it
    passed (a PASS of nothing measured); it fails validation, MeasurementUnavailable, no node blamed."""
    import json
    from pathlib import Path

    from nvcre_tui.cli import main

    folder = Path(str(tmp_path))
    case = Path(__file__).resolve().parents[1] / "cases" / "scenarios" / "missing-measurement-short-training"
    cert = folder / "cert.yaml"
    cert.write_text((case / "cert.yaml").read_text().replace(', thresholds: {avgStepTimeSec: "value <= 30", goodputRatio: "value >= 0.9"}', ""))
    assert "thresholds" not in cert.read_text()
    argv = ["certification", "run", "--sim", "--scenario", str(case / "scenario.yaml"), "--cert-file", str(cert), "--wait",
            "--state", str(folder / "s.db"), "--history", str(folder / "h.db"), "--results-file", str(folder / "r.json")]
    assert main(argv) == 1
    report = json.loads((folder / "r.json").read_text())
    [category] = report["categories"]
    assert (report["result"], report["failedNodes"], category["status"]) == ("FAILED", [], "Failed")
    messages = " ".join(str(group) for group in category["failedGroups"])
    assert "MeasurementUnavailable" in messages and "no goodputRatio, avgTFLOPsPerGPU or avgStepTimeSec measured" in messages


@pytest.mark.parametrize(("steps", "refused"), [(10, True), (19, True), (20, False), (-1, False)])
def test_a_speed_threshold_needs_steps_past_warm_up(steps: int, refused: bool) -> None:
    """TFLOP/s and the step time are measured past warm-up: maxSteps 10-19 logs step 10 alone, a warm-up step, so a
    threshold on them would have nothing to judge (it is refused at input, not failed after the run)."""
    text = CERT.replace("{maxSteps: STEPS}", f"{{maxSteps: {steps}, thresholds: {{avgTFLOPsPerGPU: 'value >= 500'}}}}")
    if not refused:
        certification_from_text("c.yaml", text, default_catalog())
        return
    with pytest.raises(InputError) as caught:
        certification_from_text("c.yaml", text, default_catalog())
    assert str(caught.value) == (f"c.yaml: spec.categories[0].options.maxSteps: training/nemotron5-8b needs maxSteps of at least 20, "
                                 f"got {steps}: Megatron logs every 10th step and the first 10 are warm-up, so fewer measure no "
                                 "goodput, TFLOP/s or step time, which never passes (-1: no step limit)")


def test_a_goodput_threshold_needs_steps_past_warm_up_too() -> None:
    """Warm-up alone measures no goodput either (its share of wall time is no training's): refused at input with the
    speed thresholds, named beside them."""
    text = CERT.replace("{maxSteps: STEPS}", "{maxSteps: 10, thresholds: {goodputRatio: 'value >= 0.9', avgStepTimeSec: 'value <= 9'}}")
    with pytest.raises(InputError) as caught:
        certification_from_text("c.yaml", text, default_catalog())
    assert str(caught.value) == ("c.yaml: spec.categories[0].options.maxSteps: training/nemotron5-8b needs maxSteps of at least 20, "
                                 "got 10: Megatron logs every 10th step and the first 10 are warm-up, so fewer measure no "
                                 "goodput, TFLOP/s or step time, which never passes (-1: no step limit)")


def test_the_least_measured_steps_are_the_parsers_warm_up_and_interval() -> None:
    from nvcre_tui.engine.parsers.training_model import PROFILES
    from nvcre_tui.engine.planning.manifest import LEAST_MEASURED_STEPS, WARMUP_STEPS

    megatron = PROFILES["megatron"]
    assert (WARMUP_STEPS, LEAST_MEASURED_STEPS) == (megatron.warmup_steps, megatron.warmup_steps + megatron.log_interval)


@pytest.mark.parametrize(("options", "where"), [
    ("spec:\n  options: {maxSteps: 12}\n", "spec.options.maxSteps"),
    ("spec:\n  maxSteps: 12\n", "spec.maxSteps"),
])
def test_the_refusal_names_where_max_steps_was_set(options: str, where: str) -> None:
    text = CERT.replace("{maxSteps: STEPS}", "{thresholds: {avgStepTimeSec: 'value <= 30'}}").replace("spec:\n", options, 1)
    with pytest.raises(InputError) as caught:
        certification_from_text("c.yaml", text, default_catalog())
    assert str(caught.value).startswith(f"c.yaml: {where}: training/nemotron5-8b needs maxSteps of at least 20, got 12: ")
