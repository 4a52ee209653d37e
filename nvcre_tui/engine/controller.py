"""The headless engine (`nvcre controller`): reconcile only while holding the engine Lease; export metrics.

Waits until the Lease is free (or expired), holds it while the engine runs, and stops the engine the
moment the Lease is lost, so two engines never reconcile at once (design property 9). Losing the Lease
ends the loop with a non-zero code: in a Deployment the pod restarts and queues for the Lease again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.metrics import HEARTBEAT_SECONDS, EngineMetrics, count_objects
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.errors import NamespaceTerminating, NotFound, StoreError, Unavailable
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, ResourceStore

__all__ = ["Runnable", "ControllerLoop", "LOST_LEASE_EXIT", "STOPPED_EXIT"]

LOST_LEASE_EXIT = 1
STOPPED_EXIT = 2  # the engine cannot go on here (`guard` said why), as a controller that cannot start exits


class Runnable(Protocol):
    """What the loop needs of the engine: a live loop that runs until cancelled."""

    async def run(self) -> None: ...


@dataclass
class ControllerLoop:
    """One engine under the Lease, with metrics refreshed from the store."""

    engine: Runnable
    store: ResourceStore
    lease: EngineLease
    metrics: EngineMetrics
    clock: Clock  # real time: lease waits and metric refreshes are wall-clock intervals
    retry_period: float = 2.0       # how often a waiting contender tries the Lease
    metrics_period: float = 15.0    # how often object counts and API totals are refreshed
    log: Callable[[str], None] = field(default=lambda message: None)
    on_acquired: Callable[[], Awaitable[None]] | None = None  # before the engine runs (a --sim-runner clock catches up)
    cache: WatchCache | None = None  # the engine's watch cache: counts read from it cost no request (else a LIST each)
    # Run beside the engine while the Lease is held: returns why the engine stopped for good once it stopped it (its CRDs
    # given another nvcre's schema: KubeSession.guard_schema), or None when it has nothing to guard.
    guard: Callable[[], Coroutine[Any, Any, str | None]] | None = None
    # Asked once the Lease is lost: why the engine cannot go on here at all (nvcre uninstalled under it: `setup reset`),
    # or None (another engine took the Lease, the API server went away).
    gone: Callable[[], Coroutine[Any, Any, str | None]] | None = None

    async def acquire(self) -> None:
        """Return once we hold the Lease; say who holds it while we wait."""
        announced = None
        try:
            while not await self._try_acquire():
                try:
                    holder = await self.lease.holder()
                except StoreError:  # the API server is away: _try_acquire said so; a standby keeps queueing
                    holder = None
                if holder is not None and holder.identity != announced:
                    self.log(f"waiting for the engine lease: held by {holder.identity}")
                    announced = holder.identity
                await self.clock.sleep(self.retry_period)
        except asyncio.CancelledError:  # SIGTERM to a standby: its pod's log says it ends, as a holder's does
            self.log("stopped while waiting for the engine lease" + (f" (held by {announced})" if announced else ""))
            raise
        self.log(f"holding the engine lease as {self.lease.identity}")
        self.metrics.set_lease_held(True)

    async def _try_acquire(self) -> bool:
        try:
            return await self.lease.try_acquire()
        except (NotFound, NamespaceTerminating):  # the Lease's namespace is gone (or never was), or being deleted (it
            raise                                 # never comes back): no queue to wait in, the caller says why
        except StoreError as error:  # the API server is away: keep queueing, say why
            self.log(f"engine lease: {error.message}")
            return False

    async def refresh_metrics(self) -> None:
        """Object counts from the engine's cache (else the store), API totals from a KubeStore's stats (when it has any).
        Only the engine holding the Lease refreshes them: a standby's object gauges stay 0 (nvcre_engine_lease_held 0)."""
        if self.cache is not None:  # nothing re-lists the world: every 15 s that was every Job of the cluster
            if (since := self.cache.unreachable_since) is not None:  # its watch fails: say so, as a failed LIST did
                raise Unavailable(f"{'watches refused' if self.cache.refusing else 'no answer'} since "
                                  f"{time.strftime('%H:%M:%S', time.localtime(since))}"
                                  + (f" ({self.cache.last_error})" if self.cache.last_error else ""))
            certifications, jobs = self.cache.list(CERTIFICATION), self.cache.list(JOB)
        else:
            certifications, jobs = (await self.store.list(CERTIFICATION)).items, (await self.store.list(JOB)).items
        self.metrics.set_objects(*count_objects(certifications, jobs))
        stats: Any = getattr(self.store, "stats", None)  # KubeStore only; the protocol has no stats
        if stats is not None:
            self.metrics.set_api_retries(stats.retries)
            self.metrics.set_api_requests(stats.requests)

    async def _metrics_loop(self) -> None:
        """Refresh the metrics, and log what an operator reading the pod's log needs: the API server not answering
        (and answering again), and requests retried since the last refresh (its transient errors)."""
        away = False
        retried = 0
        while True:
            try:
                await self.refresh_metrics()
            except StoreError as error:
                if not away:
                    self.log(f"API server: {' '.join(error.message.split())} (the engine retries; metrics wait)")
                away = True
            else:
                if away:
                    self.log("API server answers again")
                away = False
            stats: Any = getattr(self.store, "stats", None)
            if stats is not None and stats.retries > retried:
                self.log(f"API server: {stats.retries - retried} requests retried in the last {self.metrics_period:g}s "
                         "(transient errors: 429, 5xx, timeouts, dropped connections)")
                retried = stats.retries
            await self.clock.sleep(self.metrics_period)

    async def _heartbeat(self) -> None:
        """Beat for /healthz while the event loop runs (waiting for the Lease too: a standby is alive)."""
        while True:
            self.metrics.beat()
            await self.clock.sleep(HEARTBEAT_SECONDS)

    async def run(self) -> int:
        """Acquire, run the engine while held; the exit code (LOST_LEASE_EXIT when the Lease was lost).
        Cancelling (SIGTERM) stops the engine and releases the Lease for the next engine."""
        heartbeat = asyncio.create_task(self._heartbeat(), name="heartbeat")
        try:
            return await self._run_held()
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _run_held(self) -> int:
        await self.acquire()
        if self.on_acquired is not None:
            try:
                await self.on_acquired()
            except BaseException:  # it could not start (the fleet refused, no Node rights): the next engine may
                with contextlib.suppress(StoreError):
                    await self.lease.release()
                self.metrics.set_lease_held(False)
                raise
        lost = asyncio.Event()

        async def on_lost() -> None:
            lost.set()

        tasks: list[asyncio.Task[Any]] = [asyncio.create_task(self.lease.hold(on_lost), name="lease"),
                 asyncio.create_task(self.engine.run(), name="engine"),
                 asyncio.create_task(self._metrics_loop(), name="metrics")]
        guarding = asyncio.create_task(self.guard(), name="guard") if self.guard is not None else None
        tasks += [guarding] if guarding is not None else []
        engine = tasks[1]
        try:
            pending = {*tasks[:2], *([guarding] if guarding is not None else [])}
            while True:
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if guarding is None or guarding not in done:
                    break
                if (why := guarding.result()) is not None:
                    # It stopped the engine (and returned at once): the object in hand is written whole, then the Lease
                    # goes back (finally) for the engine of the CRDs' version.
                    await asyncio.wait({engine})
                    self.log(why)
                    return STOPPED_EXIT
                pending.discard(guarding)  # nothing to guard (the CRDs unreadable): the engine runs on
                if done == {guarding}:
                    continue
                break
            if engine in done and (failure := engine.exception()) is not None:
                raise failure
            if lost.is_set() and self.gone is not None:
                try:
                    uninstalled = await self.gone()
                except StoreError:
                    uninstalled = None
                if uninstalled is not None:  # not a Lease to queue for again: its pod would restart into the start check
                    self.log(uninstalled)
                    return STOPPED_EXIT
            why = f" ({self.lease.lost_why})" if self.lease.lost_why else ""
            self.log(f"lost the engine lease{why}: stopping the engine" if lost.is_set() else "engine stopped")
            return LOST_LEASE_EXIT if lost.is_set() else 0
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self.metrics.set_lease_held(False)
            if not lost.is_set():
                try:
                    await self.lease.release()
                    self.log("stopped; released the engine lease for the next engine")
                except StoreError as error:
                    self.log(f"stopped; the engine lease expires on its own ({' '.join(error.message.split())})")
