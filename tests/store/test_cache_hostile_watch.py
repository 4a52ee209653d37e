"""The watch cache against a hostile or broken API server, over real HTTP on the emulator: lines a server (or a proxy in
between) should never send, a history gone back in time (etcd restored from a backup). The cache keeps following the
server, converges to what it holds in bounded time and never keeps an object the server no longer has."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import store_on
from tests.kubeapi import ApiServer, Fault

GUARD = 5.0  # seconds any wait below may take before the test fails (never reached when the cache works)


async def until(condition: object, what: str) -> None:
    """Wait (at most GUARD seconds) for `condition()` to hold."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD
    while not condition():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError(f"not within {GUARD:g}s: {what}")
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("line", [
    b'{"type":"ADDED","object":{"kind":"Node"}}\n',                      # no metadata
    b'{"type":"MODIFIED","object":{"kind":"Node","metadata":"gpu-1"}}\n',  # metadata that is no object
    b'{"type":"ERROR","object":{"kind":"Status","code":"gone","message":"compacted"}}\n',  # a code that is no number
], ids=["no-metadata", "metadata-not-an-object", "error-code-not-a-number"])
async def test_an_event_no_server_should_send_does_not_end_the_cache_following_its_kind(tmp_path: Path, line: bytes) -> None:
    """Such a line ended the cache's watch task with a KeyError, AttributeError or ValueError, unseen: the kind was no
    longer followed, for the rest of the process, and nothing said so (silence() None). The stream is taken as
    garbled, and reopened from the last position, as a line cut mid-event is."""
    async with ApiServer() as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test")
        cache = WatchCache(store, [NODE])
        server.faults.add(Fault(method="GET", query="watch=", send_first=(line,), times=1))
        try:
            await asyncio.wait_for(cache.start(), GUARD)
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: cache.get(NODE, "gpu-node-01") is not None or cache._tasks[0].done(), "the Node seen")
            assert not cache._tasks[0].done(), cache._tasks[0].exception()
            assert cache.get(NODE, "gpu-node-01") is not None
        finally:
            await cache.stop()
            await store.close()
