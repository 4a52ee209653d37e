"""What this identity may do on the cluster, asked of the API server (a SelfSubjectAccessReview) before acting.

A user bound to `nvcre-edit` in one namespace may create certifications there but may not run the engine: that takes
the engine Lease in the install namespace and reads every namespace. Such a session is a viewer from the start (its
cache holds its own namespace only) and says why, instead of failing on the first request RBAC refuses.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.lease import LEASE_NAME
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.protocol import ACCESS_REVIEW, CERTIFICATION, LEASE, ResourceKind, ResourceStore

__all__ = ["allowed", "engine_refused", "CONTROLLER_NEEDED"]

# What a certification made by a session that runs no engine needs, said after why it runs none.
CONTROLLER_NEEDED = "progress needs `nvcre controller` running"


async def allowed(store: ResourceStore, verb: str, kind: ResourceKind, namespace: str | None = None,
                  name: str | None = None, subresource: str | None = None) -> bool | None:
    """Whether the server's authorizer allows this identity `verb` on `kind` (None: it would not say)."""
    attributes: dict[str, Any] = {"verb": verb, "group": kind.group, "resource": kind.plural}
    if namespace:
        attributes["namespace"] = namespace
    if name:
        attributes["name"] = name
    if subresource:
        attributes["subresource"] = subresource
    review = {"metadata": {"generateName": "nvcre-"}, "spec": {"resourceAttributes": attributes}}
    try:
        answer = await store.create(ACCESS_REVIEW, review)
    except StoreError:
        return None  # an API server without the authorization API (or refusing it): found out when acting
    status = answer.get("status")
    verdict = status.get("allowed") if isinstance(status, dict) else None
    return verdict if isinstance(verdict, bool) else None


async def engine_refused(store: ResourceStore, install_namespace: str) -> str | None:
    """Why this identity may not run the engine (RBAC), in a phrase for a viewer's line; None when it may, or when
    the server would not say."""
    where = f"{install_namespace}/{LEASE_NAME}"
    if await allowed(store, "update", LEASE, install_namespace, LEASE_NAME) is False:
        return f"this user may not run the engine (RBAC: no update on Lease {where}): {CONTROLLER_NEEDED}"
    if await allowed(store, "list", CERTIFICATION) is False:
        return f"this user may not run the engine (RBAC: no list of certifications in every namespace): {CONTROLLER_NEEDED}"
    return None
