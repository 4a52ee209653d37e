"""The simulator's stores expire Events as the API server does (its default --event-ttl): an hour after an Event's last
write, a repeat renewing it; a watch sees it go. They were kept for ever: a soak's store grew with every certification."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import EVENT, WORKFLOW, MemoryStore, ResourceStore
from nvcre_tui.engine.store.sqlite import SqliteStore

from .fixtures import next_event, obj

MINUTE = 60.0


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock) -> AsyncIterator[ResourceStore]:
    made: ResourceStore = MemoryStore(clock) if request.param == "memory" else SqliteStore(tmp_path / "sim.db", clock)
    yield made
    await made.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def _reasons(store: ResourceStore) -> list[str]:
    return sorted(event["reason"] for event in (await store.list(EVENT, "default")).items)


async def test_an_event_goes_an_hour_after_its_last_write(store: ResourceStore, clock: ManualClock) -> None:
    workflow = await store.create(WORKFLOW, obj("wf"))
    first = await store.record_event(workflow, "Normal", "Started", "the first group runs")
    repeated = await store.record_event(workflow, "Normal", "Repeated", "again and again")
    watch = store.watch(EVENT, resource_version=repeated["metadata"]["resourceVersion"])
    clock.advance(40 * MINUTE)
    await store.record_event(workflow, "Normal", "Repeated", "again and again")  # renewed: an hour from now
    await store.record_event(workflow, "Warning", "Late", "forty minutes in")
    clock.advance(21 * MINUTE)  # Started: 61 minutes since its only write
    await store.record_event(workflow, "Normal", "Now", "sixty-one minutes in")
    assert await _reasons(store) == ["Late", "Now", "Repeated"]
    seen = [await next_event(watch) for _ in range(4)]  # Repeated again, Late, Started gone, Now
    assert [(e.type, e.object["reason"]) for e in seen] == [("MODIFIED", "Repeated"), ("ADDED", "Late"), ("DELETED", "Started"),
                                                             ("ADDED", "Now")]
    assert seen[2].object["metadata"]["uid"] == first["metadata"]["uid"]
    clock.advance(60 * MINUTE)  # every other one an hour or more since its last write
    await store.record_event(workflow, "Normal", "Later", "two hours in")
    assert await _reasons(store) == ["Later"]


async def test_a_store_that_records_for_days_holds_about_an_hour_of_events(store: ResourceStore, clock: ManualClock) -> None:
    workflow = await store.create(WORKFLOW, obj("wf"))
    for i in range(48):  # an event every half hour for a day, each another
        await store.record_event(workflow, "Normal", f"Step{i}", f"step {i}")
        clock.advance(30 * MINUTE)
    assert await _reasons(store) == ["Step46", "Step47"]
