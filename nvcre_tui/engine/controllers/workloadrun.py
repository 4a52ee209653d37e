"""WorkloadRun reconciler: hands a run to the runner while its Job wants it, and stops it once the Job
has given up on it (timeout, hardware failure, scheduling block), so its GPUs are freed."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.bodies import run_status
from nvcre_tui.engine.api.vocabulary import FAILED, SUCCEEDED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.context import Context, World

Obj = dict[str, Any]
FINISHED = (SUCCEEDED, FAILED)


def run_finished(run: Obj) -> bool:
    """The run reached Succeeded or Failed."""
    return run_status(run).get("phase") in FINISHED


async def reconcile_workloadrun(ctx: Context, run: Obj, world: World) -> float | None:
    """Advance one WorkloadRun through the runner; returns seconds until it needs another look."""
    if run_finished(run):
        return None
    owners = [world.cache.get_by_uid(ref["uid"]) for ref in run["metadata"].get("ownerReferences") or []
              if isinstance(ref, dict) and ref.get("controller") and isinstance(ref.get("uid"), str)]
    if any(owner is not None and cond.is_terminal(owner) for owner in owners):
        await ctx.runner.stop(run)
        return None
    return await ctx.runner.reconcile_run(run)


__all__ = ["reconcile_workloadrun", "run_finished"]
