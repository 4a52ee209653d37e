"""The informer keeps each kind (store/cacheview.py) and each Workflow's Jobs (views.join.CachedJoin) from the cache's change
events: after any adds, updates and deletes, its snapshot equals a full rebuild from the cache's lists (each kind
sorted, kept to the namespace, damaged objects left out and named, certifications joined from the lists), a snapshot
taken earlier does not change, and a refresh after one Job changed reads that Job, not every Job of the fleet."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.api.damage import DamageChecks
from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_WORKFLOW
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import engine_cache
from nvcre_tui.engine.informer import Informer
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.report.readmodel import CertificationView
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import build_nodes, default_scenario
from nvcre_tui.engine.store import cache as cache_module
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.cacheview import CacheView, LabelGroup
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW, WORKLOADRUN, ResourceKind
from nvcre_tui.engine.views.snapshot import SNAPSHOT_KINDS, Snapshot

Obj = dict[str, Any]
NAMESPACES = ("default", "team-b")
BURN_IN = Path(__file__).resolve().parents[2] / "examples" / "burn-in.yaml"


@cache
def specs() -> tuple[Obj, Obj]:
    """A Workflow's spec and a Job's as render makes them (the informer leaves out the objects their models refuse)."""
    catalog = default_catalog()
    cert = certification_from_text("burn-in.yaml", BURN_IN.read_text(), catalog)
    workflow = render_certification(cert, build_nodes(default_scenario()), catalog, "burn-in.yaml")[0].workflow.to_wire()
    return workflow["spec"], workflow["spec"]["jobTemplate"]["spec"]


class CountedMeta(dict[str, Any]):
    """A Job's metadata that counts its reads: the work a refresh does per Job."""

    reads = 0

    def get(self, *args: Any) -> Any:
        CountedMeta.reads += 1
        return super().get(*args)

    def __getitem__(self, key: str) -> Any:
        CountedMeta.reads += 1
        return super().__getitem__(key)


class World:
    def __init__(self) -> None:
        self.cache = engine_cache(MemoryStore(ManualClock(SIM_START)))
        self.rv = 0

    def put(self, kind: ResourceKind, name: str, namespace: str, labels: dict[str, str], owner: ResourceKind | None = None, **body: Any) -> None:
        """`owner`: the kind whose object (of the name the label gives) controls it, as the engine makes them."""
        self.rv += 1
        meta = CountedMeta if kind is JOB else dict
        refs = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": owner.kind, "name": parent, "uid": f"{owner.kind}:{namespace}/{parent}", "controller": True}
                for parent in labels.values()] if owner is not None else []
        self.cache.observe(kind, {"metadata": meta(name=name, namespace=namespace, labels=labels, resourceVersion=str(self.rv),
                                                   uid=f"{kind.kind}:{namespace}/{name}", ownerReferences=refs), **body})

    def delete(self, kind: ResourceKind, name: str, namespace: str) -> None:
        self.cache.forget(kind, {"metadata": {"name": name, "namespace": namespace}})

    def cert(self, name: str, namespace: str, damaged: bool = False) -> None:
        wfs = [f"{name}-wf-{i}" for i in range(2)]
        self.put(CERTIFICATION, name, namespace, {}, spec=5 if damaged else {"categories": [{"domain": "d", "variant": wf} for wf in wfs]},
                 status={"categoryStatuses": [{"domain": "d", "variant": wf, "status": "InProgress", "workflowRef": {"name": wf}} for wf in wfs]})

    def workflow(self, name: str, cert: str, namespace: str, ran: int, damaged: bool = False) -> None:
        groups = [{"name": f"g{i}", "nodes": [f"node-{i}"], "phase": "Running", "jobRef": f"job-{i}"} for i in range(ran)]
        self.put(WORKFLOW, name, namespace, {LABEL_CERTIFICATION: cert}, CERTIFICATION, spec=specs()[0],
                 status=5 if damaged else {"orchestration": {"groups": groups}})

    def job(self, name: str, workflow: str | None, namespace: str, phase: str, damaged: bool = False) -> None:
        status = 5 if damaged else {"conditions": [{"type": phase, "status": "True", "reason": phase, "message": "",
                                                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        self.put(JOB, name, namespace, {LABEL_WORKFLOW: workflow} if workflow else {}, WORKFLOW, spec=specs()[1], status=status)


def full_rebuild(cache: WatchCache, namespace: str | None) -> Snapshot:
    """The snapshot as every refresh made it before: each kind sorted and split whole, joined from the lists."""
    damage = DamageChecks()
    split = [damage.split(kind.kind, [obj for obj in cache.list(kind)
                                      if namespace is None or not kind.namespaced or obj["metadata"]["namespace"] == namespace])
             for kind in SNAPSHOT_KINDS]
    nodes, certifications, workflows, jobs, runs = (kept for kept, _ in split)
    return Snapshot(nodes, certifications, workflows, jobs, runs, damaged=tuple(found for _, damaged in split for found in damaged))


def shape(snapshot: Snapshot, views: list[CertificationView] | None = None) -> tuple[Any, ...]:
    """What a snapshot holds, by object identity (the cache's own objects, never copies), with each certification's view
    (as joined now, else `views`: those it gave before)."""
    lists = tuple(tuple(id(obj) for obj in getattr(snapshot, name)) for name in ("nodes", "certifications", "workflows", "jobs", "runs"))
    views = views if views is not None else [snapshot.joined.view(cert) for cert in snapshot.certifications]
    joined = tuple((dict(c.status), id(c.workflow), tuple(id(job) for job in c.jobs), c.title) for view in views for c in view.categories)
    return lists, snapshot.damaged, joined


STEP = st.tuples(st.sampled_from(["job", "job", "job", "job", "workflow", "cert", "delete-job", "delete-workflow", "delete-cert", "node",
                                  "run", "refresh"]),
                 st.integers(0, 3), st.integers(0, 11), st.sampled_from(["InProgress", "Succeeded", "Failed", "damaged", "unlabelled"]),
                 st.sampled_from(NAMESPACES))


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(STEP, max_size=40))
def test_the_informer_equals_a_full_rebuild_after_any_changes(steps: list[tuple[str, int, int, str, str]]) -> None:
    world = World()
    for namespace in NAMESPACES:
        for c in range(2):
            world.cert(f"cert-{c}", namespace)
            for w in range(2):
                world.workflow(f"cert-{c}-wf-{w}", f"cert-{c}", namespace, ran=10)
        for j in range(12):  # a Job name is one Job of a namespace: spread over the Workflows
            world.job(f"job-{j}", f"cert-{j % 2}-wf-{j // 2 % 2}", namespace, "InProgress")
    informers = {namespace: Informer(world.cache, namespace) for namespace in ("default", None)}
    # Short journals: the join patches and takes groups whole, the views take changes in and read kinds whole.
    journals = (mock.patch.object(LabelGroup, "JOURNAL_SLACK", 0), mock.patch.object(cache_module, "CHANGES_KEPT", -20))
    taken: list[tuple[Snapshot, list[CertificationView], tuple[Any, ...]]] = []

    def refresh() -> None:
        for namespace, informer in informers.items():
            snapshot = informer.snapshot()
            views = [snapshot.joined.view(cert) for cert in snapshot.certifications]
            assert shape(snapshot, views) == shape(full_rebuild(world.cache, namespace))
            taken.append((snapshot, views, shape(snapshot, views)))
        for earlier, views, was in taken:  # a snapshot taken earlier, and the views it gave, hold what they held
            assert shape(earlier, views) == was

    with journals[0], journals[1]:
        for step in [*steps, ("refresh", 0, 0, "", "")]:
            apply(world, step, refresh)


def apply(world: World, step: tuple[str, int, int, str, str], refresh: Callable[[], None]) -> None:
    """One change to the cache (or a refresh, compared)."""
    action, a, b, flag, namespace = step
    cert, workflow = f"cert-{a % 2}", f"cert-{a % 2}-wf-{a // 2}"
    if action == "job":  # job-<b> of another Workflow moves to this one (its label changes)
        world.job(f"job-{b}", None if flag == "unlabelled" else workflow, namespace, flag, damaged=flag == "damaged")
    elif action == "workflow":  # its groups ran job-0 .. job-<b - 1>: another set of Jobs is its
        world.workflow(workflow, cert, namespace, ran=b, damaged=flag == "damaged")
    elif action == "cert":
        world.cert(cert, namespace, damaged=flag == "damaged")
    elif action == "delete-job":
        world.delete(JOB, f"job-{b}", namespace)
    elif action == "delete-workflow":
        world.delete(WORKFLOW, workflow, namespace)
    elif action == "delete-cert":
        world.delete(CERTIFICATION, cert, namespace)
    elif action == "node":
        world.put(NODE, f"node-{b}", "", {}, spec={}, status={"conditions": [{"type": "Ready", "status": "True"}]})
    elif action == "run":
        world.put(WORKLOADRUN, f"job-{b}", namespace, {}, spec={}, status=5 if flag == "damaged" else {})
    else:
        refresh()


def test_a_refresh_after_one_job_changed_reads_that_job_not_every_job() -> None:
    """Every refresh sorted the Jobs, kept them to the namespace and filtered the changed Workflow's again: each Job's
    metadata read at every refresh. Now the refresh takes in the Job that changed."""
    world = World()
    world.cert("cert-0", "default")
    for w in range(2):
        world.workflow(f"cert-0-wf-{w}", "cert-0", "default", ran=200)
        for j in range(200):
            world.job(f"job-{j}", f"cert-0-wf-{w}", "default", "InProgress")
    informer = Informer(world.cache, "default")
    assert sum(len(c.jobs) for c in informer.snapshot().views["cert-0"].categories) == 200  # Job names are per namespace
    world.job("job-7", "cert-0-wf-1", "default", "Succeeded")
    CountedMeta.reads = 0
    snapshot = informer.snapshot()
    snapshot.views  # noqa: B018 (the join's work)
    assert CountedMeta.reads <= 20, CountedMeta.reads  # before: over 600 (each Job read in the sort's filter and the join's)
    jobs = {job["metadata"]["name"]: job for job in snapshot.views["cert-0"].categories[1].jobs}
    assert jobs["job-7"]["status"]["conditions"][0]["type"] == "Succeeded" and len(jobs) == 200
    assert shape(snapshot) == shape(full_rebuild(world.cache, "default"))


def test_a_group_says_which_names_changed_until_its_journal_no_longer_reaches_back() -> None:
    group = LabelGroup()
    for stamp in range(1, 11):
        group._put(f"job-{stamp % 3}", {"stamp": stamp}, stamp)
    assert group.changed_since(8) == {"job-0", "job-1"} and group.changed_since(10) == set()
    assert group.names == ["job-0", "job-1", "job-2"] and group.objects()[0] == {"stamp": 9}
    group._put("job-2", None, 11)
    assert group.changed_since(8) == {"job-0", "job-1", "job-2"} and group.names == ["job-0", "job-1"]
    for stamp in range(12, 12 + LabelGroup.JOURNAL_SLACK + 4):  # past the journal's bound: it starts again
        group._put("job-0", {"stamp": stamp}, stamp)
    assert group.changed_since(8) is None and group.changed_since(group.stamp) == set()
    group._put("job-1", {"stamp": 0}, group.stamp + 1)
    assert group.changed_since(group.stamp - 1) == {"job-1"}


def test_an_informer_adds_no_work_to_each_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its lists heard each change through a subscriber each (five calls on the event loop per change, about 3 µs, under
    thousands of changes a second); the cache now notes the key of each change, and a read takes in those since."""
    world = World()
    subscribed: list[object] = []
    monkeypatch.setattr(WatchCache, "subscribe", lambda self, subscriber: subscribed.append(subscriber))
    informer = Informer(world.cache, "default")
    assert subscribed == []
    world.cert("cert-0", "default")
    world.workflow("cert-0-wf-0", "cert-0", "default", ran=1)
    world.job("job-0", "cert-0-wf-0", "default", "InProgress")
    assert [len(c.jobs) for c in informer.snapshot().views["cert-0"].categories] == [1, 0]


def test_the_cache_says_which_keys_changed_until_it_no_longer_remembers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "CHANGES_KEPT", 4)
    world = World()
    start = world.cache.kind_versions[JOB]
    for phase in ("InProgress", "Succeeded"):
        world.job("job-0", "wf", "default", phase)
    world.job("job-1", "wf", "team-b", "InProgress")
    world.delete(JOB, "job-0", "default")
    assert world.cache.changed_since(JOB, start) == [("default", "job-0"), ("default", "job-0"), ("team-b", "job-1"), ("default", "job-0")]
    assert world.cache.changed_since(JOB, start + 3) == [("default", "job-0")] and world.cache.changed_since(JOB, start + 4) == []
    assert world.cache.changed_since(JOB, start + 5) is None  # not yet
    for _ in range(4):
        world.job("job-1", "wf", "team-b", "Failed")
    assert world.cache.changed_since(JOB, start) is None  # further back than 4 + 2 x 1 Job
    assert world.cache.changed_since(JOB, world.cache.kind_versions[JOB] - 1) == [("team-b", "job-1")]


def test_a_view_read_whole_again_judges_only_the_objects_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view further behind than the cache remembers reads the kind whole again; the objects it had judged keep their
    verdicts (each judged again would be a model validation per Job of the fleet)."""
    monkeypatch.setattr(cache_module, "CHANGES_KEPT", 0)
    world = World()
    for j in range(20):
        world.job(f"job-{j}", "wf", "default", "InProgress", damaged=j == 3)
    judged: list[str] = []

    def refuse(obj: Obj) -> str | None:
        judged.append(obj["metadata"]["name"])
        return "damaged" if obj["status"] == 5 else None

    view = CacheView(world.cache, JOB, "default", group_by=LABEL_WORKFLOW, refuse=refuse)
    assert len(judged) == 20 and len(view.objects()) == 19 and [obj["metadata"]["name"] for obj, _ in view.refused()] == ["job-3"]
    group = view.group("default", "wf")
    judged.clear()
    for _ in range(50):  # more changes than the cache remembers
        world.job("job-7", "wf", "default", "Succeeded")
    assert world.cache.changed_since(JOB, world.cache.kind_versions[JOB] - 50) is None
    assert len(view.objects()) == 19 and view.group("default", "wf") is not group  # read whole: a new group
    assert judged == ["job-7"] and [obj["metadata"]["name"] for obj, _ in view.refused()] == ["job-3"]
