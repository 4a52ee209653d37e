"""The engine Lease when clocks disagree, and what is shown of its holder.

A holder whose clock runs an hour fast writes renewTimes an hour ahead: judged by those times alone, its Lease
outlives it by the hour. A contender judges as client-go does too: a Lease it has seen unchanged for the duration
has expired. Cases run on MemoryStore and on KubeStore over the API-server emulator (real HTTP).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import DEFAULT_START, ManualClock
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.local_lease import describe_holder
from nvcre_tui.engine.store import MemoryStore
from nvcre_tui.engine.store.protocol import LEASE, ResourceStore
from tests.kube.cluster import installed, store_on

NS = "nvcre-system"
HOUR = timedelta(hours=1)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def fast() -> ManualClock:
    """Another host's clock, an hour ahead of ours."""
    return ManualClock(DEFAULT_START + HOUR)


@pytest.fixture(params=["memory", "emulator"])
async def store(request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path) -> AsyncIterator[ResourceStore]:
    if request.param == "memory":
        yield MemoryStore(clock)
        return
    async with installed(tmp_path, clock) as (_, kubeconfig):
        kube = await store_on(kubeconfig, clock, "nvcre-engine")
        try:
            yield kube
        finally:
            await kube.close()


def advance(seconds: float, *clocks: ManualClock) -> None:
    for each in clocks:
        each.advance(seconds)


async def spec(store: ResourceStore) -> dict[str, Any]:
    found: dict[str, Any] = (await store.get(LEASE, EngineLease.NAME, NS))["spec"]
    return found


async def test_a_holder_with_a_fast_clock_keeps_the_lease_while_it_renews_and_loses_it_once_silent(
        store: ResourceStore, clock: ManualClock, fast: ManualClock) -> None:
    skewed = EngineLease(store, fast, NS, "run@otherhost/1/a")
    contender = EngineLease(store, clock, NS, "run@here/2/b")
    assert await skewed.try_acquire()
    for _ in range(4):  # renewed every 5 s: held, however far ahead its times are
        assert not await contender.try_acquire()
        advance(5, clock, fast)
        assert await skewed.renew()
    assert not await contender.try_acquire()  # sees the last renewal: unchanged from now on
    advance(14.9, clock, fast)
    assert not await contender.try_acquire()
    holder = await contender.holder()
    assert holder is not None and holder.live and holder.skewed
    advance(0.1, clock, fast)  # unchanged for the whole duration: the holder is gone, whatever its renewTime says
    assert await contender.try_acquire()
    current = await spec(store)
    assert (current["holderIdentity"], current["leaseTransitions"]) == ("run@here/2/b", 1)
    assert not await skewed.renew()  # the silent holder, back, finds it lost


async def test_a_fresh_lease_is_still_judged_by_its_times(store: ResourceStore, clock: ManualClock) -> None:
    """A contender that has not watched the Lease long enough trusts renewTime: no takeover of a live holder."""
    holder = EngineLease(store, clock, NS, "a")
    assert await holder.try_acquire()
    advance(14, clock)
    assert not await EngineLease(store, clock, NS, "b").try_acquire()
    advance(1, clock)
    assert await EngineLease(store, clock, NS, "c").try_acquire()  # expired by its times, as before


async def test_the_holder_is_described_without_control_characters_and_without_negative_ages(
        store: ResourceStore, clock: ManualClock, fast: ManualClock) -> None:
    hostile = "\x1b]0;pwned\x07run@otherhost/1/a"
    await EngineLease(store, fast, NS, hostile).try_acquire()
    holder = await EngineLease(store, clock, NS, "probe").holder()
    assert holder is not None
    text = describe_holder(holder, clock.now())
    assert text == ("engine held by \ufffd]0;pwned\ufffdrun@otherhost/1/a (renewTime 1h00m ahead of this clock: "
                    "the clocks disagree; it expires once unchanged for 15s)")
    await EngineLease(store, fast, NS, hostile).release()
    slightly = ManualClock(DEFAULT_START + timedelta(seconds=2))  # a second or two fast: within the margin
    await EngineLease(store, slightly, NS, "run@otherhost/1/a").try_acquire()
    holder = await EngineLease(store, clock, NS, "probe").holder()
    assert holder is not None and not holder.skewed
    assert describe_holder(holder, clock.now()) == "engine held by run@otherhost/1/a (renewed 0s ago)"
