"""Stall detection of a running training (engine/judging/stall.py): NVCRE's WorkloadStalled rules on logs as kubelet
serves them (each line prefixed with its RFC 3339 time), judged at the engine's `now`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from nvcre_tui.engine.judging.stall import FLOOR_SECONDS, LOOK_SECONDS, MOST_LOOK_SECONDS, standing

START = datetime(2026, 3, 2, 11, 0, 0, tzinfo=UTC)
STEP = ("[2026-03-02 11:00:00.000000] iteration {step:8d}/      50 | consumed samples:         1280 | elapsed time per "
        "iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): 612.4 | learning rate: 5.998000E-04 | global batch "
        "size:    32 | lm loss: 9.417305E+00 | loss scale: 1.0 | grad norm: 2.113 | number of skipped iterations:   0 |"
        " number of nan iterations:   0 |")


def logged(seconds: float, text: str) -> str:
    """A pod-log line as kubelet serves it with timestamps=true, `seconds` after START."""
    return f"{(START + timedelta(seconds=seconds)).strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z {text}"


def steps(*at: tuple[float, int], ms: float = 20_000.0) -> list[str]:
    """Step lines (seconds after START, step number), each step taking `ms`."""
    return [logged(t, STEP.format(step=step, ms=ms)) for t, step in at]


def judge(lines: list[str], after: float, multiplier: int = 3, startup: float = 1200.0):
    return standing(lines, START + timedelta(seconds=after), START, multiplier=multiplier, startup_seconds=startup)


def test_no_step_within_the_startup_timeout_is_stalled_and_before_it_the_next_look_is_bounded() -> None:
    start_up = [logged(5, "> building GPT model ..."), logged(50, "[before the start of training step] datetime: x")]
    early = judge(start_up, after=600)
    assert early.stalled is None and early.look_again == MOST_LOOK_SECONDS  # not the 600 s left: steps may start
    late = judge(start_up, after=1200)
    assert late.stalled == "no training step logged in 20m00s since the run started (startupStallTimeoutSeconds 1200)"


def test_a_gap_past_multiplier_x_step_time_x_log_interval_is_stalled() -> None:
    # steps 10 (warm-up) .. 40 every 200 s: 20 s a step, a step logged every 10: the limit is 3 x 20 x 10 = 600 s
    lines = steps((200, 10), (400, 20), (600, 30), (800, 40))
    fine = judge(lines, after=800 + 500)
    assert fine.stalled is None and fine.look_again == pytest.approx(100)
    stalled = judge(lines, after=800 + 601)
    assert stalled.stalled is not None and stalled.look_again == LOOK_SECONDS
    assert stalled.stalled.startswith("no training progress for 10m01s after step 40/50 (stall limit 10m00s: stallMultiplier 3")


def test_the_limit_never_falls_below_the_floor() -> None:
    # 0.5 s a step: 3 x 0.5 x 10 = 15 s, held at FLOOR_SECONDS (clocks of kubelet and engine differ, logs flush in bursts)
    lines = steps((10, 10), (15, 20), (20, 30), ms=500.0)
    assert judge(lines, after=20 + FLOOR_SECONDS - 1).stalled is None
    assert judge(lines, after=20 + FLOOR_SECONDS + 1).stalled is not None


def test_warm_up_steps_alone_stand_in_for_the_average() -> None:
    # only step 10 logged (a warm-up step of 60 s): limit 3 x 60 x 10 = 1800 s, longer than past warm-up
    lines = steps((600, 10), ms=60_000.0)
    assert judge(lines, after=600 + 1700).stalled is None
    assert "average step time 60 s" in str(judge(lines, after=600 + 1801).stalled)


def test_a_checkpoint_save_in_progress_and_a_run_past_its_last_step_are_not_judged() -> None:
    lines = steps((200, 10), (400, 20), (600, 30))
    saving = [*lines, logged(601, "[2026-03-02 11:10:01.000000] saving checkpoint at iteration      30 to /ckpt in torch_dist format")]
    assert judge(saving, after=600 + 3600).stalled is None
    done = steps((200, 10), (400, 20), (600, 30), (800, 40), (1000, 50))
    assert judge(done, after=1000 + 3600).stalled is None


def test_a_restart_waiting_for_its_first_step_is_judged_by_the_startup_timeout_from_the_restart() -> None:
    lines = [*steps((200, 10), (400, 20)), logged(3000, "using world size: 32, data-parallel size: 16, context-parallel size: 1")]
    assert judge(lines, after=3000 + 1100).stalled is None  # 3,000 s since step 20: resuming, not stalled
    assert "since the application restarted" in str(judge(lines, after=3000 + 1201).stalled)


def test_steps_without_kubelet_times_are_never_judged_by_their_gaps() -> None:
    lines = [STEP.format(step=step, ms=20_000.0) for step in (10, 20, 30)]  # the line's own time has no zone
    assert judge(lines, after=10 * 3600).stalled is None
