"""The watch cache against a hostile or broken API server, over real HTTP on the emulator: lines a server (or a proxy in
between) should never send, a history gone back in time (etcd restored from a backup). The cache keeps following the
server, converges to what it holds in bounded time and never keeps an object the server no longer has."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.kube import KubeStore
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


@asynccontextmanager
async def following(server: ApiServer, tmp_path: Path, **options: Any) -> AsyncIterator[tuple[KubeStore, WatchCache]]:
    """A store on `server` and a watch cache of its Nodes over it (not started: a test starts it when its faults are
    set), both closed after."""
    store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), SystemClock(), "nvcre-test", **options)
    cache = WatchCache(store, [NODE])
    try:
        yield store, cache
    finally:
        await cache.stop()
        await store.close()


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
        async with following(server, tmp_path) as (store, cache):
            server.faults.add(Fault(method="GET", query="watch=", send_first=(line,), times=1))
            await asyncio.wait_for(cache.start(), GUARD)
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: cache.get(NODE, "gpu-node-01") is not None or cache._tasks[0].done(), "the Node seen")
            assert not cache._tasks[0].done(), cache._tasks[0].exception()
            assert cache.get(NODE, "gpu-node-01") is not None


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
        async with following(server, tmp_path, watch_timeout=1, retry=RetryPolicy(base=0.01, cap=0.05)) as (store, cache):  # real, short waits
            for index in range(3):
                await store.create(NODE, {"metadata": {"name": f"gpu-node-0{index}"}})
            saved = server.backup()
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


async def test_a_server_whose_history_went_back_and_past_the_cache_is_followed_to_what_it_holds(tmp_path: Path) -> None:
    """The same restore, with the restored server past the cache's position, and its history compacted past it, before
    the cache reaches it again: the watch meets 410 Gone and the relist's snapshot is later than the position, yet a
    cached state from the history that is no more looked newer than the restored one and stayed. A state at or before
    the list's resourceVersion that the list contradicts is the list's. (With the position still in the restored
    server's history, the watch resumes from a revision handed out twice, and what the new one changed is not seen:
    client-go's reflector cannot tell either; etcd's `snapshot restore --bump-revision --mark-compacted` is the cure.)"""
    async with ApiServer(history_limit=4) as server:
        async with following(server, tmp_path, watch_timeout=1) as (store, cache):
            for index in range(3):
                await store.create(NODE, {"metadata": {"name": f"gpu-node-0{index}"}})
            saved = server.backup()
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


@pytest.mark.parametrize("fault", [
    Fault(method="GET", query="watch=", status=200),  # a proxy's answer: one JSON object, no event, then the end
    Fault(method="GET", query="watch=", end_stream_after=0),  # ended cleanly at once, nothing sent
], ids=["json-that-is-no-event", "ended-at-once"])
async def test_a_watch_that_ends_at_once_every_time_is_backed_off_and_said(tmp_path: Path, fault: Fault) -> None:
    """A server (or a proxy in between) that answers every watch 200 and ends it at once: a JSON line that is no event
    counted as one, so the stream was reopened at once, 1,500 times in 2 s; an empty one was reopened every 0.1-0.2 s
    for ever. Neither was said. As client-go's reflector ("very short watch"), such a stream is a failure: reopened
    with growing waits, and the cache says it has not been following the server since the first."""
    from nvcre_tui.engine.store.kube.retry import RetryPolicy

    async with ApiServer() as server:
        async with following(server, tmp_path, retry=RetryPolicy()) as (store, cache):  # the real waits
            server.faults.add(fault)
            await asyncio.wait_for(cache.start(), GUARD)
            await until(lambda: cache.silence() is not None, "the outage said")
            since = cache.unreachable_since
            await asyncio.sleep(2.0)
            watches = len(server.requests_where(verb="watch"))
            assert watches <= 7, watches  # 0.1-0.2 s, then 0.2-0.4, 0.4-0.8, 0.8-1.6: five or six at most
            await until(lambda: cache.silence() is not None, "the outage said still")  # (not between an open and its end)
            said = cache.silence()
            assert said is not None and said.startswith("no answer from the store since ") and cache.unreachable_since == since, said
            server.faults.remove(fault)
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: cache.get(NODE, "gpu-node-01") is not None and cache.silence() is None, "the server followed again")


async def test_watches_refused_again_and_again_are_said_since_the_first_refusal(tmp_path: Path) -> None:
    """A server whose RBAC grants list but not watch (a Role without the `watch` verb) refuses every watch while every
    relist answers: each relist ended the refusal and the next watch began a new one, so the console's header read
    "the store refuses the watches since 10:02:41", then 10:02:42, 10:02:44, ..., a time that moved with each retry.
    It stays the time of the first refusal until a watch serves again."""
    async with ApiServer() as server:
        async with following(server, tmp_path) as (store, cache):
            refusing = server.faults.add(Fault(method="GET", query="watch=", status=403,
                                               message='nodes is forbidden: User "viewer" cannot watch resource "nodes"'))
            await asyncio.wait_for(cache.start(), GUARD)
            await until(lambda: cache.unreachable_since is not None, "the first refusal")
            first = cache.unreachable_since
            await until(lambda: refusing.hits >= 4, "three more refusals")
            await until(lambda: cache.unreachable_since is not None, "the fourth refusal recorded")
            assert cache.unreachable_since == first
            server.faults.remove(refusing)
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: cache.get(NODE, "gpu-node-01") is not None, "the Node seen")
            assert cache.silence() is None


async def test_an_https_server_restarting_with_a_new_certificate_from_the_same_ca_is_followed_on(tmp_path: Path) -> None:
    """A serving certificate rotated (the same CA, a new key) while the cache follows the server: kept-alive connections
    end with the old server, new ones take the new certificate, and the cache follows on (a change made after the
    restart is seen) without a word of outage left."""
    async with ApiServer(tls=True) as server:
        async with following(server, tmp_path) as (store, cache):
            await asyncio.wait_for(cache.start(), GUARD)
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: cache.get(NODE, "gpu-node-01") is not None, "the Node seen")
            before = (server.tls.folder / "server.crt").read_bytes() if server.tls else b""
            await server.restart(down_for=0.2, new_certificate=True)
            assert server.tls is not None and (server.tls.folder / "server.crt").read_bytes() != before
            await store.create(NODE, {"metadata": {"name": "gpu-node-02"}})
            await until(lambda: cache.get(NODE, "gpu-node-02") is not None and cache.silence() is None, "the Node after it")


async def test_events_the_cache_cannot_use_change_nothing_and_the_watch_goes_on(tmp_path: Path) -> None:
    """A DELETED for an object never seen, an ADDED for one cached at the same resourceVersion (a re-list's), a BOOKMARK
    without a resourceVersion, an ERROR carrying a 500 Status: nothing is told for any of them, and the cache follows
    on from the last position (what held when tried; pinned here)."""
    async with ApiServer() as server:
        async with following(server, tmp_path) as (store, cache):
            cached = await store.create(NODE, {"metadata": {"name": "gpu-node-00"}})
            lines = (
                b'{"type":"DELETED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"ghost","resourceVersion":"1"}}}\n',
                json.dumps({"type": "ADDED", "object": cached}).encode() + b"\n",
                b'{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{}}}\n',
                b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,'
                b'"reason":"InternalError","message":"etcdserver: leader changed"}}\n',
            )
            server.faults.add(Fault(method="GET", query="watch=", send_first=lines, times=1))
            told: list[tuple[object, object]] = []
            cache.subscribe(lambda kind, old, new, own: told.append(((old or {}).get("metadata", {}).get("name"),
                                                                      (new or {}).get("metadata", {}).get("name"))))
            await asyncio.wait_for(cache.start(), GUARD)
            await until(lambda: len(server.requests_where(verb="watch")) >= 2, "the watch reopened after the ERROR")
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: cache.get(NODE, "gpu-node-01") is not None, "the Node created after them")
            assert told == [(None, "gpu-node-00"), (None, "gpu-node-01")], told
            assert cache.get(NODE, "gpu-node-00") == cached and cache.get(NODE, "ghost") is None


async def test_an_unforeseen_failure_while_following_a_kind_is_said_and_the_kind_followed_on(tmp_path: Path) -> None:
    """Anything but a store error raised while a kind was followed (here a subscriber's; a NameError of a change to the
    cache did the same) ended its watch task unseen: the kind stood still for the rest of the process, and the header
    went on saying what it said before. It is recorded as the watch's failure (said), and the kind relisted and
    followed on."""
    async with ApiServer() as server:
        async with following(server, tmp_path) as (store, cache):
            raised: list[str] = []

            def subscriber(kind: object, old: object, new: dict[str, Any] | None, own: bool) -> None:
                if new is not None and new["metadata"]["name"] == "gpu-node-01" and not raised:
                    raised.append("once")
                    raise RuntimeError("a subscriber's bug")

            cache.subscribe(subscriber)
            await asyncio.wait_for(cache.start(), GUARD)
            await store.create(NODE, {"metadata": {"name": "gpu-node-01"}})
            await until(lambda: bool(raised) and (cache.silence() is not None or cache._tasks[0].done()), "the failure said")
            assert not cache._tasks[0].done() and "RuntimeError: a subscriber's bug" in cache.last_error, cache.last_error
            await store.create(NODE, {"metadata": {"name": "gpu-node-02"}})
            await until(lambda: cache.get(NODE, "gpu-node-02") is not None and cache.silence() is None, "followed on")
