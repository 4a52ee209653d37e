"""Authentication by bearer token and RBAC authorization, as kube-apiserver --authorization-mode=RBAC does.

The default token is an admin in `system:masters` (allowed everything, as the real server's privileged
group). Other tokens (`ApiServer.add_token`, `ApiServer.service_account_token`) are judged by the stored
ClusterRoles/Roles and their bindings. Every authenticated user may GET the discovery, version and health
paths (the default system:discovery / system:public-info-viewer roles).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["User", "Attributes", "RbacAuthorizer", "forbidden_message", "escalation_refusal"]

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


ROLE_KINDS = {"Role": "roles", "ClusterRole": "clusterroles"}


def _uncovered(authorizer: RbacAuthorizer, user: User, rules: list[dict[str, Any]], namespace: str | None) -> list[str]:
    """The rights in `rules` this user does not hold itself (ConfirmNoEscalation: each verb on each resource and name,
    asked of the authorizer where the role or binding applies; a `*` is held only as a `*`)."""
    missing = []
    for rule in rules:
        for verb in rule.get("verbs") or []:
            for url in rule.get("nonResourceURLs") or []:
                if not authorizer.allows(user, Attributes(verb, url, resource_request=False)):
                    missing.append(f"{verb} {url}")
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    plural, _, sub = resource.partition("/")
                    for name in rule.get("resourceNames") or [""]:
                        if not authorizer.allows(user, Attributes(verb, "", plural, group, sub, namespace, name)):
                            missing.append(f"{verb} {resource}{'.' + group if group else ''}{' ' + name if name else ''}")
    return missing


def escalation_refusal(authorizer: RbacAuthorizer, user: User, resource: str, namespace: str | None,
                       obj: dict[str, Any]) -> Any:
    """The RBAC registry's own check on a write of a role or binding (beyond the request's authorization), as the real
    server's policybased storage does it, dry runs included: a role only by one who may `escalate` or holds every right
    it grants; a binding only by one who may `bind` its role, else (the role is read first: a missing one is NotFound)
    holds every right of that role. None when allowed, else the ApiError."""
    from . import errors

    if "system:masters" in user.groups:
        return None  # EscalationAllowed
    name = str((obj.get("metadata") or {}).get("name") or "")
    if resource in ("roles", "clusterroles"):
        if authorizer.allows(user, Attributes("escalate", "", resource, RBAC, "", namespace, name)):
            return None
        rules = obj.get("rules") or []
    elif resource in ("rolebindings", "clusterrolebindings"):
        ref = obj.get("roleRef") or {}
        plural = ROLE_KINDS.get(str(ref.get("kind")), "")
        if authorizer.allows(user, Attributes("bind", "", plural, RBAC, "", namespace, str(ref.get("name") or ""))):
            return None
        scope = namespace if ref.get("kind") == "Role" else None
        found = [o for o in authorizer.lookup(RBAC, plural, scope) if o["metadata"]["name"] == ref.get("name")]
        if not found:
            return errors.not_found(plural, str(ref.get("name") or ""), RBAC)
        rules = found[0].get("rules") or []
    else:
        return None
    missing = _uncovered(authorizer, user, rules, namespace)
    if not missing:
        return None
    return errors.forbidden(resource, name, f'user "{user.name}" (groups={list(user.groups)}) is attempting to grant RBAC '
                            f"permissions not currently held: {'; '.join(missing)}", RBAC)
