"""The one clock: wall time, monotonic time and sleeping, injected everywhere.

`SystemClock` is real time, `ScaledClock` runs simulated time faster (or slower) than real time,
and `ManualClock` only moves when a test tells it to, so tests never sleep for real.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

from nvcre_tui.engine.errors import BadValue

__all__ = [
    "Clock",
    "SimulatedClock",
    "SystemClock",
    "ManualClock",
    "ScaledClock",
    "DEFAULT_START",
    "format_time",
    "parse_time",
]

DEFAULT_START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@runtime_checkable
class Clock(Protocol):
    """What the engine, the simulator and the console know about time."""

    def now(self) -> datetime:
        """Current wall time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards (for durations and deadlines)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""
        ...


@runtime_checkable
class SimulatedClock(Clock, Protocol):
    """A clock of simulated time, which a process playing a simulated fleet can move on to where another left it."""

    def jump_to(self, moment: datetime) -> None:
        """Move time forward to `moment` at once (nothing when it is not later than now)."""
        ...


def _require_aware(dt: datetime, what: str) -> datetime:
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"{what}: datetime {dt.isoformat()} has no timezone; use a UTC-aware datetime")
    return dt.astimezone(timezone.utc)


def format_time(dt: datetime) -> str:
    """Render a timezone-aware datetime as Kubernetes does: `2026-11-29T10:00:00Z` (whole seconds, UTC)."""
    return _require_aware(dt, "format_time").strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: object) -> datetime:
    """Parse an RFC 3339 timestamp (`Z` or an offset, optional fraction) into an aware UTC datetime; anything
    else (not a string, no timezone) is a ValueError."""
    if not isinstance(text, str):
        raise BadValue(f"not a time: expected an RFC 3339 string like 2026-11-29T10:00:00Z, got {text!r}")
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadValue(f"time {text!r} is not an RFC 3339 timestamp like 2026-11-29T10:00:00Z") from None
    if parsed.tzinfo is None:
        raise BadValue(f"time {text!r} has no timezone; add Z or an offset like +00:00")
    return parsed.astimezone(timezone.utc)


class SystemClock:
    """Real time."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ManualClock:
    """Time that moves only on `advance` / `advance_to`; sleepers wake when time passes their deadline.

    Advancing resolves due sleepers in deadline order (ties in the order they started sleeping);
    they resume at the caller's next await, all seeing the new time.
    """

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        self._start = _require_aware(start, "ManualClock start")
        self._elapsed = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)  # still a scheduling point, as asyncio.sleep(0) is
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._elapsed + seconds, next(self._order), future))
        await future

    @property
    def sleepers(self) -> int:
        """How many sleeps are waiting (cancelled ones excluded)."""
        return sum(1 for _, _, future in self._sleepers if not future.done())

    def next_deadline(self) -> datetime | None:
        """When the earliest waiting sleeper is due, or None when nobody sleeps."""
        self._drop_cancelled()
        return self._start + timedelta(seconds=self._sleepers[0][0]) if self._sleepers else None

    def advance(self, seconds: float) -> int:
        """Move time forward by `seconds`; return how many sleepers were woken."""
        if seconds < 0:
            raise ValueError(f"ManualClock.advance: seconds must be >= 0, got {seconds}")
        self._elapsed += seconds
        return self._wake_due()

    def advance_to(self, moment: datetime) -> int:
        """Move time forward to `moment` (aware, not in the past); return how many sleepers were woken."""
        target = (_require_aware(moment, "ManualClock.advance_to") - self._start).total_seconds()
        if target < self._elapsed:
            raise ValueError(
                f"ManualClock.advance_to: {format_time(moment)} is before now ({format_time(self.now())})"
            )
        return self.advance(target - self._elapsed)

    def jump_to(self, moment: datetime) -> None:
        """`advance_to` when `moment` is later than now, else nothing."""
        if _require_aware(moment, "ManualClock.jump_to") > self.now():
            self.advance_to(moment)

    def _drop_cancelled(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)

    def _wake_due(self) -> int:
        woken = 0
        while self._sleepers and self._sleepers[0][0] <= self._elapsed:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
                woken += 1
        return woken


class ScaledClock:
    """Simulated time running `speed` simulated seconds per real second, starting at `start`.

    `real_time` and `real_sleep` are the real clock underneath (injectable so tests need not wait).
    """

    def __init__(
        self,
        speed: float,
        start: datetime = DEFAULT_START,
        real_time: Callable[[], float] = time.monotonic,
        real_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._check_speed(speed)
        self._speed = speed
        self._start = _require_aware(start, "ScaledClock start")
        self._real_time = real_time
        self._real_sleep = real_sleep
        self._real_anchor = real_time()
        self._sim_anchor = 0.0

    @staticmethod
    def _check_speed(speed: float) -> None:
        if not speed > 0:
            raise ValueError(f"ScaledClock: speed must be > 0 simulated seconds per real second, got {speed}")

    @property
    def speed(self) -> float:
        return self._speed

    def set_speed(self, speed: float) -> None:
        """Change speed without a jump in time; sleeps already in progress keep their real duration."""
        self._check_speed(speed)
        self._sim_anchor = self.monotonic()
        self._real_anchor = self._real_time()
        self._speed = speed

    def jump_to(self, moment: datetime) -> None:
        """Move simulated time forward to `moment` (nothing when it is not later than now), at the same speed after."""
        ahead = (_require_aware(moment, "ScaledClock.jump_to") - self.now()).total_seconds()
        if ahead > 0:
            self._sim_anchor += ahead

    def monotonic(self) -> float:
        return self._sim_anchor + (self._real_time() - self._real_anchor) * self._speed

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self.monotonic())

    async def sleep(self, seconds: float) -> None:
        await self._real_sleep(max(0.0, seconds) / self._speed)
