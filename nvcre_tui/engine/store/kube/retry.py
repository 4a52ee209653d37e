"""How KubeStore waits between attempts, and what it counts (for metrics and benchmarks).

Backoff sleeps use `RetryPolicy.sleep` (asyncio.sleep by default), not the store's Clock: the wait is
for a real server to recover, so a simulated clock (ManualClock that never moves, ScaledClock that runs
fast) must not shorten or freeze it. Tests inject a `sleep` that records the delays and returns at once.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["RetryPolicy", "RequestStats"]


@dataclass
class RequestStats:
    """Counts since the store was opened."""

    requests: Counter[tuple[str, str]] = field(default_factory=Counter)  # (verb, plural) -> requests sent
    retries: int = 0          # requests sent again after a retryable error
    relists: int = 0          # lists read again whole because their continue token expired (410)
    watch_restarts: int = 0   # watch streams re-opened after the server closed or dropped one
    unreachable_since: float | None = None  # time.time() of the first request of a run that got no answer at all
    # time.time() since when no credentials could be had for a request (a kubeconfig exec plugin failed, as one that needs
    # a login while the console holds the terminal), and why, until a request is sent again
    uncredentialed_since: float | None = None
    credentials_problem: str = ""
    # Per watch (its path and query) whose streams fail to open again and again (the server answers 5xx or 429 to each,
    # or none): time.time() of its first failure. The watch waits it out itself (watch_patience), so nothing else saw it.
    watches_failing: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RetryPolicy:
    """Jittered exponential backoff, honouring the server's Retry-After, bounded in attempts and time."""

    base: float = 0.2       # first delay, seconds
    cap: float = 10.0       # longest computed delay
    attempts: int = 6       # tries of one request in all, the first included
    budget: float = 60.0    # most seconds one request may spend waiting between its tries
    jitter: float = 0.5     # a computed delay is drawn from [d * (1 - jitter), d]
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = random.random

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.base < 0 or self.cap < self.base or not 0 <= self.jitter <= 1:
            raise ValueError(f"retry policy: need attempts >= 1, 0 <= base <= cap, 0 <= jitter <= 1; got {self}")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds before retry number `retry` (0 for the first); the server's Retry-After wins when given."""
        if retry_after is not None:
            return retry_after
        computed = min(self.cap, self.base * 2.0 ** retry)
        return computed * (1.0 - self.jitter * self.random())
