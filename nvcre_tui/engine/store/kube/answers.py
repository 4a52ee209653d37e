"""API server answers (Status objects, HTTP codes, transport failures) as store errors naming the object."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from ..errors import AlreadyExists, Conflict, Forbidden, Gone, Invalid, NotFound, ServerError, StoreError, Timeout, TooManyRequests
from ..protocol import ResourceKind

__all__ = ["Subject", "error_from_status", "error_from_answer", "parse_retry_after"]


@dataclass(frozen=True)
class Subject:
    """What a request is about, for messages: a kind, and a name and namespace when there is one."""

    kind: ResourceKind | str  # a string for requests about no kind (discovery)
    name: str | None = None
    namespace: str | None = None


ETCD_TOO_LARGE = "request is too large"  # etcd's answer to an object over its --max-request-bytes (1.5 MiB)

# (code, Status reason) -> error class; the reason decides when the code alone is ambiguous (409).
_BY_REASON: dict[str, type[StoreError]] = {
    "NotFound": NotFound, "AlreadyExists": AlreadyExists, "Conflict": Conflict, "Gone": Gone, "Expired": Gone,
    "Forbidden": Forbidden, "Unauthorized": Forbidden, "Invalid": Invalid, "BadRequest": Invalid,
    "MethodNotAllowed": Invalid, "UnsupportedMediaType": Invalid, "RequestEntityTooLarge": Invalid,
    "TooManyRequests": TooManyRequests, "Timeout": Timeout, "ServerTimeout": Timeout,
    "InternalError": ServerError, "ServiceUnavailable": ServerError,
}
_BY_CODE: dict[int, type[StoreError]] = {
    400: Invalid, 401: Forbidden, 403: Forbidden, 404: NotFound, 405: Invalid, 409: Conflict, 410: Gone,
    413: Invalid, 415: Invalid, 422: Invalid, 429: TooManyRequests, 504: Timeout,
}


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _error_class(code: int, reason: str | None) -> type[StoreError]:
    if code == 409:  # one code, two meanings: the reason tells a name clash from a stale write
        return AlreadyExists if reason == "AlreadyExists" else Conflict
    found = _BY_REASON.get(reason or "") or _BY_CODE.get(code)
    if found is not None:
        return found
    return ServerError if code >= 500 else StoreError


def _describe_causes(message: str, details: dict[str, Any]) -> str:
    """The Status message plus each field cause it does not already spell out."""
    causes = details["causes"] if isinstance(details.get("causes"), list) else []
    extra = []
    for cause in causes:
        if not isinstance(cause, dict):
            continue
        text = ": ".join(str(part) for part in (cause.get("field"), cause.get("message")) if part)
        if text and text not in message:
            extra.append(text)
    return "; ".join([message, *extra]) if message else "; ".join(extra)


def error_from_status(code: int, status: dict[str, Any] | None, subject: Subject,
                      retry_after_header: str | None = None, fallback: str = "") -> StoreError:
    """The store error for an answer with HTTP `code` and (usually) a v1 Status body."""
    status = status if isinstance(status, dict) else {}
    reason = status.get("reason") if isinstance(status.get("reason"), str) else None
    details = status["details"] if isinstance(status.get("details"), dict) else {}
    message = status.get("message") if isinstance(status.get("message"), str) else fallback.strip()
    message = _describe_causes(message or f"HTTP {code}{' ' + reason if reason else ''}", details)
    retry_after = parse_retry_after(retry_after_header)
    if retry_after is None and isinstance(details.get("retryAfterSeconds"), (int, float)):
        retry_after = float(details["retryAfterSeconds"])
    error_class = _error_class(code, reason)
    if code >= 500 and ETCD_TOO_LARGE in message:  # etcd's refusal, passed on as a bare 500: the same write always fails
        error_class = Invalid
    return error_class.about(subject.kind, subject.name, subject.namespace, message, retry_after=retry_after)


def error_from_answer(code: int, body: bytes, subject: Subject, retry_after_header: str | None) -> StoreError:
    """Like error_from_status, from the raw body (a Status as JSON, or text from a proxy in between)."""
    text = body.decode("utf-8", errors="replace")
    try:
        status = json.loads(text)
    except ValueError:
        status = None
    return error_from_status(code, status, subject, retry_after_header, fallback=text[:200])
