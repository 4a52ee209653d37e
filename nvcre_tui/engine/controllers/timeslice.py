"""Sharing the event loop: the console runs the engine on its own loop (`nvcre` on the simulator), where a store's
writes and the pure cores never yield, so long work lets the loop run (`await asyncio.sleep(0)`) whenever a slice of
it has gone by: between reconciles, and between the parts of one that grows with the fleet (a node-health check of a
1,024-node group held the console for 0.3-0.5 s in one piece). Results never depend on it: it only lets others run
between parts of work that would run the same without it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["TimeSlice"]

Item = TypeVar("Item")
Result = TypeVar("Result")


class TimeSlice:
    """How long work may hold the event loop before it lets others run: `seconds`, or None for never (a ManualClock
    run, `run --wait` and the tests: the others' work is taken in between passes, as before)."""

    def __init__(self, seconds: float | None = None, timer: Callable[[], float] = time.perf_counter) -> None:
        self.seconds = seconds
        self.yields = 0  # how often it let the loop run (the bench and the tests read it)
        self._timer = timer
        self._since = timer()

    def restart(self) -> None:
        """A new slice starts now (the loop just ran)."""
        self._since = self._timer()

    async def breathe(self) -> None:
        """Let the event loop run once the slice has gone by since it last did."""
        if self.seconds is not None and self._timer() - self._since >= self.seconds:
            await asyncio.sleep(0)
            self.yields += 1
            self._since = self._timer()

    async def map(self, work: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
        """`work` of each item in order, letting the loop run between items once a slice has gone by."""
        results = []
        for item in items:
            results.append(work(item))
            await self.breathe()
        return results
