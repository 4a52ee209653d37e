"""The etcd stand-in: one global revision counter, one `Bucket` of objects per resource, bounded history.

Objects are stored as plain dicts and never mutated once stored (every write stores a new dict), so
history entries, snapshots and encoded watch lines can be shared safely. Keys are (namespace, name)
kept sorted, which is etcd's key order (/registry/<resource>/<namespace>/<name>): lists and continue
tokens walk that order, and a namespace is a contiguous range found by bisection.
"""

from __future__ import annotations

import bisect
import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Backup", "Change", "Bucket", "Storage", "Key", "SnapshotTooOld", "clone"]

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)


class SnapshotTooOld(Exception):
    """The revision asked for is older than the retained history of this resource."""

    def __init__(self, rv: int, oldest: int) -> None:
        super().__init__(f"revision {rv} is older than {oldest}")
        self.rv = rv
        self.oldest = oldest


@dataclass
class Change:
    """One write: `obj` is the stored object after it (for DELETED, its last state at the delete's revision)."""

    rv: int
    type: str  # ADDED / MODIFIED / DELETED
    key: Key
    obj: Obj
    prev: Obj | None
    _encoded: dict[str, bytes] = field(default_factory=dict, repr=False)

    def line(self, event_type: str, obj: Obj | None = None) -> bytes:
        """The watch line for this change; encoded once and shared by every watcher that sees the same thing."""
        if obj is not None and obj is not self.obj:
            return json_line({"type": event_type, "object": obj})
        cached = self._encoded.get(event_type)
        if cached is None:
            cached = self._encoded[event_type] = json_line({"type": event_type, "object": self.obj})
        return cached


def clone(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars); several times faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: clone(v) if isinstance(v, (dict, list)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


def json_line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


class Bucket:
    """The objects of one resource, sorted keys, their recent changes and the watchers listening."""

    def __init__(self, history_limit: int) -> None:
        self.objects: dict[Key, Obj] = {}
        self.keys: list[Key] = []
        self.history: deque[Change] = deque()
        self.history_limit = history_limit
        self.evicted_rv = 0  # changes at or below this revision may be missing from history
        self.watchers: set[Any] = set()  # every open watch of this resource
        self._general: set[Any] = set()  # ... that may care about any object
        self._by_name: dict[str, set[Any]] = {}  # ... that select one name (metadata.name=x): no fan-out cost

    def add_watcher(self, watcher: Any, name: str | None = None) -> None:
        self.watchers.add(watcher)
        if name is None:
            self._general.add(watcher)
        else:
            self._by_name.setdefault(name, set()).add(watcher)

    def remove_watcher(self, watcher: Any) -> None:
        self.watchers.discard(watcher)
        self._general.discard(watcher)
        for name, named in list(self._by_name.items()):
            if watcher in named:
                named.discard(watcher)
                if not named:
                    del self._by_name[name]

    def watchers_of(self, key: Key) -> list[Any]:
        named = self._by_name.get(key[1])
        return [*self._general, *named] if named else list(self._general)

    def namespace_range(self, namespace: str | None) -> tuple[int, int]:
        if namespace is None:
            return 0, len(self.keys)
        return bisect.bisect_left(self.keys, (namespace, "")), bisect.bisect_left(self.keys, (namespace + "\x00", ""))

    def items(self, namespace: str | None = None, after: Key | None = None) -> Iterator[tuple[Key, Obj]]:
        """Current objects in key order, within a namespace, strictly after a key."""
        start, end = self.namespace_range(namespace)
        if after is not None:
            start = max(start, bisect.bisect_right(self.keys, after))
        for index in range(start, end):
            key = self.keys[index]
            yield key, self.objects[key]

    def snapshot(self, rv: int, namespace: str | None = None, after: Key | None = None) -> Iterator[tuple[Key, Obj]]:
        """Objects as they were at revision `rv` (undoing later changes from history), in key order."""
        if self.evicted_rv > rv:
            raise SnapshotTooOld(rv, self.evicted_rv)
        later = [change for change in reversed(self.history) if change.rv > rv] if self.history else []
        if not later:
            yield from self.items(namespace, after)
            return
        overlay: dict[Key, Obj | None] = {}
        for change in later:  # newest first: the oldest undo wins
            overlay[change.key] = change.prev
        current = dict(self.items(namespace, after))
        for key, prev in overlay.items():
            if (namespace is not None and key[0] != namespace) or (after is not None and key <= after):
                continue
            if prev is None:
                current.pop(key, None)
            else:
                current[key] = prev
        for key in sorted(current):
            yield key, current[key]

    def record(self, change: Change) -> None:
        self.history.append(change)
        while len(self.history) > self.history_limit:
            self.evicted_rv = self.history.popleft().rv

    def changes_after(self, rv: int) -> list[Change]:
        """Changes newer than `rv`, oldest first; SnapshotTooOld when some may have been dropped."""
        if rv < self.evicted_rv:
            raise SnapshotTooOld(rv, self.evicted_rv)
        out = []
        for change in reversed(self.history):
            if change.rv <= rv:
                break
            out.append(change)
        out.reverse()
        return out


@dataclass(frozen=True)
class Backup:
    """What `Storage.backup` saved: the revision, each bucket's objects and keys, the uid index."""

    rv: int
    buckets: dict[str, tuple[dict[Key, Obj], list[Key]]]
    by_uid: dict[str, tuple[str, Key]]


class Storage:
    """All buckets and the global revision; the only place revisions are handed out."""

    def __init__(self, history_limit: int) -> None:
        self.rv = 0
        self.history_limit = history_limit
        self.buckets: dict[str, Bucket] = {}
        self.by_uid: dict[str, tuple[str, Key]] = {}

    def bucket(self, name: str) -> Bucket:
        found = self.buckets.get(name)
        if found is None:
            found = self.buckets[name] = Bucket(self.history_limit)
        return found

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(self, bucket_name: str, key: Key, obj: Obj, rv: int) -> Change:
        """Store `obj` (its metadata.resourceVersion already str(rv)); notify the bucket's watchers."""
        bucket = self.bucket(bucket_name)
        prev = bucket.objects.get(key)
        if prev is None:
            bisect.insort(bucket.keys, key)
        bucket.objects[key] = obj
        self.by_uid[obj["metadata"]["uid"]] = (bucket_name, key)
        change = Change(rv, "MODIFIED" if prev is not None else "ADDED", key, obj, prev)
        self._publish(bucket, change)
        return change

    def remove(self, bucket_name: str, key: Key, last: Obj, rv: int) -> Change:
        """Remove the object at `key`; `last` is its final state stamped with the delete's revision."""
        bucket = self.bucket(bucket_name)
        prev = bucket.objects.pop(key)
        del bucket.keys[bisect.bisect_left(bucket.keys, key)]
        self.by_uid.pop(prev["metadata"]["uid"], None)
        change = Change(rv, "DELETED", key, last, prev)
        self._publish(bucket, change)
        return change

    def backup(self) -> Backup:
        """Every object and the revision as they are now (`etcdctl snapshot save`); objects are never mutated once
        stored, so the copy is of the indexes only."""
        return Backup(self.rv, {name: (dict(bucket.objects), list(bucket.keys)) for name, bucket in self.buckets.items()},
                      dict(self.by_uid))

    def restore(self, backup: Backup) -> None:
        """Objects and revision back as `backup` holds them (`etcdutl snapshot restore` without --bump-revision: later
        revisions are handed out again, to other changes), history gone: the watch cache starts over at its revision.
        Buckets of resources made since keep no objects."""
        self.rv = backup.rv
        for name, bucket in self.buckets.items():
            objects, keys = backup.buckets.get(name, ({}, []))
            bucket.objects, bucket.keys = dict(objects), list(keys)
            bucket.history.clear()
            bucket.evicted_rv = backup.rv
        self.by_uid = dict(backup.by_uid)

    def drop_bucket(self, bucket_name: str) -> Bucket | None:
        return self.buckets.pop(bucket_name, None)

    @staticmethod
    def _publish(bucket: Bucket, change: Change) -> None:
        bucket.record(change)
        for watcher in bucket.watchers_of(change.key):
            watcher.offer(change)
