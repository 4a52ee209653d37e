"""Output that blames a cluster service (dcgmi cannot reach the GPU Operator's host engine) fails the Job
and blames no node; the same run failing on its own (no such line) still blames its node."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nvcre_tui.engine.judging.blame import service_at_fault
from tests.engine.memory_engine import ScriptedRunner
from tests.engine.memory_engine import certify as run_certification

Obj = dict[str, Any]
UNREACHABLE = [
    "2026-01-01T00:00:05.000000000Z Error: unable to establish a connection to the specified host: nvidia-dcgm.gpu-operator.svc:5555",
    "2026-01-01T00:00:05.000000000Z Error: Unable to connect to host engine. Host engine connection invalid/disconnected.",
]
CRASHED = ["2026-01-01T00:00:05.000000000Z Segmentation fault (core dumped)"]
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: dcgm-two, namespace: default}
spec:
  target: {nodeNames: [gpu-node-01, gpu-node-02]}
  categories: [{domain: diagnostics, variant: dcgm-level4}]
"""


async def certify(lines: list[str]) -> tuple[Obj, list[Obj]]:
    # Every run exits 255 at once, printing `lines` (what a pod's log would hold).
    return await run_certification(CERT, lambda store, clock: ScriptedRunner(store, clock, "Failed", 255, lambda run: list(lines)))


def test_an_unreachable_host_engine_blames_no_node() -> None:
    report, jobs = asyncio.run(certify(UNREACHABLE))
    assert report["result"] == "FAILED" and report["categories"][0]["status"] == "Failed"
    assert report["failedNodes"] == []
    assert len(jobs) == 2 and all(not (job["status"].get("failedNodes") or []) for job in jobs)
    failed = [c for job in jobs for c in job["status"]["conditions"] if c["type"] == "Failed"]
    assert {c["reason"] for c in failed} == {"ServiceUnavailable"}
    assert all("DCGM host engine unreachable" in c["message"] and "no node blamed" in c["message"] for c in failed)


def test_a_crash_without_such_line_still_blames_its_node() -> None:
    report, _ = asyncio.run(certify(CRASHED))
    assert report["failedNodes"] == ["gpu-node-01", "gpu-node-02"]


@pytest.mark.parametrize(("line", "named"), [
    ("Error: unable to establish a connection to the specified host: 10.0.0.1:5555", True),
    ("[1,0]<stdout>:Error: Unable to connect to host engine. Host engine connection invalid/disconnected.", True),
    ("gpu-node-03:41:41 [0] NCCL WARN Net : Connection closed by remote peer", False),
])
def test_service_lines_are_told_from_node_lines(line: str, named: bool) -> None:
    assert (service_at_fault([line]) is not None) is named


# dcgmi 4.5 --json against a host engine that failed it (DCGM's Diag.cpp HelperDisplayFailureMessage): not the node's fault.
HOST_ENGINE_ERRORS = {
    "older than dcgmi": '{"DCGM Diagnostic":{"runtime_error":"Error: Unable to complete diagnostic. Return: (-12) : API version mismatch"}}',
    "busy with another diagnostic": ('{"DCGM Diagnostic":{"runtime_error":"Error: Unable to complete diagnostic. Return: (-39) : A diag '
                                     'instance is already running, cannot run a new diag."}}'),
    "unreachable": '{"DCGM Diagnostic":{"runtime_error":"The connection to the host engine is not valid any longer"}}',
}


@pytest.mark.parametrize("how", sorted(HOST_ENGINE_ERRORS))
def test_a_host_engine_that_fails_the_diagnostic_blames_no_node(how: str) -> None:
    """A GPU Operator's DCGM older than the dcgmi client (before 4.2), a diagnostic already running on it, or its
    connection lost: each blamed the node, which NVSentinel then taints."""
    report, jobs = asyncio.run(certify([f"2026-01-01T00:00:05.000000000Z {HOST_ENGINE_ERRORS[how]}"]))
    assert report["failedNodes"] == []
    failed = [c for job in jobs for c in job["status"]["conditions"] if c["type"] == "Failed"]
    assert {c["reason"] for c in failed} == {"ServiceUnavailable"} and all(f"DCGM host engine {how}" in c["message"] for c in failed)
