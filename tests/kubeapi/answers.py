"""Building answers and reading request options: JSON and Status responses, injected faults, DeleteOptions,
dryRun, fieldManager, and x509 users."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from . import errors
from .authz import User
from .errors import REASON_OF_CODE, ApiError
from .faults import DEFAULT_MESSAGES, Fault
from .requestinfo import RecordedRequest, truthy

__all__ = ["query_int", "certificate_user", "json_response", "status_response", "fault_response", "warning_value", "decode",
           "is_dry_run", "field_manager", "delete_options"]

JSON = "application/json"


def certificate_user(request: web.Request) -> User | None:
    """x509 authentication: CN is the user name, each O a group (its chain was verified by TLS). None, as the real x509
    authenticator refuses it (401), for a certificate outside its dates now: checked at each request, so one that expires
    on a kept-alive connection is refused there too. Real time, not the emulator's clock: openssl dated it so."""
    transport = request.transport
    peer = transport.get_extra_info("peercert") if transport is not None else None
    if not peer:
        return None
    if not ssl.cert_time_to_seconds(peer["notBefore"]) <= time.time() <= ssl.cert_time_to_seconds(peer["notAfter"]):
        return None
    names = [value for part in peer.get("subject", ()) for key, value in part if key == "commonName"]
    groups = tuple(value for part in peer.get("subject", ()) for key, value in part if key == "organizationName")
    return User(names[0], (*groups, "system:authenticated")) if names else None


def json_response(value: Any, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(value, separators=(",", ":")), status=status, content_type=JSON)


def status_response(error: ApiError) -> web.Response:
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else None
    return web.Response(body=json.dumps(error.status()), status=error.code, content_type=JSON, headers=headers)


def fault_response(fault: Fault, record: RecordedRequest) -> web.Response:
    code = fault.status or 500
    reason = fault.reason or REASON_OF_CODE.get(code, "InternalError")
    message = fault.message or DEFAULT_MESSAGES.get(code, f"injected fault {code}")
    retry = None if fault.retry_after is None else int(round(fault.retry_after))
    error = ApiError(reason, message, code=code, name=record.name, group=record.api_group, kind=record.resource,
                     retry_after=retry)
    response = status_response(error)
    if fault.retry_after is not None:
        response.headers["Retry-After"] = _retry_text(fault.retry_after)
    return response


async def cut_answer(request: web.Request, answer: web.Response, after: int, stall: float) -> web.StreamResponse:
    """`answer` sent chunked as the real server streams it, the connection ending after `after` bytes of its body (no
    final chunk: the client reads a payload that never completes), `stall` seconds of silence first."""
    body = answer.body if isinstance(answer.body, bytes) else b""
    headers = {key: value for key, value in answer.headers.items() if key.lower() not in ("content-length", "transfer-encoding")}
    response = web.StreamResponse(status=answer.status, headers=headers)
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(body[:after])
    if stall:
        await asyncio.sleep(stall)
    if request.transport is not None:
        request.transport.abort()
    return response


def warning_value(text: str) -> str:
    """A Warning header value (code 299, quoted text)."""
    return f'299 - "{_escape(text)}"'


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _retry_text(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


def decode(body: bytes) -> Any:
    try:
        return json.loads(body or b"{}")
    except ValueError as error:
        raise errors.bad_request(f"the object provided is unrecognized (must be of type JSON): {error}") from None


def query_int(query: Mapping[str, str], name: str, default: int | None = None) -> int | None:
    """An integer query parameter; anything else is a 400 naming it, as the real parameter codec answers."""
    text = query.get(name)
    if text in (None, ""):
        return default
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: strconv.ParseInt: parsing "{text}": invalid syntax') from None


def is_dry_run(query: dict[str, str]) -> bool:
    value = query.get("dryRun")
    if value in (None, ""):
        return False
    if value != "All":
        raise errors.bad_request(f'Invalid dry run value "{value}": valid values are "All"')
    return True


def field_manager(query: dict[str, str], user_agent: str) -> str:
    """fieldManager, else the user agent up to its first '/' (what the real server records)."""
    return query.get("fieldManager") or (user_agent.split("/")[0] or "unknown")[:128]


def delete_options(body: bytes, query: dict[str, str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if body.strip():
        try:
            options = json.loads(body)
        except ValueError as error:
            raise errors.bad_request(f"invalid DeleteOptions: {error}") from None
        if not isinstance(options, dict):
            raise errors.bad_request("DeleteOptions must be an object")
    if "gracePeriodSeconds" in query:
        options["gracePeriodSeconds"] = query_int(query, "gracePeriodSeconds")
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    if "orphanDependents" in query:
        options["orphanDependents"] = truthy(query["orphanDependents"])
    return options
