"""A watch that lasts: one long-lived position, many server streams.

The server ends every stream (timeoutSeconds, restarts, load balancers, dropped connections); each time
we open a new one from the last resourceVersion seen, so the caller sees one unbroken sequence, with
nothing lost and nothing repeated. BOOKMARK events move that position without being yielded. Only a
410 (the position is older than the server's history) ends the watch with Gone: the caller re-lists.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import aiohttp

from ..errors import Gone, RetryableError, StoreError, Unavailable
from ..protocol import ResourceKind, WatchEvent
from .answers import Subject, error_from_status
from .lost import lost_because
from .transport import Query, Transport

__all__ = ["follow", "with_type"]

_CHANGES = ("ADDED", "MODIFIED", "DELETED")
# The API server's words when a watch's resourceVersion is ahead of its own (storage.NewTooLargeResourceVersionError, a 504
# after it waited some seconds to catch up): an apiserver lagging its peers catches up within a try or two; one still
# behind after AHEAD_TRIES answers in a row has a history that went back (etcd restored from a backup), which it never
# catches up with, or does only to serve another history from there. client-go's reflector relists at the first.
TOO_LARGE = "Too large resource version"
AHEAD_TRIES = 3
_KNOWN = (*_CHANGES, "BOOKMARK", "ERROR")
# A stream that ends sooner than this without an event is no watch the server meant to serve (timeoutSeconds is a whole
# second at least): a failure, waited out with growing waits, as client-go's reflector takes a "very short watch".
VERY_SHORT = 1.0


def with_type(kind: ResourceKind, obj: dict[str, Any]) -> dict[str, Any]:
    """The object with apiVersion and kind (the server leaves them out of built-in list items)."""
    obj.setdefault("apiVersion", kind.api_version)
    obj.setdefault("kind", kind.kind)
    return obj


class _Garbled(Exception):
    """A line that is not JSON: the stream was cut mid-event (by a proxy, say)."""


class _Malformed(_Garbled):
    """JSON no API server sends in a watch (a change whose object has no metadata, an ERROR whose code is no number): a
    proxy's or a broken server's; what it meant is unknown, so the stream is reopened from the last position as a
    garbled one is. Taken as it came, it ended the cache's watch task with a KeyError, unseen."""


def dropped_because(dropped: BaseException, read_timeout: float) -> str:
    """Why a watch stream dropped, in words: a read timeout said "()" (a TimeoutError has no words), a cut one aiohttp's
    repr of its parser's error, a garbled line the line alone."""
    if isinstance(dropped, TimeoutError):
        return f"no data within {read_timeout:g}s"
    if isinstance(dropped, _Malformed):
        return str(dropped)
    if isinstance(dropped, _Garbled):
        return f"cut mid-event: a line that is no JSON, {str(dropped)!r}"
    return lost_because(dropped)


async def _lines(response: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """Newline-delimited JSON watch events, one at a time (never the whole body)."""
    async for line in response.content:
        if line.strip():
            try:
                event = json.loads(line)
            except ValueError:
                raise _Garbled(line[:80].decode("utf-8", errors="replace")) from None
            if isinstance(event, dict):
                yield event


async def follow(transport: Transport, kind: ResourceKind, namespace: str | None, path: str, selectors: Query,
                 resource_version: str, timeout_seconds: float, patience: float) -> AsyncGenerator[WatchEvent, None]:
    """Changes to objects of `kind` (in `namespace`, None: all) after `resource_version`, across as many server
    streams as it takes.

    Transient failures (server restarting, overloaded, unreachable) are waited out with backoff for up
    to `patience` seconds in a row, since reopening from the same position is all a caller could do;
    beyond that the retryable error is raised, so a caller can tell the user the cluster is gone.
    """
    subject = Subject(kind, None, namespace)
    position = resource_version
    failures = 0    # consecutive streams that failed to open or died before any event
    ahead = 0       # ... of them answered that `position` is ahead of the server's resourceVersion
    waited = 0.0    # seconds spent backing off since the last event
    opened = 0
    watch_key = f"{path}?{'&'.join(f'{key}={value}' for key, value in selectors)}"
    first_failed: float | None = None  # time.time() of the first of the failures in a row to open a stream
    # The last failure was a stream that opened and failed before any event (ended at once, sent what is no event, was
    # cut): the next open alone does not end the failures in a row (their first one stays the outage's start); an
    # event, or a stream the server ends as asked, does.
    unproven = False
    read_timeout = timeout_seconds + 30.0  # the server ends the stream at timeoutSeconds: silence well past it is a dead stream
    try:
        while not transport.closed:
            query = [*selectors, ("watch", "1"), ("allowWatchBookmarks", "true"), ("resourceVersion", position),
                     ("timeoutSeconds", str(max(1, math.ceil(timeout_seconds))))]  # the server takes whole seconds only
            error: StoreError | None = None
            try:
                response = await transport.open_stream(path, subject, query, read_timeout=read_timeout)
            except Gone:
                raise Gone.about(kind, None, subject.namespace,
                                 f"resourceVersion {position} is older than the server's history; list again") from None
            except RetryableError as failed:
                if transport.closed:
                    return
                error, unproven = failed, False
            else:
                transport.stats.watches_failing.pop(watch_key, None)  # open again: the cache follows the server once more
                if not unproven:
                    first_failed = None
                if opened:
                    transport.stats.watch_restarts += 1
                opened += 1
                seen = 0
                opened_at = time.monotonic()
                try:
                    async for event in _lines(response):
                        obj = event["object"] if isinstance(event.get("object"), dict) else {}
                        metadata = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
                        kind_of_event = event.get("type")
                        if kind_of_event not in _KNOWN:  # a proxy's JSON, say: counted as an event, the stream looped
                            raise _Malformed(f"a line that is no watch event: {str(event)[:80]!r}")
                        if kind_of_event == "ERROR":
                            code = obj.get("code", 500)  # a Status without one: the reason alone tells (Expired)
                            if not isinstance(code, int) or isinstance(code, bool):
                                raise _Malformed(f"an ERROR event whose code is no number: {str(obj)[:80]!r}")
                            status_error = error_from_status(code, obj, subject)
                            if isinstance(status_error, Gone):
                                raise Gone.about(kind, None, subject.namespace,
                                                 f"resourceVersion {position} is older than the server's history "
                                                 f"({status_error.message.split(': ', 1)[-1]}); list again")
                            if not status_error.retryable:
                                raise status_error
                            error = status_error
                            break
                        if kind_of_event in _CHANGES and not isinstance(obj.get("metadata"), dict):
                            raise _Malformed(f"a {kind_of_event} event whose object has no metadata: {str(obj)[:80]!r}")
                        failures, waited, seen, ahead, unproven, first_failed = 0, 0.0, seen + 1, 0, False, None
                        if metadata.get("resourceVersion"):
                            position = str(metadata["resourceVersion"])
                        if kind_of_event in _CHANGES:
                            yield WatchEvent(kind_of_event, with_type(kind, obj))
                        # BOOKMARK: the position moved, nothing to tell the caller
                except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError, _Garbled) as dropped:
                    # the position is still good: reopen from it
                    if transport.closed:
                        return
                    if transport.stats.unreachable_since is None and not isinstance(dropped, _Garbled):
                        transport.stats.unreachable_since = time.time()
                    error = Unavailable.about(kind, None, subject.namespace,
                                              f"watch stream dropped ({dropped_because(dropped, read_timeout)})")
                finally:
                    transport.close_stream(response)
                if error is None and not seen and time.monotonic() - opened_at < VERY_SHORT:
                    error = Unavailable.about(kind, None, subject.namespace, "the server ended the watch at once, with no event")
                unproven = error is not None and not seen
                if error is None:
                    first_failed = None  # a quiet stream the server ended as asked: it serves watches
                    # The server ended the stream as asked (timeoutSeconds): reopen at once, unless it said
                    # nothing at all (not even the closing bookmark): then pause briefly, never spin.
                    if not seen:
                        await transport.retry.sleep(transport.retry.delay(0))
                    continue
            failures += 1
            ahead = ahead + 1 if TOO_LARGE in error.message else 0
            if ahead >= AHEAD_TRIES:
                raise Gone.about(kind, None, subject.namespace,
                                 f"resourceVersion {position} is ahead of the server's, {ahead} times in a row "
                                 f"({error.message.split(': ', 1)[-1]}): its history went back (etcd restored from a "
                                 "backup?); list again")
            if first_failed is None:
                first_failed = time.time()
            else:  # a second failure in a row, not a blip one retry mends: what is cached is the last known state meanwhile
                transport.stats.watches_failing.setdefault(watch_key, first_failed)
            delay = transport.retry.delay(min(failures - 1, 30), error.retry_after)
            if waited + delay > patience:
                raise error
            waited += delay
            transport.stats.retries += 1
            await transport.retry.sleep(delay)
    finally:
        transport.stats.watches_failing.pop(watch_key, None)
