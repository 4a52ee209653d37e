"""The engine: level-triggered sweeps over the store.

One sweep reads every swept kind once and reconciles each unfinished object: Certifications, then
Workflows, Jobs and WorkloadRuns (the runner), then fleet-level simulator actions. Reconcilers only
write through the store, so an engine killed at any point and started again on the same store reaches
the same outcome (child names are deterministic; a create that meets "already exists" is a no-op).

`run_until_settled` drives a ManualClock (tests, `--wait` on the simulator): sweep until nothing
changes, then jump the clock to the earliest requested wake-up. `run` is the live loop: sweep, then
sleep until the next wake-up or a store change, whichever comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from nvcre_tui.engine.catalog import Catalog
from nvcre_tui.engine.clock import Clock, ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import reconcile_certification
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.controllers.job import reconcile_job
from nvcre_tui.engine.controllers.workflow import reconcile_workflow
from nvcre_tui.engine.runners.base import Runner
from nvcre_tui.engine.store.errors import AlreadyExists, Conflict, NotFound, StoreError
from nvcre_tui.engine.store.protocol import (
    CERTIFICATION,
    JOB,
    NODE,
    WORKFLOW,
    WORKLOADRUN,
    ResourceStore,
)

Obj = dict[str, Any]
Reconciler = Callable[[Context, Obj, World], Awaitable[float | None]]
RECONCILERS: tuple[tuple[Any, Reconciler], ...] = (
    (CERTIFICATION, reconcile_certification),
    (WORKFLOW, reconcile_workflow),
    (JOB, reconcile_job),
)
MAX_SWEEPS_PER_INSTANT = 200


class Engine:
    """Reconciles every nvcre object in a store until it settles."""

    def __init__(self, store: ResourceStore, clock: Clock, catalog: Catalog, runner: Runner) -> None:
        self.store, self.clock, self.runner = store, clock, runner
        self.ctx = Context(store=store, clock=clock, catalog=catalog, runner=runner)

    async def sweep(self) -> float | None:
        """Reconcile everything once; returns the earliest wake-up in seconds (None: nothing scheduled)."""
        world = await World.read(self.store)
        wakeups: list[float] = []
        for kind, reconcile in RECONCILERS:
            for obj in world.objects[kind]:
                if cond.is_terminal(obj) or obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    delay = await reconcile(self.ctx, obj, world)
                except (Conflict, NotFound, AlreadyExists):
                    delay = 1.0  # lost a race with another writer: look again shortly
                except Exception as error:  # one broken object must not stop every other certification
                    await self._quarantine(kind, obj, error)
                    continue
                if delay is not None:
                    wakeups.append(max(delay, 0.0))
        finished_jobs = {job["metadata"]["uid"] for job in world.objects[JOB] if cond.is_terminal(job)}
        for run in world.objects[WORKLOADRUN]:
            if (run.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                owners = {ref.get("uid") for ref in run["metadata"].get("ownerReferences") or []}
                if owners & finished_jobs:  # its Job gave up on it (timeout, hardware): free the GPUs
                    await self.runner.stop(run)
                    continue
                delay = await self.runner.reconcile_run(run)
                if delay is not None:
                    wakeups.append(max(delay, 0.0))
        fleet = await self.runner.tick()
        if fleet is not None:
            wakeups.append(max(fleet, 0.0))
        return min(wakeups) if wakeups else None

    async def _quarantine(self, kind: Any, obj: Obj, error: Exception) -> None:
        """Fail an object its reconciler cannot handle, with the error as reason, instead of crashing."""
        message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        conditions = cond.with_phase((obj.get("status") or {}).get("conditions"), "Failed", "ReconcileError", message, self.ctx.now())
        try:
            await self.ctx.transition(kind, obj, {"conditions": conditions}, [("Warning", "ReconcileError", message)])
        except StoreError:
            pass

    async def settle(self, *, strict: bool = True) -> float | None:
        """Sweep until a sweep writes nothing; the next wake-up. On a ManualClock (strict) a settle that
        never ends is a bug and raises; on a running clock time moves between sweeps, so stop trying."""
        wake: float | None = None
        for _ in range(MAX_SWEEPS_PER_INSTANT):
            before = self.ctx.writes + getattr(self.runner, "writes", 0)
            wake = await self.sweep()
            if self.ctx.writes + getattr(self.runner, "writes", 0) == before:
                return wake
        if strict:
            raise RuntimeError("engine did not settle: reconcilers keep writing at the same instant")
        return 0.0

    async def run_until_settled(self, *, until: Callable[[], Awaitable[bool]] | None = None, max_seconds: float | None = None) -> bool:
        """On a ManualClock: settle, jump to the next wake-up, repeat; stop when nothing is scheduled,
        `until()` is true, or `max_seconds` of clock time passed. Returns whether `until` was met."""
        assert isinstance(self.clock, ManualClock), "run_until_settled needs a ManualClock"
        deadline = self.clock.now() + timedelta(seconds=max_seconds) if max_seconds is not None else None
        while True:
            wake = await self.settle()
            if until is not None and await until():
                return True
            if wake is None:
                return False
            target = self.clock.now() + timedelta(seconds=max(wake, 0.001))
            if deadline is not None and target > deadline:
                self.clock.advance_to(deadline)
                await self.settle()
                return bool(until and await until())
            self.clock.advance_to(target)

    async def run(self, *, idle_poll: float = 5.0) -> None:
        """The live loop (console, cluster): sweep, then wait for a wake-up or any store change."""
        changed = asyncio.Event()
        watchers = [asyncio.create_task(self._notify_on_change(kind, changed)) for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN, NODE)]
        try:
            while True:
                changed.clear()
                wake = await self.settle(strict=False)
                sleep = asyncio.create_task(self.clock.sleep(min(wake if wake is not None else idle_poll, idle_poll)))
                signal = asyncio.create_task(changed.wait())
                await asyncio.wait({sleep, signal}, return_when=asyncio.FIRST_COMPLETED)
                for task in (sleep, signal):
                    task.cancel()
        finally:
            for task in watchers:
                task.cancel()
            for task in watchers:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _notify_on_change(self, kind: Any, changed: asyncio.Event) -> None:
        while True:
            try:
                async for _ in self.store.watch(kind, resource_version=getattr(self.store, "resource_version", None)):
                    changed.set()
            except Exception:  # a dropped or expired watch: resume; the sweep itself is level-triggered
                await asyncio.sleep(0.1)
