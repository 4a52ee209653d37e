"""The one line a store error ends a command with (cli.store_error_line): what failed and where, as every other
one-line message reads, never a Python class name. It read `nvcre: ServerError: Certification in namespace default:
etcdserver: leader changed` and `nvcre: Unavailable: ... connection lost ...`."""

from __future__ import annotations

import json

import pytest

from nvcre_tui.cli import store_error_line
from nvcre_tui.engine.store.errors import StoreError, Unavailable
from nvcre_tui.engine.store.kube.answers import Subject, error_from_answer
from nvcre_tui.engine.store.kube.transport import NotSent
from nvcre_tui.engine.store.protocol import CERTIFICATION

CLASS_NAMES = ("StoreError", "ServerError", "Unavailable", "NotSent", "Timeout", "TooManyRequests", "Forbidden", "NotFound")


def _answer(code: int, reason: str, message: str) -> StoreError:
    """The store error of an API server's Status answer, as the transport makes it."""
    body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "message": message,
                       "code": code}).encode()
    return error_from_answer(code, body, Subject(CERTIFICATION, None, "default"), None, "application/json")


@pytest.mark.parametrize(("error", "line"), [
    (_answer(503, "ServiceUnavailable", "etcdserver: leader changed"),
     "nvcre: the API server failed: Certification in namespace default: etcdserver: leader changed"),
    (_answer(429, "TooManyRequests", "Too many requests, please try again later."),
     "nvcre: the API server is throttling requests (429): Certification in namespace default: Too many requests, please try again later."),
    (Unavailable.about(CERTIFICATION, None, "default", "GET /apis/x: connection lost (Server disconnected)"),
     "nvcre: Certification in namespace default: GET /apis/x: connection lost (Server disconnected)"),
    (NotSent.about(CERTIFICATION, None, "default", "cannot connect to https://h:6443: refused"),
     "nvcre: Certification in namespace default: cannot connect to https://h:6443: refused"),
    (_answer(403, "Forbidden", 'certifications.nvcre.nvidia.com is forbidden: User "alice" cannot list'),
     'nvcre: Certification in namespace default: certifications.nvcre.nvidia.com is forbidden: User "alice" cannot list'),
], ids=["server-error", "throttled", "unavailable", "not-sent", "forbidden"])
def test_a_store_error_line_names_what_failed_and_no_class(error: StoreError, line: str) -> None:
    said = store_error_line(error)
    assert said == line, said
    assert not any(name + ":" in said for name in CLASS_NAMES), said
