"""The watch cache's waits between tries, over real HTTP on the emulator: bounded, jittered, honouring Retry-After,
and never a loop of requests against a server that answers every watch 410 Gone."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.cache import RETRY_SECONDS, WatchCache
from nvcre_tui.engine.store.errors import ServerError, TooManyRequests
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import store_on
from tests.kubeapi import ApiServer, Fault


async def test_a_server_answering_every_watch_410_is_relisted_with_backoff_not_in_a_loop(tmp_path: Path) -> None:
    """Each 410 relisted at once and watched again at once: 900 requests in 2 s against an API server whose watches all
    answered Gone (a watch cache lagging behind the apiserver that served the list). Still relisted, so a change made
    meanwhile is seen, but each one in a row waits longer."""
    async with ApiServer() as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test")
        cache = WatchCache(store, [NODE])
        try:
            await cache.start()
            server.faults.add(Fault(method="GET", query="watch=", status=410))
            server.clear_requests()
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await asyncio.sleep(0.7)
            lists = [r for r in server.requests if r.verb == "list"]
            assert 1 <= len(lists) <= 4, len(lists)  # 0, then 0.1-0.2 s, then 0.25-0.5 s later
            assert cache.get(NODE, "gpu-node-01") is not None
        finally:
            await cache.stop()
            await store.close()


def test_the_wait_is_jittered_bounded_and_never_shorter_than_retry_after() -> None:
    from nvcre_tui.engine.store.cache import RETRY_AFTER_CAP, backoff

    waits = {backoff(0) for _ in range(50)}
    assert len(waits) > 1 and all(RETRY_SECONDS[0] / 2 <= wait <= RETRY_SECONDS[0] for wait in waits)
    assert all(backoff(99) <= RETRY_SECONDS[-1] for _ in range(50))
    assert backoff(0, TooManyRequests("throttled", retry_after=7.0)) == 7.0  # the fixed 0.2 s step came back at once
    assert backoff(0, ServerError("etcd leader changed", retry_after=3600.0)) == RETRY_AFTER_CAP
    assert backoff(4, ServerError("down")) <= RETRY_SECONDS[-1]


async def test_a_first_list_the_server_fails_slowly_gives_up_in_its_time_not_twelve_times_the_stores_retries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first list's retries were counted in tries (the ramp, then six of 5 s: "about 40 s"), each one the store's six
    tries: a server failing each list slowly (503 after a stall) kept a one-shot `certification list` 4 minutes, 72
    requests. Now the retries end at FIRST_LIST_SECONDS, the store's own included (shortened here)."""
    from nvcre_tui.engine.store import cache as cache_module
    from nvcre_tui.engine.store.errors import RetryableError

    monkeypatch.setattr(cache_module, "FIRST_LIST_SECONDS", 0.5, raising=False)  # (absent before: the test shows the loop)
    async with ApiServer() as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test")
        cache = WatchCache(store, [NODE])
        server.faults.add(Fault(method="GET", path=r"/nodes$", status=503, delay=0.05))
        try:
            with pytest.raises(RetryableError):
                await asyncio.wait_for(cache.start(), 5.0)
            assert len([r for r in server.requests if r.resource == "nodes"]) <= 12  # the store's six tries, twice at most
        finally:
            await store.close()
