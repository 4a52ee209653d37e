"""KubeStore beyond the contract, on the emulator over real HTTP: pagination, watches that survive dropped
streams and move with bookmarks, Gone, retries that honour Retry-After, ambiguous writes, error classes,
server-side apply, discovery, close. Waits are recorded by an injected sleep, never slept."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store import (
    CONFIGMAP,
    CRD,
    NODE,
    WORKFLOW,
    AlreadyExists,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    ResourceKind,
    ServerError,
    StoreError,
    Timeout,
    TooManyRequests,
    Unavailable,
)
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.kube.transport import FIRST_ANSWER_TRIES
from tests.kubeapi import Fault, RecordedRequest

from .fixtures import next_event, obj, take
from .kube_cluster import Cluster, emulated, quick_retry

HISTORY_LIMIT = 8
WORKFLOWS = r"/workflows"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with emulated(ManualClock(), tmp_path, HISTORY_LIMIT, bookmark_interval=0.05) as found:
        yield found


@pytest.fixture
async def store(cluster: Cluster) -> KubeStore:
    return await cluster.open_store(user_agent="nvcre-test")


def sent(cluster: Cluster, verb: str, resource: str = "workflows") -> list[RecordedRequest]:
    return [r for r in cluster.server.requests if r.verb == verb and r.resource == resource]


# ----- list ------------------------------------------------------------------------------------------------

async def test_list_is_paginated_with_limit_and_continue(cluster: Cluster) -> None:
    store = await cluster.open_store(page_size=2)
    for name, namespace in (("e", "other"), ("b", "default"), ("d", "team-1"), ("a", "default"), ("c", "team-1")):
        await store.create(WORKFLOW, obj(name, namespace))
    cluster.server.clear_requests()
    listed = await store.list(WORKFLOW)
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed.items] == [
        ("default", "a"), ("default", "b"), ("other", "e"), ("team-1", "c"), ("team-1", "d")]
    pages = sent(cluster, "list")
    assert [r.query.get("limit") for r in pages] == ["2", "2", "2"]
    assert ["continue" in r.query for r in pages] == [False, True, True]
    assert store.stats.requests[("list", "workflows")] == 3
    assert int(listed.resource_version) == cluster.server.resource_version
    assert all(o["kind"] == "Workflow" and o["apiVersion"] == "nvcre.nvidia.com/v1alpha1" for o in listed.items)


async def test_expired_continue_token_lists_again_whole(cluster: Cluster) -> None:
    """As client-go's pager (FullListIfExpired): the rest is listed again in one answer, which cannot expire."""
    store = await cluster.open_store(page_size=2)
    for name in "abcde":
        await store.create(WORKFLOW, obj(name))
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="continue=", status=410, times=1,
                                    reason="Expired", message="The provided continue parameter is too old"))
    cluster.server.clear_requests()
    listed = await store.list(WORKFLOW, "default")
    assert [o["metadata"]["name"] for o in listed.items] == list("abcde")
    assert store.stats.relists == 1
    assert [(r.query.get("limit"), "continue" in r.query) for r in sent(cluster, "list")] == [
        ("2", False), ("2", True), (None, False)]


async def test_thousands_of_objects_listed_in_pages_while_written_to(cluster: Cluster) -> None:
    """5,000 Workflows listed in pages of 500 while another client creates more, faster than the server's history keeps
    (8 changes here): each page's continue token expired, the list restarted three times and gave up with Gone, "The
    provided continue parameter is too old", and a cache's first list failed the command. The list is whole and
    consistent: every object at its resourceVersion, none after it."""
    workflows = cluster.server.resource("nvcre.nvidia.com", "v1alpha1", "workflows")
    for index in range(5000):
        cluster.server.registry.create(workflows, "default", obj(f"wf-{index:05d}"), manager="seed")
    store = await cluster.open_store(page_size=500)
    writer = await cluster.open_store()
    created: dict[str, int] = {}
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="continue=", delay=0.01))  # writes land between pages

    async def write() -> None:
        for index in range(10_000):
            made = await writer.create(WORKFLOW, obj(f"new-{index:05d}"))
            created[made["metadata"]["name"]] = int(made["metadata"]["resourceVersion"])

    writing = asyncio.create_task(write())
    try:
        listed = await asyncio.wait_for(store.list(WORKFLOW, "default"), 10)
    finally:
        writing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writing
    at = int(listed.resource_version)
    names = [o["metadata"]["name"] for o in listed.items]
    assert len(created) > HISTORY_LIMIT and any(rv > at for rv in created.values())  # written to while it was read
    assert names == sorted([f"wf-{index:05d}" for index in range(5000)] + [n for n, rv in created.items() if rv <= at])


async def test_built_in_list_items_get_their_type(store: KubeStore) -> None:
    await store.create(CONFIGMAP, {"metadata": {"name": "cm", "namespace": "default"}, "data": {"k": "v"}})
    (item,) = (await store.list(CONFIGMAP, "default")).items
    assert (item["apiVersion"], item["kind"], item["data"]) == ("v1", "ConfigMap", {"k": "v"})


# ----- watch -----------------------------------------------------------------------------------------------

async def test_dropped_watch_stream_resumes_without_loss_or_duplicates(cluster: Cluster, store: KubeStore) -> None:
    start = (await store.list(WORKFLOW)).resource_version
    created = [await store.create(WORKFLOW, obj(name)) for name in "abcde"]
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="watch=", drop_stream_after=2, times=1))
    watch = store.watch(WORKFLOW, resource_version=start)
    assert await take(watch, 5) == [("ADDED", name) for name in "abcde"]
    await store.create(WORKFLOW, obj("f"))
    assert await take(watch, 1) == [("ADDED", "f")]
    watches = sent(cluster, "watch")
    # Reopened from the last event that reached us: the server wrote two, an abort may lose the second.
    versions = [c["metadata"]["resourceVersion"] for c in created]
    assert len(watches) == 2 and watches[0].query["resourceVersion"] == start
    assert watches[1].query["resourceVersion"] in versions[:2]
    assert all(r.query["allowWatchBookmarks"] == "true" and r.query["timeoutSeconds"] == "300" for r in watches)
    assert store.stats.watch_restarts == 1
    await watch.aclose()


async def test_bookmarks_move_the_position_silently(cluster: Cluster, store: KubeStore) -> None:
    start = (await store.list(WORKFLOW)).resource_version
    await store.create(WORKFLOW, obj("a"))
    # The first stream breaks at its second event; bookmarks (every 0.05 s) arrive before that.
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="watch=", drop_stream_after=1, times=1))
    watch = store.watch(WORKFLOW, resource_version=start)
    assert await take(watch, 1) == [("ADDED", "a")]
    elsewhere = await store.create(CONFIGMAP, {"metadata": {"name": "elsewhere", "namespace": "default"}})
    waiting = asyncio.ensure_future(next_event(watch))
    await asyncio.sleep(1.0)  # many bookmark intervals (0.05 s each), on the real socket, even on a loaded machine
    assert not waiting.done()  # bookmarks are never yielded
    await store.create(WORKFLOW, obj("b"))  # breaks the stream
    event = await waiting
    assert (event.type, event.object["metadata"]["name"]) == ("ADDED", "b")
    positions = [r.query["resourceVersion"] for r in sent(cluster, "watch")]
    # reopened from the bookmark's position (the configmap's write), not from the last Workflow event
    assert positions == [start, elsewhere["metadata"]["resourceVersion"]]
    assert store.stats.watch_restarts == 1
    await watch.aclose()


async def test_watch_older_than_history_raises_gone_without_retrying(store: KubeStore) -> None:
    start = (await store.list(WORKFLOW)).resource_version
    for index in range(HISTORY_LIMIT + 2):
        await store.create(WORKFLOW, obj(f"wf-{index}"))
    with pytest.raises(Gone, match=rf"^Workflow: resourceVersion {start} is older than the server's history"):
        await next_event(store.watch(WORKFLOW, resource_version=start))
    assert store.stats.retries == 0


async def test_watch_refused_with_429_waits_retry_after(cluster: Cluster, store: KubeStore) -> None:
    start = (await store.list(WORKFLOW)).resource_version
    await store.create(WORKFLOW, obj("a"))
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="watch=", status=429, retry_after=3, times=1))
    assert await take(store.watch(WORKFLOW, resource_version=start), 1) == [("ADDED", "a")]
    assert cluster.sleep.waits == [3.0]


async def test_watch_label_selector_is_sent_canonically(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("gpu", labels={"tier": "gpu"}))
    await store.create(WORKFLOW, obj("cpu", labels={"tier": "cpu"}))
    watch = store.watch(WORKFLOW, "default", label_selector={"matchLabels": {"tier": "gpu"}})
    assert await take(watch, 1) == [("ADDED", "gpu")]
    await store.create(WORKFLOW, obj("gpu-2", labels={"tier": "gpu"}))
    assert await take(watch, 1) == [("ADDED", "gpu-2")]
    assert {r.query.get("labelSelector") for r in sent(cluster, "list") + sent(cluster, "watch")} == {"tier=gpu"}
    await watch.aclose()


async def test_close_ends_every_watch_and_the_store(store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    first, second = store.watch(WORKFLOW), store.watch(WORKFLOW, "default")
    assert await take(first, 1) == [("ADDED", "wf")]
    assert await take(second, 1) == [("ADDED", "wf")]
    waiting = asyncio.ensure_future(next_event(first))
    await asyncio.sleep(0.05)
    await store.close()
    with pytest.raises(StopAsyncIteration):
        await waiting
    with pytest.raises(StopAsyncIteration):
        await next_event(second)
    with pytest.raises(Unavailable, match="closed"):
        await store.get(WORKFLOW, "wf", "default")


# ----- retries ---------------------------------------------------------------------------------------------

async def test_retry_after_is_honoured(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", status=429, retry_after=2, times=1))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", status=503, retry_after=5, times=1))
    assert (await store.get(WORKFLOW, "wf", "default"))["metadata"]["name"] == "wf"
    assert cluster.sleep.waits == [2.0, 5.0]
    assert store.stats.retries == 2
    assert store.stats.requests[("get", "workflows")] == 3


async def test_server_errors_back_off_exponentially(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", status=500, times=3))
    await store.get(WORKFLOW, "wf", "default")
    assert cluster.sleep.waits == pytest.approx([0.15, 0.3, 0.6])  # 0.2 s doubling, jitter drawn at its middle (0.75)


@pytest.mark.parametrize(("status", "error"), [(429, TooManyRequests), (500, ServerError), (503, ServerError),
                                               (504, Timeout)])
async def test_retries_give_up_with_the_retryable_error(cluster: Cluster, store: KubeStore, status: int,
                                                        error: type[StoreError]) -> None:
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", status=status, retry_after=1))
    with pytest.raises(error, match=r"^Workflow default/wf: ") as caught:
        await store.get(WORKFLOW, "wf", "default")
    assert caught.value.retryable and caught.value.retry_after == 1.0
    assert re.search(r" \(gave up after 6 tries in \d+s\)$", str(caught.value))  # not only the last try's words
    assert cluster.sleep.waits == [1.0] * 5  # six attempts in all
    assert store.stats.retries == 5


async def test_retry_after_beyond_the_budget_is_left_to_the_caller(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", status=429, retry_after=120, times=1))
    with pytest.raises(TooManyRequests) as caught:
        await store.get(WORKFLOW, "wf", "default")
    assert caught.value.retry_after == 120.0 and cluster.sleep.waits == []


async def test_reset_connection_is_retried(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    reset = cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", reset_connection=True, times=3))
    assert (await store.get(WORKFLOW, "wf", "default"))["metadata"]["name"] == "wf"
    # aiohttp itself resends once when a pooled keep-alive connection turns out dead; the rest is ours
    assert reset.hits == 3 and 1 <= len(cluster.sleep.waits) <= 3


async def test_slow_answer_times_out_then_is_retried(cluster: Cluster) -> None:
    store = await cluster.open_store(request_timeout=0.2)
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", delay=1.0, times=1))
    assert (await store.get(WORKFLOW, "wf", "default"))["metadata"]["name"] == "wf"
    assert len(cluster.sleep.waits) == 1 and store.stats.retries == 1


async def test_refused_connection_is_unavailable(cluster: Cluster, store: KubeStore) -> None:
    """A server this process never reached: FIRST_ANSWER_TRIES tries, one line at once (as kubectl)."""
    await cluster.server.stop()
    with pytest.raises(Unavailable, match=r"^Workflow default/wf: cannot connect to http://127\.0\.0\.1:\d+"):
        await store.get(WORKFLOW, "wf", "default")
    assert len(cluster.sleep.waits) == FIRST_ANSWER_TRIES - 1


async def test_a_server_that_answered_is_retried_the_whole_policy_once_it_stops(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    await cluster.server.stop()
    with pytest.raises(Unavailable, match=r"gave up after 6 tries"):
        await store.get(WORKFLOW, "wf", "default")
    assert len(cluster.sleep.waits) == 5


async def test_a_server_that_never_answers_is_given_up_after_two_short_tries(cluster: Cluster) -> None:
    """It accepts the connection and says nothing (a hung apiserver, a port behind a load balancer): six tries of
    30 s kept `report`, `setup status` and the console's blank screen waiting 190 s."""
    store = await cluster.open_store(request_timeout=0.2)
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", delay=2.0))
    with pytest.raises(Timeout, match=r"no answer within 0\.2s \(gave up after 2 tries"):
        await store.get(WORKFLOW, "wf", "default")


# ----- writes that may or may not have happened ------------------------------------------------------------

async def test_named_create_retried_after_commit_meets_already_exists(cluster: Cluster, store: KubeStore) -> None:
    cluster.server.faults.add(Fault(method="POST", path=WORKFLOWS, status=500, after_commit=True, times=1))
    with pytest.raises(AlreadyExists, match="Workflow default/wf"):
        await store.create(WORKFLOW, obj("wf"))
    assert [o["metadata"]["name"] for o in (await store.list(WORKFLOW)).items] == ["wf"]


async def test_generated_name_create_is_never_repeated_after_an_ambiguous_failure(cluster: Cluster,
                                                                                  store: KubeStore) -> None:
    body = obj("")
    body["metadata"]["generateName"] = "run-"
    cluster.server.faults.add(Fault(method="POST", path=WORKFLOWS, status=503, after_commit=True, times=1))
    with pytest.raises(ServerError):
        await store.create(WORKFLOW, body)
    assert len((await store.list(WORKFLOW)).items) == 1  # committed once, not created twice
    cluster.server.faults.add(Fault(method="POST", path=WORKFLOWS, status=429, retry_after=1, times=1))
    await store.create(WORKFLOW, body)  # refused before any work: safe to retry
    assert len((await store.list(WORKFLOW)).items) == 2
    assert cluster.sleep.waits == [1.0]


async def test_delete_retried_after_commit_is_done(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="DELETE", path=WORKFLOWS, status=503, after_commit=True, times=1))
    await store.delete(WORKFLOW, "wf", "default")
    with pytest.raises(NotFound):
        await store.get(WORKFLOW, "wf", "default")
    with pytest.raises(NotFound):  # a plain delete of a missing object still says so
        await store.delete(WORKFLOW, "wf", "default")


# ----- what goes over the wire -----------------------------------------------------------------------------

async def test_writes_use_the_right_verbs_paths_and_content_types(cluster: Cluster, store: KubeStore) -> None:
    created = await store.create(WORKFLOW, obj("wf"))
    await store.patch_status(WORKFLOW, "wf", "default", {"phase": "Running"},
                             resource_version=created["metadata"]["resourceVersion"])
    current = await store.get(WORKFLOW, "wf", "default")
    await store.update_status(WORKFLOW, dict(current, status={"phase": "Done"}))
    config = await store.create(CONFIGMAP, {"metadata": {"name": "cm", "namespace": "default"}})
    await store.update_status(CONFIGMAP, config)  # no status subresource: the main resource
    await store.delete(WORKFLOW, "wf", "default", uid=created["metadata"]["uid"])
    seen = [(r.verb, r.resource, r.subresource, r.content_type) for r in cluster.server.requests]
    assert seen == [
        ("create", "workflows", "", "application/json"),
        ("patch", "workflows", "status", "application/merge-patch+json"),
        ("get", "workflows", "", "application/json"),
        ("update", "workflows", "status", "application/json"),
        ("create", "configmaps", "", "application/json"),
        ("update", "configmaps", "", "application/json"),
        ("delete", "workflows", "", "application/json"),
    ]
    deleted = cluster.server.requests[-1]
    assert b'"propagationPolicy": "Background"' in deleted.body and created["metadata"]["uid"].encode() in deleted.body
    assert {r.user_agent for r in cluster.server.requests} == {"nvcre-test"}


async def test_errors_name_the_object_and_the_field(cluster: Cluster, store: KubeStore) -> None:
    strict = ResourceKind("example.nvidia.com", "v1", "Widget", "widgets")
    await store.create(CRD, {
        "metadata": {"name": "widgets.example.nvidia.com"},
        "spec": {"group": strict.group, "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": {
                         "size": {"type": "integer", "minimum": 1}}}}}}}]}})
    with pytest.raises(Invalid, match=r"^Widget default/w: .*spec\.size") as caught:
        await store.create(strict, {"metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 0}})
    assert "\n" not in str(caught.value)
    cluster.server.faults.add(Fault(method="PUT", status=403, message="workflows is forbidden: User cannot update"))
    created = await store.create(WORKFLOW, obj("wf"))
    with pytest.raises(Forbidden, match=r"^Workflow default/wf: workflows is forbidden"):
        await store.update(WORKFLOW, dict(created, spec={"size": 2}))
    with pytest.raises(NotFound, match=r"^Workflow team-1/ghost: "):
        await store.patch_status(WORKFLOW, "ghost", "team-1", {"phase": "x"})
    assert store.stats.retries == 0


# ----- beyond the protocol ---------------------------------------------------------------------------------

async def test_server_side_apply_creates_updates_and_dry_runs(cluster: Cluster, store: KubeStore) -> None:
    body = {"metadata": {"name": "settings", "namespace": "default"}, "data": {"a": "1"}}
    preview = await store.apply(CONFIGMAP, body, dry_run=True)
    assert preview["data"] == {"a": "1"}
    with pytest.raises(NotFound):
        await store.get(CONFIGMAP, "settings", "default")
    created = await store.apply(CONFIGMAP, body)
    changed = await store.apply(CONFIGMAP, {**body, "data": {"a": "2"}})
    assert (created["data"], changed["data"]) == ({"a": "1"}, {"a": "2"})
    applies = [r for r in cluster.server.requests if r.verb == "patch"]
    assert {r.content_type for r in applies} == {"application/apply-patch+yaml"}
    assert [r.query.get("dryRun") for r in applies] == ["All", None, None]
    assert {(r.field_manager, r.query.get("force")) for r in applies} == {("nvcre", "true")}


async def test_discovery(store: KubeStore) -> None:
    groups = await store.served_groups()
    assert "v1" in groups[""] and groups["nvcre.nvidia.com"] == ["v1alpha1"]
    assert groups["apiextensions.k8s.io"][0] == "v1"
    resources = await store.served_resources("nvcre.nvidia.com/v1alpha1")
    assert resources is not None
    assert {"workflows", "workflows/status", "certifications"} <= {r["name"] for r in resources}
    core = await store.served_resources("v1")
    assert core is not None and any(r["name"] == "nodes" and not r["namespaced"] for r in core)
    assert await store.served_resources("nope.example.com/v1") is None


async def test_one_connection_pool_for_the_store_life(cluster: Cluster, store: KubeStore) -> None:
    await store.create(WORKFLOW, obj("wf"))
    pool = store._transport._pools.current
    for _ in range(5):
        await store.get(WORKFLOW, "wf", "default")
    assert store._transport._pools.current is pool is not None and pool.in_use == 0
    await store.close()
    assert store._transport._pools.current is None


async def test_tls_failure_is_permanent_not_retried(cluster: Cluster, tmp_path: Path) -> None:
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = cluster.server.url.replace("http://", "https://")
    (tmp_path / "tls").write_text(yaml.safe_dump(config))
    store = KubeStore(await load_target(str(tmp_path / "tls")), ManualClock(), retry=quick_retry(cluster.sleep))
    try:
        with pytest.raises(StoreError, match=r"^Node gpu-01: TLS with https://127\.0\.0\.1:\d+ failed") as caught:
            await store.get(NODE, "gpu-01")
        assert not caught.value.retryable and cluster.sleep.waits == []
    finally:
        await store.close()


async def test_streams_the_server_ends_are_reopened_at_once(cluster: Cluster) -> None:
    store = await cluster.open_store(watch_timeout=1)
    start = (await store.list(WORKFLOW)).resource_version
    await store.create(WORKFLOW, obj("a"))
    watch = store.watch(WORKFLOW, resource_version=start)
    assert await take(watch, 1) == [("ADDED", "a")]
    waiting = asyncio.ensure_future(next_event(watch))
    await asyncio.sleep(2.5)  # two stream lifetimes (the server takes whole seconds), on the real socket
    await store.create(WORKFLOW, obj("b"))
    event = await waiting
    assert (event.type, event.object["metadata"]["name"]) == ("ADDED", "b")
    watches = sent(cluster, "watch")
    assert len(watches) >= 2 and store.stats.watch_restarts == len(watches) - 1
    assert {r.query["timeoutSeconds"] for r in watches} == {"1"}
    positions = [int(r.query["resourceVersion"]) for r in watches]
    assert positions == sorted(positions)
    assert cluster.sleep.waits == []  # a stream ended as asked is no failure: no backoff
    await watch.aclose()


async def test_delete_of_a_missing_object_refused_once_is_still_not_found(cluster: Cluster, store: KubeStore) -> None:
    cluster.server.faults.add(Fault(method="DELETE", path=WORKFLOWS, status=429, retry_after=1, times=1))
    with pytest.raises(NotFound, match="Workflow default/ghost"):  # a 429 did nothing: NotFound is the truth
        await store.delete(WORKFLOW, "ghost", "default")
    assert cluster.sleep.waits == [1.0]


async def test_watch_waits_out_a_restarting_server(cluster: Cluster, store: KubeStore) -> None:
    start = (await store.list(WORKFLOW)).resource_version
    await store.create(WORKFLOW, obj("a"))
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="watch=", status=503, times=8))
    assert await take(store.watch(WORKFLOW, resource_version=start), 1) == [("ADDED", "a")]
    # more tries than a single request gets: doubling from 0.2 s, capped at 10 s (jitter at its middle)
    assert cluster.sleep.waits == pytest.approx([0.15, 0.3, 0.6, 1.2, 2.4, 4.8, 7.5, 7.5])


async def test_watch_gives_up_after_its_patience(cluster: Cluster) -> None:
    store = await cluster.open_store(watch_patience=20)
    start = (await store.list(WORKFLOW)).resource_version
    cluster.server.faults.add(Fault(method="GET", path=WORKFLOWS, query="watch=", status=503))
    with pytest.raises(ServerError, match=r"^Workflow: the server is currently unable"):
        await next_event(store.watch(WORKFLOW, resource_version=start))
    assert sum(cluster.sleep.waits) <= 20 < sum(cluster.sleep.waits) + 7.5


async def test_a_wrong_token_is_forbidden_not_retried(cluster: Cluster, tmp_path: Path) -> None:
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "not-the-token"
    (tmp_path / "wrong").write_text(yaml.safe_dump(config))
    store = KubeStore(await load_target(str(tmp_path / "wrong")), ManualClock(), retry=quick_retry(cluster.sleep))
    try:
        with pytest.raises(Forbidden, match=r"^Workflow default/wf: Unauthorized \(the API server refused the kubeconfig's credentials") as caught:
            await store.get(WORKFLOW, "wf", "default")
        assert not caught.value.retryable and cluster.sleep.waits == []
    finally:
        await store.close()


async def test_watch_from_ahead_of_the_server_waits_for_it_to_catch_up(cluster: Cluster) -> None:
    writer = await cluster.open_store()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # the server catches up while we back off
        waits.append(seconds)
        if len(waits) == 2:
            await writer.create(WORKFLOW, obj("one"))
            await writer.create(WORKFLOW, obj("two"))

    store = await cluster.open_store(retry=quick_retry(sleep))
    ahead = str(cluster.server.resource_version + 1)
    watch = store.watch(WORKFLOW, resource_version=ahead)
    assert await take(watch, 1) == [("ADDED", "two")]  # "one" is at `ahead` itself: not after it
    assert waits == pytest.approx([0.15, 0.3])
    await watch.aclose()


async def test_watch_from_ahead_of_a_server_that_never_catches_up_lists_again(cluster: Cluster, store: KubeStore) -> None:
    """A server whose resourceVersion stays behind the watch's (etcd restored from a backup) was asked again for the
    watch's whole patience, five minutes; after three answers in a row the watch ends with Gone: list again."""
    ahead = str(cluster.server.resource_version + 5)
    watch = store.watch(WORKFLOW, resource_version=ahead)
    with pytest.raises(Gone, match=rf"^Workflow: resourceVersion {ahead} is ahead of the server's, 3 times in a row "
                                   r"\(Too large resource version: \d+, current: \d+\): its history went back"):
        await asyncio.wait_for(next_event(watch), 5)
    assert len(sent(cluster, "watch")) == 3 and len(cluster.sleep.waits) == 2


async def test_an_answer_cut_short_is_said_in_words(cluster: Cluster, store: KubeStore) -> None:
    """An answer whose connection closed before its end read `connection lost while reading (Response payload is not
    completed: <TransferEncodingError: 400, message='Not enough data to satisfy transfer length header.'>)`: aiohttp's
    repr, class names a user cannot read. It says what happened."""
    await store.create(WORKFLOW, obj("wf"))
    cluster.server.faults.add(Fault(method="GET", path=r"/workflows/wf$", cut_body_after=10))
    with pytest.raises(Unavailable, match=r"^Workflow default/wf: GET /apis/nvcre\.nvidia\.com/v1alpha1/namespaces/default/workflows/wf: "
                                          r"connection lost while reading \(the connection closed before the answer ended\) "):
        await store.get(WORKFLOW, "wf", "default")
