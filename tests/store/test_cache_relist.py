"""The watch cache's relist (after a 410) over real HTTP on the emulator: every change told once, none invented."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import store_on
from tests.kubeapi import ApiServer, Fault


async def test_an_object_written_while_a_relist_reads_its_pages_is_not_told_gone_and_back(tmp_path: Path) -> None:
    """A relist's pages are one snapshot, taken at its first page: an object this process wrote (and `observe`d) while
    the later pages were read is not in them. The relist removed it (a DELETED told), and the watch from the snapshot
    added it back (an ADDED): an engine was told its new child was gone. It stays, and is told once."""
    async with ApiServer() as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test", page_size=1,
                               watch_timeout=0.1)  # streams end quickly: the fault below meets the next one
        cache = WatchCache(store, [NODE])
        try:
            for index in range(3):
                await store.create(NODE, {"metadata": {"name": f"gpu-node-0{index}"}})
            await cache.start()
            told: list[tuple[Any, Any]] = []
            cache.subscribe(lambda kind, old, new, own: told.append(((old or {}).get("metadata", {}).get("name"),
                                                                      (new or {}).get("metadata", {}).get("name"))))
            second_page = server.faults.add(Fault(method="GET", query="continue=", delay=0.2, times=1))
            server.faults.add(Fault(method="GET", query="watch=", status=410, times=1))
            while not second_page.hits:
                await asyncio.sleep(0.01)
            cache.observe(NODE, await store.create(NODE, {"metadata": {"name": "mine"}}))
            while cache.relists < 2:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)  # the watch from the snapshot, which holds its ADDED
            assert told == [(None, "mine")], told
            assert sorted(key[1] for key in cache.objects[NODE]) == ["gpu-node-00", "gpu-node-01", "gpu-node-02", "mine"]
        finally:
            await cache.stop()
            await store.close()


async def test_watches_the_server_keeps_refusing_to_open_are_said_at_once_and_their_end_too(tmp_path: Path) -> None:
    """Every watch open answered 503 (etcd electing a leader, an overloaded apiserver) while lists and writes went on: the
    store waits a watch out itself for minutes (watch_patience), and all that time the cache said nothing, its objects
    the last known state shown as live (a Node created meanwhile never came). The second failed open in a row now makes
    `silence()` say since when; a stream open again ends it."""
    from nvcre_tui.engine.store.kube.retry import RetryPolicy

    async with ApiServer() as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test", watch_timeout=0.1,
                               retry=RetryPolicy(base=0.01, cap=0.05))  # real (short) waits between the opens
        cache = WatchCache(store, [NODE])
        try:
            await cache.start()
            refusing = server.faults.add(Fault(method="GET", query="watch=", status=503))
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            for _ in range(100):
                if cache.silence() is not None:
                    break
                await asyncio.sleep(0.01)
            said = cache.silence()
            assert said is not None and said.startswith("no answer from the store since "), said
            assert cache.get(NODE, "gpu-node-01") is None  # stale indeed
            server.faults.remove(refusing)
            for _ in range(100):
                if cache.silence() is None and cache.get(NODE, "gpu-node-01") is not None:
                    break
                await asyncio.sleep(0.01)
            assert cache.silence() is None and cache.get(NODE, "gpu-node-01") is not None
        finally:
            await cache.stop()
            await store.close()
