"""The engine Lease: acquire, renew, takeover after expiry, two contenders one winner, release, hold.

Every case runs on MemoryStore and on KubeStore over the API-server emulator (real HTTP, the server's
optimistic concurrency); the hold loop's timing cases run on MemoryStore, where a ManualClock step
completes every renewal without waiting on a socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

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
def memory(clock: ManualClock) -> MemoryStore:
    return MemoryStore(clock)


@pytest.fixture(params=["memory", "emulator"])
async def stores(request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path) -> AsyncIterator[tuple]:
    """(the engine's store, an administrator's store) on the same data."""
    if request.param == "memory":
        memory = MemoryStore(clock)
        yield memory, memory
        return
    from nvcre_tui.engine.kube.config import load_target
    from nvcre_tui.engine.kube.install import ENGINE_NAME, rbac_objects
    from nvcre_tui.engine.store import NAMESPACE, kind_of
    from nvcre_tui.engine.store.kube import KubeStore
    from tests.kubeapi import ApiServer

    server = ApiServer(clock=clock)
    await server.start()
    admin = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "admin"))), clock, user_agent="admin")
    # the engine's own identity: the Lease is all the Role of `setup init` lets it touch in the namespace
    token = server.service_account_token(NS, ENGINE_NAME)
    kube = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "engine", token=token))), clock,
                     user_agent="nvcre-engine")
    try:
        await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for obj in rbac_objects(NS):
            await admin.create(kind_of(obj), obj)
        yield kube, admin
    finally:
        await kube.close()
        await admin.close()
        await server.stop()


@pytest.fixture
def store(stores: tuple) -> object:
    return stores[0]


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
    holder = await b.holder()
    assert holder is not None and not holder.live
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


async def test_renew_recreates_a_deleted_lease(stores, clock) -> None:
    store, admin = stores
    a = lease(store, clock, "a")
    await a.try_acquire()
    await admin.delete(LEASE, EngineLease.NAME, NS)  # e.g. setup reset while an engine runs
    assert await a.renew()
    assert (await spec(store))["holderIdentity"] == "a"


async def test_duration_is_stored_in_whole_seconds_rounded_up(store, clock) -> None:
    await lease(store, clock, "a", duration=2.5).try_acquire()
    assert (await spec(store))["leaseDurationSeconds"] == 3


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_hold_renews_every_third_of_the_duration(memory, clock) -> None:
    store = memory
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


def holding(held: EngineLease, clock: ManualClock) -> tuple[asyncio.Task[None], list[float]]:
    """`held.hold()` running, and the clock times at which it reported the Lease lost."""
    lost: list[float] = []

    async def on_lost() -> None:
        lost.append(clock.monotonic())

    return asyncio.create_task(held.hold(on_lost)), lost


async def test_hold_reports_a_lost_lease(memory, clock) -> None:
    store = memory
    a, b = lease(store, clock, "a", duration=15), lease(store, clock, "b")
    await a.try_acquire()
    task, lost = holding(a, clock)
    await _settle()
    current = await store.get(LEASE, EngineLease.NAME, NS)  # b forces its way in (e.g. a stalled a long time)
    current["spec"]["holderIdentity"] = "b"
    await store.update(LEASE, current)
    clock.advance(5)
    await _settle()
    assert task.done() and lost == [5.0]
    assert a.lost_why == "b holds it now"


def test_bad_arguments_are_refused(memory, clock) -> None:
    store = memory
    with pytest.raises(ValueError, match="identity"):
        EngineLease(store, clock, NS, "")
    with pytest.raises(ValueError, match="duration"):
        EngineLease(store, clock, NS, "a", duration=0)


class Unreachable:
    """A store whose writes fail as an unreachable API server's do (reads still answer)."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner, self.broken = inner, False

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    async def update(self, kind, obj):
        if self.broken:
            from nvcre_tui.engine.store import Unavailable

            raise Unavailable.about(kind, obj["metadata"]["name"], obj["metadata"].get("namespace"), "connection refused")
        return await self.inner.update(kind, obj)


class Hanging:
    """A store whose reads stop answering (a partition, a stalled API server): the request neither fails nor returns."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner, self.broken = inner, False

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    async def get(self, kind, name, namespace=None):
        if self.broken:
            await asyncio.Event().wait()
        return await self.inner.get(kind, name, namespace)


@pytest.mark.parametrize("broken", [Unreachable, Hanging], ids=["refused", "hanging"])
async def test_hold_gives_up_before_anyone_may_take_over(memory, clock, broken) -> None:
    """Renewals refused, or never answered (a renewal that hangs is not waited for past the deadline): the holder
    stops at 2/3 of the duration, before anyone else may take over."""
    store = broken(memory)
    a = lease(store, clock, "a", duration=15)
    await a.try_acquire()
    task, lost = holding(a, clock)
    await _settle()
    store.broken = True
    clock.advance(5)  # the first renewal fails or hangs: 5 s since the last one, keep trying
    await _settle()
    assert not task.done()
    clock.advance(5)  # 10 s = 2/3 of the duration without a renewal: stop, 5 s before expiry
    await _settle()
    assert task.done() and lost == [10.0]
    holder = await lease(memory, clock, "b").holder()
    assert holder is not None and holder.live  # nobody else could have it yet
    # The controller logged "lost the engine lease" alone, read as another engine's doing; it says why (the API server)
    assert a.lost_why == "not renewed for 10s: " + (
        f"Lease {NS}/{EngineLease.NAME}: connection refused" if broken is Unreachable else "the API server did not answer in time")


async def test_the_lease_says_what_its_holders_engine_runs_workloads_with(memory, clock) -> None:
    """Read by a process about to create a certification: a real-pod engine would fail the simulated fleet's runs,
    the fleet would play a certification meant for GPUs (cli/run/create.py refuses both)."""
    a = lease(memory, clock, "a")
    a.runner = "simulated-fleet"
    await a.try_acquire()
    holder = await lease(memory, clock, "reader").holder()
    assert holder is not None and holder.runner == "simulated-fleet"
    await a.release()
    clock.advance(20)
    b = lease(memory, clock, "b")
    b.runner = "pods"
    assert await b.try_acquire() and await b.renew()
    holder = await lease(memory, clock, "reader").holder()
    assert holder is not None and (holder.identity, holder.runner) == ("b", "pods")


async def test_hold_says_another_client_made_a_deleted_lease_again(clock, tmp_path) -> None:
    """The Lease deleted (setup reset) and made again by another engine between this one's read and its create: the
    create is refused (409 AlreadyExists) and the Lease is lost. It said 'not renewed for 5s: the API server did not
    answer in time' while the server had answered every request."""
    from tests.kubeapi import Fault

    async with _engine_on_a_server(clock, tmp_path) as (server, admin, kube):
        a = lease(kube, clock, "a", duration=15)
        assert await a.try_acquire()
        task, lost = holding(a, clock)
        await _settle()
        await admin.delete(LEASE, EngineLease.NAME, NS)
        assert await lease(admin, clock, "b").try_acquire()  # b made it again...
        # ... after a read it gone: a's read answered before b's create
        server.faults.add(Fault(method="GET", path=r"/leases/", user_agent="nvcre-engine", status=404, reason="NotFound", times=1))
        clock.advance(5)
        for _ in range(50):
            if task.done():
                break
            await asyncio.sleep(0.01)
        assert task.done() and lost == [5.0]
        assert "did not answer" not in a.lost_why and "made again by another client" in a.lost_why, a.lost_why


async def test_hold_says_the_lease_was_deleted_between_its_read_and_its_write(clock, tmp_path) -> None:
    """The Lease deleted (setup reset) between this engine's read and its write (404 on the update): it said 'another
    client wrote it since it was read', as for a conflict (409); nobody wrote it."""
    from tests.kubeapi import Fault

    async with _engine_on_a_server(clock, tmp_path) as (server, admin, kube):
        a = lease(kube, clock, "a", duration=15)
        assert await a.try_acquire()
        task, lost = holding(a, clock)
        await _settle()
        # deleted after a's read, before its write: the write answered 404
        server.faults.add(Fault(method="PUT", path=r"/leases/", user_agent="nvcre-engine", status=404, reason="NotFound", times=1))
        clock.advance(5)
        for _ in range(50):
            if task.done():
                break
            await asyncio.sleep(0.01)
        assert task.done() and lost == [5.0]
        assert a.lost_why == "another client deleted it since it was read", a.lost_why


@asynccontextmanager
async def _engine_on_a_server(clock: ManualClock, tmp_path: Path) -> AsyncIterator[tuple[Any, Any, Any]]:
    """An emulated API server with nvcre's namespace and RBAC: it, an admin's store and the engine's ServiceAccount's."""
    from nvcre_tui.engine.kube.config import load_target
    from nvcre_tui.engine.kube.install import ENGINE_NAME, rbac_objects
    from nvcre_tui.engine.store import NAMESPACE, kind_of
    from nvcre_tui.engine.store.kube import KubeStore
    from tests.kubeapi import ApiServer

    server = ApiServer(clock=clock)
    await server.start()
    admin = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "admin"))), clock, user_agent="admin")
    token = server.service_account_token(NS, ENGINE_NAME)
    kube = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "engine", token=token))), clock, user_agent="nvcre-engine")
    try:
        await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for obj in rbac_objects(NS):
            await admin.create(kind_of(obj), obj)
        yield server, admin, kube
    finally:
        await kube.close()
        await admin.close()
        await server.stop()
