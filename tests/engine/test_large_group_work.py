"""A multi-node group's failure is handled in work that grows with its members, not with their square: a full-scale
Job of 1,024 nodes that missed its threshold blames every member, and each step that went over the blamed list once
per member (archiving, node states, the Workflow's verdict) held the console's event loop for seconds while the engine
ran there (bench/console_engine.py). Counted here on a small fleet, since timings are the bench's business: each such
step now reads a Job's blamed list a fixed number of times whatever the group's size."""

from __future__ import annotations

from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers import workflow
from nvcre_tui.engine.history import record
from nvcre_tui.engine.report import nodestates
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot

Obj = dict[str, Any]
NODES = 16
FULL_SCALE = {
    "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "full", "namespace": "default"},
    "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
             "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "full-scale"}}],
             "options": {"thresholds": {"busBandwidthGBps": "value >= 900"}}}}  # out of reach: the one Job blames all 16


async def finished_full_scale(slice_seconds: float | None = None) -> tuple[SimSession, Obj]:
    """A 16-node full-scale certification run to its end (its engine's TimeSlice set to `slice_seconds`)."""
    scenario = Scenario.model_validate({"name": "large group", "seed": 3, "nodes": [{"count": NODES, "cliques": 2}]})
    session = await SimSession.open(scenario, None, history=None)
    assert session.engine is not None
    session.engine.slice.seconds = slice_seconds
    await session.store.create(CERTIFICATION, FULL_SCALE)

    async def done() -> bool:
        cert = session.cache.get(CERTIFICATION, "full", "default")
        return cert is not None and cond.is_terminal(cert)

    assert await session.engine.run_until_settled(until=done, max_seconds=6 * 3600)
    cert = session.cache.get(CERTIFICATION, "full", "default")
    assert cert is not None
    return session, cert


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[tuple[Any, ...]]:
    """Every call of `module.name` from now on, by its arguments."""
    calls: list[tuple[Any, ...]] = []
    function = getattr(module, name)

    def counted(*args: Any) -> Any:
        calls.append(args)
        return function(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


async def test_a_record_reads_each_jobs_failures_once_not_once_per_member(monkeypatch: pytest.MonkeyPatch) -> None:
    session, cert = await finished_full_scale()
    try:
        workflows = session.cache.labelled(WORKFLOW, LABEL_CERTIFICATION, "full")
        jobs = {wf["metadata"]["name"]: session.cache.owned_by(wf["metadata"]["uid"], JOB) for wf in workflows}
        [[job]] = jobs.values()
        assert len(job["status"]["failedNodes"]) == NODES  # the whole group blamed: the case that was quadratic
        reads: list[str] = []
        job_failures = record.job_failures

        def counted(job: Obj) -> list[Obj]:
            reads.append(job["metadata"]["name"])
            return job_failures(job)

        monkeypatch.setattr(record, "job_failures", counted)
        built = record.build_record(cert, workflows, jobs, session.cache.list(NODE))
        assert len(built.results) == NODES
        assert all(result.state == "suspect" and len(result.jobs[0]["failures"]) == 1 for result in built.results)
        assert len(reads) == 1, f"the Job's failures were read {len(reads)} times for {NODES} members"
    finally:
        await session.close()


async def test_a_workflows_verdict_weighs_a_groups_blame_once_per_reason_not_per_member(monkeypatch: pytest.MonkeyPatch) -> None:
    weighed = counting(monkeypatch, workflow, "blamed_together")
    session, cert = await finished_full_scale()
    try:
        [wf] = session.cache.labelled(WORKFLOW, LABEL_CERTIFICATION, "full")
        assert "(all only with their whole group: no node named)" in str(wf["status"]["conditions"])
        assert 0 < len(weighed) < NODES, f"{len(weighed)} weighings of one group's blame for {NODES} members"
    finally:
        await session.close()


async def test_node_states_weigh_a_jobs_blame_once_per_reason_not_per_member(monkeypatch: pytest.MonkeyPatch) -> None:
    session, cert = await finished_full_scale()
    try:
        workflows = session.cache.labelled(WORKFLOW, LABEL_CERTIFICATION, "full")
        jobs = [job for wf in workflows for job in session.cache.owned_by(wf["metadata"]["uid"], JOB)]
        weighed = counting(monkeypatch, nodestates, "blamed_together")
        states = node_states(Snapshot(nodes=session.cache.list(NODE), certifications=[cert], workflows=workflows, jobs=jobs), "full")
        assert [state for state, _ in states.values()] == ["suspect"] * NODES
        assert len(weighed) == 1, f"{len(weighed)} weighings of one Job's blame for {NODES} members"
    finally:
        await session.close()
