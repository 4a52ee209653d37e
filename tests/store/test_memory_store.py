"""MemoryStore: the shared contract, plus what only MemoryStore has (persistence, close, watcher backlog)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import WORKFLOW, Gone, MemoryStore, ReadOnlyStore, ResourceStore

from .contract import StoreContract
from .fixtures import next_event, obj, take

HISTORY_LIMIT = 8


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def history_limit() -> int:
    return HISTORY_LIMIT


@pytest.fixture(params=["fresh", "restored"])
def store(request: pytest.FixtureRequest, clock: ManualClock) -> MemoryStore:
    """A fresh store, and one restored from a snapshot (so a reloaded store keeps the whole contract)."""
    if request.param == "fresh":
        return MemoryStore(clock, history_limit=HISTORY_LIMIT)
    return MemoryStore.from_snapshot(MemoryStore(clock).snapshot(), clock, history_limit=HISTORY_LIMIT)


class TestMemoryStoreContract(StoreContract):
    """Every contract test, against MemoryStore."""


def test_memory_and_read_only_stores_satisfy_the_protocol(clock: ManualClock) -> None:
    assert isinstance(MemoryStore(clock), ResourceStore)
    assert isinstance(ReadOnlyStore(MemoryStore(clock)), ResourceStore)


async def _populated(clock: ManualClock) -> MemoryStore:
    store = MemoryStore(clock)
    owner = await store.create(WORKFLOW, obj("owner", finalizers=["keep"], labels={"k": "v"}))
    await store.patch_status(WORKFLOW, "owner", "default", {"phase": "Running"})
    await store.create(WORKFLOW, obj("child", owners=[owner]))
    return store


async def test_save_and_load_round_trip(tmp_path: Path, clock: ManualClock) -> None:
    store = await _populated(clock)
    path = tmp_path / "state" / "store.json"
    store.save(path)
    loaded = MemoryStore.load(path, clock)
    assert loaded.snapshot() == store.snapshot()
    assert loaded.resource_version == store.resource_version
    assert [p.name for p in path.parent.iterdir()] == ["store.json"]  # no temporary file left behind
    created = await loaded.create(WORKFLOW, obj("later"))
    assert int(created["metadata"]["resourceVersion"]) == int(store.resource_version) + 1
    # the restored store still knows owners: deleting the owner (finalizer released) collects the child
    await loaded.delete(WORKFLOW, "owner", "default")
    owner = await loaded.get(WORKFLOW, "owner", "default")
    await loaded.update(WORKFLOW, dict(owner, metadata={**owner["metadata"], "finalizers": []}))
    assert [o["metadata"]["name"] for o in (await loaded.list(WORKFLOW)).items] == ["later"]


async def test_restored_store_has_no_history_before_the_snapshot(clock: ManualClock) -> None:
    store = await _populated(clock)
    loaded = MemoryStore.from_snapshot(store.snapshot(), clock)
    with pytest.raises(Gone):
        await next_event(loaded.watch(WORKFLOW, resource_version="1"))
    watch = loaded.watch(WORKFLOW, resource_version=loaded.resource_version)
    await loaded.create(WORKFLOW, obj("new"))
    assert await take(watch, 1) == [("ADDED", "new")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"format": "other"}), "format must be 'nvcre-store/v1'"),
        (json.dumps({"format": "nvcre-store/v1", "resourceVersion": "x", "kinds": []}), "resourceVersion"),
        (json.dumps({"format": "nvcre-store/v1", "resourceVersion": "3", "kinds": [{"group": ""}]}),
         r"kinds\[0\]: missing field 'version'"),
    ],
)
def test_load_rejects_bad_state_files_naming_the_file(tmp_path: Path, clock: ManualClock, content: str,
                                                      message: str) -> None:
    path = tmp_path / "store.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as caught:
        MemoryStore.load(path, clock)
    assert str(path) in str(caught.value)


async def test_close_ends_every_watch(clock: ManualClock) -> None:
    store = MemoryStore(clock)
    await store.create(WORKFLOW, obj("wf"))
    watch = store.watch(WORKFLOW)
    assert await take(watch, 1) == [("ADDED", "wf")]
    await store.close()
    with pytest.raises(StopAsyncIteration):
        await next_event(watch)


async def test_watcher_that_falls_behind_is_told_to_relist(clock: ManualClock) -> None:
    store = MemoryStore(clock, history_limit=4)
    await store.create(WORKFLOW, obj("first"))
    watch = store.watch(WORKFLOW)
    assert await take(watch, 1) == [("ADDED", "first")]
    for index in range(5):  # one more than the watcher may keep waiting
        await store.create(WORKFLOW, obj(f"wf-{index}"))
    with pytest.raises(Gone, match="fell too far behind"):
        await next_event(watch)


async def test_closing_a_watch_unsubscribes_it(clock: ManualClock) -> None:
    store = MemoryStore(clock)
    await store.create(WORKFLOW, obj("wf"))
    watch = store.watch(WORKFLOW)
    await take(watch, 1)
    assert len(store._history._watchers) == 1
    await watch.aclose()
    assert len(store._history._watchers) == 0


def test_history_limit_defaults_to_ten_thousand(clock: ManualClock) -> None:
    assert MemoryStore(clock)._history.limit == 10_000
    with pytest.raises(ValueError, match="history limit"):
        MemoryStore(clock, history_limit=0)
