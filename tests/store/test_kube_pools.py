"""The transport's connection pools (store/kube/pools.py): a pool retired for an exec plugin's renewed client certificate
is closed once nothing reads from it, exactly once."""

from __future__ import annotations

import asyncio

from nvcre_tui.engine.store.kube.client import ApiClient, Configuration
from nvcre_tui.engine.store.kube.pools import Pools


class SlowToClose(ApiClient):
    """A client whose close takes a turn of the event loop, as closing kept-alive TLS connections does (aiohttp waits
    for their transports to end); counts its closes."""

    closes = 0

    async def close(self) -> None:
        SlowToClose.closes += 1
        await asyncio.sleep(0)
        await super().close()


async def _two_retired() -> Pools:
    """Pools with two retired for renewed certificates, neither read from any more."""
    held = {"certificate": "a.crt"}
    pools = Pools(lambda: SlowToClose(Configuration()), lambda: held["certificate"])
    first = await pools.take()  # a watch on the first certificate's pool
    held["certificate"] = "b.crt"
    second = await pools.take()  # renewed: a watch on the second's
    held["certificate"] = "c.crt"
    await pools.take()  # renewed again: the first two retired, each still read
    pools.give_back(first)
    pools.give_back(second)
    SlowToClose.closes = 0
    return pools


async def _two_retired_taken_together() -> tuple[int, int]:
    pools = await _two_retired()
    await asyncio.gather(pools.take(), pools.take())  # requests sent together, once both watches ended
    closed = SlowToClose.closes
    await pools.close()
    return closed, SlowToClose.closes


def test_retired_pools_idle_when_requests_go_out_together_are_each_closed_once() -> None:
    """Two requests taking a pool together, two retired pools idle: each was closed by both, and the second to remove
    one the first had removed raised ValueError out of the request (a reconcile failed ReconcileError on it)."""
    closed, then = asyncio.run(_two_retired_taken_together())
    assert (closed, then) == (2, 3)


async def _taken_by_a_request_cancelled() -> int:
    pools = await _two_retired()
    cancelled = asyncio.ensure_future(pools.take())
    await asyncio.sleep(0)  # closing the first retired pool
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    await pools.take()
    closed = SlowToClose.closes
    await pools.close()
    return closed


def test_a_request_cancelled_while_a_retired_pool_closes_leaves_the_other_to_the_next() -> None:
    """The second idle retired pool, not yet closed as the request closing the first is cancelled, is closed by the
    next request, never left open and unlisted."""
    assert asyncio.run(_taken_by_a_request_cancelled()) == 2
