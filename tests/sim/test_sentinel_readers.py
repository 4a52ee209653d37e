"""NVSentinel's ValidationRequests come from someone else's controller: the console's readers take whatever a
cluster holds. A malformed request is left out and said (whole, or the part that cannot be read); nothing raises."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.history.nvsentinel import certification_requests, requests_for, sentinel_view, unreadable_requests

Obj = dict[str, Any]
NODE: Obj = {"metadata": {"name": "gpu-node-02", "labels": {"nvsentinel.nvidia.com/validation-state": "validating"}}}
GOOD: Obj = {"metadata": {"name": "vr-good"}, "spec": {"nodes": [{"name": "gpu-node-02"}]},
             "status": {"phase": "Failed", "testGroups": [{"name": "g", "provider": "p",
                                                           "attempts": [{"objectName": "vr-good-cert", "failedNodes": ["gpu-node-02"]}]}]}}


def _named(name: str, **parts: Any) -> Obj:
    return {"metadata": {"name": name}, "spec": {"nodes": [{"name": "gpu-node-02"}]}, **parts}


# The reviewer's entries, and what else a CRD without a schema lets through.
UNREADABLE: list[tuple[Any, str]] = [
    ({"metadata": {"name": "vr-text-spec"}, "spec": "a string"}, "ValidationRequest vr-text-spec: spec is not a mapping"),
    ({}, "ValidationRequest #2: metadata.name is missing"),
    (7, "ValidationRequest #3: not an object"),
    ({"metadata": "vr", "spec": {"nodes": []}}, "ValidationRequest #4: metadata.name is missing"),
    ({"metadata": {"name": 5}, "spec": {"nodes": []}}, "ValidationRequest #5: metadata.name is missing"),
    ({"metadata": {"name": "vr-text-nodes"}, "spec": {"nodes": "gpu-node-02"}}, "ValidationRequest vr-text-nodes: spec.nodes is not a list"),
]
PARTLY: list[tuple[Obj, str]] = [
    (_named("vr-text-group", status={"testGroups": ["notadict"]}), "status.testGroups[0] is not a mapping"),
    (_named("vr-text-status", status="Failed"), "status is not a mapping"),
    (_named("vr-groups-mapping", status={"testGroups": {"name": "g"}}), "status.testGroups is not a list"),
    (_named("vr-attempts-text", status={"testGroups": [{"attempts": "a"}]}), "status.testGroups[0].attempts is not a list"),
    (_named("vr-attempt-text", status={"testGroups": [{"attempts": ["a"]}]}), "status.testGroups[0].attempts[0] is not a mapping"),
    (_named("vr-object-number", status={"testGroups": [{"attempts": [{"objectName": 12}]}]}), "status.testGroups[0].attempts[0].objectName is not text"),
    (_named("vr-failed-text", status={"testGroups": [{"attempts": [{"failedNodes": "gpu-node-02 gpu-node-03"}]}]}),
     "status.testGroups[0].attempts[0].failedNodes is not a list of node names"),
    (_named("vr-phase-mapping", status={"phase": {"a": 1}}), "status.phase is not text"),
    ({"metadata": {"name": "vr-node-text"}, "spec": {"nodes": ["gpu-node-01", {"name": "gpu-node-02"}]}}, "spec.nodes[0] is not {name: ...}"),
]
EVERYTHING = [request for request, _ in UNREADABLE] + [request for request, _ in PARTLY] + [GOOD]


def test_the_view_of_a_node_never_raises_and_shows_what_could_be_read() -> None:
    view = sentinel_view(NODE, EVERYTHING)
    shown = {request.name: request for request in view.requests}
    assert sorted(shown) == sorted([request["metadata"]["name"] for request, _ in PARTLY] + ["vr-good"])
    assert shown["vr-good"].note is None and shown["vr-good"].failed_here and shown["vr-good"].certifications == ["vr-good-cert"]
    for request, note in PARTLY:
        assert shown[request["metadata"]["name"]].note == note
    assert not shown["vr-failed-text"].failed_here  # a text is not a list: no substring of it names the node
    assert shown["vr-object-number"].certifications == []
    assert shown["vr-phase-mapping"].phase == "Pending"
    lines = view.lines()
    assert any(line.startswith("ValidationRequest vr-text-group: Pending (unreadable: status.testGroups[0] is not a mapping)") for line in lines)


def test_wholly_unreadable_requests_are_named_in_one_line_each() -> None:
    assert unreadable_requests(EVERYTHING) == [message for _, message in UNREADABLE]
    assert unreadable_requests([GOOD]) == []


def test_certifications_are_found_only_where_they_can_be_read() -> None:
    assert certification_requests(EVERYTHING) == {"vr-good-cert": "vr-good"}


def test_many_problems_are_summed_up() -> None:
    attempts = [{"objectName": n} for n in range(4)]
    [request] = requests_for("gpu-node-02", [_named("vr-many", status={"testGroups": [{"attempts": attempts}]})])
    assert request.note == ("status.testGroups[0].attempts[0].objectName is not text; "
                            "status.testGroups[0].attempts[1].objectName is not text and 2 more")


@pytest.mark.parametrize("annotation", [7, ["a"], {"a": 1}])
def test_a_failures_annotation_that_is_not_text_is_said_not_trusted(annotation: Any) -> None:
    node = {"metadata": {"name": "n", "annotations": {"nvsentinel.dgxc.nvidia.com/nvcre-cert-failures-details": annotation}}}
    view = sentinel_view(node)
    assert view.failures == [] and view.failures_note == "annotation is not text" and view.state == "reported"
