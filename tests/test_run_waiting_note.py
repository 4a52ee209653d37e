"""`run --wait` on a cluster says why a group's pods are not running once they have waited WAITING_NOTE_SECONDS, once
per run, instead of minutes of silence until the grace ends (an API server with no controller makes no pod)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from nvcre_tui.cli.run import WAITING_NOTE_SECONDS, _waiting
from nvcre_tui.engine.clock import ManualClock, format_time
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW, WORKLOADRUN, ResourceKind

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
LABELS = {"nvcre.nvidia.com/workflow": "c-nccl", "nvcre.nvidia.com/group": "group-0"}
WAITING = "no pods yet (0/33): waiting for the workload's controller (Kubeflow Trainer and JobSet, or the Job controller) to create them"


class Cache:
    """The few reads `_waiting` makes of a session's cache, over fixed objects."""

    def __init__(self, objects: dict[ResourceKind, list[dict[str, Any]]]) -> None:
        self.objects = objects

    def list(self, kind: ResourceKind, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.objects.get(kind, [])

    def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return next((o for o in self.objects.get(kind, []) if o["metadata"]["name"] == name), None)


class Session:
    def __init__(self, clock: ManualClock, cache: Cache) -> None:
        self.clock, self.cache = clock, cache


def test_a_run_waiting_for_its_pods_is_told_once_with_why_and_when_it_fails() -> None:
    clock = ManualClock(START)
    workflow = {"metadata": {"name": "c-nccl", "labels": {"nvcre.nvidia.com/certification": "c", "nvcre.nvidia.com/category-domain": "communication",
                                                          "nvcre.nvidia.com/category-variant": "nccl-all-reduce"}}}
    run = {"metadata": {"name": "c-nccl-group-0-iter-1-run", "uid": "u1", "labels": LABELS},
           "status": {"phase": "Scheduling", "pendingSince": format_time(START), "message": WAITING}}
    job = {"metadata": {"name": "c-nccl-group-0-iter-1"}, "spec": {"schedulingStallGraceSeconds": 300}}
    session: Any = Session(clock, Cache({WORKFLOW: [workflow], WORKLOADRUN: [run], JOB: [job]}))
    told: set[str] = set()
    clock.advance(WAITING_NOTE_SECONDS - 1)
    assert _waiting(session, "c", "default", told) == []
    clock.advance(1)
    [line] = _waiting(session, "c", "default", told)
    assert line == f"communication/nccl-all-reduce group-0: pods not running after 30s: {WAITING}; it fails after 5m00s of this"
    clock.advance(60)
    assert _waiting(session, "c", "default", told) == []  # once
    assert _waiting(session, "other", "default", set()) == []  # another certification's runs are not this one's
