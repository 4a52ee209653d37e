"""Kubernetes v1 Events with count-deduplication, written through any ResourceStore; the simulator's stores expire
them as the API server does (EventExpiry)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ..clock import Clock, format_time, parse_time
from .errors import AlreadyExists, Conflict, Invalid, NotFound
from .protocol import EVENT, ResourceStore

__all__ = ["EVENT_COMPONENT", "EVENT_TTL", "EVENT_TYPES", "EventExpiry", "event_identity", "record_event"]

EVENT_COMPONENT = "nvcre"
EVENT_TYPES = ("Normal", "Warning")
_MAX_ATTEMPTS = 5  # concurrent writers of the same Event are rare; a few retries settle them
# The API server's default --event-ttl: an Event goes an hour after its last write (each write renews it).
EVENT_TTL = timedelta(hours=1)
_SWEEP_EVERY = timedelta(minutes=1)  # of the store's clock: how often a store looks for the Events due to go


def event_identity(involved: Mapping[str, Any], type: str, reason: str, message: str) -> tuple[str, str]:
    """(namespace, name) of the Event for this involved object, type, reason and message.

    The name is `<involved name>.<hash of everything that makes two events "the same">`, so the same
    event again is found by a single get (deduplication survives restarts and works on any store).
    """
    metadata = involved.get("metadata") if isinstance(involved, Mapping) else None
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        raise Invalid.about(EVENT, None, None, f"involved object must have metadata.name, got {involved!r}")
    if type not in EVENT_TYPES:
        raise Invalid.about(EVENT, metadata["name"], metadata.get("namespace"),
                            f"event type {type!r} is not one of {', '.join(EVENT_TYPES)}")
    namespace = metadata.get("namespace") or "default"
    parts = (involved.get("apiVersion"), involved.get("kind"), namespace, metadata["name"], metadata.get("uid"),
             type, reason, message)
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:16]
    # A DNS subdomain: the cut may not end a label with '-' or '.' (a Node name of 253 characters).
    return namespace, f"{str(metadata['name'])[:200].rstrip('-.')}.{digest}"


def _new_event(involved: Mapping[str, Any], namespace: str, name: str, type: str, reason: str,
               message: str, now: str) -> dict[str, Any]:
    metadata = involved["metadata"]
    reference = {"apiVersion": involved.get("apiVersion"), "kind": involved.get("kind"), "name": metadata["name"],
                 "namespace": metadata.get("namespace"), "uid": metadata.get("uid")}
    return {
        "apiVersion": EVENT.api_version,
        "kind": EVENT.kind,
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {k: v for k, v in reference.items() if v is not None},
        "type": type,
        "reason": reason,
        "message": message,
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": EVENT_COMPONENT},
        "reportingComponent": EVENT_COMPONENT,
    }


async def record_event(store: ResourceStore, clock: Clock, involved: Mapping[str, Any], type: str,
                       reason: str, message: str) -> dict[str, Any]:
    """Create the Event, or increment `count` and `lastTimestamp` of the identical one."""
    namespace, name = event_identity(involved, type, reason, message)
    for _ in range(_MAX_ATTEMPTS):
        now = format_time(clock.now())
        try:
            existing = await store.get(EVENT, name, namespace)
        except NotFound:
            try:
                return await store.create(EVENT, _new_event(involved, namespace, name, type, reason, message, now))
            except AlreadyExists:
                continue  # someone else created it first: count on theirs
        existing["count"] = int(existing.get("count") or 1) + 1
        existing["lastTimestamp"] = now
        try:
            return await store.update(EVENT, existing)
        except (Conflict, NotFound):
            continue
    raise Conflict.about(EVENT, name, namespace, f"could not record event after {_MAX_ATTEMPTS} attempts")


def _last_written(event: Mapping[str, Any]) -> datetime | None:
    """When the Event was last written (record_event sets lastTimestamp at each); None when it says none readable."""
    metadata = event.get("metadata")
    created = metadata.get("creationTimestamp") if isinstance(metadata, Mapping) else None
    for stamp in (event.get("lastTimestamp"), event.get("firstTimestamp"), created):
        if isinstance(stamp, str):
            try:
                return parse_time(stamp)
            except ValueError:
                continue
    return None


class EventExpiry:
    """The simulator's stores (MemoryStore, SqliteStore) are the API server: they delete each Event EVENT_TTL after its
    last write, as it does (a watch sees it DELETED). Looked for when an Event is recorded, at most once per _SWEEP_EVERY
    of the clock: Events come only from records, so the store holds about an hour of them, never more, however long it
    runs (they were kept for ever: a soak's store grew with every certification)."""

    def __init__(self) -> None:
        self._next: datetime | None = None

    async def sweep(self, store: ResourceStore, now: datetime) -> None:
        """Delete the Events written last EVENT_TTL or more before `now` (the store's clock), when a sweep is due."""
        if self._next is not None and self._next - _SWEEP_EVERY <= now < self._next:  # (a clock set back looks now)
            return
        self._next = now + _SWEEP_EVERY
        for event in (await store.list(EVENT)).items:
            written = _last_written(event)
            if written is None or now - written < EVENT_TTL:
                continue
            metadata = event["metadata"]
            try:
                await store.delete(EVENT, metadata["name"], metadata.get("namespace"), uid=metadata.get("uid"))
            except (NotFound, Conflict):  # another process's sweep took it first (or a new one took its name)
                continue
