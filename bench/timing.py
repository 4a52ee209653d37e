"""Timing shared by the benchmarks (each runs as `python bench/NAME.py`, so this folder is on sys.path)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable


async def timed_ms(step: Callable[[], Awaitable[object]]) -> float:
    """Milliseconds one awaited step takes."""
    start = time.perf_counter()
    await step()
    return (time.perf_counter() - start) * 1000


async def median_ms(rounds: int, step: Callable[[], Awaitable[object]]) -> float:
    """The median of `rounds` timings of `step`."""
    return statistics.median([await timed_ms(step) for _ in range(rounds)])
