"""Failures as the API server reports them: a `Status` object with reason, code and details.

Message texts follow k8s.io/apimachinery/pkg/api/errors so clients that match on them keep working.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ApiError", "Cause", "status_body"]

# reason -> HTTP code (metav1.StatusReason values)
CODES = {
    "BadRequest": 400, "Unauthorized": 401, "Forbidden": 403, "NotFound": 404, "MethodNotAllowed": 405,
    "NotAcceptable": 406, "AlreadyExists": 409, "Conflict": 409, "Gone": 410, "Expired": 410,
    "RequestEntityTooLarge": 413, "UnsupportedMediaType": 415, "Invalid": 422, "TooManyRequests": 429,
    "InternalError": 500, "ServiceUnavailable": 503, "Timeout": 504,
}
# HTTP code -> the reason a Status carries when only a code is known (a fault injected by code)
REASON_OF_CODE = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
    409: "Conflict", 410: "Gone", 415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
    500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout",
}


@dataclass(frozen=True)
class Cause:
    """One entry of details.causes: reason (FieldValueInvalid, ...), message and the field path."""

    reason: str
    message: str
    field: str = ""

    def as_dict(self) -> dict[str, str]:
        out = {"reason": self.reason, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out


@dataclass
class ApiError(Exception):
    """Raised anywhere in the emulator; the HTTP layer turns it into a Status answer."""

    reason: str
    message: str
    code: int = 0
    name: str = ""
    group: str = ""
    kind: str = ""
    causes: list[Cause] = field(default_factory=list)
    retry_after: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. continue on an inconsistent-list 410

    def __post_init__(self) -> None:
        self.code = self.code or CODES.get(self.reason, 500)
        super().__init__(self.message)

    def status(self) -> dict[str, Any]:
        return status_body(self)


def status_body(error: ApiError) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if error.name:
        details["name"] = error.name
    if error.group:
        details["group"] = error.group
    if error.kind:
        details["kind"] = error.kind
    if error.causes:
        details["causes"] = [c.as_dict() for c in error.causes]
    if error.retry_after is not None:
        details["retryAfterSeconds"] = error.retry_after
    body: dict[str, Any] = {
        "kind": "Status", "apiVersion": "v1", "metadata": dict(error.metadata), "status": "Failure",
        "message": error.message, "reason": error.reason, "code": error.code,
    }
    if not error.reason:
        del body["reason"]  # some failures carry no reason (e.g. resourceVersion set on create)
    if details:
        body["details"] = details
    return body


# ---------------------------------------------------------------- builders with the real server's texts


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError("NotFound", f'{qualified} "{name}" not found', name=name, group=group, kind=resource)


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError("AlreadyExists", f'{qualified} "{name}" already exists', name=name, group=group, kind=resource)


def conflict(resource: str, name: str, group: str = "", why: str = "") -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return ApiError("Conflict", f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
                    name=name, group=group, kind=resource)


def invalid(kind: str, name: str, causes: list[Cause], group: str = "") -> ApiError:
    qualified = f"{kind}.{group}" if group else kind
    parts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return ApiError("Invalid", f'{qualified} "{name}" is invalid: {text}', name=name, group=group, kind=kind,
                    causes=list(causes))


def bad_request(message: str) -> ApiError:
    return ApiError("BadRequest", message)


def forbidden(resource: str, name: str, why: str, group: str = "", causes: list[Cause] | None = None) -> ApiError:
    qualified = f"{resource}.{group}" if group else resource
    return ApiError("Forbidden", f'{qualified} "{name}" is forbidden: {why}', name=name, group=group,
                    kind=resource, causes=list(causes or []))


def method_not_allowed(method: str) -> ApiError:
    return ApiError("MethodNotAllowed", "the server does not allow this method on the requested resource")


def gone_continue(token: str = "") -> ApiError:
    """An expired continue token's 410; with `token` (one to go on at the latest revision), the real server's
    inconsistentContinue answer, which carries it in the Status's metadata.continue."""
    if not token:
        return ApiError(
            "Expired",
            "The provided continue parameter is too old to display a consistent list result. You can start a new "
            "list without the continue parameter.",
        )
    return ApiError(
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list "
        "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
        "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
        "modified, or deleted between the time the first chunk was returned and now may show up in the list.",
        metadata={"continue": token},
    )


def expired(rv: int, oldest: int) -> ApiError:
    return ApiError("Expired", f"too old resource version: {rv} ({oldest})")
