"""REST paths of any ResourceKind, as the API server lays them out (no per-kind client code)."""

from __future__ import annotations

from urllib.parse import quote

from ..protocol import LEASE, RBAC_GROUP, ResourceKind

__all__ = ["collection_path", "object_path", "group_version_path", "has_status_subresource"]

# Kinds the API server serves without a /status subresource (they have no status at all): a status
# write goes to the main resource. Every other kind is taken to have one: all built-ins with a status
# do, and so do our CRDs (a foreign CRD without `subresources.status` would answer 404 to a status
# write). A table, not discovery, so a status write costs no extra request and no extra permission.
_STATUSLESS = frozenset({
    ("", "configmaps"), ("", "events"), ("", "secrets"), ("", "serviceaccounts"), ("", "endpoints"),
    (LEASE.group, LEASE.plural), ("events.k8s.io", "events"),
    (RBAC_GROUP, "clusterroles"), (RBAC_GROUP, "clusterrolebindings"), (RBAC_GROUP, "roles"), (RBAC_GROUP, "rolebindings"),
})


def group_version_path(group: str, version: str) -> str:
    """/api/v1 for the core group, /apis/<group>/<version> otherwise."""
    return f"/api/{version}" if not group else f"/apis/{group}/{version}"


def _segment(value: str) -> str:
    return quote(value, safe="")


def collection_path(kind: ResourceKind, namespace: str | None) -> str:
    """The list/watch/create URL: all namespaces when `namespace` is None (or the kind is cluster-scoped)."""
    base = group_version_path(kind.group, kind.version)
    if kind.namespaced and namespace:
        return f"{base}/namespaces/{_segment(namespace)}/{kind.plural}"
    return f"{base}/{kind.plural}"


def object_path(kind: ResourceKind, name: str, namespace: str | None, subresource: str | None = None) -> str:
    """One object's URL, or one of its subresources (status)."""
    path = f"{collection_path(kind, namespace)}/{_segment(name)}"
    return f"{path}/{subresource}" if subresource else path


def has_status_subresource(kind: ResourceKind) -> bool:
    return (kind.group, kind.plural) not in _STATUSLESS
