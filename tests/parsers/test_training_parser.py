"""Training-log parsing: NVCRE warmup and log-interval rules, goodput terms, stall helpers."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from nvcre_tui.engine.parsers import ParseError, parse_training
from nvcre_tui.engine.parsers.training_model import goodput_ratio
from tests.parsers.golden import fixture_text as fixture

E3 = ("[2026-03-02 11:42:07.513201] iteration       40/      50 | consumed samples:         1280 | elapsed time per "
      "iteration (ms): 2874.6 | throughput per GPU (TFLOP/s/GPU): 612.4 | learning rate: 5.998000E-04 | global batch "
      "size:    32 | lm loss: 9.417305E+00 | loss scale: 1.0 | grad norm: 2.113 | number of skipped iterations:   0 |"
      " number of nan iterations:   0 |")
NEMO = ("Training epoch 0, iteration 39/49 | lr: 5.99e-04 | global_batch_size: 32 | global_step: 39 | reduced_train_loss:"
        " 9.42 | train_step_timing in s: 2.87 | TFLOPS_per_GPU: 612.4 | consumed_samples: 1280")


def megatron_line(step: int, ms: float, tflops: float = 500.0) -> str:
    return E3.replace("iteration       40", f"iteration {step:8d}").replace("2874.6", f"{ms:.1f}").replace("612.4", f"{tflops}")


def test_reference_lines_parse_to_the_reference_values() -> None:
    step = parse_training(E3).recent_steps[0]
    assert (step.step, step.step_time_sec, step.tflops_per_gpu, step.loss) == (40, 2.8746, 612.4, 9.417305)
    assert step.timestamp == datetime(2026, 3, 2, 11, 42, 7, 513201)  # no zone printed: naive, not UTC
    nemo = parse_training(NEMO).recent_steps[0]
    assert (nemo.step, nemo.step_time_sec, nemo.tflops_per_gpu, nemo.loss) == (39, 2.87, 612.4, 9.42)


def test_megatron_warmup_by_step_count_keeps_every_step() -> None:
    """Every logged step is kept (15 too); warmupSteps 10 from the log's first step (10) makes 10 and 15 warmup."""
    text = "\n".join(megatron_line(step, ms) for step, ms in [(10, 5000), (15, 9000), (20, 2000), (30, 3000)])
    result = parse_training(text)
    assert result.step_count == 4 and result.warmup_step_count == 2
    assert result.avg_step_time_sec == pytest.approx(2.5)
    assert result.avg_tflops_per_gpu == 500.0  # steps 20 and 30 (NVCRE would average warm-up in)
    assert result.log_interval == 5  # the smallest gap logged


def test_restore_restarts_warmup() -> None:
    lines = [megatron_line(10, 1000), megatron_line(20, 1000), " loading distributed checkpoint from /c at iteration 20",
             megatron_line(30, 9000), megatron_line(40, 3000)]
    result = parse_training("\n".join(lines))
    assert result.restores == 1 and result.warmup_step_count == 2
    assert result.avg_step_time_sec == pytest.approx(2.0)


def test_profile_can_be_forced() -> None:
    text = "\n".join(megatron_line(step, 1000) for step in (1, 2, 3))
    assert parse_training(text).warmup_step_count == 3  # megatron: 10 warmup steps from step 1
    assert parse_training(text, profile="nemo").warmup_step_count == 1
    with pytest.raises(ParseError) as caught:
        parse_training(text, profile="jax")
    assert caught.value.reason == "WrongFormat"


def test_restart_goodput_terms() -> None:
    """Hand-computed from the fixture: 433 s wall, 40 s lost, 102 s resume, 120 s reschedule, 10 s save."""
    result = parse_training(fixture("training_megatron_restart.log"))
    goodput = result.goodput
    assert goodput is not None and result.interruptions == 1
    assert (goodput.training_time_sec, goodput.lost_work_sec, goodput.resume_sec, goodput.reschedule_sec,
            goodput.checkpoint_save_sec) == pytest.approx((433, 40, 102, 120, 10))
    assert goodput.ratio == pytest.approx(161 / 313)


@pytest.mark.parametrize(
    ("terms", "expected"),
    [((100, 0, 0, 0, 0), 1.0), ((100, 10, 5, 20, 5), 60 / 80), ((100, 90, 20, 0, 0), 0.0), ((10, 0, 0, 10, 0), 0.0)],
)
def test_goodput_formula_and_clamp(terms: tuple[float, ...], expected: float) -> None:
    assert goodput_ratio(*terms) == pytest.approx(expected)


def test_goodput_needs_a_timed_start() -> None:
    result = parse_training(fixture("training_megatron_no_throughput.log"))
    assert result.goodput is None and result.avg_tflops_per_gpu is None
    assert set(result.measurements()) == {"avgStepTimeSec"}


def test_carriage_return_progress_keeps_the_step_and_its_time() -> None:
    result = parse_training(fixture("training_nemo.log"))
    assert result.step_count == 5 and all(step.timestamp is not None for step in result.recent_steps)


def test_a_running_logs_standing_is_read_for_stall_detection() -> None:
    """Where a log stands (judging/stall.py reads it): its last progress, a restart waiting for a step, a save."""
    result = parse_training(fixture("training_megatron_8b.log"))
    assert result.last_progress_time is not None and result.last_progress_time >= result.last_step_time  # type: ignore[operator]
    assert result.resuming_since is None and not result.saving
    assert "last_progress_time" not in result.to_dict() and "saving" not in result.to_dict()  # not part of the parsed result


def test_no_step_lines_is_no_data() -> None:
    with pytest.raises(ParseError) as caught:
        parse_training(fixture("training_no_steps.log"))
    assert caught.value.reason == "NoDataCollected"


# --- issue 12, points 4-6 --------------------------------------------------------------------------------

def test_a_run_logging_every_step_keeps_every_step() -> None:
    """--log-interval 1: all 24 steps kept; warmup is the first 10 steps after the start, by step count."""
    result = parse_training(fixture("training_megatron_interval1.log"))
    assert result.step_count == 24 and result.warmup_step_count == 10 and result.log_interval == 1
    body = [step for step in result.recent_steps if not step.warmup]
    assert [step.step for step in body] == list(range(11, 25))
    assert result.avg_step_time_sec == pytest.approx(sum(step.step_time_sec for step in body) / len(body))


def test_a_window_of_three_steps_is_read_without_warmup() -> None:
    result = parse_training(fixture("training_megatron_window.log"))
    assert (result.step_count, result.warmup_step_count) == (3, 0)
    assert result.avg_step_time_sec == pytest.approx((1.5023 + 1.4987 + 1.5009) / 3)


def test_megatron_deepspeed_seconds_and_tflops() -> None:
    result = parse_training(fixture("training_megatron_deepspeed.log"))
    assert [step.step_time_sec for step in result.recent_steps] == [3.12, 2.5, 2.51, 2.52]
    assert [step.tflops_per_gpu for step in result.recent_steps] == [118.0, 148.3, 148.3, 148.3]
    assert result.world_size == 16 and result.final_loss == pytest.approx(7.5)


def test_terminal_wrapped_step_lines_are_rejoined() -> None:
    """Each wrapped piece carries its own kubelet stamp; the joined record gives every field, and the
    checkpoint lines after it are still read as checkpoints."""
    result = parse_training(fixture("training_megatron_wrapped.log"))
    assert [(step.step, step.tflops_per_gpu, step.loss) for step in result.recent_steps] == \
        [(10, 390.0, 9.1), (20, 410.0, 8.7), (30, 409.0, 8.4)]
    assert result.checkpoints_saved == 1 and result.goodput is not None
    assert result.goodput.checkpoint_save_sec == pytest.approx(3.0)


def test_nemo1_progress_bar_records() -> None:
    """global_step=N.000 and train_step_timing in s=...; a bar redrawn with the same step counts once."""
    result = parse_training(fixture("training_nemo1_progress.log"))
    assert [step.step for step in result.recent_steps] == [0, 1, 2, 3, 4] and result.framework == "nemo"
    assert result.warmup_step_count == 1 and result.avg_step_time_sec == pytest.approx((2.41 + 2.39 + 2.40 + 2.38) / 4)
    assert result.final_loss == pytest.approx(10.5) and result.total_steps is None


def test_times_without_a_zone_stay_naive_and_are_never_compared_with_utc() -> None:
    result = parse_training(fixture("training_megatron_window.log"))
    assert result.last_step_time == datetime(2026, 3, 2, 13, 10, 13, 250000)
    assert result.last_step_time.tzinfo is None
    stamped = parse_training(fixture("training_megatron_wrapped.log"))  # kubelet times: aware UTC
    assert stamped.last_step_time == datetime(2026, 3, 2, 12, 1, 10, tzinfo=timezone.utc)


def test_naive_and_aware_times_mixed_give_no_interval_and_no_error() -> None:
    """A start stamped by kubelet and steps stamped only by Megatron: no wall time, so no goodput (not 0)."""
    text = "2026-03-02T12:00:00Z using world size: 8, data-parallel size: 8\n" + "\n".join(
        megatron_line(step, 1000) for step in (10, 20, 30))
    result = parse_training(text)
    assert result.step_count == 3 and result.goodput is None and "goodputRatio" not in result.measurements()


def test_nemo_step_lines_never_swallow_the_next_line() -> None:
    """A NeMo 2 step line ends without "|": the checkpoint line after it is still its own record."""
    save = "Global Checkpoint Save : Rank: 0 : Iteration: 39 : Start time: 1 : Save duration: 4.5s"
    result = parse_training(NEMO + "\n" + save + "\n")
    assert result.step_count == 1 and result.checkpoints_saved == 1 and result.last_checkpoint_step == 39


def test_a_coloured_error_line_is_read_as_the_error_it_prints() -> None:
    lines = [f" [2026-03-02 11:42:{s:02d}] iteration       {s}/      30 | elapsed time per iteration (ms): 1000.0 | "
             f"throughput per GPU (TFLOP/s/GPU): 400.0 | lm loss: 2.0 |\n" for s in range(1, 21)]
    lines.append("\x1b[31mtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[0m\n")
    result = parse_training(lines)
    assert result.incomplete is not None and "torch.OutOfMemoryError: CUDA out of memory" in result.incomplete


def test_nemo_step_lines_without_step_timing_say_why_nothing_was_measured() -> None:
    """NeMo-Framework-Launcher#55: progress lines at global step 794 with no 'train_step_timing in s'. It read 'no
    Megatron-LM or NeMo training step lines found', though the log shows training; it now says the step time is what
    is missing. Lines that are timed are measured as before, whatever untimed lines come around them."""
    untimed = "".join(f"Training epoch 0, iteration {step}/49 | lr: 3e-05 | global_batch_size: 8 | global_step: {step} | "
                      f"reduced_train_loss: 1.2\n" for step in (10, 11, 12))
    with pytest.raises(ParseError) as error:
        parse_training(untimed)
    assert error.value.reason == "NoDataCollected"
    assert error.value.message == ("NeMo step lines (global steps 10 to 12, from line 1) print no step time (no "
                                   "'train_step_timing in s', which NeMo prints when its step timing is on): nothing "
                                   "was measured")
    timed = untimed.replace("reduced_train_loss: 1.2\n", "reduced_train_loss: 1.2 | train_step_timing in s: 2.5\n", 1)
    assert parse_training(timed).measurements() == {"avgStepTimeSec": 2.5}
