"""Objects whose status someone other than nvcre wrote (api/provenance.py): the engine fails them, naming the fields
and the writer in a condition and a Warning event, and reads such a child as failed that way meanwhile, so a Workflow
or Job set to Succeeded by hand never passes its parent, and a Certification set to PASSED by hand never stands."""

from __future__ import annotations

from typing import Any, Protocol

from nvcre_tui.engine.api.bodies import certification_status, run_status
from nvcre_tui.engine.api.provenance import foreign_status
from nvcre_tui.engine.api.vocabulary import FAILED, FOREIGN_STATUS, RESULT_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.runners.base import EndedRelease, Runner
from nvcre_tui.engine.store.errors import describe
from nvcre_tui.engine.store.protocol import CERTIFICATION, WORKLOADRUN, ResourceKind

Obj = dict[str, Any]


class Context(Protocol):
    """What the refusal needs of the reconcilers' Context (controllers/context.py, whose World reads children through
    as_nvcre_reads_it: this module cannot import it)."""

    runner: Runner

    def now(self) -> str: ...

    async def transition(self, kind: ResourceKind, obj: Obj, status: Obj, events: list[tuple[str, str, str]]) -> bool: ...


ADVICE = "delete it and create it again"


def refusal_message(kind: str, obj: Obj, foreign: str) -> str:
    """`Certification default/x: status.summary written by kubectl-patch, not by nvcre: ...; delete it and create it again`."""
    meta = obj.get("metadata") or {}
    return f"{describe(kind, str(meta.get('name') or '?'), meta.get('namespace'))}: {foreign}; {ADVICE}"


def _status(obj: Obj) -> Obj:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _refused_status(kind: str, obj: Obj, message: str, now: str) -> Obj:
    """The status that fails `obj` for its foreign status (merged into what it holds)."""
    if kind == WORKLOADRUN.kind:
        return {"phase": FAILED, "reason": FOREIGN_STATUS, "message": message}
    status = _status(obj)
    refused: Obj = {"conditions": cond.with_phase(status.get("conditions"), FAILED, FOREIGN_STATUS, message, now)}
    if kind == CERTIFICATION.kind:  # kubectl's Result column, `certification list`, the metrics: FAILED, never the hand's word
        summary = certification_status(obj).get("summary")
        refused["summary"] = {**(summary if isinstance(summary, dict) else {}), "result": RESULT_FAILED}
    return refused


def _refused_already(kind: str, obj: Obj) -> bool:
    """Whether the engine failed `obj` for a foreign status already (its writer's other fields may stay theirs)."""
    if kind == WORKLOADRUN.kind:
        state = run_status(obj)
        return state.get("phase") == FAILED and state.get("reason") == FOREIGN_STATUS
    failed = cond.find(_status(obj).get("conditions"), FAILED)
    if not (failed is not None and failed.get("status") == "True" and failed.get("reason") == FOREIGN_STATUS):
        return False
    if kind == CERTIFICATION.kind:
        summary = certification_status(obj).get("summary")
        return isinstance(summary, dict) and summary.get("result") == RESULT_FAILED
    return True


async def refuse_foreign_status(ctx: Context, kind: ResourceKind, obj: Obj) -> bool:
    """Fail `obj` when someone other than nvcre wrote its status (once: nothing when failed so already); whether it had
    such a status (the caller then reconciles it no further)."""
    foreign = foreign_status(kind.kind, obj)
    if foreign is None:
        return False
    if not _refused_already(kind.kind, obj):
        message = refusal_message(kind.kind, obj, foreign)
        await ctx.transition(kind, obj, _refused_status(kind.kind, obj, message, ctx.now()), [("Warning", FOREIGN_STATUS, message)])
        if kind is WORKLOADRUN:  # its workload goes on otherwise: a finished-looking run is never stopped, its GPUs held
            await ctx.runner.stop(obj)
    elif kind is WORKLOADRUN and isinstance(ctx.runner, EndedRelease):
        # Refused already, and reconciled no further: the stop above is its only release. An engine that died in it (or
        # met an API error in its deletions, and is retried here) left its workload's pods holding their GPUs; released
        # now as any ended run is (a no-op once its Released condition says it was).
        await ctx.runner.release_ended(obj)
    return True


def as_nvcre_reads_it(kind: str, obj: Obj) -> Obj:
    """A child as its parent's reconcile reads it: one whose status someone else wrote holds nothing but its failure
    for it (a copy: the engine's refusal, or the one it will write), else itself. A parent that looks before the child's
    own reconcile refused it takes no hand-written result from it, and none after: the refusal merges into the status,
    and a hand's failedNodes or measurements left beside it would blame a node or pass a group on no evidence."""
    foreign = foreign_status(kind, obj)
    if foreign is None:
        return obj
    refused = _refused_status(kind, obj, refusal_message(kind, obj, foreign), "")
    if kind != WORKLOADRUN.kind and _refused_already(kind, obj):  # the refusal the engine wrote, as it wrote it
        conditions = _status(obj).get("conditions")
        refused["conditions"] = [c for c in conditions or [] if isinstance(c, dict) and c.get("type") in cond.PHASE_TYPES]
    return {**obj, "status": refused}
