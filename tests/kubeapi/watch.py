"""WATCH: newline-delimited JSON events over a chunked 200 response, as the cacher serves them.

- resourceVersion absent or "0": an ADDED for every matching object, then live changes;
  sendInitialEvents=true: the same, then a BOOKMARK annotated k8s.io/initial-events-end;
- resourceVersion=N: every change after N, then live; older than the retained history: one ERROR
  event carrying a 410 Expired Status, then the stream ends;
- an object that starts matching the selectors arrives as ADDED, one that stops matching as DELETED
  (with its previous content and the new resourceVersion);
- allowWatchBookmarks=true: BOOKMARKs (only metadata.resourceVersion) every `bookmark_interval`
  seconds of quiet and right before a timeoutSeconds expiry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from . import errors
from .answers import query_int
from .listing import Selection, parse_selection
from .registry import Registry, bucket_of
from .resources import Resource
from .storage import Change, SnapshotTooOld, json_line

__all__ = ["Watcher", "serve_watch", "DEFAULT_TIMEOUT_SECONDS"]

DEFAULT_TIMEOUT_SECONDS = 1800  # the server's --min-request-timeout
BACKLOG_LIMIT = 100_000  # a watcher this far behind is closed (the cacher terminates blocked watchers)
CLOSE = object()


class Watcher:
    """One open watch: its selection and the encoded lines waiting to be written."""

    def __init__(self, res: Resource, selection: Selection) -> None:
        self.res = res
        self.selection = selection
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.last_rv = 0

    def event(self, change: Change) -> bytes | None:
        now = change.type != "DELETED" and self.selection.matches(change.obj)
        before = change.prev is not None and self.selection.matches(change.prev)
        if change.type == "DELETED":
            now, before = False, self.selection.matches(change.prev)
            return self._line(change, "DELETED", change.obj) if before else None
        if now and before:
            return self._line(change, "MODIFIED", change.obj)
        if now:
            return self._line(change, "ADDED", change.obj)
        if before:  # left the selection: DELETED with the previous content at the new revision
            assert change.prev is not None
            gone = dict(change.prev, metadata=dict(change.prev["metadata"], resourceVersion=str(change.rv)))
            return self._line(change, "DELETED", gone)
        return None

    def _line(self, change: Change, kind: str, obj: dict[str, Any]) -> bytes:
        if obj.get("apiVersion") != self.res.api_version:  # another served version of the same objects
            return json_line({"type": kind, "object": dict(obj, apiVersion=self.res.api_version)})
        return change.line(kind, obj)

    def offer(self, change: Change) -> None:
        line = self.event(change)
        if line is not None:
            self.queue.put_nowait((change.rv, line))
            if self.queue.qsize() > BACKLOG_LIMIT:
                self.queue.put_nowait(CLOSE)

    def close(self) -> None:
        self.queue.put_nowait(CLOSE)


def _bookmark(res: Resource, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv), "creationTimestamp": None}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return json_line({"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.api_version,
                                                      "metadata": meta}})


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true")


async def serve_watch(request: web.Request, registry: Registry, res: Resource, namespace: str | None,
                      query: Mapping[str, str], *, bookmark_interval: float, drop_after: int | None,
                      watchers: set[Watcher], expire_after: int | None = None,
                      send_first: tuple[bytes, ...] = (), end_after: int | None = None) -> web.StreamResponse:
    """Stream one watch until timeoutSeconds, server stop, a dropped-stream fault or the client leaving."""
    selection = parse_selection(res, namespace, query)
    bookmarks = _truthy(query.get("allowWatchBookmarks"))
    send_initial = query.get("sendInitialEvents")
    timeout = float(query_int(query, "timeoutSeconds", DEFAULT_TIMEOUT_SECONDS) or DEFAULT_TIMEOUT_SECONDS)
    rv_text = query.get("resourceVersion") or ""
    bucket = registry.storage.bucket(bucket_of(res))
    watcher = Watcher(res, selection)
    initial: list[bytes] = []
    error_line: bytes | None = None
    if send_initial is not None and send_initial.lower() in ("1", "true"):
        causes = []
        if query.get("resourceVersionMatch") != "NotOlderThan":
            causes.append(errors.Cause("FieldValueForbidden", "Forbidden: sendInitialEvents is forbidden for watch "
                                       "unless resourceVersionMatch is set to NotOlderThan", "sendInitialEvents"))
        if not bookmarks:
            causes.append(errors.Cause("FieldValueForbidden", "Forbidden: sendInitialEvents requires setting "
                                       "allowWatchBookmarks to true", "allowWatchBookmarks"))
        if causes:
            raise errors.invalid("ListOptions", "", causes, "meta.k8s.io")
    if send_initial is not None and send_initial.lower() in ("0", "false") and rv_text in ("", "0"):
        pass  # start at the current revision, no synthetic ADDED events
    elif _truthy(send_initial) or rv_text in ("", "0"):
        for _, obj in bucket.items(selection.namespace):
            if selection.matches(obj):
                shown = obj if obj.get("apiVersion") == res.api_version else dict(obj, apiVersion=res.api_version)
                initial.append(json_line({"type": "ADDED", "object": shown}))
        if _truthy(send_initial):
            initial.append(_bookmark(res, registry.storage.rv, initial_end=True))
    else:
        try:
            start = int(rv_text)
        except ValueError:
            raise errors.bad_request(f"invalid resource version: {rv_text!r}") from None
        if start > registry.storage.rv:  # the cacher waits to catch up, then gives up
            error_line = json_line({"type": "ERROR", "object": errors.ApiError(
                "Timeout", f"Too large resource version: {start}, current: {registry.storage.rv}",
                causes=[errors.Cause("ResourceVersionTooLarge", "Too large resource version")]).status()})
        try:
            for change in bucket.changes_after(start) if error_line is None else []:
                line = watcher.event(change)
                if line is not None:
                    initial.append(line)
        except SnapshotTooOld as old:
            error_line = json_line({"type": "ERROR", "object": errors.expired(start, old.oldest).status()})
    watcher.last_rv = registry.storage.rv
    if error_line is None:
        bucket.add_watcher(watcher, selection.single_name())  # no await since the snapshot: nothing missed
        watchers.add(watcher)
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    sent = 0
    try:
        await response.prepare(request)
        for line in send_first:
            await response.write(line)
        if error_line is not None:
            await response.write(error_line)
            return response
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for line in initial:
            if end_after is not None and sent >= end_after:
                return response
            if drop_after is not None and sent >= drop_after:
                return _drop(request, response)
            if expire_after is not None and sent >= expire_after:
                return await _expire(response, registry.storage.rv)
            await response.write(line)
            sent += 1
        while end_after is None or sent < end_after:
            remaining = deadline - loop.time()
            if remaining <= 0:
                if bookmarks:  # after what is already queued, so the bookmark never skips an event
                    pending = []
                    while not watcher.queue.empty():
                        item = watcher.queue.get_nowait()
                        if item is CLOSE:
                            break
                        pending.append(item[1])
                    final = _bookmark(res, registry.storage.rv)
                    await response.write(b"".join([*pending, final]))
                return response
            wait = min(remaining, bookmark_interval) if bookmarks else remaining
            try:
                item = await asyncio.wait_for(watcher.queue.get(), wait)
            except asyncio.TimeoutError:
                if bookmarks and deadline - loop.time() > 0:
                    await response.write(_bookmark(res, registry.storage.rv))
                continue
            if item is CLOSE:
                return response
            if end_after is not None and sent >= end_after:
                return response
            if drop_after is not None and sent >= drop_after:
                return _drop(request, response)
            if expire_after is not None and sent >= expire_after:
                return await _expire(response, item[0])
            await response.write(item[1])
            sent += 1
        return response  # ended cleanly after `end_after` events, as a proxy's idle timeout or a server going down does
    except ConnectionResetError:
        return response
    finally:
        bucket.remove_watcher(watcher)
        watchers.discard(watcher)


async def _expire(response: web.StreamResponse, rv: int) -> web.StreamResponse:
    """End the stream with the ERROR event a compacted etcd watch gives."""
    status = errors.ApiError("Expired", f"The resourceVersion for the provided watch is too old. (rv {rv})").status()
    await response.write(json_line({"type": "ERROR", "object": status}))
    return response


def _drop(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """End the stream abruptly, as a proxy or a crashed server would: no final chunk."""
    transport = request.transport
    if transport is not None:
        transport.abort()
    return response
