"""The engine under bad objects and outside interference: it fails what it cannot handle, with a reason,
and keeps running everything else. Also the simulator state file's protections."""

from __future__ import annotations

import copy
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.controllers.iterations import blamed_nodes
from nvcre_tui.engine.judging.results import read_failed_nodes
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, JOB, NODE, WORKFLOW
from nvcre_tui.engine.views.certifications import certification_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot

Obj = dict[str, Any]
SMALL = Scenario.model_validate({"name": "small", "seed": 3, "nodes": [{"count": 4, "cliques": 1}],
                                 "faults": [{"type": "xid", "node": "gpu-node-02", "at": "2m"}]})
FULL_SCALE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: NAME}
spec:
  target: {}
  categories: [{domain: communication, variant: nccl-all-reduce}]
"""


def body(text: str, name: str) -> Obj:
    cert = certification_from_text("t", text.replace("NAME", name), default_catalog()).to_wire()
    cert["metadata"]["namespace"] = "default"
    return cert


async def test_a_broken_workflow_is_failed_with_its_error_and_others_go_on() -> None:
    session = await SimSession.open(SMALL, None)
    await session.store.create(CERTIFICATION, body(FULL_SCALE, "good"))
    await session.store.create(WORKFLOW, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                          "metadata": {"name": "broken", "namespace": "default"},
                                          "spec": {"jobTemplate": {"spec": {}}, "orchestration": {}}})
    assert session.engine is not None
    await session.engine.run_until_settled()
    broken = await session.store.get(WORKFLOW, "broken", "default")
    assert cond.phase(broken) == "Failed"
    failed = cond.find(broken["status"]["conditions"], "Failed")
    assert failed is not None and failed["reason"] == "ReconcileError"
    assert cond.is_terminal(await session.store.get(CERTIFICATION, "good", "default"))


async def test_a_deleted_running_job_fails_its_group_and_blames_no_node() -> None:
    session = await SimSession.open(default_scenario(), None)
    await session.store.create(CERTIFICATION, body(FULL_SCALE, "victim"))
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=60)
    [job] = (await session.store.list(JOB, "default")).items
    await session.store.delete(JOB, job["metadata"]["name"], "default")
    await session.engine.run_until_settled()
    wf = (await session.store.list(WORKFLOW, "default")).items[0]
    assert cond.phase(wf) == "Failed"
    group = wf["status"]["orchestration"]["iterationHistory"][0]["groups"][0]
    assert group["reason"] == "JobDeleted" and "no node blamed" in group["message"]
    # deleting a Job is someone's act: its nodes did nothing wrong
    assert not blamed_nodes(wf, (await session.store.list(JOB, "default")).items)
    cert = await session.store.get(CERTIFICATION, "victim", "default")
    assert cert["status"]["summary"]["result"] == "FAILED" and cert["status"]["summary"]["failedNodes"] == 0


async def test_specs_the_cli_would_refuse_fail_in_the_engine_too() -> None:
    session = await SimSession.open(default_scenario(), None)
    unmeasured = body(FULL_SCALE, "unmeasured")
    unmeasured["spec"]["categories"][0]["options"] = {"thresholds": {"goodputRatio": "value >= 0.9"}}
    no_categories = body(FULL_SCALE, "empty")
    del no_categories["spec"]["categories"]
    for cert in (unmeasured, no_categories):
        await session.store.create(CERTIFICATION, cert)
    assert session.engine is not None
    await session.engine.run_until_settled()
    for name, words in (("unmeasured", "does not measure goodputRatio"), ("empty", "spec.categories: required field is missing")):
        cert = await session.store.get(CERTIFICATION, name, "default")
        failed = cond.find(cert["status"]["conditions"], "Failed")
        assert failed is not None and failed["status"] == "True" and failed["reason"] == "InvalidSpec" and words in failed["message"]
    snapshot = await Snapshot.read(session.store)
    rows = certification_rows(snapshot, datetime(2026, 1, 2).astimezone())
    assert {r.name for r in rows} == {"unmeasured", "empty"}
    assert build_report(no_categories | {"status": cert["status"]}, [], [])["categories"] == []


async def crashed_by_xid() -> SimSession:
    """SMALL's full-scale run "xid", finished: gpu-node-02's Xid crashed it, its peers exited as victims."""
    session = await SimSession.open(SMALL, None)
    await session.store.create(CERTIFICATION, body(FULL_SCALE, "xid"))
    assert session.engine is not None
    await session.engine.run_until_settled()
    return session


def assert_only_the_xid_node_failed(states: dict[str, tuple[str, str]]) -> None:
    assert states["gpu-node-02"][0] == "failed"
    assert {states[n][0] for n in ("gpu-node-01", "gpu-node-03", "gpu-node-04")} == {"inconclusive"}


async def test_map_blames_the_xid_node_alone_and_not_its_group_mates() -> None:
    session = await crashed_by_xid()
    states = node_states(await Snapshot.read(session.store), "xid")
    assert_only_the_xid_node_failed(states)


async def test_a_job_deleted_after_it_failed_takes_no_blame_with_it() -> None:
    session = await crashed_by_xid()
    [job] = (await session.store.list(JOB, "default")).items
    await session.store.delete(JOB, job["metadata"]["name"], "default")
    snapshot = await Snapshot.read(session.store)
    assert not snapshot.jobs
    [wf] = snapshot.workflows
    assert [(f["name"], f["reason"]) for f in blamed_nodes(wf, [])] == [("gpu-node-02", "WorkloadFailed")]
    report = build_report(snapshot.certifications[0], snapshot.workflows, [])
    assert report["failedNodes"] == ["gpu-node-02"]
    states = node_states(snapshot, "xid")
    assert_only_the_xid_node_failed(states)


async def test_a_job_no_group_ran_marks_no_node_and_blames_none() -> None:
    """Another run's Job left behind with the Workflow's label (a cluster without a garbage collector)."""
    session = await crashed_by_xid()
    snapshot = await Snapshot.read(session.store)
    [job] = snapshot.jobs
    stray = copy.deepcopy(job)
    stray["metadata"]["name"] = job["metadata"]["name"] + "-old"
    stray["status"]["failedNodes"] = [{"name": "gpu-node-01", "reason": "WorkloadFailed", "message": "another run"}]
    mixed = Snapshot(snapshot.nodes, snapshot.certifications, snapshot.workflows, [*snapshot.jobs, stray], snapshot.runs)
    assert node_states(mixed, "xid") == node_states(snapshot, "xid")
    assert build_report(mixed.certifications[0], mixed.workflows, mixed.jobs)["failedNodes"] == ["gpu-node-02"]


async def test_a_job_deleted_mid_run_after_it_failed_keeps_its_blame_in_the_failed_nodes_configmap() -> None:
    session = await SimSession.open(SMALL, None)
    twice = FULL_SCALE.replace("variant: nccl-all-reduce}", "variant: nccl-all-reduce, options: {repeatCount: 2}}")
    await session.store.create(CERTIFICATION, body(twice, "twice"))

    async def second_iteration() -> bool:
        return any(j["metadata"]["name"].endswith("-iter-2") for j in (await session.store.list(JOB, "default")).items)

    assert session.engine is not None
    assert await session.engine.run_until_settled(until=second_iteration)
    first = next(j for j in (await session.store.list(JOB, "default")).items if j["metadata"]["name"].endswith("-iter-1"))
    await session.store.delete(JOB, first["metadata"]["name"], "default")
    await session.engine.run_until_settled()
    [wf] = (await session.store.list(WORKFLOW, "default")).items
    configmap = await session.store.get(CONFIGMAP, wf["status"]["failedNodesRef"]["name"], "default")
    [entry] = read_failed_nodes(configmap)
    # the first iteration's blame comes first; its Job's message went with the Job, its record stayed
    assert entry["name"] == "gpu-node-02" and f"{first['metadata']['name']}, deleted since" in entry["message"]


async def test_state_file_of_another_scenario_is_refused_not_replaced(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    session = await SimSession.open(default_scenario(), state)
    await session.close()
    with pytest.raises(InputError, match="holds the simulated fleet of scenario"):
        await SimSession.open(SMALL, state)
    reopened = await SimSession.open(default_scenario(), state)  # still the default scenario's fleet
    assert len((await reopened.store.list(NODE)).items) == 32
    await reopened.close()
    # The same name with other faults: said so, not "scenario X, not X".
    changed = default_scenario().model_copy(update={"seed": default_scenario().seed + 1})
    with pytest.raises(InputError, match=r"holds another simulated fleet under the same scenario name 'default: 32 x H100.*' \(its nodes, faults or settings differ\)"):
        await SimSession.open(changed, state)


async def test_two_sessions_on_one_store_never_drop_each_other_s_certifications(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    await (await SimSession.open(default_scenario(), state)).close()
    first = await SimSession.open(default_scenario(), state)
    second = await SimSession.open(default_scenario(), state)
    assert first.engine is not None and second.engine is None  # one engine per store: the second is a viewer
    assert second.viewer_reason is not None and "engine held by engine@" in second.viewer_reason
    await second.store.create(CERTIFICATION, body(FULL_SCALE, "from-second"))
    await first.store.create(CERTIFICATION, body(FULL_SCALE, "from-first"))
    await second.close()
    await first.close()
    reopened = await SimSession.open(default_scenario(), state)
    assert [c["metadata"]["name"] for c in (await reopened.store.list(CERTIFICATION)).items] == ["from-first", "from-second"]
    await reopened.close()

