"""A long-lived WatchCache (an engine or a wall left running for weeks) forgets what it indexed of deleted objects:
after any number of certifications created, read as the engine and the console read them, and deleted, its indexes
hold what they held before the first; and a name or owner seen again is answered afresh, never from the one before."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_WORKFLOW
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN, MemoryStore
from nvcre_tui.engine.store.cache import WatchCache

Obj = dict[str, Any]
INDEXES = ("_owned", "_owned_order", "_owner_versions", "_controlled_answers", "_by_uid", "_labelled", "_label_versions",
           "_labelled_answers")


def _obj(kind: str, name: str, uid: str, rv: int, owner: Obj | None = None, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "uid": uid, "resourceVersion": str(rv), "labels": labels or {}}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                    "controller": True}]
    return {"kind": kind, "metadata": meta}


class _Tree:
    """A certification, its Workflow, two Jobs and a run each, created in `cache` (rv counted by `at`)."""

    def __init__(self, cache: WatchCache, name: str, round_: int, rv: int) -> None:
        uid = f"{name}-{round_}"
        self.cert = _obj("Certification", name, f"{uid}-cert", rv)
        self.workflow = _obj("Workflow", f"{name}-wf", f"{uid}-wf", rv + 1, self.cert, {LABEL_CERTIFICATION: name})
        self.jobs = [_obj("Job", f"{name}-job-{i}", f"{uid}-job-{i}", rv + 2 + i, self.workflow,
                          {LABEL_CERTIFICATION: name, LABEL_WORKFLOW: f"{name}-wf"}) for i in range(2)]
        self.runs = [_obj("WorkloadRun", f"{name}-run-{i}", f"{uid}-run-{i}", rv + 4 + i, job) for i, job in enumerate(self.jobs)]
        self.cache = cache
        for kind, obj in self.objects():
            cache.observe(kind, obj)

    def objects(self) -> list[tuple[Any, Obj]]:
        return [(CERTIFICATION, self.cert), (WORKFLOW, self.workflow), *((JOB, job) for job in self.jobs),
                *((WORKLOADRUN, run) for run in self.runs)]

    def read(self) -> None:
        """As the engine and the console read a tree, the deleted objects' uids and names included."""
        for _, obj in self.objects():
            self.cache.owned_by(obj["metadata"]["uid"])
            self.cache.controlled_by(obj["metadata"]["uid"], "Job")
        name = self.cert["metadata"]["name"]
        self.cache.labelled(WORKFLOW, LABEL_CERTIFICATION, name)
        self.cache.labelled(JOB, LABEL_WORKFLOW, f"{name}-wf")

    def delete(self) -> None:
        for kind, obj in reversed(self.objects()):  # runs first, as the garbage collector may; then read as on deletion
            self.cache.forget(kind, obj)
            self.read()


def _sizes(cache: WatchCache) -> dict[str, int]:
    return {index: len(getattr(cache, index)) for index in INDEXES}


def test_indexes_hold_nothing_of_deleted_certifications() -> None:
    cache = WatchCache(MemoryStore(ManualClock()), (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN),
                       label_keys=(LABEL_CERTIFICATION, LABEL_WORKFLOW))
    kept = _Tree(cache, "kept", 0, 1)  # one that stays throughout
    kept.read()
    before = _sizes(cache)
    for round_ in range(50):
        tree = _Tree(cache, f"burn-in-{round_}", round_, 100 + 10 * round_)
        tree.read()
        tree.delete()
    assert _sizes(cache) == before
    assert cache.owned_by(kept.workflow["metadata"]["uid"], JOB) == kept.jobs


def test_a_name_and_an_owner_seen_again_are_answered_afresh() -> None:
    cache = WatchCache(MemoryStore(ManualClock()), (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN),
                       label_keys=(LABEL_CERTIFICATION, LABEL_WORKFLOW))
    first = _Tree(cache, "burn-in", 0, 1)
    first.read()
    version = cache.label_version(JOB, LABEL_WORKFLOW, "burn-in-wf")
    first.delete()
    assert cache.labelled(WORKFLOW, LABEL_CERTIFICATION, "burn-in") == []
    assert cache.label_version(JOB, LABEL_WORKFLOW, "burn-in-wf") == 0
    again = _Tree(cache, "burn-in", 1, 100)  # the same names, new objects
    assert cache.labelled(WORKFLOW, LABEL_CERTIFICATION, "burn-in") == [again.workflow]
    assert cache.labelled(JOB, LABEL_WORKFLOW, "burn-in-wf") == again.jobs
    assert cache.label_version(JOB, LABEL_WORKFLOW, "burn-in-wf") > version  # a memo of the first never matches
    assert cache.controlled_by(again.workflow["metadata"]["uid"], "Job") == again.jobs
