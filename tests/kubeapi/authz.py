"""Authentication by bearer token and RBAC authorization, as kube-apiserver --authorization-mode=RBAC does.

The default token is an admin in `system:masters` (allowed everything, as the real server's privileged
group). Other tokens (`ApiServer.add_token`, `ApiServer.service_account_token`) are judged by the stored
ClusterRoles/Roles and their bindings. Every authenticated user may GET the discovery, version and health
paths (the default system:discovery / system:public-info-viewer roles).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["User", "Attributes", "RbacAuthorizer", "forbidden_message"]

PUBLIC_PATHS = ("/api", "/apis", "/version", "/healthz", "/readyz", "/livez", "/openapi")
RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()

    @staticmethod
    def service_account(namespace: str, name: str) -> User:
        return User(f"system:serviceaccount:{namespace}:{name}",
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"))


@dataclass(frozen=True)
class Attributes:
    """What a request asks (RequestInfo): a resource request or a non-resource path."""

    verb: str
    path: str
    resource: str = ""
    api_group: str = ""
    subresource: str = ""
    namespace: str | None = None
    name: str = ""
    resource_request: bool = True


def _matches(values: list[str] | None, wanted: str) -> bool:
    return values is not None and ("*" in values or wanted in values)


def _resource_matches(rule: dict[str, Any], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for allowed in rule.get("resources") or []:
        if allowed == "*" or allowed == combined or subresource and allowed == f"*/{subresource}":
            return True
    return False


def rule_allows(rule: dict[str, Any], request: Attributes) -> bool:
    if not _matches(rule.get("verbs"), request.verb):
        return False
    if not request.resource_request:
        for url in rule.get("nonResourceURLs") or []:
            if url == "*" or url == request.path or url.endswith("*") and request.path.startswith(url[:-1]):
                return True
        return False
    if not _matches(rule.get("apiGroups"), request.api_group):
        return False
    if not _resource_matches(rule, request.resource, request.subresource):
        return False
    names = rule.get("resourceNames") or []
    return not names or request.name in names


@dataclass
class RbacAuthorizer:
    """Evaluates the RBAC objects held by `lookup(group, plural)` -> list of stored objects."""

    lookup: Any
    extra: list[str] = field(default_factory=list)

    def _subject_matches(self, subject: dict[str, Any], user: User, binding_ns: str | None) -> bool:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User":
            return name == user.name
        if kind == "Group":
            return name in user.groups
        if kind == "ServiceAccount":
            namespace = subject.get("namespace") or binding_ns
            return user.name == f"system:serviceaccount:{namespace}:{name}"
        return False

    def _rules(self, role_ref: dict[str, Any], binding_ns: str | None) -> list[dict[str, Any]]:
        if role_ref.get("apiGroup", RBAC) != RBAC:
            return []
        if role_ref.get("kind") == "ClusterRole":
            found = [o for o in self.lookup(RBAC, "clusterroles", None) if o["metadata"]["name"] == role_ref.get("name")]
        elif role_ref.get("kind") == "Role" and binding_ns:
            found = [o for o in self.lookup(RBAC, "roles", binding_ns) if o["metadata"]["name"] == role_ref.get("name")]
        else:
            found = []
        return [rule for role in found for rule in role.get("rules") or []]

    def allows(self, user: User, request: Attributes) -> bool:
        if "system:masters" in user.groups:
            return True
        if (not request.resource_request and request.verb == "get"
                and any(request.path == p or request.path.startswith(p + "/") for p in PUBLIC_PATHS)):
            return True
        if request.resource_request and request.api_group == "authorization.k8s.io" and request.resource in (
                "selfsubjectaccessreviews", "selfsubjectrulesreviews") and request.verb == "create":
            return True  # the default system:basic-user role
        for binding in self.lookup(RBAC, "clusterrolebindings", None):
            if any(self._subject_matches(s, user, None) for s in binding.get("subjects") or []):
                if any(rule_allows(rule, request) for rule in self._rules(binding.get("roleRef") or {}, None)):
                    return True
        if request.namespace:
            for binding in self.lookup(RBAC, "rolebindings", request.namespace):
                if any(self._subject_matches(s, user, request.namespace) for s in binding.get("subjects") or []):
                    rules = self._rules(binding.get("roleRef") or {}, request.namespace)
                    if any(rule_allows(rule, request) for rule in rules):
                        return True
        return False


def forbidden_message(user: User, request: Attributes) -> str:
    """The real server's text, e.g. `pods "x" is forbidden: User "u" cannot get resource "pods" in API group ""
    in the namespace "default"`."""
    if not request.resource_request:
        return f'forbidden: User "{user.name}" cannot {request.verb} path "{request.path}"'
    resource = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    subject = f"{request.resource}.{request.api_group}" if request.api_group else request.resource
    if request.name:
        subject += f' "{request.name}"'
    scope = f'in the namespace "{request.namespace}"' if request.namespace else "at the cluster scope"
    return (f'{subject} is forbidden: User "{user.name}" cannot {request.verb} resource "{resource}" in API group '
            f'"{request.api_group}" {scope}')
