"""The console's join over the watch cache answers exactly what the join of plain lists answers, and rebuilds a
certification's view only when one of its own objects changed; a namesake in another namespace, with Workflows and
Jobs of the same names, is another certification to both."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_WORKFLOW
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import INDEXED_LABELS
from nvcre_tui.engine.report import readmodel
from nvcre_tui.engine.report.readmodel import CertificationView, Joined
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.cacheview import CacheView
from nvcre_tui.engine.store.cache import WatchCache
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW
from nvcre_tui.engine.views.join import CachedJoin

Obj = dict[str, Any]
CERTS = ("cert-a", "cert-b")
NAMESPACES = ("default", "team-b")


class World:
    """A watch cache fed by hand (the write-through path), with a resourceVersion counter."""

    def __init__(self) -> None:
        self.cache = WatchCache(MemoryStore(ManualClock(SIM_START)), (CERTIFICATION, WORKFLOW, JOB), label_keys=INDEXED_LABELS)
        self.rv = 0

    def put(self, kind: Any, name: str, labels: dict[str, str], namespace: str = "default", owner: Any = None, **body: Any) -> Obj:
        """`owner`: the kind whose object (of the name the label gives) controls it, as the engine makes them."""
        self.rv += 1
        meta: Obj = {"name": name, "namespace": namespace, "labels": labels, "resourceVersion": str(self.rv), "uid": uid(kind, namespace, name)}
        if owner is not None:
            parent = next(iter(labels.values()))
            meta["ownerReferences"] = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": owner.kind, "name": parent, "uid": uid(owner, namespace, parent), "controller": True}]
        obj = {"metadata": meta, **body}
        self.cache.observe(kind, obj)
        return obj

    def cert(self, name: str, workflows: list[str], namespace: str = "default") -> Obj:
        statuses = [{"domain": "d", "variant": wf, "status": "InProgress", "workflowRef": {"name": wf}} for wf in workflows]
        return self.put(CERTIFICATION, name, {}, namespace, spec={"categories": [{"domain": "d", "variant": wf} for wf in workflows]},
                        status={"categoryStatuses": statuses})

    def workflow(self, name: str, cert: str, phase: str = "Running", ran: int = 6, namespace: str = "default") -> Obj:
        """A Workflow whose groups ran Jobs <name>-job-0 to -<ran - 1> (a Job no group ran is not its)."""
        groups = [{"name": f"g{i}", "nodes": [], "phase": phase, "jobRef": f"{name}-job-{i}"} for i in range(ran)]
        return self.put(WORKFLOW, name, {LABEL_CERTIFICATION: cert}, namespace, CERTIFICATION, status={"phase": phase, "orchestration": {"groups": groups}})

    def job(self, name: str, workflow: str, phase: str = "Running", namespace: str = "default") -> Obj:
        return self.put(JOB, name, {LABEL_WORKFLOW: workflow}, namespace, WORKFLOW, status={"phase": phase})


def uid(kind: Any, namespace: str, name: str) -> str:
    return f"{kind.kind}:{namespace}/{name}"  # one per name: an object made again under its name is the same to these tests


def as_data(view: CertificationView) -> list[tuple[Any, ...]]:
    return [(c.status, c.workflow, c.jobs) for c in view.categories]


def from_lists(world: World, cert: Obj) -> CertificationView:
    return Joined(world.cache.list(WORKFLOW), world.cache.list(JOB)).view(cert)


def test_a_view_is_kept_until_one_of_its_own_objects_changes() -> None:
    world = World()
    a = world.cert("cert-a", ["wf-a"])
    b = world.cert("cert-b", ["wf-b"])
    world.workflow("wf-a", "cert-a")
    world.workflow("wf-b", "cert-b")
    world.job("wf-a-job-1", "wf-a")
    world.job("wf-b-job-1", "wf-b")
    join = CachedJoin(world.cache)
    first = join.view(a)
    assert join.view(a) is first
    assert as_data(first) == as_data(from_lists(world, a))
    world.job("wf-b-job-1", "wf-b", phase="Succeeded")  # another certification's Job
    assert join.view(a) is first
    changed = world.job("wf-a-job-1", "wf-a", phase="Failed")
    again = join.view(a)
    assert again is not first and again.categories[0].jobs == [changed]
    world.job("wf-a-job-2", "wf-a")  # a new Job of the same Workflow
    assert [j["metadata"]["name"] for j in join.view(a).categories[0].jobs] == ["wf-a-job-1", "wf-a-job-2"]
    world.cache.forget(JOB, {"metadata": {"name": "wf-a-job-1", "namespace": "default"}})
    assert [j["metadata"]["name"] for j in join.view(a).categories[0].jobs] == ["wf-a-job-2"]
    world.job("wf-a-stray", "wf-a")  # another run's, left behind with the Workflow's label
    assert [j["metadata"]["name"] for j in join.view(a).categories[0].jobs] == ["wf-a-job-2"]
    world.workflow("wf-a", "cert-a", ran=2)  # its groups' jobRefs changed: job-2 is no longer one it ran
    assert join.view(a).categories[0].jobs == []
    assert as_data(join.view(b)) == as_data(from_lists(world, b))


def test_a_kept_view_works_its_held_nodes_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall asks for a certification's held nodes at every refresh; the view the join keeps works them out (every
    group of every Workflow decoded) once, and a Workflow that changed makes a new view that works them out again."""
    decoded: list[str] = []
    nodes_by_group = readmodel.nodes_by_group

    def counted(workflow: Obj) -> Any:
        decoded.append(workflow["metadata"]["name"])
        return nodes_by_group(workflow)

    monkeypatch.setattr(readmodel, "nodes_by_group", counted)
    world = World()
    cert = world.cert("cert-a", ["wf-a"])

    def workflow(*nodes: str) -> None:
        groups = [{"name": f"g{i}", "nodes": [node], "phase": "Running", "jobRef": f"wf-a-job-{i}"} for i, node in enumerate(nodes)]
        world.put(WORKFLOW, "wf-a", {LABEL_CERTIFICATION: "cert-a"}, owner=CERTIFICATION, status={"phase": "Running", "orchestration": {"groups": groups}})

    workflow("n1", "n2")
    join = CachedJoin(world.cache)
    held = join.view(cert).held_nodes()
    assert held == {"n1", "n2"}
    held.add("n9")  # the caller's own set
    assert join.view(cert).held_nodes() == {"n1", "n2"}
    assert decoded == ["wf-a"], decoded
    workflow("n1", "n2", "n3")
    assert join.view(cert).held_nodes() == {"n1", "n2", "n3"}
    assert decoded == ["wf-a", "wf-a"], decoded


def test_a_join_refuses_lists_grouped_otherwise() -> None:
    cache = WatchCache(MemoryStore(ManualClock(SIM_START)), (WORKFLOW, JOB))
    with pytest.raises(ValueError, match="grouped by controller"):
        CachedJoin(cache, CacheView(cache, WORKFLOW), CacheView(cache, JOB, group_by=LABEL_WORKFLOW))


STEPS = st.lists(st.tuples(st.sampled_from(["workflow", "job", "delete-job", "delete-workflow", "cert"]), st.integers(0, 3),
                           st.integers(0, 5), st.sampled_from(["Running", "Succeeded", "Failed"]), st.sampled_from(NAMESPACES)),
                 max_size=40)


@settings(max_examples=60, deadline=None)
@given(STEPS)
def test_the_cache_join_equals_the_list_join_after_any_changes(steps: list[tuple[str, int, int, str, str]]) -> None:
    world = World()
    certs = {(namespace, name): world.cert(name, [f"{name}-wf-{i}" for i in range(4)], namespace) for name in CERTS for namespace in NAMESPACES}
    join = CachedJoin(world.cache)
    for action, wf_index, job_index, phase, namespace in steps:
        cert = CERTS[wf_index % 2]
        workflow = f"{cert}-wf-{wf_index}"
        if action == "workflow":  # its groups ran a new set of Jobs: the cached names must follow
            world.workflow(workflow, cert, phase, ran=job_index, namespace=namespace)
        elif action == "job":
            world.job(f"{workflow}-job-{job_index}", workflow, phase, namespace)
        elif action == "delete-job":
            world.cache.forget(JOB, {"metadata": {"name": f"{workflow}-job-{job_index}", "namespace": namespace}})
        elif action == "delete-workflow":
            world.cache.forget(WORKFLOW, {"metadata": {"name": workflow, "namespace": namespace}})
        else:
            certs[(namespace, cert)] = world.cert(cert, [f"{cert}-wf-{i}" for i in range(4)], namespace)
        for (at, _), cert_obj in certs.items():
            view = join.view(cert_obj)
            assert as_data(view) == as_data(from_lists(world, cert_obj))
            joined = [c.workflow for c in view.categories if c.workflow is not None] + [j for c in view.categories for j in c.jobs]
            assert {obj["metadata"]["namespace"] for obj in joined} <= {at}  # never the namesake's
