"""Stall detection of a running training (engine/judging/stall.py): NVCRE's WorkloadStalled rules on logs as kubelet
serves them (each line prefixed with its RFC 3339 time), timed by the engine's own looks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from nvcre_tui.engine.judging.stall import FLOOR_SECONDS, LOOK_SECONDS, MOST_LOOK_SECONDS, Progress, Standing, standing

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


class Looks:
    """The engine looking at one run's log now and then: its memory of the run's progress lives across looks."""

    def __init__(self, first: float = 0.0) -> None:
        self.seen = Progress(None, START + timedelta(seconds=first))

    def at(self, after: float, lines: list[str], multiplier: int = 3, startup: float = 1200.0) -> Standing:
        return standing(lines, START + timedelta(seconds=after), self.seen, multiplier=multiplier, startup_seconds=startup)


def test_no_step_within_the_startup_timeout_of_the_first_look_is_stalled() -> None:
    start_up = [logged(5, "> building GPT model ..."), logged(50, "[before the start of training step] datetime: x")]
    looks = Looks()
    early = looks.at(600, start_up)
    assert early.stalled is None and early.look_again == MOST_LOOK_SECONDS  # not the 600 s left: steps may start
    late = looks.at(1200, start_up)
    assert late.stalled == "no training step logged in 20m00s since the run started (startupStallTimeoutSeconds 1200)"


def test_progress_unchanged_past_multiplier_x_step_time_x_log_interval_is_stalled() -> None:
    # steps 10 (warm-up) .. 40 every 200 s: 20 s a step, a step logged every 10: the limit is 3 x 20 x 10 = 600 s
    lines = steps((200, 10), (400, 20), (600, 30), (800, 40))
    looks = Looks()
    assert looks.at(800, lines).stalled is None  # first seen at 800 s of the engine's clock
    fine = looks.at(800 + 500, lines)
    assert fine.stalled is None and fine.look_again == pytest.approx(100)
    stalled = looks.at(800 + 601, lines)
    assert stalled.stalled is not None and stalled.look_again == LOOK_SECONDS
    assert stalled.stalled.startswith("no training progress for 10m01s after step 40/50 (stall limit 10m00s: stallMultiplier 3")
    assert looks.at(800 + 700, [*lines, *steps((1450, 50))]).stalled is None  # it moved again: judged from then


def test_the_kubelets_clock_does_not_matter_only_the_engines() -> None:
    """The log's times four minutes (or a day) off the engine's: progress is timed by when the engine saw it."""
    for skew in (-240.0, 240.0, -86_400.0):
        lines = steps((200 + skew, 10), (400 + skew, 20), (600 + skew, 30), ms=2_000.0)  # a limit of 180 s (the floor)
        looks = Looks(first=600)
        assert looks.at(600, lines).stalled is None
        assert looks.at(600 + 179, lines).stalled is None
        assert looks.at(600 + 181, lines).stalled is not None


def test_a_limit_set_by_the_floor_says_so() -> None:
    """"stallMultiplier 3 x average step time 2 s x log interval 10" beside "stall limit 3m00s" read as a miscount."""
    lines = steps((200, 10), (220, 20), (240, 30), ms=2_000.0)  # 3 x 2 s x 10 = 60 s, under the 180 s floor
    looks = Looks(first=240)
    looks.at(240, lines)
    stalled = looks.at(240 + FLOOR_SECONDS + 1, lines).stalled
    assert stalled is not None and stalled.endswith("(stall limit 3m00s: stallMultiplier 3 x average step time 2 s x log "
                                                    "interval 10 = 1m00s, below the 3m00s floor)")


def test_the_limit_never_falls_below_the_floor_and_a_slowing_run_gets_its_latest_step_time() -> None:
    quick = steps((10, 10), (15, 20), (20, 30), ms=500.0)  # 3 x 0.5 x 10 = 15 s, held at FLOOR_SECONDS
    looks = Looks(first=20)
    assert looks.at(20, quick).stalled is None
    assert looks.at(20 + FLOOR_SECONDS - 1, quick).stalled is None
    assert looks.at(20 + FLOOR_SECONDS + 1, quick).stalled is not None
    # averaging 20 s a step, the last three at 60 s: the limit is 3 x 60 x 10 = 1800 s, not 600 s
    slowing = [*steps((200, 10), (400, 20), (600, 30), (800, 40)), *steps((1400, 50), (2000, 60), (2600, 70), ms=60_000.0)]
    slowing = [line.replace("      50 |", "     100 |") for line in slowing]
    looks = Looks(first=2600)
    assert looks.at(2600, slowing).stalled is None
    assert looks.at(2600 + 1700, slowing).stalled is None
    assert "average step time 60 s" in str(looks.at(2600 + 1801, slowing).stalled)


def test_warm_up_steps_alone_stand_in_for_the_average() -> None:
    lines = steps((600, 10), ms=60_000.0)  # only step 10 (warm-up, 60 s): a limit of 3 x 60 x 10 = 1800 s
    looks = Looks(first=600)
    assert looks.at(600, lines).stalled is None
    assert looks.at(600 + 1700, lines).stalled is None
    assert "average step time 60 s" in str(looks.at(600 + 1801, lines).stalled)


def test_a_checkpoint_save_in_progress_and_a_run_past_its_last_step_are_not_judged() -> None:
    lines = steps((200, 10), (400, 20), (600, 30))
    saving = [*lines, logged(601, "[2026-03-02 11:10:01.000000] saving checkpoint at iteration      30 to /ckpt in torch_dist format")]
    looks = Looks(first=601)
    assert looks.at(601, saving).stalled is None and looks.at(601 + 3600, saving).stalled is None
    done = steps((200, 10), (400, 20), (600, 30), (800, 40), (1000, 50))
    looks = Looks(first=1000)
    assert looks.at(1000, done).stalled is None and looks.at(1000 + 3600, done).stalled is None


def test_a_restart_waiting_for_its_first_step_is_judged_by_the_startup_timeout_from_when_it_was_seen() -> None:
    lines = [*steps((200, 10), (400, 20)), logged(3000, "using world size: 32, data-parallel size: 16, context-parallel size: 1")]
    looks = Looks(first=3000)
    assert looks.at(3000, lines).stalled is None
    assert looks.at(3000 + 1100, lines).stalled is None  # 3,700 s since step 20: resuming, not stalled
    assert "since the application restarted" in str(looks.at(3000 + 1201, lines).stalled)


def test_a_log_that_cannot_be_read_or_whose_steps_the_parser_cannot_read_is_never_judged() -> None:
    """A kubelet that does not serve logs (an unapproved serving certificate, a firewalled port) or a new log format
    would otherwise convict the hardware of a healthy run."""
    looks = Looks()
    assert looks.at(10 * 3600, []).stalled is None
    unreadable = [line.replace("612.4", "-613.0") for line in steps((200, 10), (400, 20), (600, 30))]
    assert looks.at(10 * 3600, unreadable).stalled is None
