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


async def test_a_server_whose_history_went_back_is_followed_to_what_it_holds(tmp_path: Path) -> None:
    """etcd restored from a backup (no --bump-revision): the server's objects and resourceVersions go back. The watch
    from the cache's position, now ahead of the server, was answered "Too large resource version" and retried for the
    watch's whole patience (five minutes), then a relist kept every cached state that looked newer than the server's:
    a Node created after the backup was dropped, but a Node changed after it kept the change for ever (its cached
    resourceVersion higher than the restored one's), and a change made on the restored server to one was never seen.
    client-go's reflector relists at the first such answer and takes the list whole. Within a few seconds here, the
    cache holds what the server holds."""
    from nvcre_tui.engine.store.kube.retry import RetryPolicy

    async with ApiServer() as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test",
                               watch_timeout=1, retry=RetryPolicy(base=0.01, cap=0.05))  # real, short waits
        for index in range(3):
            await store.create(NODE, {"metadata": {"name": f"gpu-node-0{index}"}})
        saved = server.backup()
        cache = WatchCache(store, [NODE])
        try:
            await asyncio.wait_for(cache.start(), GUARD)
            await store.create(NODE, {"metadata": {"name": "gpu-node-09"}})
            changed = await store.get(NODE, "gpu-node-00")
            changed["metadata"]["labels"] = {"rack": "after-backup"}
            await store.update(NODE, changed)
            await until(lambda: cache.get(NODE, "gpu-node-09") is not None
                        and (cache.get(NODE, "gpu-node-00") or {})["metadata"].get("labels"), "the changes after the backup")
            await server.restore(saved)
            restored = await store.get(NODE, "gpu-node-01")
            restored["metadata"]["labels"] = {"rack": "restored"}
            await store.update(NODE, restored)  # the restored server's next resourceVersion, one the cache saw already

            def labels(name: str) -> object:
                found = cache.get(NODE, name)
                return found["metadata"].get("labels") if found is not None else "absent"

            await until(lambda: cache.get(NODE, "gpu-node-09") is None and labels("gpu-node-00") is None
                        and labels("gpu-node-01") == {"rack": "restored"}, "the restored server's objects")
            assert sorted(key[1] for key in cache.objects[NODE]) == ["gpu-node-00", "gpu-node-01", "gpu-node-02"]
            after = await store.create(NODE, {"metadata": {"name": "gpu-node-03"}})  # followed on from there
            await until(lambda: cache.get(NODE, "gpu-node-03") == after, "a Node created after the restore")
        finally:
            await cache.stop()
            await store.close()


async def test_a_server_whose_history_went_back_and_past_the_cache_is_followed_to_what_it_holds(tmp_path: Path) -> None:
    """The same restore, with the restored server past the cache's position, and its history compacted past it, before
    the cache reaches it again: the watch meets 410 Gone and the relist's snapshot is later than the position, yet a
    cached state from the history that is no more looked newer than the restored one and stayed. A state at or before
    the list's resourceVersion that the list contradicts is the list's. (With the position still in the restored
    server's history, the watch resumes from a revision handed out twice, and what the new one changed is not seen:
    client-go's reflector cannot tell either; etcd's `snapshot restore --bump-revision --mark-compacted` is the cure.)"""
    async with ApiServer(history_limit=4) as server:
        store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test", watch_timeout=1)
        for index in range(3):
            await store.create(NODE, {"metadata": {"name": f"gpu-node-0{index}"}})
        saved = server.backup()
        cache = WatchCache(store, [NODE])
        try:
            await asyncio.wait_for(cache.start(), GUARD)
            changed = await store.get(NODE, "gpu-node-00")
            changed["metadata"]["labels"] = {"rack": "after-backup"}
            await store.update(NODE, changed)
            await until(lambda: (cache.get(NODE, "gpu-node-00") or {})["metadata"].get("labels"), "the change after the backup")
            await server.stop()
            server.storage.restore(saved)
            nodes = server.resource("", "v1", "nodes")
            assert nodes is not None
            for index in range(10):  # written while the cache could not reach the server
                server.registry.create(nodes, None, {"metadata": {"name": f"gpu-node-1{index}"}}, manager="kubelet")
            await server.start()
            await until(lambda: cache.get(NODE, "gpu-node-19") is not None
                        and (cache.get(NODE, "gpu-node-00") or {})["metadata"].get("labels") is None, "the restored server's Nodes")
            assert len(cache.objects[NODE]) == 13
        finally:
            await cache.stop()
            await store.close()
