"""SqliteStore: the shared contract (fresh and reopened), plus what only a file-backed store has."""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import CONFIGMAP, WORKFLOW, AlreadyExists, Forbidden, Gone, Invalid, NotFound, ReadOnlyStore, ResourceStore, StoreError
from nvcre_tui.engine.store.sqlite import SqliteStore

from .contract import StoreContract
from .fixtures import names, next_event, obj, take

HISTORY_LIMIT = 8


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def history_limit() -> int:
    return HISTORY_LIMIT


async def _leave_traces(path: Path, clock: ManualClock) -> None:
    """A previous process's work: an object the contract never lists, and a Workflow created and deleted."""
    earlier = SqliteStore(path, clock, history_limit=HISTORY_LIMIT)
    await earlier.create(CONFIGMAP, obj("left-over", namespace="elsewhere"))
    await earlier.create(WORKFLOW, obj("gone", namespace="elsewhere"))
    await earlier.delete(WORKFLOW, "gone", "elsewhere")
    await earlier.close()


@pytest.fixture(params=["fresh", "reopened"])
async def store(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock) -> AsyncIterator[SqliteStore]:
    """A new store file, and one reopened after another store wrote and closed it."""
    path = tmp_path / "store.db"
    if request.param == "reopened":
        await _leave_traces(path, clock)
    opened = SqliteStore(path, clock, history_limit=HISTORY_LIMIT)
    yield opened
    await opened.close()


class TestSqliteStoreContract(StoreContract):
    """Every contract test, against SqliteStore."""


def test_sqlite_and_its_read_only_view_satisfy_the_protocol(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    assert isinstance(store, ResourceStore)
    assert isinstance(ReadOnlyStore(store), ResourceStore)


async def test_reopened_store_keeps_objects_counter_and_watch_history(tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "deep" / "er" / "store.db"  # folders are created
    first = SqliteStore(path, clock)
    owner = await first.create(WORKFLOW, obj("owner", finalizers=["keep"]))
    await first.patch_status(WORKFLOW, "owner", "default", {"phase": "Running"})
    await first.create(WORKFLOW, obj("child", owners=[owner]))
    before_close = first.resource_version
    snapshot = first.snapshot()
    await first.close()

    again = SqliteStore(path, clock)
    assert again.snapshot() == snapshot and again.resource_version == before_close == "3"
    created = await again.create(WORKFLOW, obj("later"))
    assert created["metadata"]["resourceVersion"] == "4"
    # the change log outlives the process: a watch from before the restart replays what came after
    assert await take(again.watch(WORKFLOW, resource_version="1"), 3) == [
        ("MODIFIED", "owner"), ("ADDED", "child"), ("ADDED", "later")]
    # owners survive too: releasing the owner's finalizer collects the child
    await again.delete(WORKFLOW, "owner", "default")
    held = await again.get(WORKFLOW, "owner", "default")
    await again.update(WORKFLOW, dict(held, metadata={**held["metadata"], "finalizers": []}))
    assert names((await again.list(WORKFLOW)).items) == ["later"]
    await again.close()


async def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    await store.create(WORKFLOW, obj("wf"))
    with pytest.raises(Invalid, match="not storable as JSON"):
        await store.create(WORKFLOW, obj("bad", spec={"when": object()}))
    with pytest.raises(AlreadyExists):
        await store.create(WORKFLOW, obj("wf"))
    assert store.resource_version == "1"
    assert names((await store.list(WORKFLOW)).items) == ["wf"]
    assert store.snapshot()["kinds"][0]["plural"] == "workflows"
    await store.close()


async def test_history_limit_bounds_the_change_log_and_a_lagging_watch_is_gone(tmp_path: Path,
                                                                               clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock, history_limit=4)
    await store.create(WORKFLOW, obj("first"))
    watch = store.watch(WORKFLOW)
    assert await take(watch, 1) == [("ADDED", "first")]
    for index in range(6):  # the watch does not read while these land: its position falls out of the log
        await store.create(WORKFLOW, obj(f"wf-{index}"))
    with pytest.raises(Gone, match="fell too far behind"):
        await next_event(watch)
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT count(*) FROM changes").fetchone()[0] == 4
    db.close()
    # writes of OTHER kinds never make a watch stale, even another process's that it has not read yet
    config_watch = store.watch(CONFIGMAP, "default", resource_version=store.resource_version)
    await store.create(CONFIGMAP, obj("cm"))
    assert await take(config_watch, 1) == [("ADDED", "cm")]
    other_process = SqliteStore(store.path, clock, history_limit=4)
    for index in range(10):  # while the watch does not read: the log drops every change it had seen
        await other_process.create(WORKFLOW, obj(f"more-{index}"))
    await other_process.create(CONFIGMAP, obj("cm-2"))
    assert await take(config_watch, 1) == [("ADDED", "cm-2")]
    await other_process.close()
    with pytest.raises(ValueError, match="history limit"):
        SqliteStore(tmp_path / "other.db", clock, history_limit=0)
    await store.close()


async def test_close_ends_every_watch(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    await store.create(WORKFLOW, obj("wf"))
    watch = store.watch(WORKFLOW)
    assert await take(watch, 1) == [("ADDED", "wf")]
    waiting = asyncio.ensure_future(next_event(watch))
    await asyncio.sleep(0)
    await store.close()
    with pytest.raises(StopAsyncIteration):
        await waiting
    await store.close()  # twice is harmless


async def test_a_second_connection_sees_writes_and_read_only_mode_refuses_every_write(
        tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "s.db"
    writer = SqliteStore(path, clock)
    workflow = await writer.create(WORKFLOW, obj("wf"))
    viewer = SqliteStore(path, clock, readonly=True, poll_seconds=0.01)
    watch = viewer.watch(WORKFLOW)
    assert await take(watch, 1) == [("ADDED", "wf")]
    await writer.create(WORKFLOW, obj("seen-elsewhere"))  # another connection: reaches the watch by polling
    assert await take(watch, 1) == [("ADDED", "seen-elsewhere")]
    writes = [
        viewer.create(WORKFLOW, obj("new")),
        viewer.update(WORKFLOW, dict(workflow, spec={"size": 2})),
        viewer.update_status(WORKFLOW, dict(workflow, status={"phase": "x"})),
        viewer.patch_status(WORKFLOW, "wf", "default", {"phase": "x"}),
        viewer.delete(WORKFLOW, "wf", "default"),
        viewer.record_event(workflow, "Normal", "Reason", "message"),
    ]
    for write in writes:
        with pytest.raises(Forbidden, match=rf"^read-only store {re.escape(str(path))}: \w+ Workflow default/"):
            await write
    with pytest.raises(Forbidden):
        viewer.set_property("k", 1)
    assert (await viewer.get(WORKFLOW, "wf", "default")) == workflow
    assert writer.resource_version == viewer.resource_version == "2"
    await viewer.close()
    await writer.close()


async def test_properties_are_stored_beside_the_objects(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    assert store.get_property("session") is None
    store.set_property("session", {"clock": "2026-01-01T00:00:00Z", "scenario": {"name": "x"}})
    store.set_property("session", {"clock": "2026-01-01T00:05:00Z"})
    await store.close()
    reopened = SqliteStore(tmp_path / "s.db", clock)
    assert reopened.get_property("session") == {"clock": "2026-01-01T00:05:00Z"}
    assert reopened.resource_version == "0"  # properties are not objects: no resourceVersion
    await reopened.close()


async def test_a_closed_store_answers_with_a_store_error(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    await store.close()
    with pytest.raises(StoreError, match=r"s\.db"):
        await store.get(WORKFLOW, "wf", "default")


async def test_this_process_s_writes_wake_its_watches_at_once(tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock, poll_seconds=3600)  # polling would never come in time
    watch = store.watch(WORKFLOW)
    reader = asyncio.ensure_future(next_event(watch))
    await asyncio.sleep(0)
    await store.create(WORKFLOW, obj("wf"))
    assert (await asyncio.wait_for(reader, 1)).object["metadata"]["name"] == "wf"
    await store.close()


async def test_a_write_awaits_another_connection_s_lock_without_blocking_the_loop(tmp_path: Path,
                                                                                  clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    create = asyncio.ensure_future(store.create(WORKFLOW, obj("wf")))
    for _ in range(20):
        await asyncio.sleep(0.001)  # the loop keeps running while the create waits for the lock
    assert not create.done()
    other.execute("COMMIT")
    other.close()
    created = await asyncio.wait_for(create, 5)
    assert created["metadata"]["resourceVersion"] == "1"
    await store.close()


async def test_watches_of_other_kinds_skip_this_process_s_writes_without_reading_the_file(
        tmp_path: Path, clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock, poll_seconds=3600)
    await store.create(CONFIGMAP, obj("cm"))
    idle = [store.watch(CONFIGMAP) for _ in range(5)]
    readers = [asyncio.ensure_future(take(watch, 2)) for watch in idle]
    for _ in range(100):  # each watch lists, reads the log once and waits
        if store._tables.log_reads == len(idle):
            break
        await asyncio.sleep(0)
    reads_before = store._tables.log_reads
    assert reads_before == len(idle)
    for index in range(20):
        await store.create(WORKFLOW, obj(f"wf-{index}"))
        await asyncio.sleep(0)
    assert store._tables.log_reads == reads_before  # 20 writes of another kind: no read at all
    await store.create(CONFIGMAP, obj("cm-2"))
    assert [await reader for reader in readers] == [[("ADDED", "cm"), ("ADDED", "cm-2")]] * 5
    await store.close()


def test_a_store_outlives_an_event_loop(tmp_path: Path, clock: ManualClock) -> None:
    """The CLI may run several asyncio.run() on one store: watches work in each."""
    store = SqliteStore(tmp_path / "s.db", clock)

    async def write_and_watch(name: str) -> list[tuple[str, str]]:
        watch = store.watch(WORKFLOW, resource_version=store.resource_version)
        reader = asyncio.ensure_future(take(watch, 1))
        for _ in range(5):
            await asyncio.sleep(0)  # the watch is waiting before the write
        await store.create(WORKFLOW, obj(name))
        events = await reader
        asyncio.ensure_future(anext(store.watch(WORKFLOW, resource_version=store.resource_version)))
        await asyncio.sleep(0)  # a watch left waiting when the loop ends (asyncio.run cancels it)
        return events

    assert asyncio.run(write_and_watch("first")) == [("ADDED", "first")]
    assert asyncio.run(write_and_watch("second")) == [("ADDED", "second")]
    asyncio.run(store.close())


@pytest.mark.parametrize(("power_safe", "synchronous"), [(False, 1), (True, 2)])  # NORMAL, FULL
def test_commits_are_synced_as_asked(tmp_path: Path, clock: ManualClock, power_safe: bool, synchronous: int) -> None:
    store = SqliteStore(tmp_path / "s.db", clock, power_safe=power_safe)
    assert store._tables.db.execute("PRAGMA synchronous").fetchone()[0] == synchronous
    assert store._tables.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    asyncio.run(store.close())


async def test_the_clock_of_the_latest_write_is_kept_for_a_restarted_simulator(tmp_path: Path,
                                                                               clock: ManualClock) -> None:
    store = SqliteStore(tmp_path / "s.db", clock)
    assert store.last_write_time is None
    clock.advance(90.25)
    created = await store.create(WORKFLOW, obj("wf"))
    clock.advance(10)
    await store.update(WORKFLOW, created)  # changes nothing: not a write
    await store.close()
    reopened = SqliteStore(tmp_path / "s.db", ManualClock())
    assert reopened.last_write_time == ManualClock().now() + timedelta(seconds=90.25)
    await reopened.close()


async def test_two_connections_writing_in_turn_see_the_same_changes_in_the_same_order(
        tmp_path: Path, clock: ManualClock) -> None:
    """As two processes would (each store its own connection): every change, once, in resourceVersion order."""
    stores = [SqliteStore(tmp_path / "s.db", clock, poll_seconds=0.005) for _ in range(2)]
    watches = [store.watch(WORKFLOW, resource_version="0") for store in stores]
    rng = random.Random(11)
    written: list[tuple[str, str, str]] = []
    for step in range(60):
        store = rng.choice(stores)
        name = f"wf-{rng.randrange(6)}"
        try:
            current = await store.get(WORKFLOW, name, "default")
        except NotFound:
            stored = await store.create(WORKFLOW, obj(name))
            written.append(("ADDED", name, stored["metadata"]["resourceVersion"]))
            continue
        if rng.random() < 0.3:
            await store.delete(WORKFLOW, name, "default")
            written.append(("DELETED", name, str(int(store.resource_version))))
        else:
            stored = await store.patch_status(WORKFLOW, name, "default", {"step": step})
            written.append(("MODIFIED", name, stored["metadata"]["resourceVersion"]))
    for watch in watches:
        events = [await next_event(watch) for _ in written]
        assert [(e.type, e.object["metadata"]["name"], e.object["metadata"]["resourceVersion"]) for e in events] == written
    for store in stores:
        await store.close()


async def test_a_long_body_is_logged_compressed_and_a_v1_store_stays_a_text_log(tmp_path: Path, clock: ManualClock) -> None:
    """The change log keeps a long body zlib-compressed (a Workflow of a group per node, rewritten at each Job, made
    the log hundreds of megabytes); a watch replays it as it was written. A store of format v1 (a text-only log) is
    read as it is and written as v1: an older nvcre with it open (a wall left running) checked the format only when
    it opened the file, and its watch skipped each compressed row without a word when an upgrade marked it v2."""
    path = tmp_path / "s.db"
    store = SqliteStore(path, clock)
    short = await store.create(CONFIGMAP, obj("short"))
    long = await store.create(CONFIGMAP, {**obj("long"), "data": {f"key-{i}": "value " * 10 for i in range(100)}})
    await store.close()
    with sqlite3.connect(path) as db:
        assert [row[0] for row in db.execute("SELECT typeof(new) FROM changes ORDER BY rv")] == ["text", "blob"]
        db.execute("UPDATE meta SET value = 'nvcre-sqlite-store/v1' WHERE key = 'format'")
        db.execute("UPDATE changes SET new = ? WHERE rv = 2", (db.execute("SELECT body FROM objects WHERE rv = 2").fetchone()[0],))
    db.close()
    for readonly in (True, False):
        opened = SqliteStore(path, clock, readonly=readonly)
        watch = opened.watch(CONFIGMAP, "default", resource_version="0")
        assert [(await next_event(watch)).object for _ in range(2)] == [short, long]
        await watch.aclose()
        if not readonly:
            await opened.create(CONFIGMAP, {**obj("later"), "data": {f"key-{i}": "value " * 10 for i in range(100)}})
        await opened.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("nvcre-sqlite-store/v1",)
        assert [row[0] for row in db.execute("SELECT typeof(new) FROM changes ORDER BY rv")] == ["text", "text", "text"]
    db.close()
