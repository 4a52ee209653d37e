"""Condition bookkeeping: InProgress / Succeeded / Failed are exclusive, the others additive."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The condition types (and BATCH_FALLBACK, SIMULATED, HOW_RUN: how runs were carried out; RESULT_NOTES: what
# qualifies a run's result) live in the vocabulary.
from nvcre_tui.engine.api.vocabulary import (
    BATCH_FALLBACK, FAILED, HARDWARE_FAILED, HOW_RUN, IN_PROGRESS, RESULT_NOTES, SIMULATED, SUCCEEDED, VALIDATION_FAILED,
)

PHASE_TYPES = (IN_PROGRESS, SUCCEEDED, FAILED)
# The order conditions are kept in: `kubectl get`'s Status column shows the first True one (crd.STATUS_COLUMN), so
# what the object is comes before how it ran (BatchFallback) and a missed threshold before the Succeeded it qualifies.
SHOWN_FIRST = (FAILED, VALIDATION_FAILED, HARDWARE_FAILED, IN_PROGRESS, SUCCEEDED)


def _shown_order(condition: Mapping[str, Any]) -> tuple[int, str]:
    kind = condition["type"]
    return (SHOWN_FIRST.index(kind) if kind in SHOWN_FIRST else len(SHOWN_FIRST), kind)
Obj = dict[str, Any]
Conditions = Sequence[Mapping[str, Any]]  # status.conditions as read (typed views or raw dicts)


def find(conditions: Conditions | None, type_: str) -> Obj | None:
    """The condition of a type, or None (malformed entries are skipped: objects come from anyone)."""
    if not isinstance(conditions, list):
        return None
    return next((c for c in conditions if isinstance(c, dict) and c.get("type") == type_), None)


def status_of(obj: Mapping[str, Any]) -> Obj:
    """obj.status when it is a mapping, else empty (a hand-edited object may hold anything there)."""
    status = obj.get("status") if isinstance(obj, Mapping) else None
    return status if isinstance(status, dict) else {}


def is_true(obj: Mapping[str, Any], type_: str) -> bool:
    """Whether obj.status.conditions has `type_` True."""
    condition = find(status_of(obj).get("conditions"), type_)
    return bool(condition and condition.get("status") == "True")


def phase(obj: Mapping[str, Any]) -> str | None:
    """InProgress, Succeeded, Failed or None."""
    return next((t for t in PHASE_TYPES if is_true(obj, t)), None)


def is_terminal(obj: Mapping[str, Any]) -> bool:
    """Succeeded or Failed."""
    return phase(obj) in (SUCCEEDED, FAILED)


def _set(conditions: list[Obj], type_: str, status: str, reason: str, message: str, now: str) -> list[Obj]:
    current = find(conditions, type_)
    if current and current.get("status") == status and current.get("reason") == reason and current.get("message") == message:
        return conditions
    updated = {
        "type": type_, "status": status, "reason": reason, "message": message,
        # a new transition when the status changed; else the time it last did
        "lastTransitionTime": now if current is None or current.get("status") != status else current.get("lastTransitionTime", now),
    }
    return [c for c in conditions if c.get("type") != type_] + [updated]


def with_phase(conditions: Conditions | None, type_: str, reason: str, message: str, now: str) -> list[Obj]:
    """`type_` True with reason/message; the other phase types False (same reason)."""
    result = [c for c in conditions if isinstance(c, dict) and isinstance(c.get("type"), str)] if isinstance(conditions, list) else []
    for other in PHASE_TYPES:
        if other == type_:
            result = _set(result, other, "True", reason, message, now)
        else:
            result = _set(result, other, "False", reason, "", now)
    return sorted(result, key=_shown_order)


def with_condition(conditions: Conditions | None, type_: str, status: bool, reason: str, message: str, now: str) -> list[Obj]:
    """An additive condition (ValidationFailed, HardwareFailed) set True or False."""
    kept = [c for c in conditions or [] if isinstance(c, dict)]  # malformed entries skipped, as in with_phase
    return sorted(_set(kept, type_, "True" if status else "False", reason, message, now), key=_shown_order)


def how_run(conditions: Conditions | None) -> list[Obj]:
    """The HOW_RUN conditions True among `conditions`."""
    return [c for kind in HOW_RUN if (c := find(conditions, kind)) is not None and c.get("status") == "True"]


def noted(conditions: Conditions | None) -> list[Obj]:
    """The RESULT_NOTES conditions True among `conditions` (a run's, a Job's)."""
    return [c for kind in RESULT_NOTES if (c := find(conditions, kind)) is not None and c.get("status") == "True"]


def from_run(conditions: Conditions | None) -> list[Obj]:
    """What a Job carries of its run's conditions: how it ran, and the notes on its result."""
    return how_run(conditions) + noted(conditions)


def carried(conditions: Conditions | None, sources: Sequence[Obj], now: str) -> list[Obj]:
    """`conditions` with each HOW_RUN or RESULT_NOTES condition of `sources` set True (its message, and when it was
    first seen)."""
    result = [c for c in conditions or [] if isinstance(c, dict)]
    for source in sources:
        kind = source["type"]
        result = with_condition(result, kind, True, str(source.get("reason") or HOW_RUN.get(kind, kind)), str(source.get("message") or ""),
                                str(source.get("lastTransitionTime") or now))
    return result
