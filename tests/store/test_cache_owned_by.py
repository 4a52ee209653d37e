"""WatchCache.owned_by keeps each owner's dependents sorted between calls: the order is worked out again when one joins
or leaves (a new child, a deletion, an ownerReference moved), never served stale."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import CONFIGMAP, JOB, WORKFLOW, MemoryStore
from nvcre_tui.engine.store.cache import WatchCache


def _owned(name: str, kind: str, *owners: str, rv: int, status: Any = None) -> dict[str, Any]:
    refs = [{"apiVersion": "v1", "kind": "Workflow", "name": owner, "uid": owner, "controller": True} for owner in owners]
    body: dict[str, Any] = {"kind": kind, "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                                       "resourceVersion": str(rv), "ownerReferences": refs}}
    if status is not None:
        body["status"] = status
    return body


def _names(found: list[dict[str, Any]]) -> list[str]:
    return [obj["metadata"]["name"] for obj in found]


def test_owned_by_follows_dependents_joining_leaving_and_changing() -> None:
    cache = WatchCache(MemoryStore(ManualClock()), (WORKFLOW, JOB, CONFIGMAP))
    cache.observe(JOB, _owned("job-b", "Job", "wf-1", rv=1))
    cache.observe(CONFIGMAP, _owned("cm", "ConfigMap", "wf-1", rv=2))
    cache.observe(JOB, _owned("job-a", "Job", "wf-1", rv=3))
    assert _names(cache.owned_by("wf-1")) == ["cm", "job-a", "job-b"]  # by kind, then name
    assert _names(cache.owned_by("wf-1", JOB)) == ["job-a", "job-b"]
    changed = _owned("job-a", "Job", "wf-1", rv=4, status={"phase": "Succeeded"})
    cache.observe(JOB, changed)
    assert cache.owned_by("wf-1", JOB)[0] is changed  # the object as it is now, in the same place
    cache.observe(JOB, _owned("job-c", "Job", "wf-1", rv=5))
    assert _names(cache.owned_by("wf-1", JOB)) == ["job-a", "job-b", "job-c"]
    cache.observe(JOB, _owned("job-b", "Job", "wf-2", rv=6))  # its owner changed
    assert _names(cache.owned_by("wf-1", JOB)) == ["job-a", "job-c"]
    assert _names(cache.owned_by("wf-2")) == ["job-b"]
    cache.observe(JOB, _owned("job-a", "Job", "wf-1", "wf-2", rv=7))  # a second owner
    assert _names(cache.owned_by("wf-2")) == ["job-a", "job-b"]
    cache.forget(JOB, _owned("job-c", "Job", "wf-1", rv=8))
    assert _names(cache.owned_by("wf-1")) == ["cm", "job-a"]


def test_controlled_by_follows_dependents_joining_changing_and_leaving() -> None:
    cache = WatchCache(MemoryStore(ManualClock()), (WORKFLOW, JOB, CONFIGMAP))
    cache.observe(JOB, _owned("job-b", "Job", "wf-1", rv=1))
    cache.observe(CONFIGMAP, _owned("cm", "ConfigMap", "wf-1", rv=2))
    assert _names(cache.controlled_by("wf-1", "Job")) == ["job-b"]
    assert cache.controlled_by("wf-9", "Job") == []
    cache.observe(JOB, _owned("job-a", "Job", "wf-1", rv=3))
    assert _names(cache.controlled_by("wf-1", "Job")) == ["job-a", "job-b"]
    changed = _owned("job-a", "Job", "wf-1", rv=4, status={"phase": "Succeeded"})
    cache.observe(JOB, changed)
    assert cache.controlled_by("wf-1", "Job")[0] is changed  # the object as it is now
    detached = _owned("job-b", "Job", "wf-1", rv=5)
    detached["metadata"]["ownerReferences"][0]["controller"] = False  # still owned, no longer controlled
    cache.observe(JOB, detached)
    assert _names(cache.controlled_by("wf-1", "Job")) == ["job-a"]
    assert _names(cache.owned_by("wf-1", JOB)) == ["job-a", "job-b"]
    cache.forget(JOB, changed)
    cache.forget(JOB, detached)
    cache.forget(CONFIGMAP, _owned("cm", "ConfigMap", "wf-1", rv=6))
    assert cache.controlled_by("wf-1", "Job") == []
    cache.observe(JOB, _owned("job-c", "Job", "wf-1", rv=7))  # an owner seen again after its last dependent left
    assert _names(cache.controlled_by("wf-1", "Job")) == ["job-c"]
