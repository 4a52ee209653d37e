"""When to look at the change log again: at once after this process's writes, within a poll interval
after another process's (PRAGMA data_version changes when another connection commits)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3

__all__ = ["Feed", "POLL_SECONDS"]

POLL_SECONDS = 0.05  # other processes' changes reach a watch this fast; one cheap PRAGMA per interval


class Feed:
    """A signal watchers wait on, and one poller task while any watch is open."""

    def __init__(self, db: sqlite3.Connection, poll_seconds: float = POLL_SECONDS) -> None:
        self._db = db
        self._poll_seconds = poll_seconds
        self._signal: asyncio.Event | None = None
        self._watchers = 0
        self._poller: asyncio.Task[None] | None = None
        self._poller_loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    def signal(self) -> asyncio.Event:
        """The event the next change sets. Take it BEFORE reading the log, so no change falls in between."""
        if self._signal is None:
            self._signal = asyncio.Event()
        return self._signal

    def notify(self) -> None:
        """Something changed: wake every watcher (each then reads the log from its own position)."""
        if self._signal is not None:
            self._signal.set()
            self._signal = None  # a fresh event per change: no clear() race, no loop bound for long

    def subscribe(self) -> None:
        self._watchers += 1
        loop = asyncio.get_running_loop()
        if self._poller is None or self._poller.done() or self._poller_loop is not loop:
            self._poller, self._poller_loop = loop.create_task(self._poll()), loop

    def unsubscribe(self) -> None:
        self._watchers -= 1

    def close(self) -> None:
        self.closed = True
        self.notify()
        if self._poller is not None and not self._poller.done() and self._poller_loop is not None \
                and not self._poller_loop.is_closed():
            self._poller.cancel()

    def _data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    async def _poll(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # the connection was closed under us: the store is closing
            seen = self._data_version()
            while self._watchers > 0 and not self.closed:
                await asyncio.sleep(self._poll_seconds)
                if self.closed:
                    return
                now = self._data_version()
                if now != seen:
                    seen = now
                    self.notify()
