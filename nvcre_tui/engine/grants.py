"""Which of the roles `setup init` makes grants what RBAC refused a user: said after the server's own refusal (which
names the verb and resource), so that one line names the missing permission and the binding that gives it. One place
for these words: `certification run` and `delete`, and the console's submit and delete say them."""

from __future__ import annotations

from nvcre_tui.engine.store.errors import Forbidden, NamespaceTerminating, ReadOnlyRefusal, StoreError, Unauthorized

__all__ = ["certifications_take", "rbac_refused"]


def rbac_refused(error: StoreError) -> bool:
    """The API server's authorizer refused it (403): not the credentials (401), not a namespace being deleted, not
    the read-only wrapper."""
    return isinstance(error, Forbidden) and not isinstance(error, (Unauthorized, NamespaceTerminating, ReadOnlyRefusal))


def certifications_take(doing: str, namespace: str) -> str:
    """`creating certifications takes nvcre-edit in namespace NS, ...`: the role a user needs to create or delete them."""
    return (f"{doing} certifications takes nvcre-edit in namespace {namespace}, which setup init folds into the built-in "
            "admin role: a RoleBinding to admin or nvcre-edit there")
