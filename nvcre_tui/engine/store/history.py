"""The change log behind watches: a bounded history for replay and one bounded queue per live watcher."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import Gone
from .protocol import ResourceKind, WatchEvent, WatchEventType
from .selectors import LabelSelector

__all__ = ["Change", "Watcher", "History", "CLOSED", "OVERFLOWED"]


@dataclass(frozen=True)
class Change:
    """One stored write. `old` is the previous version (None when created); `new` is the object after
    the write (for a deletion, its last state). Both are private copies that nobody mutates."""

    rv: int
    kind: ResourceKind
    type: WatchEventType
    old: dict[str, Any] | None
    new: dict[str, Any]


CLOSED = object()  # queue marker: the store was closed, the watch ends
OVERFLOWED = object()  # queue marker: the watcher fell too far behind, it must re-list (Gone)


class Watcher:
    """One watch: what it selects and the events waiting for it."""

    def __init__(self, kind: ResourceKind, namespace: str | None, selector: LabelSelector, limit: int) -> None:
        self.kind = kind
        self.namespace = namespace
        self.selector = selector
        self.limit = limit
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.overflowed = False

    def selects(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        metadata = obj.get("metadata", {})
        return (self.namespace is None or metadata.get("namespace") == self.namespace) and self.selector.matches(
            metadata.get("labels")
        )

    def event_for(self, change: Change) -> WatchEvent | None:
        """What this watcher sees of a change: an object entering or leaving the selection is ADDED / DELETED."""
        if change.kind != self.kind:
            return None
        was, now = self.selects(change.old), self.selects(change.new)
        if change.type == "DELETED":
            return WatchEvent("DELETED", change.new) if now else None
        if was and now:
            return WatchEvent(change.type, change.new)
        if now:
            return WatchEvent("ADDED", change.new)
        return WatchEvent("DELETED", change.new) if was else None

    def offer(self, change: Change) -> None:
        event = self.event_for(change)
        if event is None or self.overflowed:
            return
        if self.queue.qsize() >= self.limit:
            # Like an API server dropping a slow watcher: forget the backlog, tell it to re-list.
            self.overflowed = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(OVERFLOWED)
            return
        self.queue.put_nowait(event)


class History:
    """Every change with rv > `complete_after` is retained (up to `limit` changes), in rv order."""

    def __init__(self, limit: int, complete_after: int = 0) -> None:
        if limit < 1:
            raise ValueError(f"history limit must be >= 1, got {limit}")
        self.limit = limit
        self.complete_after = complete_after
        self._changes: deque[Change] = deque()
        self._watchers: set[Watcher] = set()

    def append(self, change: Change) -> None:
        if len(self._changes) >= self.limit:
            self.complete_after = self._changes.popleft().rv
        self._changes.append(change)
        for watcher in list(self._watchers):
            watcher.offer(change)

    def since(self, kind: ResourceKind, rv: int) -> Iterable[Change]:
        """Changes after `rv`, or Gone when some of them are no longer retained."""
        if rv < self.complete_after:
            raise Gone.about(
                kind, None, None,
                f"resourceVersion {rv} is too old (history starts after {self.complete_after}); list again",
            )
        return [change for change in self._changes if change.rv > rv]

    def subscribe(self, watcher: Watcher) -> None:
        self._watchers.add(watcher)

    def unsubscribe(self, watcher: Watcher) -> None:
        self._watchers.discard(watcher)

    def close_all(self) -> None:
        for watcher in self._watchers:
            watcher.queue.put_nowait(CLOSED)
        self._watchers.clear()
