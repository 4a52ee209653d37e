"""API server answers (Status objects, HTTP codes, transport failures) as store errors naming the object."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from nvcre_tui.engine.printable import printable

from ..errors import (AlreadyExists, Conflict, Forbidden, Gone, Invalid, NamespaceTerminating, NotFound, ServerError, StoreError,
                      Timeout, TooManyRequests, Unauthorized)
from ..protocol import ResourceKind

__all__ = ["Subject", "error_from_status", "error_from_answer", "object_from_answer", "parse_retry_after", "is_status",
           "api_versions_problem"]


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
    "Forbidden": Forbidden, "Unauthorized": Unauthorized, "Invalid": Invalid, "BadRequest": Invalid,
    "MethodNotAllowed": Invalid, "UnsupportedMediaType": Invalid, "RequestEntityTooLarge": Invalid,
    "TooManyRequests": TooManyRequests, "Timeout": Timeout, "ServerTimeout": Timeout,
    "InternalError": ServerError, "ServiceUnavailable": ServerError,
}
_BY_CODE: dict[int, type[StoreError]] = {
    400: Invalid, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: Invalid, 409: Conflict, 410: Gone,
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
    if code == 403 and any(isinstance(cause, dict) and cause.get("reason") == "NamespaceTerminating"
                           for cause in details.get("causes") or []):
        error_class = NamespaceTerminating
    if code >= 500 and ETCD_TOO_LARGE in message:  # etcd's refusal, passed on as a bare 500: the same write always fails
        error_class = Invalid
    return error_class.about(subject.kind, subject.name, subject.namespace, message, retry_after=retry_after)


_TAG = re.compile(r"<(head|script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)  # markup, and text never shown
_HTML = re.compile(r"\s*<(!doctype\s+html|html|head|body)\b", re.IGNORECASE)


def _text_of(text: str, content_type: str | None) -> tuple[str, str]:
    """(content type, text on one line: an HTML page's without its markup) of an answer that is no JSON."""
    kind = (content_type or "").split(";")[0].strip().lower() or ("text/html" if _HTML.match(text) else "")
    words = " ".join(printable(_TAG.sub(" ", text) if kind == "text/html" else text).split())
    return kind, words if len(words) <= 160 else words[:157] + "..."


def _not_kubernetes(code: int, kind: str, words: str) -> str:
    return f"not a Kubernetes API answer (HTTP {code}{', ' + kind if kind else ''})" + (f": {words}" if words else "")


def error_from_answer(code: int, body: bytes, subject: Subject, retry_after_header: str | None,
                      content_type: str | None = None) -> StoreError:
    """Like error_from_status, from the raw body (a Status as JSON, or text from a proxy in between), on one line;
    an HTML page is said to be no Kubernetes answer."""
    text = body.decode("utf-8", errors="replace")
    try:
        status = json.loads(text)
    except (ValueError, RecursionError):
        status = None
    if isinstance(status, dict) and (status.get("kind") == "Status" or isinstance(status.get("message"), str)):
        return error_from_status(code, status, subject, retry_after_header)
    kind, words = _text_of(text[:4096], content_type)
    # An HTML page is a proxy's or a web server's on a wrong port; plain text may be the API server's own (its router
    # answers `404 page not found` for a group it does not serve); no body at all: `HTTP 503` says it.
    foreign = _not_kubernetes(code, kind, words) if kind == "text/html" else words
    return error_from_status(code, status, subject, retry_after_header, fallback=foreign)


def object_from_answer(code: int, body: bytes, subject: Subject, content_type: str | None = None) -> dict[str, Any]:
    """The JSON object of a successful answer ({} for none); StoreError when it is something else (a proxy's login
    page answered 200), one line saying it is no Kubernetes answer."""
    if not body.strip():
        return {}
    try:
        found = json.loads(body)
    except (ValueError, RecursionError):
        found = None
    if not isinstance(found, dict):
        kind, words = _text_of(body.decode("utf-8", errors="replace")[:4096], content_type)
        raise StoreError.about(subject.kind, subject.name, subject.namespace, _not_kubernetes(code, kind, words))
    return found


def is_status(body: bytes) -> bool:
    """Whether an error answer is a Kubernetes v1 Status (every API server error is one; a web server's 404 page, or
    the API server router's plain `404 page not found` for a group it does not serve, is not)."""
    try:
        found = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(found, dict) and found.get("kind") == "Status"


def api_versions_problem(code: int, body: bytes, content_type: str | None) -> str | None:
    """Why a successful answer of /api is no Kubernetes API server's (`HTTP 200 text/html: Welcome to nginx`), or None
    for an APIVersions (the core group's versions)."""
    try:
        found = json.loads(body)
    except (ValueError, RecursionError):
        found = None
    if isinstance(found, dict) and (found.get("kind") == "APIVersions" or isinstance(found.get("versions"), list)):
        return None
    if isinstance(found, dict):
        return f"HTTP {code} JSON without the core API versions"
    kind, words = _text_of(body.decode("utf-8", errors="replace")[:4096], content_type)
    return f"HTTP {code}{' ' + kind if kind else ''}" + (f": {words}" if words else "")
