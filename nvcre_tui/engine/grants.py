"""Which of the roles `setup init` makes grants what RBAC refused a user: said after the server's own refusal (which
names the verb and resource), so that one line names the missing permission and the binding that gives it. One place
for these words: `certification run` and `delete`, and the console's submit and delete say them."""

from __future__ import annotations

from nvcre_tui.engine.store.errors import Forbidden, NamespaceTerminating, ReadOnlyRefusal, StoreError, Unauthorized

__all__ = ["certifications_take", "rbac_refused", "reading_takes"]


def rbac_refused(error: BaseException) -> bool:
    """The API server's authorizer refused it (403): not the credentials (401), not a namespace being deleted, not
    the read-only wrapper."""
    return isinstance(error, Forbidden) and not isinstance(error, (Unauthorized, NamespaceTerminating, ReadOnlyRefusal))


def certifications_take(doing: str, namespace: str) -> str:
    """`creating certifications takes nvcre-edit in namespace NS, ...`: the role a user needs to create or delete them."""
    return (f"{doing} certifications takes nvcre-edit in namespace {namespace}, which setup init folds into the built-in "
            "admin role: a RoleBinding to admin or nvcre-edit there")


# nvcre's own kinds by name (a StoreError keeps its kind's name only; "Job" is batch's too, so it is left out)
_READ_BY_VIEW = ("Certification", "Workflow", "WorkloadRun")


def reading_takes(error: StoreError) -> str | None:
    """What RBAC refused of a read of nvcre's objects takes (nvcre-view, where), or None for another refusal."""
    if not rbac_refused(error) or error.kind not in _READ_BY_VIEW:
        return None
    if error.namespace:
        return (f"reading certifications in namespace {error.namespace} takes nvcre-view there, which setup init folds into the "
                "built-in view, edit and admin roles: a RoleBinding to one of them")
    return ("reading certifications in every namespace takes nvcre-view cluster-wide (a ClusterRoleBinding to it, or to "
            "view); -n NS reads one namespace")
