"""The pod log endpoint (GET pods/<name>/log), playing the kubelet: text tests set or append per container.

`container` is required when the pod has several (400 naming them); tailLines and limitBytes cut the text;
follow=true streams what is there, then what is appended, until the pod is gone, the client leaves or the
server stops.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from . import errors
from .answers import query_int
from .requestinfo import truthy

__all__ = ["PodLogs"]

Key = tuple[str, str, str | None]  # namespace, pod, container (None: every container)
FOLLOW_CHECK_SECONDS = 0.5  # how often a follower looks whether its pod still exists


class PodLogs:
    def __init__(self) -> None:
        self.texts: dict[Key, str] = {}
        self.changed = asyncio.Condition()
        self.closed = False

    def set(self, namespace: str, name: str, text: str, container: str | None = None) -> None:
        self.texts[(namespace, name, container)] = text
        self._wake()

    def append(self, namespace: str, name: str, text: str, container: str | None = None) -> None:
        self.texts[(namespace, name, container)] = self._text(namespace, name, container) + text
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        async def notify() -> None:
            async with self.changed:
                self.changed.notify_all()
        try:
            asyncio.get_running_loop().create_task(notify())
        except RuntimeError:
            pass  # no loop yet: nobody can be following

    def _text(self, namespace: str, name: str, container: str | None) -> str:
        return self.texts.get((namespace, name, container), self.texts.get((namespace, name, None), ""))

    async def serve(self, request: web.Request, pod: dict[str, Any], exists: Any, query: dict[str, str]
                    ) -> web.StreamResponse:
        namespace, name = pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = query.get("container")
        if container is None:
            if len(containers) > 1:
                raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                         f"[{' '.join(containers)}]")
            container = containers[0] if containers else None
        elif container not in containers:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        text = _log_since(self._text(namespace, name, container), query.get("sinceTime"), truthy(query.get("timestamps")))
        tail = query_int(query, "tailLines")
        if tail is not None:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-tail:]) if tail > 0 else ""
        limit = query_int(query, "limitBytes")
        if limit is not None:
            text = text.encode()[:max(limit, 0)].decode(errors="ignore")
        if not truthy(query.get("follow")):
            return web.Response(text=text, content_type="text/plain")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        sent = len(self._text(namespace, name, container))
        await response.write(text.encode())
        while not self.closed and exists():
            async with self.changed:
                try:
                    await asyncio.wait_for(self.changed.wait(), FOLLOW_CHECK_SECONDS)
                except asyncio.TimeoutError:
                    pass
            current = self._text(namespace, name, container)
            if len(current) > sent:
                await response.write(current[sent:].encode())
                sent = len(current)
        return response


def _log_since(text: str, since: str | None, timestamps: bool) -> str:
    """The kubelet's view of a log stored with its timestamps: lines from `since` (RFC 3339) on, and the
    timestamps only when asked for (`timestamps=true`). Lines stored without one always pass."""
    from nvcre_tui.engine.parsers.base import parse_timestamp, split_kubelet_prefix

    start = parse_timestamp(since) if since else None
    kept = []
    for line in text.splitlines(keepends=True):
        moment, rest = split_kubelet_prefix(line)
        if moment is not None and start is not None and moment < start:
            continue
        kept.append(line if timestamps or moment is None else rest)
    return "".join(kept)
