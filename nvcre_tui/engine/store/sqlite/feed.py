"""When to look at the change log again: at once after this process's writes, within a poll interval
after another process's (PRAGMA data_version changes when another connection commits).

It also remembers this process's recent writes (which resourceVersions, which kinds), so a watch woken
by a write of another kind moves past it without reading the file: with ten watches open, a write costs
one log read, not ten. Another process's writes are not known here: after one, watches read the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3

__all__ = ["Feed", "POLL_SECONDS"]

POLL_SECONDS = 0.05  # other processes' changes reach a watch this fast; one cheap PRAGMA per interval
_REMEMBERED_WRITES = 1024


class Feed:
    """A signal watchers wait on, and one poller task while any watch is open."""

    def __init__(self, db: sqlite3.Connection, poll_seconds: float = POLL_SECONDS) -> None:
        self._db = db
        self._poll_seconds = poll_seconds
        self._signal: asyncio.Event | None = None
        self._signal_loop: asyncio.AbstractEventLoop | None = None
        self._watchers = 0
        self._poller: asyncio.Task[None] | None = None
        self._poller_loop: asyncio.AbstractEventLoop | None = None
        self._written: dict[int, tuple[int, frozenset[str]]] = {}  # rv before a write -> (rv after, kinds)
        self.latest: int | None = None  # the file's resourceVersion, while no other process wrote; else None
        self.closed = False

    def signal(self) -> asyncio.Event:
        """The event the next change sets. Take it BEFORE reading the log, so no change falls in between."""
        loop = asyncio.get_running_loop()
        if self._signal is None or self._signal_loop is not loop:  # a store may outlive an asyncio.run()
            self._signal, self._signal_loop = asyncio.Event(), loop
        return self._signal

    def notify(self) -> None:
        """Something changed: wake every watcher (each then reads the log from its own position)."""
        if self._signal is not None:
            self._signal.set()
            self._signal = None  # a fresh event per change: no clear() race, no loop bound for long

    def written(self, before: int, after: int, kinds: frozenset[str]) -> None:
        """This process committed the changes after `before` up to `after`, of these kinds."""
        self._written[before] = (after, kinds)
        if len(self._written) > _REMEMBERED_WRITES:
            del self._written[next(iter(self._written))]
        self.latest = after
        self.notify()

    def skip(self, kind: str, position: int) -> int:
        """The position after this process's writes that follow `position` and hold no change of `kind`."""
        while (entry := self._written.get(position)) is not None and kind not in entry[1]:
            position = entry[0]
        return position

    def subscribe(self) -> None:
        loop = asyncio.get_running_loop()
        if self._poller is None or self._poller.done() or self._poller_loop is not loop:
            # The version is read now, before the new watch reads the log: a commit in between is noticed.
            self._poller, self._poller_loop = loop.create_task(self._poll(self._data_version())), loop
        self._watchers += 1

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

    async def _poll(self, seen: int) -> None:
        with contextlib.suppress(sqlite3.Error):  # the connection was closed under us: the store is closing
            while self._watchers > 0 and not self.closed:
                await asyncio.sleep(self._poll_seconds)
                if self.closed:
                    return
                now = self._data_version()
                if now != seen:
                    seen, self.latest = now, None
                    self.notify()
