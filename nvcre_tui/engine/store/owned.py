"""Objects that only given owners hold, and deleting them where no garbage collector does (an API server alone):
`certification delete` takes what its deleted objects owned, `setup reset` what nvcre's objects owned. Only objects
with owners, every one of them accepted: never one another owner also holds, never one with no owner."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nvcre_tui.engine.store.errors import Conflict, NotFound, StoreError
from nvcre_tui.engine.store.protocol import ResourceKind, ResourceStore

Obj = dict[str, Any]
OwnerTest = Callable[[Mapping[str, Any]], bool]  # one ownerReference: whether it is an owner being removed


def owned_only_by(obj: Mapping[str, Any], accepted: OwnerTest) -> bool:
    """Whether the object has owners and `accepted` takes every one."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return bool(refs) and all(isinstance(ref, dict) and accepted(ref) for ref in refs)


@dataclass
class Deleted:
    """What `delete_owned` did: the objects deleted and those it could not delete, with the store's reason."""

    deleted: list[Obj] = field(default_factory=list)
    kept: list[tuple[Obj, StoreError]] = field(default_factory=list)


async def delete_owned(store: ResourceStore, kind: ResourceKind, namespace: str | None, accepted: OwnerTest) -> Deleted:
    """Delete, each by its uid, the objects of `kind` (in `namespace`, or all) that only accepted owners hold. Listing
    errors are the caller's (StoreError); one gone meanwhile (a garbage collector) or replaced by another's is
    passed over."""
    done = Deleted()
    for obj in (await store.list(kind, namespace)).items:
        if not owned_only_by(obj, accepted):
            continue
        meta = obj["metadata"]
        try:
            await store.delete(kind, meta["name"], meta.get("namespace"), uid=meta.get("uid"))
            done.deleted.append(obj)
        except (NotFound, Conflict):
            continue
        except StoreError as error:
            done.kept.append((obj, error))
    return done


__all__ = ["Deleted", "OwnerTest", "delete_owned", "owned_only_by"]
