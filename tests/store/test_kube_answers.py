"""API server answers as store errors, the backoff policy and REST paths: pure functions, no server."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from nvcre_tui.engine.store import (
    CONFIGMAP,
    CRD,
    LEASE,
    NODE,
    WORKFLOW,
    AlreadyExists,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    ServerError,
    StoreError,
    Timeout,
    TooManyRequests,
)
from nvcre_tui.engine.store.errors import Unauthorized
from nvcre_tui.engine.store.kube import RetryPolicy
from nvcre_tui.engine.store.kube.answers import Subject, error_from_answer, error_from_status, parse_retry_after
from nvcre_tui.engine.store.kube.paths import collection_path, has_status_subresource, object_path

WF = Subject(WORKFLOW, "wf", "default")
UNAUTHORIZED_HINT = (" (the API server refused the kubeconfig's credentials: a wrong or expired token, or a client certificate "
                     "it does not trust)")


def status(code: int, reason: str, message: str = "boom", **details: object) -> dict[str, object]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": message, "details": details}


CASES = [
    (404, "NotFound", NotFound, False),
    (409, "AlreadyExists", AlreadyExists, False),
    (409, "Conflict", Conflict, False),
    (410, "Gone", Gone, False),
    (410, "Expired", Gone, False),
    (403, "Forbidden", Forbidden, False),
    (401, "Unauthorized", Unauthorized, False),
    (422, "Invalid", Invalid, False),
    (400, "BadRequest", Invalid, False),
    (415, "UnsupportedMediaType", Invalid, False),
    (429, "TooManyRequests", TooManyRequests, True),
    (500, "InternalError", ServerError, True),
    (503, "ServiceUnavailable", ServerError, True),
    (502, "", ServerError, True),
    (504, "Timeout", Timeout, True),
    (500, "Timeout", Timeout, True),
    (418, "", StoreError, False),
]


@pytest.mark.parametrize(("code", "reason", "expected", "retryable"), CASES,
                         ids=[f"{c[0]}-{c[1] or 'none'}" for c in CASES])
def test_status_maps_to_the_store_error_naming_the_object(code: int, reason: str, expected: type[StoreError],
                                                         retryable: bool) -> None:
    error = error_from_status(code, status(code, reason), WF)
    assert type(error) is expected
    assert error.retryable is retryable
    assert str(error) == "Workflow default/wf: boom" + (UNAUTHORIZED_HINT if expected is Unauthorized else "")
    assert (error.kind, error.name, error.namespace) == ("Workflow", "wf", "default")


def test_invalid_names_every_field_cause() -> None:
    body = status(422, "Invalid", 'Workflow.nvcre.nvidia.com "wf" is invalid: spec.size: Invalid value',
                  causes=[{"reason": "FieldValueInvalid", "message": "Invalid value", "field": "spec.size"},
                          {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.nodes"}])
    error = error_from_status(422, body, WF)
    assert isinstance(error, Invalid)
    assert str(error) == ('Workflow default/wf: Workflow.nvcre.nvidia.com "wf" is invalid: spec.size: Invalid value; '
                          "spec.nodes: Required value")


def test_retry_after_from_header_or_details() -> None:
    assert error_from_status(429, status(429, "TooManyRequests"), WF, "3").retry_after == 3.0
    assert error_from_status(503, status(503, "ServiceUnavailable", retryAfterSeconds=7), WF).retry_after == 7.0
    assert error_from_status(500, status(500, "InternalError"), WF).retry_after is None
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=120), usegmt=True)
    parsed = parse_retry_after(later)
    assert parsed is not None and 100 < parsed <= 120
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert parse_retry_after("-5") == 0.0


def test_answer_that_is_not_a_status() -> None:
    error = error_from_answer(502, b"<html>Bad Gateway</html>", WF, None)
    assert isinstance(error, ServerError)
    assert str(error) == "Workflow default/wf: not a Kubernetes API answer (HTTP 502, text/html): Bad Gateway"
    parsed = error_from_answer(404, json.dumps(status(404, "NotFound", "gone")).encode(), WF, None)
    assert isinstance(parsed, NotFound) and str(parsed) == "Workflow default/wf: gone"
    empty = error_from_answer(503, b"", Subject(NODE, "gpu-01"), None)
    assert str(empty) == "Node gpu-01: HTTP 503"


def test_backoff_grows_with_jitter_up_to_the_cap_and_retry_after_wins() -> None:
    low = RetryPolicy(random=lambda: 1.0)   # the shortest draw: d * (1 - jitter)
    high = RetryPolicy(random=lambda: 0.0)  # the longest: d
    assert [high.delay(n) for n in range(8)] == [0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 10.0, 10.0]
    assert [low.delay(n) for n in range(3)] == [0.1, 0.2, 0.4]
    assert high.delay(3, retry_after=2.0) == 2.0
    with pytest.raises(ValueError, match="retry policy"):
        RetryPolicy(attempts=0)


def test_paths_for_any_kind() -> None:
    assert collection_path(WORKFLOW, None) == "/apis/nvcre.nvidia.com/v1alpha1/workflows"
    assert object_path(WORKFLOW, "wf", "team-1", "status") == (
        "/apis/nvcre.nvidia.com/v1alpha1/namespaces/team-1/workflows/wf/status")
    assert object_path(NODE, "gpu-01", "ignored") == "/api/v1/nodes/gpu-01"
    assert object_path(CONFIGMAP, "a b/c", "default") == "/api/v1/namespaces/default/configmaps/a%20b%2Fc"
    assert object_path(CRD, "workflows.nvcre.nvidia.com", None) == (
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workflows.nvcre.nvidia.com")
    assert has_status_subresource(WORKFLOW) and has_status_subresource(NODE)
    assert not has_status_subresource(CONFIGMAP) and not has_status_subresource(LEASE)


def test_an_object_etcd_refuses_as_too_large_is_not_retried() -> None:
    """The API server passes etcd's refusal on as a bare 500; the same write would fail forever, so it is Invalid
    (the engine then fails that object with the reason) rather than a ServerError retried with backoff."""
    error = error_from_answer(500, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 500,
                                               "message": "etcdserver: request is too large"}).encode(), WF, None)
    assert type(error) is Invalid and not error.retryable
    assert str(error) == "Workflow default/wf: etcdserver: request is too large"
    assert type(error_from_answer(500, b'{"kind": "Status", "code": 500, "message": "etcdserver: leader changed"}', WF, None)) is ServerError
