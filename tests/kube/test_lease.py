"""The engine Lease: acquire, renew, takeover after expiry, two contenders one winner, release, hold."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from nvcre_tui.engine.clock import DEFAULT_START, ManualClock
from nvcre_tui.engine.lease import EngineLease, LeaseHolder, format_micro_time
from nvcre_tui.engine.store import MemoryStore
from nvcre_tui.engine.store.protocol import LEASE

NS = "nvcre-system"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    return MemoryStore(clock)


def lease(store, clock, who: str, duration: float = 15.0) -> EngineLease:
    return EngineLease(store, clock, NS, who, duration=duration)


async def spec(store) -> dict:
    return (await store.get(LEASE, EngineLease.NAME, NS))["spec"]


async def test_first_contender_creates_the_lease(store, clock) -> None:
    assert await lease(store, clock, "a").try_acquire()
    assert await spec(store) == {
        "holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0,
        "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:00.000000Z",
    }
    holder = await lease(store, clock, "b").holder()
    assert holder == LeaseHolder("a", DEFAULT_START, DEFAULT_START, 15, True, 0)


async def test_no_lease_means_no_holder(store, clock) -> None:
    assert await lease(store, clock, "a").holder() is None


async def test_a_live_holder_keeps_the_lease(store, clock) -> None:
    a, b = lease(store, clock, "a"), lease(store, clock, "b")
    assert await a.try_acquire()
    clock.advance(14.9)
    assert not await b.try_acquire()
    assert (await spec(store))["holderIdentity"] == "a"


async def test_renew_moves_renew_time_not_acquire_time(store, clock) -> None:
    a = lease(store, clock, "a")
    await a.try_acquire()
    clock.advance(5.25)
    assert await a.renew()
    current = await spec(store)
    assert current["renewTime"] == "2026-01-01T00:00:05.250000Z"
    assert current["acquireTime"] == "2026-01-01T00:00:00.000000Z"
    assert await a.try_acquire()  # acquiring what we already hold is a renewal
    assert (await spec(store))["leaseTransitions"] == 0


async def test_takeover_after_expiry(store, clock) -> None:
    a, b = lease(store, clock, "a"), lease(store, clock, "b")
    await a.try_acquire()
    clock.advance(15)  # renewTime + duration == now: expired
    assert not (await b.holder()).live
    assert await b.try_acquire()
    current = await spec(store)
    assert (current["holderIdentity"], current["leaseTransitions"]) == ("b", 1)
    assert current["acquireTime"] == format_micro_time(DEFAULT_START + timedelta(seconds=15))
    assert not await a.renew()  # a finds it lost


async def test_two_contenders_one_winner(store, clock) -> None:
    contenders = [lease(store, clock, f"engine-{i}") for i in range(5)]
    won = await asyncio.gather(*(c.try_acquire() for c in contenders))
    assert sum(won) == 1
    winner = contenders[won.index(True)].identity
    assert (await spec(store))["holderIdentity"] == winner


async def test_two_contenders_racing_for_an_expired_lease(store, clock) -> None:
    await lease(store, clock, "old").try_acquire()
    clock.advance(60)
    contenders = [lease(store, clock, f"engine-{i}") for i in range(4)]
    won = await asyncio.gather(*(c.try_acquire() for c in contenders))
    assert sum(won) == 1
    assert (await spec(store))["leaseTransitions"] == 1


async def test_release_frees_the_lease_for_the_next_engine(store, clock) -> None:
    a, b = lease(store, clock, "a"), lease(store, clock, "b")
    await a.try_acquire()
    await b.release()  # not b's: nothing happens
    assert (await spec(store))["holderIdentity"] == "a"
    await a.release()
    assert await b.holder() is None
    assert await b.try_acquire()  # at once, no wait for expiry
    assert (await spec(store))["leaseTransitions"] == 1


async def test_renew_recreates_a_deleted_lease(store, clock) -> None:
    a = lease(store, clock, "a")
    await a.try_acquire()
    await store.delete(LEASE, EngineLease.NAME, NS)
    assert await a.renew()
    assert (await spec(store))["holderIdentity"] == "a"


async def test_duration_is_stored_in_whole_seconds_rounded_up(store, clock) -> None:
    await lease(store, clock, "a", duration=2.5).try_acquire()
    assert (await spec(store))["leaseDurationSeconds"] == 3


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_hold_renews_every_third_of_the_duration(store, clock) -> None:
    a = lease(store, clock, "a", duration=15)
    await a.try_acquire()
    task = asyncio.create_task(a.hold())
    try:
        for step in range(1, 7):
            await _settle()
            clock.advance(5)
            await _settle()
            assert (await spec(store))["renewTime"] == format_micro_time(DEFAULT_START + timedelta(seconds=5 * step))
        assert not task.done()
    finally:
        task.cancel()


async def test_hold_reports_a_lost_lease(store, clock) -> None:
    a, b = lease(store, clock, "a", duration=15), lease(store, clock, "b")
    await a.try_acquire()
    lost = []

    async def on_lost() -> None:
        lost.append(clock.monotonic())

    task = asyncio.create_task(a.hold(on_lost))
    await _settle()
    current = await store.get(LEASE, EngineLease.NAME, NS)  # b forces its way in (e.g. a stalled a long time)
    current["spec"]["holderIdentity"] = "b"
    await store.update(LEASE, current)
    clock.advance(5)
    await _settle()
    assert task.done() and lost == [5.0]


def test_bad_arguments_are_refused(store, clock) -> None:
    with pytest.raises(ValueError, match="identity"):
        EngineLease(store, clock, NS, "")
    with pytest.raises(ValueError, match="duration"):
        EngineLease(store, clock, NS, "a", duration=0)
