"""The ResourceStore contract: how the engine sees the world, as Kubernetes-JSON dicts.

Implementations: `MemoryStore` (embedded default) and `KubeStore` (a real API server). Both pass the
same contract tests in tests/store/contract.py.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from nvcre_tui.engine.names import APIEXTENSIONS_GROUP, NVCRE_GROUP, NVCRE_VERSION

__all__ = [
    "SECRET",
    "ResourceKind",
    "NVCRE_GROUP",
    "CERTIFICATION",
    "WORKFLOW",
    "JOB",
    "WORKLOADRUN",
    "NODE",
    "CONFIGMAP",
    "EVENT",
    "POD",
    "LEASE",
    "NAMESPACE",
    "SERVICE_ACCOUNT",
    "SERVICE",
    "RBAC_GROUP",
    "CLUSTER_ROLE",
    "CLUSTER_ROLE_BINDING",
    "ROLE",
    "ROLE_BINDING",
    "CRD",
    "BATCH_JOB",
    "VALIDATION_REQUEST",
    "ACCESS_REVIEW",
    "KNOWN_KINDS",
    "kind_of",
    "WatchEventType",
    "WatchEvent",
    "ListResult",
    "LabelSelectorInput",
    "ResourceStore",
]

Obj = dict[str, Any]


@dataclass(frozen=True)
class ResourceKind:
    """One API resource: where it lives (group/version/plural) and whether it is namespaced."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        """`nvcre.nvidia.com/v1alpha1`, or just `v1` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return self.kind


CERTIFICATION = ResourceKind(NVCRE_GROUP, NVCRE_VERSION, "Certification", "certifications")
WORKFLOW = ResourceKind(NVCRE_GROUP, NVCRE_VERSION, "Workflow", "workflows")
JOB = ResourceKind(NVCRE_GROUP, NVCRE_VERSION, "Job", "jobs")
WORKLOADRUN = ResourceKind(NVCRE_GROUP, NVCRE_VERSION, "WorkloadRun", "workloadruns")
NODE = ResourceKind("", "v1", "Node", "nodes", namespaced=False)
CONFIGMAP = ResourceKind("", "v1", "ConfigMap", "configmaps")
EVENT = ResourceKind("", "v1", "Event", "events")
POD = ResourceKind("", "v1", "Pod", "pods")
LEASE = ResourceKind("coordination.k8s.io", "v1", "Lease", "leases")
# What `nvcre setup` installs and what workloads (part 2) run as; never Secrets.
NAMESPACE = ResourceKind("", "v1", "Namespace", "namespaces", namespaced=False)
SERVICE_ACCOUNT = ResourceKind("", "v1", "ServiceAccount", "serviceaccounts")
SERVICE = ResourceKind("", "v1", "Service", "services")
SECRET = ResourceKind("", "v1", "Secret", "secrets")  # the CLI's workload pull secret; a batch MPI run's ssh keys (created, never read)
RBAC_GROUP = "rbac.authorization.k8s.io"
CLUSTER_ROLE = ResourceKind(RBAC_GROUP, "v1", "ClusterRole", "clusterroles", namespaced=False)
CLUSTER_ROLE_BINDING = ResourceKind(RBAC_GROUP, "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False)
ROLE = ResourceKind(RBAC_GROUP, "v1", "Role", "roles")
ROLE_BINDING = ResourceKind(RBAC_GROUP, "v1", "RoleBinding", "rolebindings")
CRD = ResourceKind(APIEXTENSIONS_GROUP, "v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False)
BATCH_JOB = ResourceKind("batch", "v1", "Job", "jobs")  # not nvcre's JOB: same kind name, other group
DEPLOYMENT = ResourceKind("apps", "v1", "Deployment", "deployments")  # `setup controller`'s engine (written by setup only)
# NVSentinel's (read-only for the engine; optional: a cluster without its CRD has no NVSentinel).
VALIDATION_REQUEST = ResourceKind("nvsentinel.nvidia.com", "v1alpha1", "ValidationRequest", "validationrequests", namespaced=False)
# Asking the API server what this identity may do (engine/kube/access.py): created only, never stored.
ACCESS_REVIEW = ResourceKind("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False)

KNOWN_KINDS: tuple[ResourceKind, ...] = (
    CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN, NODE, CONFIGMAP, EVENT, POD, LEASE,
    NAMESPACE, SERVICE_ACCOUNT, SERVICE, SECRET, CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING, CRD, BATCH_JOB,
    DEPLOYMENT, VALIDATION_REQUEST,
)
# (apiVersion, kind) -> kind; keyed by object so that kind_of looks up whatever an object holds there (a non-string finds nothing)
_BY_TYPE: dict[tuple[object, object], ResourceKind] = {(k.api_version, k.kind): k for k in KNOWN_KINDS}


def kind_of(obj: Mapping[str, Any]) -> ResourceKind:
    """The known kind of an object from its apiVersion and kind; ValueError names what is unknown."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    found = _BY_TYPE.get((api_version, kind))
    if found is None:
        known = ", ".join(f"{k.api_version} {k.kind}" for k in KNOWN_KINDS)
        raise ValueError(f"unknown object type apiVersion={api_version!r} kind={kind!r}; known: {known}")
    return found


WatchEventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True)
class WatchEvent:
    """One change seen by a watch. For DELETED, `object` is the last state of the object."""

    type: WatchEventType
    object: Obj


@dataclass(frozen=True)
class ListResult:
    """Items sorted by (namespace, name) and the store's resourceVersion at the time of the list."""

    items: list[Obj] = field(default_factory=list)
    resource_version: str = "0"


# A label selector as a string (`a=b,c in (x,y)`) or the dict form {matchLabels, matchExpressions}.
LabelSelectorInput = str | Mapping[str, Any] | None


@runtime_checkable
class ResourceStore(Protocol):
    """Kubernetes-like object storage. Every object in and out is a copy: callers never share state.

    Names: a namespaced kind needs a namespace for get/create/update/delete; `namespace=None` in
    list/watch means all namespaces. Cluster-scoped kinds ignore the namespace.
    """

    async def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> Obj:
        """The object, or NotFound."""
        ...

    async def list(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | None = None,
    ) -> ListResult:
        """Matching objects sorted by (namespace, name), and the resourceVersion to watch from."""
        ...

    def watch(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        resource_version: str | None = None,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Changes in resourceVersion order.

        Without `resource_version`: an ADDED for every matching object, then live changes. With it:
        every change after it, then live changes; Gone if it is older than the retained history.
        With a label selector, an object that starts or stops matching arrives as ADDED or DELETED.
        Closing the iterator (aclose, or cancelling its task) ends the watch; `close()` ends all watches.
        """
        ...

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        """Store a new object: sets uid, resourceVersion, generation=1, creationTimestamp and drops status.

        `metadata.generateName` gives a unique name when `metadata.name` is empty. AlreadyExists on a clash.
        """
        ...

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        """Replace everything but status and system metadata.

        `metadata.resourceVersion` is required and must be current (else Conflict). Generation goes up when
        anything outside metadata/status changes. An object being deleted whose last finalizer is removed
        is deleted. An update that changes nothing returns the object unchanged (no new resourceVersion).
        """
        ...

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        """Replace only status; `metadata.resourceVersion` is required and must be current (else Conflict)."""
        ...

    async def patch_status(
        self,
        kind: ResourceKind,
        name: str,
        namespace: str | None,
        status_patch: Mapping[str, Any],
        resource_version: str | None = None,
    ) -> Obj:
        """JSON merge patch (RFC 7386) of status; `resource_version`, when given, must be current."""
        ...

    async def delete(
        self, kind: ResourceKind, name: str, namespace: str | None = None, uid: str | None = None
    ) -> None:
        """Delete: with finalizers only sets deletionTimestamp; otherwise removes the object and then,
        recursively, every object whose ownerReferences all point at removed objects.
        `uid`, when given, must match the stored object (else Conflict)."""
        ...

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        """Record a v1 Event about `involved` (type Normal or Warning). The same involved object, type,
        reason and message again increments `count` and `lastTimestamp` of the existing Event."""
        ...

    async def close(self) -> None:
        """Release resources and end every open watch."""
        ...
