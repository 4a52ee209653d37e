"""A work queue keyed by object, as controller-runtime's: each key at most once, due now or later.

Keys are added when something about an object changed (a watch event for it or one of its children)
or when its last reconcile asked to be looked at again after a delay. Due times are read from the
injected clock, so a ManualClock run jumps straight to the next due key. Failures back off per key
(exponentially, capped) until the key succeeds once.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Hashable
from datetime import datetime, timedelta

from nvcre_tui.engine.clock import Clock

__all__ = ["WorkQueue", "BACKOFF_BASE", "BACKOFF_CAP"]

BACKOFF_BASE = 0.5
BACKOFF_CAP = 60.0


class WorkQueue:
    """Keys due now (`ready`, in arrival order) and keys due later (a heap by due time)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._ready: dict[Hashable, None] = {}  # an ordered set
        self._due: dict[Hashable, datetime] = {}
        self._heap: list[tuple[datetime, int, Hashable]] = []
        self._sequence = 0
        self._failures: dict[Hashable, int] = {}
        self.changed = asyncio.Event()  # set whenever a key becomes ready or an earlier due time appears
        self.added = 0

    def __len__(self) -> int:
        return len(self._ready) + len(self._due)

    def add(self, key: Hashable) -> None:
        """Make `key` due now."""
        self._due.pop(key, None)
        if key not in self._ready:
            self._ready[key] = None
            self.added += 1
        self.changed.set()

    def add_after(self, key: Hashable, seconds: float) -> None:
        """Make `key` due in `seconds` (an earlier due time for the same key wins)."""
        if seconds <= 0:
            self.add(key)
            return
        if key in self._ready:
            return
        due = self.clock.now() + timedelta(seconds=seconds)
        if key in self._due and self._due[key] <= due:
            return
        self._due[key] = due
        self._sequence += 1
        heapq.heappush(self._heap, (due, self._sequence, key))
        self.changed.set()

    def retry(self, key: Hashable) -> float:
        """Requeue a failed key after its backoff (doubling per consecutive failure); returns the delay."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        # The exponent bounded: 2**1024 is no float, and a key may fail for days (a webhook down answers 500).
        delay = min(BACKOFF_BASE * 2 ** min(failures, 32), BACKOFF_CAP)
        self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        """A key reconciled cleanly: its next failure starts the backoff over."""
        self._failures.pop(key, None)

    def take_ready(self) -> list[Hashable]:
        """Every key due by now, in order (they leave the queue)."""
        now = self.clock.now()
        while self._heap and self._heap[0][0] <= now:
            due, _, key = heapq.heappop(self._heap)
            if self._due.get(key) == due:
                del self._due[key]
                self._ready.setdefault(key, None)
        keys = list(self._ready)
        self._ready.clear()
        self.changed.clear()
        return keys

    def next_due(self) -> datetime | None:
        """When the earliest delayed key is due (None: nothing delayed)."""
        while self._heap and self._due.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # superseded entries
        return self._heap[0][0] if self._heap else None

    def has_ready(self) -> bool:
        """Whether a key is due now."""
        due = self.next_due()
        return bool(self._ready) or (due is not None and due <= self.clock.now())
