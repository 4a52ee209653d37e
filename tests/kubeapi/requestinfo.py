"""RequestInfo: what a request asks for (verb, group, version, resource, namespace, name, subresource),
resolved from the URL as the real server does, and the record of it tests read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import ApiError
from .resources import Resource

__all__ = ["RecordedRequest", "Target", "resolve", "truthy", "not_served"]


@dataclass
class RecordedRequest:
    """One request as the server understood it (the audit log of a test)."""

    method: str
    path: str
    verb: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str | None = None
    name: str = ""
    query: dict[str, str] = field(default_factory=dict)
    content_type: str = ""
    user_agent: str = ""
    status: int = 0
    body: bytes = b""
    user: str = ""
    accept_encoding: str = ""  # the Accept-Encoding header as sent ("gzip, deflate"; "identity": no compression)
    auth_scheme: str = ""  # the Authorization header's scheme ("Bearer", "Basic"), never its credentials; "" without one
    warnings: list[str] = field(default_factory=list)  # the answer's Warning headers (an unknown field dropped ...)

    @property
    def field_manager(self) -> str:
        return self.query.get("fieldManager", "")


@dataclass
class Target:
    """A resolved resource URL."""

    res: Resource | None
    group: str
    version: str
    resource: str
    namespace: str | None
    name: str
    subresource: str
    legacy_watch: bool


def truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true")


def not_served() -> ApiError:
    return ApiError("NotFound", "the server could not find the requested resource")


def resolve(record: RecordedRequest, find: Callable[[str, str, str], Resource | None]) -> Target | None:
    """RequestInfo: None for non-resource paths (discovery, health, version)."""
    parts = [p for p in record.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        record.verb = "get"
        return None
    record.api_group, record.api_version = group, version
    if not rest:
        record.verb = "get"
        return None
    legacy_watch = rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
    namespace = None
    if rest and rest[0] == "namespaces" and (len(rest) >= 4 or len(rest) == 3 and rest[2] not in ("status",
                                                                                                   "finalize")):
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise not_served()
    resource, name = rest[0], rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    record.resource, record.name, record.subresource, record.namespace = resource, name, subresource, namespace
    method = record.method
    watching = legacy_watch or truthy(record.query.get("watch"))
    record.verb = {
        "GET": ("watch" if legacy_watch else "get") if name else ("watch" if watching else "list"),
        "POST": "create", "PUT": "update",
        "PATCH": "patch", "DELETE": "delete" if name else "deletecollection",
    }.get(method, method.lower())
    res = find(group, version, resource)
    return Target(res, group, version, resource, namespace, name, subresource, legacy_watch)
