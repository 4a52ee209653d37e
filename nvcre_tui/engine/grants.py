"""Which of the roles `setup init` makes grants what RBAC refused a user: said after the server's own refusal (which
names the verb and resource), so that one line names the missing permission and the binding that gives it. One place
for these words: `certification run` and `delete`, and the console's submit and delete say them; every refused read
says READS' role for its resource."""

from __future__ import annotations

from dataclasses import dataclass

from nvcre_tui.engine.api.nodes import NODES_GRANT
from nvcre_tui.engine.api.vocabulary import LEASE_READER_NAME
from nvcre_tui.engine.store.errors import Forbidden, NamespaceTerminating, ReadOnlyRefusal, StoreError, Unauthorized
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, JOB, LEASE, NODE, POD, WORKFLOW, WORKLOADRUN

__all__ = ["READS", "certifications_take", "rbac_refused", "reading_takes", "with_grant"]


def rbac_refused(error: BaseException) -> bool:
    """The API server's authorizer refused it (403): not the credentials (401), not a namespace being deleted, not
    the read-only wrapper."""
    return isinstance(error, Forbidden) and not isinstance(error, (Unauthorized, NamespaceTerminating, ReadOnlyRefusal))


def certifications_take(doing: str, namespace: str) -> str:
    """`creating certifications takes nvcre-edit in namespace NS, ...`: the role a user needs to create or delete them."""
    return (f"{doing} certifications takes nvcre-edit in namespace {namespace}, which setup init folds into the built-in "
            "admin role: a RoleBinding to admin or nvcre-edit there")


@dataclass(frozen=True)
class _Grant:
    """A role that grants reads, and how a user is bound to it in one namespace and cluster-wide."""

    role: str
    in_namespace: str  # after "takes <role> there, "
    cluster_wide: str | None  # in parentheses after "takes <role> cluster-wide" (None: read in one namespace only)


_NVCRE_VIEW = _Grant("nvcre-view", "which setup init folds into the built-in view, edit and admin roles: a RoleBinding to one of them",
                     "a ClusterRoleBinding to it, or to view")
_VIEW = _Grant("the built-in view role", "or edit or admin, which grant it too (nvcre-view alone does not): a RoleBinding to one of them",
               "a ClusterRoleBinding to view")
_LEASE_READER = _Grant(f"the Role {LEASE_READER_NAME}", "which setup init binds to every authenticated user (an install made "
                       "before it has none: setup init again)", None)

# What the CLI and the console read, by (API group, resource): what it is called and the role that grants the read.
# One table for every refusal of a read (the CLI's last line, `list`, `report`, `logs`, the console's panes and opening).
READS: dict[tuple[str, str], tuple[str, _Grant]] = {
    (CERTIFICATION.group, CERTIFICATION.plural): ("certifications", _NVCRE_VIEW),
    (WORKFLOW.group, WORKFLOW.plural): ("workflows", _NVCRE_VIEW),
    (JOB.group, JOB.plural): ("nvcre jobs", _NVCRE_VIEW),  # not batch's Jobs: their group differs
    (WORKLOADRUN.group, WORKLOADRUN.plural): ("workloadruns", _NVCRE_VIEW),
    (CONFIGMAP.group, CONFIGMAP.plural): ("configmaps", _VIEW),
    # No Events: neither reads them. The engine's get (store/events.py, before it counts an Event up) is part of its
    # write, which nvcre-engine's ClusterRole grants and no read role answers; `setup reset` lists them as an admin.
    (POD.group, POD.plural): ("a run's log (list and watch on pods, get on pods/log)", _VIEW),
    (LEASE.group, LEASE.plural): ("the engine Lease", _LEASE_READER),
}


def reading_takes(error: BaseException) -> str | None:
    """What a read RBAC refused takes (READS: the role, in the error's namespace or cluster-wide), or None for another
    refusal or a resource not read by the CLI and console. Nodes say their own grant (api.nodes.NODES_GRANT)."""
    if not isinstance(error, StoreError) or not rbac_refused(error) or error.read is False:  # a write: its own words
        return None
    if error.resource == (NODE.group, NODE.plural):
        return f"reading nodes takes {NODES_GRANT}"
    read = READS.get(error.resource) if error.resource is not None else None
    if read is None:
        return None
    what, grant = read
    if error.namespace:
        return f"reading {what} in namespace {error.namespace} takes {grant.role} there, {grant.in_namespace}"
    if grant.cluster_wide is None:
        return None
    return f"reading {what} in every namespace takes {grant.role} cluster-wide ({grant.cluster_wide}); -n NS reads one namespace"


def with_grant(said: str, error: BaseException) -> str:
    """`said` (the refusal as the caller words it), then `; <reading_takes>` when RBAC refused a read READS knows."""
    takes = reading_takes(error)
    return f"{said}; {takes}" if takes else said
