"""Who wrote an nvcre object's status: the API server records every writer in metadata.managedFields (its field
manager: the client's user agent up to the first `/`, or the `fieldManager` it names), and a status written through the
status subresource by anyone but nvcre (`kubectl edit --subresource=status`, `kubectl patch`, a script) is no result
nvcre measured: a Certification set to PASSED by hand must not read as certified.

nvcre's own writers call themselves `nvcre` or `nvcre-...` (the engine `nvcre-engine`, the simulated fleet `nvcre-sim`).
A store that keeps no managedFields (the embedded one: only nvcre writes there) has no foreign status. This catches
hands and tools, not a writer that names itself nvcre: RBAC is that boundary (setup init grants status writes to the
engine's ServiceAccount alone; `nvcre-edit` creates Certifications, never their status).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nvcre_tui.engine.api.resources import RESOURCES_BY_KIND
from nvcre_tui.engine.api.vocabulary import FOREIGN_SPEC, FOREIGN_STATUS
from nvcre_tui.engine.clock import parse_time

NVCRE_MANAGER = "nvcre"
STATUS_SUBRESOURCE = "status"
MOST_FIELDS_NAMED = 4
# The kinds whose spec nvcre alone writes, each under a name a hand can tell in advance: a category's Workflow (its
# Certification's and category's), a group's Job (its Workflow's and group's) and that Job's WorkloadRun. One created
# first, owned by its parent's uid copied by hand, would run with its own spec (looser thresholds, another node list)
# and its result count as nvcre's (foreign_spec). A Certification's spec is its user's.
SPEC_WRITTEN_KINDS = frozenset({"Workflow", "Job", "WorkloadRun"})


def _is_nvcre(manager: str) -> bool:
    name = manager.partition("/")[0]
    return name == NVCRE_MANAGER or name.startswith(_NVCRE_PREFIX)


_NVCRE_PREFIX = f"{NVCRE_MANAGER}-"


def _status_fields(entry: Mapping[str, Any]) -> list[str]:
    """The top-level status fields one managedFields entry owns (`status.summary`), from its FieldsV1."""
    return _fields_under(entry, "status")


def _fields_under(entry: Mapping[str, Any], top: str) -> list[str]:
    """The fields under `top` (status, spec) one managedFields entry owns (`spec.orchestration`), from its FieldsV1."""
    fields = entry.get("fieldsV1")
    owned = fields.get(f"f:{top}") if isinstance(fields, Mapping) else None
    if not isinstance(owned, Mapping):
        return []
    return sorted(f"{top}.{key[2:]}" for key in owned if isinstance(key, str) and key.startswith("f:"))


def _named(fields: list[str]) -> str:
    return ", ".join(fields[:MOST_FIELDS_NAMED]) + (f" and {len(fields) - MOST_FIELDS_NAMED} more" if len(fields) > MOST_FIELDS_NAMED else "")


def foreign_status(kind: str, obj: Mapping[str, Any]) -> str | None:
    """What of an nvcre object's status someone other than nvcre wrote, as one phrase (`status.conditions, status.summary
    written by kubectl-patch, not by nvcre`), or None: nvcre wrote all of it, or the kind is not nvcre's. A Workflow's,
    Job's or WorkloadRun's spec too (foreign_spec): what it measures against thresholds, on nodes, or with a command
    nvcre did not render is no result nvcre measured (refused under its own reason: refusal_reason)."""
    if kind not in RESOURCES_BY_KIND:
        return None
    spec = kind in SPEC_WRITTEN_KINDS
    status: str | None = None
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, Mapping) else None
    # one pass (every child of an owner is read through this at each of its reconciles), nvcre's entries skipped first
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or _is_nvcre(manager := str(entry.get("manager") or "")):
            continue
        subresource = entry.get("subresource")
        if spec and not subresource and (planted := _spec_written(entry, manager)) is not None:
            return f"{planted}: not a result nvcre measured"  # before any status: the whole object is another's
        if status is None and subresource == STATUS_SUBRESOURCE and (fields := _status_fields(entry)):
            status = f"{_named(fields)} written by {_writer(manager)}, not by nvcre: not a result nvcre measured"
    return status


def foreign_spec(kind: str, obj: Mapping[str, Any]) -> str | None:
    """Who other than nvcre wrote an nvcre object's spec, and which fields (`its spec was written by kubectl-create, not
    rendered by nvcre (spec.jobTemplate, spec.orchestration)`), or None. The engine creates
    its children under names it can tell in advance: one created before it under that name, owned by the parent's uid
    (copied by hand), would otherwise be taken for its own with whatever spec it holds (looser thresholds, other nodes).
    A Workflow's spec is immutable once created (its CRD's rule), so its writer is its creator, or an apply of the same
    values."""
    if kind not in RESOURCES_BY_KIND:
        return None
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, Mapping) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or entry.get("subresource") or _is_nvcre(manager := str(entry.get("manager") or "")):
            continue
        if (planted := _spec_written(entry, manager)) is not None:
            return planted
    return None


def _spec_written(entry: Mapping[str, Any], manager: str) -> str | None:
    """The spec fields one writer's (not nvcre's) managedFields entry of the main resource owns, as foreign_spec says
    them, or None."""
    fields = _fields_under(entry, "spec")
    return f"its spec was written by {_writer(manager)}, not rendered by nvcre ({_named(fields)})" if fields else None


def _writer(manager: str) -> str:
    return manager or "an unnamed field manager"


def refusal_reason(kind: str, obj: Mapping[str, Any]) -> str:
    """The reason the engine refuses an object foreign_status finds written by another hand with: SpecWrittenByAnother
    where its spec was (foreign_spec: a Workflow's, Job's or WorkloadRun's), else StatusWrittenByAnother."""
    return FOREIGN_SPEC if kind in SPEC_WRITTEN_KINDS and foreign_spec(kind, obj) is not None else FOREIGN_STATUS


def written_by_nvcre_alone(obj: Mapping[str, Any], field: str) -> bool:
    """Whether nvcre wrote `status.<field>` as it stands: an nvcre status entry in managedFields owns it and no other
    writer's does (the API server moves a field to whoever last changed its value). False on a store that keeps no
    managedFields: nothing there says who wrote it."""
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, Mapping) else None
    owners = [str(entry.get("manager") or "") for entry in (entries if isinstance(entries, list) else [])
              if isinstance(entry, Mapping) and entry.get("subresource") == STATUS_SUBRESOURCE
              and f"status.{field}" in _status_fields(entry)]
    return bool(owners) and all(_is_nvcre(owner) for owner in owners)


def status_written_at(obj: Mapping[str, Any]) -> datetime | None:
    """When nvcre last changed this object's status, on the API server's clock: the `time` of nvcre's status entries in
    managedFields, which the server stamps at each write that changes a field they own (the latest, where the engine
    and the simulated fleet both wrote). None on a store that keeps no managedFields (the embedded one), or unreadable."""
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, Mapping) else None
    times = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or entry.get("subresource") != STATUS_SUBRESOURCE or not _is_nvcre(str(entry.get("manager") or "")):
            continue
        try:
            times.append(parse_time(entry.get("time")))
        except ValueError:
            continue
    return max(times) if times else None
