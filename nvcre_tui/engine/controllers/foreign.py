"""Objects whose status someone other than nvcre wrote (api/provenance.py): the engine fails them, naming the fields
and the writer in a condition and a Warning event, and reads such a child as failed that way meanwhile, so a Workflow
or Job set to Succeeded by hand never passes its parent, and a Certification set to PASSED by hand never stands. A
Certification refused mid-run can yield no result: its running Workflows and Jobs are stopped (their runs through the
runner, as every stop), each failed CertificationRefused, and its condition names them; a Workflow refused so stops its
running Jobs the same way, each failed WorkflowRefused."""

from __future__ import annotations

from typing import Any, Protocol

from nvcre_tui.engine.api.bodies import certification_status, run_status
from nvcre_tui.engine.api.provenance import foreign_status, refusal_reason, written_by_nvcre_alone
from nvcre_tui.engine.api.vocabulary import CERTIFICATION_REFUSED, FAILED, REFUSED, RESULT_FAILED, SUCCEEDED, WORKFLOW_REFUSED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.runners.base import EndedRelease, Runner
from nvcre_tui.engine.store.errors import describe
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN, ResourceKind
from nvcre_tui.engine.units import listed

Obj = dict[str, Any]


class Context(Protocol):
    """What the refusal needs of the reconcilers' Context (controllers/context.py, whose World reads children through
    as_nvcre_reads_it: this module cannot import it)."""

    runner: Runner

    def now(self) -> str: ...

    async def transition(self, kind: ResourceKind, obj: Obj, status: Obj, events: list[tuple[str, str, str]]) -> bool: ...


class Children(Protocol):
    """What the refusal reads of the reconcilers' World: an owner's children (controller references only)."""

    def children_of(self, owner: Obj, kind: str) -> list[Obj]: ...


ADVICE = "delete it and create it again"
BLAME_FIELD = "failedNodes"  # a Job's blamed nodes (controllers/job.py), which a hand's edit beside them does not clear


def refusal_message(kind: str, obj: Obj, foreign: str, stopped: list[str] | None = None) -> str:
    """`Certification default/x: status.summary written by kubectl-patch, not by nvcre: ...; delete it and create it again`,
    naming the children (a Certification's Workflows, a Workflow's Jobs) its refusal `stopped` before the advice."""
    meta = obj.get("metadata") or {}
    child = WORKFLOW.kind if kind == CERTIFICATION.kind else JOB.kind
    halted = (f"; stopped its {child}{'' if len(stopped) == 1 else 's'} {listed(stopped)} (their pods deleted, "
              "no node blamed)") if stopped else ""
    return f"{describe(kind, str(meta.get('name') or '?'), meta.get('namespace'))}: {foreign}{halted}; {ADVICE}"


def _status(obj: Obj) -> Obj:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _refused_status(kind: str, obj: Obj, message: str, now: str) -> Obj:
    """The status that fails `obj` for its foreign status or spec (merged into what it holds), with refusal_reason's
    reason."""
    reason = refusal_reason(kind, obj)
    if kind == WORKLOADRUN.kind:
        return {"phase": FAILED, "reason": reason, "message": message}
    status = _status(obj)
    refused: Obj = {"conditions": cond.with_phase(status.get("conditions"), FAILED, reason, message, now)}
    if kind == CERTIFICATION.kind:  # kubectl's Result column, `certification list`, the metrics: FAILED, never the hand's word
        summary = certification_status(obj).get("summary")
        refused["summary"] = {**(summary if isinstance(summary, dict) else {}), "result": RESULT_FAILED}
    return refused


def _refused_already(kind: str, obj: Obj) -> bool:
    """Whether the engine failed `obj` for a foreign status or spec already (its writer's other fields may stay theirs)."""
    if kind == WORKLOADRUN.kind:
        state = run_status(obj)
        return state.get("phase") == FAILED and state.get("reason") in REFUSED
    failed = cond.find(_status(obj).get("conditions"), FAILED)
    if not (failed is not None and failed.get("status") == "True" and failed.get("reason") in REFUSED):
        return False
    if kind == CERTIFICATION.kind:
        summary = certification_status(obj).get("summary")
        return isinstance(summary, dict) and summary.get("result") == RESULT_FAILED
    return True


async def refuse_foreign_status(ctx: Context, kind: ResourceKind, obj: Obj, world: Children | None = None) -> bool:
    """Fail `obj` when someone other than nvcre wrote its status (once: nothing when failed so already); whether it had
    such a status (the caller then reconciles it no further). A Certification's running Workflows and Jobs (a Workflow's
    running Jobs) are stopped first, at every look (an engine that died between the two stops the rest), and the
    refusal names them."""
    foreign = foreign_status(kind.kind, obj)
    if foreign is None:
        return False
    stopped = await _stop_children(ctx, kind, obj, world) if kind in (CERTIFICATION, WORKFLOW) and world is not None else []
    if not _refused_already(kind.kind, obj):
        message = refusal_message(kind.kind, obj, foreign, stopped)
        await ctx.transition(kind, obj, _refused_status(kind.kind, obj, message, ctx.now()), [("Warning", refusal_reason(kind.kind, obj), message)])
        if kind is WORKLOADRUN:  # its workload goes on otherwise: a finished-looking run is never stopped, its GPUs held
            await ctx.runner.stop(obj)
    elif kind is WORKLOADRUN and isinstance(ctx.runner, EndedRelease):
        # Refused already, and reconciled no further: the stop above is its only release. An engine that died in it (or
        # met an API error in its deletions, and is retried here) left its workload's pods holding their GPUs; released
        # now as any ended run is (a no-op once its Released condition says it was).
        await ctx.runner.release_ended(obj)
    return True


async def _stop_children(ctx: Context, kind: ResourceKind, owner: Obj, world: Children) -> list[str]:
    """Stop a refused Certification's running Workflows and their running Jobs (failed CertificationRefused), or a
    refused Workflow's running Jobs (failed WorkflowRefused): each unfinished run through the runner (its pods deleted,
    the GPUs freed). The names of its children stopped so, by this look or an earlier one."""
    meta = owner.get("metadata") or {}
    message = (f"stopped: its {describe(kind.kind, str(meta.get('name') or '?'), meta.get('namespace'))} was refused "
               f"({refusal_reason(kind.kind, owner)}) and can yield no result; its pods deleted, no node blamed")
    if kind is WORKFLOW:
        return await _stop_jobs(ctx, owner, world, WORKFLOW_REFUSED, message)
    stopped = []
    for wf in world.children_of(owner, WORKFLOW.kind):
        if not cond.is_terminal(wf):
            await _stop_jobs(ctx, wf, world, CERTIFICATION_REFUSED, message)
            await _stop(ctx, WORKFLOW, wf, CERTIFICATION_REFUSED, message)
        elif not _stopped_for(wf, CERTIFICATION_REFUSED):
            continue
        stopped.append(str(wf["metadata"]["name"]))
    return stopped


async def _stop_jobs(ctx: Context, wf: Obj, world: Children, reason: str, message: str) -> list[str]:
    """Stop a Workflow's running Jobs, their unfinished runs through the runner, each failed `reason`; the names of its
    Jobs stopped so, by this look or an earlier one."""
    stopped = []
    for job in world.children_of(wf, JOB.kind):
        if not cond.is_terminal(job):
            for run in world.children_of(job, WORKLOADRUN.kind):
                if run_status(run).get("phase") not in (SUCCEEDED, FAILED):
                    await ctx.runner.stop(run)
            await _stop(ctx, JOB, job, reason, message)
        elif not _stopped_for(job, reason):
            continue
        stopped.append(str(job["metadata"]["name"]))
    return stopped


def _stopped_for(obj: Obj, reason: str) -> bool:
    return (cond.find(_status(obj).get("conditions"), FAILED) or {}).get("reason") == reason


async def _stop(ctx: Context, kind: ResourceKind, obj: Obj, reason: str, message: str) -> None:
    conditions = cond.with_phase(_status(obj).get("conditions"), FAILED, reason, message, ctx.now())
    await ctx.transition(kind, obj, {"conditions": conditions, "completionTime": ctx.now()}, [("Warning", reason, message)])


def as_nvcre_reads_it(kind: str, obj: Obj) -> Obj:
    """A child as its parent's reconcile reads it: one whose status someone else wrote holds nothing but its failure
    for it (a copy: the engine's refusal, or the one it will write), else itself. A parent that looks before the child's
    own reconcile refused it takes no hand-written result from it, and none after: the refusal merges into the status,
    and a hand's failedNodes or measurements left beside it would blame a node or pass a group on no evidence. A Job's
    failedNodes nvcre wrote and no hand changed stay: a hand's later edit of a Job nvcre failed must not clear the blame
    it measured (its node read untested, the category INCOMPLETE)."""
    foreign = foreign_status(kind, obj)
    if foreign is None:
        return obj
    refused = _refused_status(kind, obj, refusal_message(kind, obj, foreign), "")
    if kind == JOB.kind and written_by_nvcre_alone(obj, BLAME_FIELD):
        refused[BLAME_FIELD] = _status(obj)[BLAME_FIELD]
    if kind != WORKLOADRUN.kind and _refused_already(kind, obj):  # the refusal the engine wrote, as it wrote it
        conditions = _status(obj).get("conditions")
        refused["conditions"] = [c for c in conditions or [] if isinstance(c, dict) and c.get("type") in cond.PHASE_TYPES]
    return {**obj, "status": refused}
