"""The incremental node-state model agrees with the full walk on every snapshot of a random history of changes
(objects replaced as the watch cache replaces them, Jobs and categories added, nodes cordoned)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES, LABEL_CERTIFICATION, LABEL_WORKFLOW
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import NodeStateModels, Snapshot

Obj = dict[str, Any]
NODES = [f"node-{i:02d}" for i in range(24)]
REASONS = ("ThresholdViolation", "HardwareFailureDetected", "Timeout")


def _node(name: str, cordoned: bool = False) -> Obj:
    return {"metadata": {"name": name}, "spec": {"unschedulable": True} if cordoned else {}}


def _owner(kind: str, name: str) -> list[Obj]:
    """The controller ownerReference the engine gives its children (the read model joins by it)."""
    return [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}]


def _cert(name: str, workflows: list[str]) -> Obj:
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": {"categories": [{"domain": "d", "variant": w} for w in workflows]},
            "status": {"categoryStatuses": [{"domain": "d", "variant": w, "status": "InProgress", "workflowRef": {"name": w}} for w in workflows]}}


GROUP_REASONS = ("ThresholdViolated", "WorkloadFailed", "SchedulingBlocked", "JobDeleted", "MeasurementUnavailable", None)


def _conditions(rng: random.Random, pending: bool = False) -> list[Obj]:
    """A Workflow's or a Job's conditions: in progress (waiting for pods when `pending`), or finished either way."""
    if pending:
        return [{"type": "InProgress", "status": "True", "reason": "WorkloadPending", "message": f"no pods yet ({rng.randrange(9)})"}]
    kind = rng.choice(["InProgress", "Succeeded", "Failed"])
    return [{"type": kind, "status": "True", "reason": rng.choice(GROUP_REASONS) or "Done", "message": ""}]


def _workflow(rng: random.Random, cert: str, name: str, groups: list[list[str]]) -> Obj:
    orch: Obj = {"groups": [{"name": f"g{i}", "nodes": g, "phase": rng.choice(["Running", "Succeeded", "Failed", None]), "jobRef": f"{name}-job-{i:02d}",
                             "reason": rng.choice(GROUP_REASONS), **({"blamedFor": rng.choice(REASONS), "blamedMembers": [0]} if rng.random() < 0.3 else {})}
                            for i, g in enumerate(groups)]}
    if rng.random() < 0.3:
        orch["excludedNodes"] = [{"name": n, "reason": "Excluded", "message": rng.choice(["", "hand-picked"])} for n in rng.sample(NODES, 2)]
    if rng.random() < 0.3:
        orch["diagnose"] = {"round": rng.randrange(4), "suspectNodes": rng.sample(NODES, 2), "inconclusiveNodes": rng.sample(NODES, 1),
                            "intermittentNodes": rng.sample(NODES, 1), "healthyNodes": rng.sample(NODES, 3), "complete": rng.random() < 0.3}
    if rng.random() < 0.3:
        orch["iterationHistory"] = [{"iteration": 1, "groups": [{"name": f"g{i}", "nodes": g, "phase": rng.choice(["Succeeded", "Failed"]),
                                                                 "reason": rng.choice(GROUP_REASONS)} for i, g in enumerate(groups[:2])]}]
    failed = [{"name": n, "reason": rng.choice(REASONS), "message": "wf"} for n in rng.sample(NODES, rng.randrange(3))]
    return {"metadata": {"name": name, "uid": f"uid-{name}", "labels": {LABEL_CERTIFICATION: cert}, "ownerReferences": _owner("Certification", cert)},
            "status": {"orchestration": orch, "failedNodes": failed, "conditions": _conditions(rng)}}


def _job(rng: random.Random, workflow: str, index: int, members: list[str]) -> Obj:
    blamed = rng.sample(members, rng.randrange(len(members) + 1)) if rng.random() < 0.6 else []
    return {"metadata": {"name": f"{workflow}-job-{index:02d}", "labels": {LABEL_WORKFLOW: workflow}, "ownerReferences": _owner("Workflow", workflow),
                         "annotations": {ANNOTATION_GROUP_NODES: ",".join(members)}},
            "status": {"failedNodes": [{"name": n, "reason": rng.choice(REASONS), "message": f"m{rng.randrange(9)}"} for n in blamed] or None,
                       "conditions": _conditions(rng, pending=not blamed and rng.random() < 0.3)}}


class Fleet:
    """A cache-like set of objects: a change replaces one object by a new dict, the rest stay the same."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes = [_node(n) for n in NODES]
        self.groups: dict[str, list[list[str]]] = {}
        self.certs = [_cert("cert-a", ["wf-a1", "wf-a2"]), _cert("cert-b", ["wf-b1"])]
        self.workflows: list[Obj] = []
        self.jobs: list[Obj] = []
        for cert in self.certs:
            for entry in cert["status"]["categoryStatuses"]:
                self.add_workflow(cert["metadata"]["name"], entry["workflowRef"]["name"])

    def add_workflow(self, cert: str, name: str) -> None:
        shuffled = self.rng.sample(NODES, len(NODES))
        groups = [shuffled[i:i + self.rng.choice([1, 2, 4])] for i in range(0, 12, 4)]
        self.groups[name] = groups
        self.workflows.append(_workflow(self.rng, cert, name, groups))
        self.jobs += [_job(self.rng, name, i, g) for i, g in enumerate(groups)]

    def change(self) -> None:
        rng, roll = self.rng, self.rng.random()
        if roll < 0.6:
            i = rng.randrange(len(self.jobs))
            job = self.jobs[i]
            workflow = job["metadata"]["labels"][LABEL_WORKFLOW]
            self.jobs[i] = _job(rng, workflow, int(job["metadata"]["name"].rsplit("-", 1)[1]), job["metadata"]["annotations"][ANNOTATION_GROUP_NODES].split(","))
        elif roll < 0.75:
            i = rng.randrange(len(self.workflows))
            wf = self.workflows[i]
            self.workflows[i] = _workflow(rng, wf["metadata"]["labels"][LABEL_CERTIFICATION], wf["metadata"]["name"], self.groups[wf["metadata"]["name"]])
        elif roll < 0.9:
            i = rng.randrange(len(self.nodes))
            self.nodes[i] = _node(NODES[i], cordoned=rng.random() < 0.5)
        elif roll < 0.95:  # a new Job in a Workflow (the layout changes)
            wf = rng.choice(self.workflows)["metadata"]["name"]
            count = sum(1 for j in self.jobs if j["metadata"]["labels"][LABEL_WORKFLOW] == wf)
            self.jobs.append(_job(rng, wf, count, rng.sample(NODES, 2)))
        else:  # a new category
            name = f"wf-a{len(self.certs[0]['status']['categoryStatuses']) + 1}"
            self.certs[0] = _cert("cert-a", [e["workflowRef"]["name"] for e in self.certs[0]["status"]["categoryStatuses"]] + [name])
            self.add_workflow("cert-a", name)

    def snapshot(self, models: NodeStateModels | None) -> Snapshot:
        return Snapshot(list(self.nodes), list(self.certs), list(self.workflows), list(self.jobs), models=models)


@pytest.mark.parametrize("seed", range(6))
def test_incremental_node_states_equal_the_full_walk(seed: int) -> None:
    fleet, models = Fleet(random.Random(seed)), NodeStateModels()
    first = fleet.snapshot(None)  # the groups name their Jobs (jobRef): job marks are compared too, not only the Workflows'
    assert sum(len(c.jobs) for view in first.views.values() for c in view.categories) >= 9
    seen_states: set[str] = set()
    for step in range(120):
        for _ in range(fleet.rng.randrange(1, 6)):
            fleet.change()
        for cert in (None, "cert-a", "cert-b"):
            full = node_states(fleet.snapshot(None), cert)
            kept = node_states(fleet.snapshot(models), cert)
            assert kept == full, (seed, step, cert, {n: (kept[n], full[n]) for n in full if kept.get(n) != full[n]})
            assert list(kept) == NODES
            seen_states |= {state for state, _ in full.values()}
    assert seen_states >= {"failed", "suspect", "inconclusive", "waiting", "running", "untested", "passed", "excluded"}  # every state


def _grow(fleet: Fleet) -> str:
    """A Workflow whose groups got one more, with its Job (as a batch of Jobs starts): its category's Jobs change, so
    the model lays its sources out again."""
    rng = fleet.rng
    i = rng.randrange(len(fleet.workflows))
    wf = fleet.workflows[i]
    name = wf["metadata"]["name"]
    members = rng.sample(NODES, rng.choice([1, 2]))
    fleet.groups[name].append(members)
    index = len(fleet.groups[name]) - 1
    grown = copy.deepcopy(wf)  # a new object, the same otherwise (whether it diagnoses too)
    grown["status"]["orchestration"]["groups"].append({"name": f"g{index}", "nodes": members, "phase": "Running", "jobRef": f"{name}-job-{index:02d}"})
    fleet.workflows[i] = grown
    job = _job(rng, name, index, members)  # in place of a Job of that name no group ran (Fleet.change makes some)
    fleet.jobs = [j for j in fleet.jobs if j["metadata"]["name"] != job["metadata"]["name"]] + [job]
    return name


@pytest.mark.parametrize("seed", range(4))
def test_a_rebuild_works_out_only_the_marks_of_objects_that_changed(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """When a category's Jobs come or go the model lays every source out again: it takes the marks of every object
    that is the same one (a Workflow's with its category's Jobs the same), and works a changed Workflow's marks out
    once for before and after its Jobs. It worked out every category's and every Job's again: at 10,000 nodes, as
    each batch of Jobs started."""
    from nvcre_tui.engine.report import nodestates

    asked: list[str] = []
    workflow_marks, job_marks = nodestates.workflow_marks, nodestates.job_marks

    def counted_workflow(category: Any) -> Any:
        asked.append(category.workflow["metadata"]["name"])
        return workflow_marks(category)

    def counted_job(job: Obj, judging: str) -> Any:
        asked.append(job["metadata"]["name"])
        return job_marks(job, judging)

    fleet, models = Fleet(random.Random(seed)), NodeStateModels()
    node_states(fleet.snapshot(models))
    for step in range(40):
        grown = _grow(fleet) if step % 2 == 0 else None
        if grown is None:
            for _ in range(fleet.rng.randrange(1, 4)):
                fleet.change()
        full = node_states(fleet.snapshot(None))
        monkeypatch.setattr(nodestates, "workflow_marks", counted_workflow)
        monkeypatch.setattr(nodestates, "job_marks", counted_job)
        asked.clear()
        kept = node_states(fleet.snapshot(models))
        monkeypatch.setattr(nodestates, "workflow_marks", workflow_marks)
        monkeypatch.setattr(nodestates, "job_marks", job_marks)
        assert kept == full, (seed, step, {n: (kept[n], full[n]) for n in full if kept.get(n) != full[n]})
        if grown is not None:
            assert sorted(asked) == sorted([grown, f"{grown}-job-{len(fleet.groups[grown]) - 1:02d}"]), (step, asked)


def test_a_cordoned_node_nothing_marks_is_excluded_and_a_marked_one_keeps_its_state() -> None:
    fleet = Fleet(random.Random(1))
    models = NodeStateModels()
    marked = {n for j in fleet.jobs for n in j["metadata"]["annotations"][ANNOTATION_GROUP_NODES].split(",")}
    free = next(n for n in NODES if n not in marked and n not in str(fleet.workflows))
    node_states(fleet.snapshot(models))
    fleet.nodes[NODES.index(free)] = _node(free, cordoned=True)
    assert node_states(fleet.snapshot(models))[free] == ("excluded", "cordoned")
    fleet.nodes[NODES.index(free)] = _node(free)
    assert node_states(fleet.snapshot(models))[free] == ("untested", "")


def test_a_blame_convicts_a_node_alone_or_makes_its_whole_group_suspect() -> None:
    """The one rule the map, the drill-down, the failures pane and the node screen share."""
    from nvcre_tui.engine.report.nodestates import blamed_state

    four = ["a", "b", "c", "d"]
    together = [{"name": n, "reason": "ThresholdViolation"} for n in four]
    assert blamed_state(four, together, "ThresholdViolation") == "suspect"
    assert blamed_state(four, together[:1], "WorkloadFailed") == "failed"  # named alone by the output
    assert blamed_state(four, [{**f, "reason": "HardwareFailureDetected"} for f in together], "HardwareFailureDetected") == "failed"
    assert blamed_state(["a"], together[:1], "ThresholdViolation") == "failed"


def test_the_members_of_a_group_that_never_ran_are_untested_not_inconclusive() -> None:
    """A group whose workload never ran (an image that cannot be pulled, pods nobody made) tested none of its nodes,
    as the report counts them (report.model._ran); a group that ran and blamed nobody proved nothing of them."""
    from nvcre_tui.engine.report import nodestates

    def job(reason: str) -> dict[str, Any]:
        return {"metadata": {"name": "j-0", "annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-01,gpu-node-02"}},
                "status": {"conditions": [{"type": "Failed", "status": "True", "reason": reason, "message": "no node blamed",
                                           "lastTransitionTime": "2026-12-04T00:00:00Z"}]}}

    for reason, state in (("ImagePullFailed", "untested"), ("WorkloadNotStarted", "untested"), ("WorkloadNotCreated", "untested"),
                          ("RunIncomplete", "inconclusive"), ("MeasurementUnavailable", "inconclusive")):
        marks = nodestates.job_marks(job(reason), judging=nodestates.AS_SAID)
        assert {found[0][0] for found in marks.values()} == {state}, (reason, marks)
        assert all(reason in found[0][1] for found in marks.values())
        outcome = nodestates.job_outcome(job(reason))
        assert nodestates.member_state(["gpu-node-01", "gpu-node-02"], [], "gpu-node-01", outcome, reason) == state


def test_a_running_jobs_member_is_running_whether_or_not_its_category_diagnoses() -> None:
    """A Job's phase while it runs is InProgress: the node screen's row for it said `untested` in a diagnosing category
    while the header said running (a review found it)."""
    from nvcre_tui.engine.report import nodestates

    members = ["gpu-node-01", "gpu-node-02"]
    for diagnosing in (False, True):
        assert nodestates.member_state(members, [], "gpu-node-01", "InProgress", diagnosing=diagnosing) == "running"
        assert nodestates.member_state(members, [], "gpu-node-01", "Running", diagnosing=diagnosing) == "running"
