"""A Job whose verdict its run's log does not decide (a timeout, a pod Kubernetes took, a node gone) reads that log
only as evidence, after the verdict: a read the server fails keeps what was kept. It read it as a log to judge by
(required: retried for READ_PATIENCE_SECONDS of failing reads), so a hung node whose kubelet no longer answers (the API
server's 500 on pods/log) timed out five minutes past its timeoutPerJob, the group's GPUs held meanwhile."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.kube.podlogs import READ_PATIENCE_SECONDS
from nvcre_tui.engine.units import parse_duration
from tests.kubeapi.faults import Fault
from tests.kubeapi.kubelet import PodFault
from tests.runner.harness import emulator_report

# the kubelets behind the logs no longer answer: every pods/log read is the API server's 500 (dial tcp ...:10250)
UNREAD = Fault(method="GET", path=r"/pods/[^/]+/log$", status=500)


@pytest.mark.parametrize(("case", "faults", "reason"), [
    ("timeout-shorter-than-run", (), "JobTimedOut"),  # timeoutPerJob 3m, shorter than the run
    ("threshold-pass-two-metrics", (PodFault("taint-evicted", "gpu-node-01", at=60),), "PodDisrupted"),
])
def test_a_verdict_the_log_does_not_decide_is_not_held_by_a_log_the_server_fails(
        tmp_path: Path, case: str, faults: tuple[PodFault, ...], reason: str) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, case, trainer=False, faults=faults, server_faults=(UNREAD,)))
    [job] = objects["Job"]
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == reason, failed
    assert report["failedNodes"] == [], report["failedNodes"]  # a timeout or a disruption convicts no node
    assert UNREAD.hits > 0, "the log was never read: nothing tested"
    started = parse_time(job["status"].get("workloadStartTime") or job["metadata"]["creationTimestamp"])
    ended = parse_time(job["status"]["completionTime"])
    bound = parse_duration(job["spec"].get("timeout") or "0s") if reason == "JobTimedOut" else 60.0
    late = (ended - started).total_seconds() - bound
    assert late < READ_PATIENCE_SECONDS / 2, f"the verdict came {late:.0f}s late: held by a log read the server failed"
    # what was kept of the log is the Job's evidence all the same (nothing was: the failure log has an empty tail)
    assert job["status"]["failureLog"]["reason"] == reason
