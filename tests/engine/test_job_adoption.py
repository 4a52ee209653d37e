"""A Job made for a group before the Workflow's status said so is adopted, never made twice (an engine stopped in
between, perhaps an older one that named diagnose Jobs `<workflow>-<test>-iter-<n>`)."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.context import Context
from nvcre_tui.engine.controllers.workflow import _launch
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store import JOB, WORKFLOW, MemoryStore
from tests.engine.memory_engine import ScriptedRunner

Obj = dict[str, Any]


async def test_a_job_an_older_engine_made_for_a_pending_group_is_adopted() -> None:
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    workflow = await store.create(WORKFLOW, {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": "w", "namespace": "default"},
        "spec": {"orchestration": {"execution": {}}, "jobTemplate": {"metadata": {}, "spec": {"workload": {"workloadRun": {}}}}}})
    ctx = Context(store=store, clock=clock, catalog=default_catalog(), runner=ScriptedRunner(store, clock, "Succeeded", 0, lambda run: []))  # type: ignore[arg-type]
    def older(group: str, nodes: str) -> Obj:
        return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "spec": {},
                "metadata": {"name": f"w-{group}-iter-1", "labels": {"nvcre.nvidia.com/group": group, "nvcre.nvidia.com/iteration": "1"},
                             "annotations": {"nvcre.nvidia.com/group-nodes": nodes}}}

    made = [await ctx.create_child(JOB, workflow, older("r1-confirm-0", "a,b")), await ctx.create_child(JOB, workflow, older("r1-confirm-1", "c,x"))]
    orch: Obj = {"diagnose": {}, "currentIteration": 1, "groups": [
        {"name": "r1-confirm-0", "nodes": ["a", "b"], "phase": "Pending"}, {"name": "r1-confirm-1", "nodes": ["c", "d"], "phase": "Pending"}]}
    await _launch(ctx, workflow, orch, {job["metadata"]["name"]: job for job in made})
    # adopted where the Job is the group's (its nodes); one on other nodes is not this group's run: the new one, by test
    assert [g["jobRef"] for g in orch["groups"]] == ["w-r1-confirm-0-iter-1", "w-r1-confirm-1"]
    assert sorted(j["metadata"]["name"] for j in (await store.list(JOB, "default")).items) == [
        "w-r1-confirm-0-iter-1", "w-r1-confirm-1", "w-r1-confirm-1-iter-1"]


async def test_an_earlier_iterations_job_relabelled_is_not_adopted_for_the_next() -> None:
    """Jobs were matched to groups by their group and iteration labels (metadata anyone may edit): iteration 1's Job of
    group g, its iteration label edited to 2, stood for iteration 2's group g, which never ran. A Job is adopted by its
    name among the Workflow's own now; iteration 2 gets its own Job."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    workflow = await store.create(WORKFLOW, {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": "w", "namespace": "default"},
        "spec": {"orchestration": {"execution": {}, "iterations": 2}, "jobTemplate": {"metadata": {}, "spec": {"workload": {"workloadRun": {}}}}}})
    ctx = Context(store=store, clock=clock, catalog=default_catalog(), runner=ScriptedRunner(store, clock, "Succeeded", 0, lambda run: []))  # type: ignore[arg-type]
    relabelled = await ctx.create_child(JOB, workflow, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "spec": {}, "metadata": {
        "name": "w-g-iter-1", "labels": {"nvcre.nvidia.com/group": "g", "nvcre.nvidia.com/iteration": "2"},
        "annotations": {"nvcre.nvidia.com/group-nodes": "a,b"}}})
    orch: Obj = {"currentIteration": 2, "totalGroups": 1, "groups": [{"name": "g", "nodes": ["a", "b"], "phase": "Pending"}]}
    await _launch(ctx, workflow, orch, {"w-g-iter-1": relabelled})
    assert [g["jobRef"] for g in orch["groups"]] == ["w-g-iter-2"]
    assert sorted(j["metadata"]["name"] for j in (await store.list(JOB, "default")).items) == ["w-g-iter-1", "w-g-iter-2"]
