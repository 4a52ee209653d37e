"""What the emulator serves: one `Resource` per group/version/plural, built-ins as a table, CRDs added live.

Per-kind behaviour that differs on the real server (which strategy keeps status on create, which kinds
count generations, which accept an update without resourceVersion, which field selectors) is data here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Resource", "BUILTINS", "COMMON_FIELDS", "ALL_VERBS"]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


@dataclass
class Resource:
    """One served resource (a group/version/plural) and the strategy rules the real server applies to it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # "status", "log", "finalize"
    status_subresource: bool = False  # main endpoint ignores status, /status ignores everything else
    generation: bool = False  # metadata.generation counts changes outside metadata (and status)
    keep_status_on_create: bool = False  # nodes register with their status; most kinds start empty
    unconditional_update: bool = True  # PUT without metadata.resourceVersion allowed
    create_on_update: bool = False  # PUT of a missing object creates it
    field_labels: frozenset[str] = COMMON_FIELDS
    strategic_merge: bool = True  # built-ins take strategic-merge-patch; custom resources answer 415
    custom: bool = False
    schema: dict[str, Any] | None = None  # openAPIV3Schema of a custom resource version
    printer_columns: list[dict[str, Any]] = field(default_factory=list)
    name_rule: str = "subdomain"  # "subdomain" (DNS-1123 subdomain), "label" (DNS-1123 label) or "path"
    storage_version: str = ""  # the version objects are stored in (custom resources with several versions)
    verbs: tuple[str, ...] = ALL_VERBS
    virtual: bool = False  # answered, never stored (access reviews)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage_api_version(self) -> str:
        version = self.storage_version or self.version
        return f"{self.group}/{version}" if self.group else version

    def view(self, obj: dict[str, Any]) -> dict[str, Any]:
        """An object as this version serves it (versions differ only in apiVersion: no conversion webhooks)."""
        return obj if obj.get("apiVersion") == self.api_version else dict(obj, apiVersion=self.api_version)

    @property
    def group_resource(self) -> str:
        """`pods`, `leases.coordination.k8s.io`: how error messages name the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def __post_init__(self) -> None:
        self.singular = self.singular or self.kind.lower()


def _fields(*extra: str) -> frozenset[str]:
    return COMMON_FIELDS | frozenset(extra)


BUILTINS: tuple[Resource, ...] = (
    Resource("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",),
             subresources=("status", "finalize"), status_subresource=True, name_rule="label",
             field_labels=_fields("status.phase")),
    Resource("", "v1", "Node", "nodes", namespaced=False, short_names=("no",), subresources=("status",),
             status_subresource=True, keep_status_on_create=True, field_labels=_fields("spec.unschedulable")),
    Resource("", "v1", "Pod", "pods", short_names=("po",), categories=("all",),
             subresources=("status", "log", "binding"),
             status_subresource=True, generation=True,
             field_labels=_fields("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                  "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
                                  "status.nominatedNodeName")),
    Resource("", "v1", "Event", "events", short_names=("ev",), create_on_update=True,
             field_labels=_fields("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                                  "involvedObject.uid", "involvedObject.apiVersion",
                                  "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                                  "reportingComponent", "source", "type")),
    Resource("", "v1", "ConfigMap", "configmaps", short_names=("cm",)),
    Resource("", "v1", "Secret", "secrets", field_labels=_fields("type")),
    Resource("", "v1", "Service", "services", short_names=("svc",), categories=("all",), subresources=("status",),
             status_subresource=True),
    Resource("", "v1", "ServiceAccount", "serviceaccounts", short_names=("sa",), subresources=("token",)),
    Resource("coordination.k8s.io", "v1", "Lease", "leases"),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False, name_rule="path"),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False,
             name_rule="path"),
    Resource("rbac.authorization.k8s.io", "v1", "Role", "roles", name_rule="path"),
    Resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", name_rule="path"),
    Resource("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False,
             verbs=("create",), virtual=True),
    Resource("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False,
             verbs=("create",), virtual=True),
    Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
             namespaced=False, short_names=("crd", "crds"), subresources=("status",), status_subresource=True,
             generation=True, categories=("api-extensions",)),
    Resource("apps", "v1", "Deployment", "deployments", short_names=("deploy",), categories=("all",),
             subresources=("status",), status_subresource=True, generation=True),
    Resource("apps", "v1", "DaemonSet", "daemonsets", short_names=("ds",), categories=("all",),
             subresources=("status",), status_subresource=True, generation=True),
    Resource("apps", "v1", "StatefulSet", "statefulsets", short_names=("sts",), categories=("all",),
             subresources=("status",), status_subresource=True, generation=True),
    Resource("batch", "v1", "Job", "jobs", categories=("all",), subresources=("status",), status_subresource=True,
             generation=True, field_labels=_fields("status.successful")),
)
