"""NVSentinel's view beside ours, read-only: from a scenario on the simulator, and over HTTP from an API server."""

from __future__ import annotations

import json
from pathlib import Path

from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.history.nvsentinel import certification_requests, sentinel_view
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import NODE, VALIDATION_REQUEST
from tests.history.helpers import certify, fleet
from tests.history.sentinel import NODE_CHANGES, REQUEST


def nvsentinel_fields(node: dict) -> str:
    metadata = node["metadata"]
    return json.dumps([metadata.get("labels"), metadata.get("annotations"), (node.get("spec") or {}).get("taints")], sort_keys=True)


async def test_the_simulator_plays_nvsentinel_and_the_view_reads_it(tmp_path: Path) -> None:
    session = await SimSession.open(fleet(nodeChanges=NODE_CHANGES, validationRequests=[REQUEST]), None, history=tmp_path / "h.db")
    try:
        assert session.validation_requests is not None
        requests = session.validation_requests.list(VALIDATION_REQUEST)
        assert [r["metadata"]["name"] for r in requests] == ["vr-weekly"]
        assert certification_requests(requests) == {"vr-weekly-nccl-loopback": "vr-weekly"}
        nodes = {node_name(n): n for n in session.cache.list(NODE)}
        quarantined = sentinel_view(nodes["gpu-node-02"], requests)
        assert quarantined.state == "quarantined" and quarantined.mark == "⚑"
        assert quarantined.validation_state == "validation-failed"
        assert quarantined.taint == "nvsentinel.dgxc.nvidia.com/nvcre-cert-failed=true:NoSchedule"
        assert quarantined.failures == ["nccl-loopback/ThresholdViolation"]
        assert [(r.name, r.phase, r.failed_here, r.certifications) for r in quarantined.requests] == \
            [("vr-weekly", "Failed", True, ["vr-weekly-nccl-loopback"])]
        validating = sentinel_view(nodes["gpu-node-03"], requests)
        assert validating.state == "validating" and validating.active_request == "vr-weekly" and not validating.requests[0].failed_here
        assert sentinel_view(nodes["gpu-node-01"], requests).state is None
        # The engine writes none of it: after a certification the Nodes still say exactly what the scenario set.
        before = {name: nvsentinel_fields(node) for name, node in nodes.items()}
        await certify(session, "vr-weekly-nccl-loopback")
        assert {node_name(n): nvsentinel_fields(n) for n in session.cache.list(NODE)} == before
        assert session.validation_requests.list(VALIDATION_REQUEST) == requests
    finally:
        await session.close()


def test_a_malformed_failures_annotation_is_shown_not_trusted() -> None:
    node = {"metadata": {"name": "n", "annotations": {"nvsentinel.dgxc.nvidia.com/nvcre-cert-failures-details": "{oops"}}}
    view = sentinel_view(node)
    assert view.failures == [] and view.failures_note is not None and "not JSON" in view.failures_note
    assert view.state == "reported" and any("not JSON" in line for line in view.lines())
