"""The injected clock: ManualClock moves only when told, ScaledClock scales a (fake) real clock."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from nvcre_tui.engine.clock import DEFAULT_START, Clock, ManualClock, ScaledClock, SystemClock, format_time, parse_time

START = datetime(2026, 11, 29, 10, 0, tzinfo=timezone.utc)


def test_format_time_is_kubernetes_style_utc() -> None:
    assert format_time(START) == "2026-11-29T10:00:00Z"
    plus_two = datetime(2026, 11, 29, 12, 0, 0, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(plus_two) == "2026-11-29T10:00:00Z"  # converted to UTC, fraction dropped
    with pytest.raises(ValueError, match="no timezone"):
        format_time(datetime(2026, 11, 29))


@pytest.mark.parametrize(
    "text", ["2026-11-29T10:00:00Z", "2026-11-29T11:00:00+01:00", "2026-11-29T10:00:00.000Z", " 2026-11-29T10:00:00Z"]
)
def test_parse_time_accepts_rfc3339(text: str) -> None:
    parsed = parse_time(text)
    assert parsed == START and parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize(("text", "message"), [("yesterday", "not an RFC 3339"), ("2026-11-29T10:00:00", "no timezone"),
                                               (17, "expected an RFC 3339 string")])
def test_parse_time_rejects_bad_input_clearly(text: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_time(text)


def test_clocks_satisfy_the_protocol() -> None:
    for clock in (SystemClock(), ManualClock(), ScaledClock(10)):
        assert isinstance(clock, Clock)
    assert SystemClock().now().tzinfo is not None


def test_manual_clock_moves_only_when_advanced() -> None:
    clock = ManualClock(START)
    assert (clock.now(), clock.monotonic()) == (START, 0.0)
    clock.advance(90.5)
    assert clock.now() == START + timedelta(seconds=90.5) and clock.monotonic() == 90.5
    clock.advance_to(START + timedelta(hours=1))
    assert clock.monotonic() == 3600
    assert ManualClock().now() == DEFAULT_START


def test_manual_clock_rejects_going_backwards_and_naive_times() -> None:
    clock = ManualClock(START)
    clock.advance(10)
    with pytest.raises(ValueError, match=">= 0"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="before now"):
        clock.advance_to(START)
    with pytest.raises(ValueError, match="no timezone"):
        ManualClock(datetime(2026, 1, 1))


async def test_sleep_returns_only_once_time_passes_the_deadline() -> None:
    clock = ManualClock(START)
    sleeper = asyncio.create_task(clock.sleep(10))
    await asyncio.sleep(0)
    assert clock.sleepers == 1 and clock.next_deadline() == START + timedelta(seconds=10)
    assert clock.advance(9.5) == 0
    await asyncio.sleep(0)
    assert not sleeper.done()
    assert clock.advance(0.5) == 1
    await sleeper
    assert clock.sleepers == 0 and clock.next_deadline() is None


async def test_advancing_wakes_sleepers_in_deadline_order() -> None:
    clock = ManualClock(START)
    woke: list[str] = []

    async def nap(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    tasks = [asyncio.create_task(nap(name, seconds)) for name, seconds in
             (("late", 30), ("early", 5), ("middle", 15), ("tie-second", 15), ("never", 100))]
    await asyncio.sleep(0)
    assert clock.advance(60) == 4
    await asyncio.gather(*tasks[:4])
    assert woke == ["early", "middle", "tie-second", "late"]
    assert clock.sleepers == 1
    tasks[4].cancel()
    await asyncio.gather(tasks[4], return_exceptions=True)
    assert clock.sleepers == 0 and clock.next_deadline() is None and clock.advance(100) == 0


async def test_zero_sleep_returns_without_advancing() -> None:
    clock = ManualClock(START)
    await clock.sleep(0)
    await clock.sleep(-3)
    assert clock.now() == START


class FakeRealTime:
    """A real clock that moves only when a test says so; sleeping records the real duration asked for."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


async def test_scaled_clock_runs_speed_times_faster() -> None:
    real = FakeRealTime()
    clock = ScaledClock(60, START, real_time=real, real_sleep=real.sleep)
    real.now += 2
    assert clock.monotonic() == 120 and clock.now() == START + timedelta(minutes=2)
    await clock.sleep(30)
    assert real.slept == [0.5] and clock.monotonic() == 150
    clock.set_speed(1)
    assert clock.monotonic() == 150  # no jump when the speed changes
    real.now += 10
    assert clock.monotonic() == 160 and clock.speed == 1


@pytest.mark.parametrize("speed", [0, -2])
def test_scaled_clock_rejects_non_positive_speed(speed: float) -> None:
    with pytest.raises(ValueError, match="speed must be > 0"):
        ScaledClock(speed)
    with pytest.raises(ValueError, match="speed must be > 0"):
        ScaledClock(1).set_speed(speed)


def test_simulated_clocks_jump_forward_never_back() -> None:
    """A process playing a simulated fleet goes on from where another left it (kube/session.py), never back."""
    manual, real = ManualClock(START), FakeRealTime()
    scaled = ScaledClock(2, START, real_time=real, real_sleep=real.sleep)
    for clock in (manual, scaled):
        clock.jump_to(START + timedelta(hours=1))
        assert clock.now() == START + timedelta(hours=1)
        clock.jump_to(START)  # earlier: nothing
        assert clock.now() == START + timedelta(hours=1)
    real.now += 5
    assert scaled.now() == START + timedelta(hours=1, seconds=10)  # the same speed after the jump
