"""WorkloadRun reconciler: hands a run to the runner while its Job wants it, and stops it once the Job
has given up on it (timeout, hardware failure, scheduling block), so its GPUs are freed.

A run whose runner has not started it (no workload made yet) and meets a transient API error says so in its status
(phase Pending, pendingSince, the error): the error is retried with backoff, and its Job bounds that wait by its
timeoutPerJob (controllers/job.py), so a workload create answered 500 for ever (a webhook configured without its
server) fails the Job instead of holding its nodes for ever."""

from __future__ import annotations

import re
from typing import Any

from nvcre_tui.engine.api.bodies import run_status
from nvcre_tui.engine.api.vocabulary import FAILED, SUCCEEDED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.context import Context, World
from nvcre_tui.engine.runners.base import EndedRelease
from nvcre_tui.engine.store.errors import RetryableError, StoreError
from nvcre_tui.engine.store.protocol import WORKLOADRUN

Obj = dict[str, Any]
_TRIES = re.compile(r" \(gave up after \d+ tries in [^)]*\)$")
FINISHED = (SUCCEEDED, FAILED)


def run_finished(run: Obj) -> bool:
    """The run reached Succeeded or Failed."""
    return run_status(run).get("phase") in FINISHED


async def reconcile_workloadrun(ctx: Context, run: Obj, world: World) -> float | None:
    """Advance one WorkloadRun through the runner; returns seconds until it needs another look."""
    if run_finished(run):
        if isinstance(ctx.runner, EndedRelease):  # what an engine that died at its end left held (a ComputeDomain)
            await ctx.runner.release_ended(run)
        return None
    owners = [world.cache.get_by_uid(ref["uid"]) for ref in run["metadata"].get("ownerReferences") or []
              if isinstance(ref, dict) and ref.get("controller") and isinstance(ref.get("uid"), str)]
    if any(owner is not None and cond.is_terminal(owner) for owner in owners):
        await ctx.runner.stop(run)
        return None
    try:
        return await ctx.runner.reconcile_run(run)
    except RetryableError as error:
        await _retrying(ctx, run, error)
        raise  # the engine retries it with backoff


def not_created(error: StoreError) -> str:
    """A Pending run's message: its workload could not be made yet, and why. Without the store's count of tries (`(gave
    up after 6 tries in 12s)`), which differs every time: the run and its Job are written when the reason changes only."""
    said = _TRIES.sub("", " ".join(error.message.split()))
    return f"its workload could not be created: {said}"


async def _retrying(ctx: Context, run: Obj, error: RetryableError) -> None:
    """A run not started yet says since when its workload cannot be made, and why (written when that changes)."""
    state = run_status(run)
    if state.get("phase") not in (None, "Pending"):
        return  # started: its phase has its own bound (the placement grace, timeoutPerJob)
    status = {"phase": "Pending", "pendingSince": state.get("pendingSince") or ctx.now(), "message": not_created(error)}
    try:
        await ctx.patch_status(WORKLOADRUN, run, status)
    except StoreError:
        pass  # the API server is away altogether: the retry says it later


__all__ = ["not_created", "reconcile_workloadrun", "run_finished"]
