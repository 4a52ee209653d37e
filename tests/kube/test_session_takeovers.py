"""A session that loses the engine Lease and takes it back, again and again (a console whose Lease an admin hands
over, a flaky network): each take-over builds a new engine over the session's one watch cache, and the engines it
stopped must let go of that cache. They stayed subscribed: each kept its World, queue and runner hooks alive and
heard every change for good, and a Node change woke the runs once per engine ever made."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.lease import format_micro_time
from nvcre_tui.engine.store.protocol import LEASE
from tests.kube.cluster import installed, store_on
from tests.scenarios.harness import catalog

TAKE_OVERS = 4


async def test_an_engine_that_loses_the_lease_unsubscribes_from_the_sessions_cache(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        session = await KubeSession.open(await load_target(str(kubeconfig)), catalog(), want_engine=True, history=None)
        try:
            assert session.engine is not None
            subscribed = len(session.cache._subscribers)
            for _ in range(TAKE_OVERS):
                lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
                await admin.update(LEASE, {**lease, "spec": {**lease["spec"], "holderIdentity": "controller-7f9c", "leaseDurationSeconds": 3600,
                                                             "renewTime": format_micro_time(SystemClock().now())}})
                await session._lost()  # what the Lease's renewal says once it finds the Lease another's
                assert session.engine is None
                lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
                await admin.update(LEASE, {**lease, "spec": {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}})
                assert await session.take_over()
            assert len(session.cache._subscribers) == subscribed
        finally:
            await session.close()
            await admin.close()


async def test_the_lease_is_taken_back_only_once_the_stopped_engine_has_written_its_key_in_hand(tmp_path: Path) -> None:
    """A session lost the Lease while its engine wrote an object (a partition: renewals failed; the key in hand waits
    on the server) and took it back once free: a new engine over the same cache then reconciled beside the old one
    still writing (two engines in one process; the console's engine worker, exclusive, cancelled the old one halfway).
    It takes the Lease back only once the stopped engine's key in hand is written, as the schema guard waits before
    it gives the Lease back."""
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        session = await KubeSession.open(await load_target(str(kubeconfig)), catalog(), want_engine=True, history=None)
        try:
            old = session.engine
            assert old is not None
            old.reconciling = True  # a reconcile in flight (its writes not all done)
            lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
            await admin.update(LEASE, {**lease, "spec": {**lease["spec"], "holderIdentity": "controller-7f9c", "leaseDurationSeconds": 3600,
                                                         "renewTime": format_micro_time(SystemClock().now())}})
            await session._lost()
            lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
            await admin.update(LEASE, {**lease, "spec": {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}})
            assert not await session.take_over()  # the stopped engine still writes
            assert session.engine is None and session.lease is None
            old.reconciling = False
            assert await session.take_over()
            assert session.engine is not None and session.engine is not old
        finally:
            await session.close()
            await admin.close()
