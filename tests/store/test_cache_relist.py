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
