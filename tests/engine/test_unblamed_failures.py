"""A run that tested no node blames none: a workload the API server refused (WorkloadNotCreated), an engine
error on the run (ReconcileError), a run that exited 0 with nothing to measure (NoDataCollected). A group node gone from the cluster is blamed alone (NodeNotFound). Inside a
diagnosis such a group is no evidence: the diagnosis stops with what it knows, and onFailure does not start."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.resources import Job, Workflow
from nvcre_tui.engine.clock import format_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.controllers.iterations import blamed_nodes
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.errors import Conflict
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario, load_scenario
from nvcre_tui.engine.store import CERTIFICATION, EVENT, JOB, NODE, WORKFLOW, WORKLOADRUN

Obj = dict[str, Any]
REFUSED = "ConfigMap \"x\" is invalid: data[conf/train.sh]: Invalid value: a valid config key must consist of ..."
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: c, namespace: default}
spec:
  target: {nodeNames: [NODES]}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: OPTIONS
"""


class RefusingRunner:
    """The simulator's runner, but runs `refuse` picks fail at once as the Kubernetes runner fails them."""

    def __init__(self, inner: Any, refuse: Callable[[Obj], Obj | None]) -> None:
        self.inner, self.refuse = inner, refuse
        self.simulated = inner.simulated

    async def reconcile_run(self, run: Obj) -> float | None:
        status = run.get("status") or {}
        failure = None if status.get("phase") in ("Succeeded", "Failed") else self.refuse(run)
        if failure is None:
            return await self.inner.reconcile_run(run)
        meta = run["metadata"]
        await self.inner.store.patch_status(WORKLOADRUN, meta["name"], meta.get("namespace"),
                                            {"phase": "Failed", "completionTime": format_time(self.inner.clock.now()),
                                             **failure})
        return None

    def __getattr__(self, name: str) -> Any:  # logs, stop, tick: the simulator's
        return getattr(self.inner, name)


async def certify(nodes: list[str], options: str, refuse: Callable[[Obj], Obj | None]) -> tuple[Obj, list[Obj], SimSession]:
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    runner = RefusingRunner(session.runner, refuse)
    engine = Engine(session.engine.store, session.clock, default_catalog(), runner, cache=session.cache)
    cert = certification_from_text("c", CERT.replace("NODES", ", ".join(nodes)).replace("OPTIONS", options), default_catalog()).to_wire()
    cert.pop("status", None)
    await session.store.create(CERTIFICATION, cert)
    await engine.run_until_settled(max_seconds=6 * 3600)
    [wf] = (await session.store.list(WORKFLOW, "default")).items
    jobs = (await session.store.list(JOB, "default")).items
    Workflow.model_validate(wf)  # what an API server with our CRDs would take (their schema comes from these models)
    for job in jobs:
        Job.model_validate(job)
    return wf, jobs, session


def _job_of(run: Obj) -> str:
    return str(run["metadata"]["ownerReferences"][0]["name"])


async def test_a_workload_the_server_refused_blames_no_node() -> None:
    wf, jobs, session = await certify(["gpu-node-01", "gpu-node-02"], "{}",
                                      lambda run: {"reason": "WorkloadNotCreated", "message": REFUSED})
    try:
        [job] = jobs
        failed = cond.find(job["status"]["conditions"], "Failed")
        assert failed is not None and failed["reason"] == "WorkloadNotCreated"
        assert REFUSED in failed["message"] and "no node blamed" in failed["message"]
        assert not job["status"].get("failedNodes") and not wf["status"].get("failedNodes")
        assert cond.phase(wf) == "Failed"
    finally:
        await session.close()


async def test_a_group_node_gone_from_the_cluster_is_blamed_alone() -> None:
    def gone(run: Obj) -> Obj:
        return {"reason": "NodeNotFound", "message": "no Node gpu-node-02 on the cluster", "blockedNodes": ["gpu-node-02"]}

    wf, [job], session = await certify(["gpu-node-01", "gpu-node-02"], "{}", gone)
    try:
        assert [(f["name"], f["reason"]) for f in job["status"]["failedNodes"]] == [("gpu-node-02", "SchedulingBlocked")]
        assert cond.find(job["status"]["conditions"], "Failed")["reason"] == "NodeNotFound"  # type: ignore[index]
        assert [f["name"] for f in blamed_nodes(wf, [job])] == ["gpu-node-02"]
    finally:
        await session.close()


async def _diagnosis_with_a_second_wave_job_refused() -> tuple[Obj, list[Obj], SimSession, list[str]]:
    """16 nodes diagnosed at 300 GB/s: screening (round 0) runs, and the API server refuses one Job of round 1 (its
    name, in the list returned)."""
    nodes = [f"gpu-node-{i:02d}" for i in range(1, 17)]
    refused: list[str] = []

    def second_wave(run: Obj) -> Obj | None:
        name = _job_of(run)
        if "-r1-" not in name or refused and name != refused[0]:
            return None
        refused[:1] = [name]
        return {"reason": "ReconcileError", "message": "Forbidden: quota exceeded"}

    wf, jobs, session = await certify(nodes, "{testScale: diagnose, thresholds: {busBandwidthGBps: 'value >= 300'}}", second_wave)
    return wf, jobs, session, refused


async def test_a_diagnosis_stops_on_a_group_that_tested_nothing_and_convicts_no_node_for_it() -> None:
    wf, jobs, session, refused = await _diagnosis_with_a_second_wave_job_refused()
    try:
        assert refused, "the diagnosis never planned a wave after screening"
        failed = cond.find(wf["status"]["conditions"], "Failed")
        assert failed is not None and failed["reason"] == "DiagnosisStopped", failed
        assert failed["message"].startswith("Diagnosis stopped in round 1, group r1-"), failed["message"]
        assert f"group {refused[0].split('-iter-')[0].removeprefix(wf['metadata']['name'] + '-')} was not tested (ReconcileError" in failed["message"]
        assert not wf["status"].get("failedNodes")  # one screening wave convicts nobody; the refused group is no evidence
        assert len(wf["status"]["orchestration"]["iterationHistory"]) == 2
        # The map agrees: a stopped diagnosis weighs no round any more, and the group that tested nothing makes no
        # suspect of its members (a review found both: "... diagnose round 1 weighs it", for ever).
        from nvcre_tui.engine.views.nodes import node_states
        from nvcre_tui.engine.views.snapshot import Snapshot

        states = node_states(await Snapshot.read(session.store, "default"))
        assert not any("weighs it" in detail for _, detail in states.values()), states
        refused_group = next(g for g in wf["status"]["orchestration"]["groups"] if refused[0].startswith(f"{wf['metadata']['name']}-{g['name']}"))
        assert all(states[node][0] != "suspect" or "weighs" not in states[node][1] for node in refused_group.get("nodes") or [])
    finally:
        await session.close()


async def test_on_failure_diagnose_is_not_started_when_a_failed_group_tested_nothing() -> None:
    nodes = [f"gpu-node-{i:02d}" for i in range(1, 17)]
    wf, jobs, session = await certify(nodes, "{testScale: full-scale, onFailure: diagnose}",
                                      lambda run: {"reason": "WorkloadNotCreated", "message": REFUSED})
    try:
        assert len(jobs) == 1 and wf["status"]["orchestration"].get("diagnose") is None
        assert cond.phase(wf) == "Failed" and not wf["status"].get("failedNodes")
        skipped = [e for e in (await session.store.list(EVENT, "default")).items if e.get("reason") == "DiagnosisSkipped"]
        assert len(skipped) == 1 and "was not tested (WorkloadNotCreated" in skipped[0]["message"]
    finally:
        await session.close()


class StuckStarting:
    """The simulator's runner, but every run has its pods placed and still creating containers, for ever."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.simulated = inner.simulated

    async def reconcile_run(self, run: Obj) -> float | None:
        if (run.get("status") or {}).get("phase") in ("Scheduling", "Succeeded", "Failed"):
            return None
        meta = run["metadata"]
        await self.inner.store.patch_status(WORKLOADRUN, meta["name"], meta.get("namespace"), {
            "phase": "Scheduling", "reason": "Starting", "pendingSince": format_time(self.inner.clock.now()),
            "message": "1/2 pod(s) running; not started on gpu-node-02 (ContainerCreating: pulling nvcr.io/nvidia/nemo)"})
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_pods_placed_but_still_starting_get_timeout_per_job_not_the_stall_grace_and_blame_no_node() -> None:
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    engine = Engine(session.engine.store, session.clock, default_catalog(), StuckStarting(session.runner), cache=session.cache)
    cert = certification_from_text("c", CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", "{timeoutPerJob: 40m}"),
                                   default_catalog()).to_wire()
    cert.pop("status", None)
    await session.store.create(CERTIFICATION, cert)
    try:
        await engine.run_until_settled(max_seconds=1800)  # half an hour: far past the 300 s stall grace
        [job] = (await session.store.list(JOB, "default")).items
        assert not cond.is_terminal(job), "an image still pulling is not a stall"
        # ... and the Job says when it gives up (a walkthrough waited an hour on pods no kubelet ran, told no end)
        waiting = cond.find(job["status"]["conditions"], "InProgress")
        assert waiting is not None and waiting["reason"] == "WorkloadPending", waiting
        assert waiting["message"].endswith("; it fails after 40m00s (timeoutPerJob) of this"), waiting["message"]
        await engine.run_until_settled(max_seconds=3600)
        [job] = (await session.store.list(JOB, "default")).items
        failed = cond.find(job["status"]["conditions"], "Failed")
        assert failed is not None and failed["reason"] == "WorkloadNotStarted"
        assert failed["message"].startswith("not started after 40m00s (timeoutPerJob 40m) on gpu-node-01, gpu-node-02: 1/2 pod(s) "
                                            "running; not started on gpu-node-02"), failed["message"]
        assert not job["status"].get("failedNodes")
    finally:
        await session.close()


async def test_a_diagnosis_whose_jobs_are_deleted_once_recorded_convicts_for_the_same_reasons() -> None:
    """Someone cleaning up finished Jobs mid-diagnosis changes no verdict, nor its reason (the failed-nodes
    ConfigMap's reason is what NVSentinel filters on): a recorded Job is evidence already."""
    case = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-flaky-and-fabric"
    scenario = Scenario.model_validate({"name": "flaky-slow-gpu", "seed": 3, "nodes": [{"count": 32, "cliques": 4}],
                                        "faults": [{"type": "slow-gpu", "node": "gpu-node-06", "gpu": 4, "factor": 0.5, "probability": 0.5}]})
    text = (case / "cert.yaml").read_text()  # diagnose under maxConcurrent 8, busBandwidthGBps >= 300

    async def verdicts(clean_up: bool) -> tuple[list[tuple[str, str]], int]:
        session = await SimSession.open(scenario, None, history=None)
        assert session.engine is not None
        deleted = 0

        async def delete_recorded() -> bool:
            nonlocal deleted
            for wf in (await session.store.list(WORKFLOW, "default")).items:
                history = (wf.get("status") or {}).get("orchestration", {}).get("iterationHistory") or []
                recorded = {g.get("jobRef") for record in history for g in record["groups"]}
                for job in (await session.store.list(JOB, "default")).items:
                    if job["metadata"]["name"] in recorded:
                        await session.store.delete(JOB, job["metadata"]["name"], "default")
                        deleted += 1
            return False

        cert = certification_from_text("cert.yaml", text, default_catalog()).to_wire()
        cert["metadata"]["namespace"] = "default"
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)
        try:
            await session.engine.run_until_settled(until=delete_recorded if clean_up else None, max_seconds=12 * 3600)
            [wf] = (await session.store.list(WORKFLOW, "default")).items
            return [(f["name"], f["reason"]) for f in wf["status"].get("failedNodes") or []], deleted
        finally:
            await session.close()

    kept, _ = await verdicts(clean_up=False)
    cleaned, deleted = await verdicts(clean_up=True)
    assert deleted and kept == [("gpu-node-06", "ThresholdViolation")]
    assert cleaned == kept


def test_a_verdict_whose_convicting_job_is_gone_takes_its_reason_from_the_groups_record() -> None:
    from nvcre_tui.engine.controllers.iterations import _recorded_reason

    group = {"name": "r2-confirm-0", "jobRef": "wf-r2-confirm-0-iter-3", "blamedFor": "ThresholdViolation"}
    assert _recorded_reason(group, ["a", "b"], "b") == "ThresholdViolation"  # every node of the group
    culprit = {**group, "blamedFor": "HardwareFailureDetected", "blamedMembers": [1]}
    assert _recorded_reason(culprit, ["a", "b"], "b") == "HardwareFailureDetected"
    assert _recorded_reason(culprit, ["a", "b"], "a") == "WorkloadFailed"  # not the one its Job blamed
    assert _recorded_reason(None, ["a"], "a") == "WorkloadFailed"


class SilentRunner:
    """The simulator's runner, but every run exits 0 having printed nothing a parser can measure."""

    def __init__(self, inner: Any, lines: list[str]) -> None:
        self.inner, self.lines = inner, lines
        self.simulated = inner.simulated

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        return list(self.lines)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _silently(lines: list[str], options: str = "{}", events: list[Obj] | None = None) -> tuple[Obj, Obj, Obj]:
    """A two-node nccl certification whose run exits 0 printing `lines`: its Workflow, Job and Certification at the end
    (and its Events into `events`)."""
    session = await SimSession.open(default_scenario(), None, history=None)
    try:
        assert session.engine is not None
        engine = Engine(session.engine.store, session.clock, default_catalog(), SilentRunner(session.runner, lines), cache=session.cache)
        cert = certification_from_text("c", CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", options), default_catalog()).to_wire()
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)
        await engine.run_until_settled(max_seconds=6 * 3600)
        [wf] = (await session.store.list(WORKFLOW, "default")).items
        [job] = (await session.store.list(JOB, "default")).items
        if events is not None:
            events.extend((await session.store.list(EVENT, "default")).items)
        return wf, job, await session.store.get(CERTIFICATION, "c", "default")
    finally:
        await session.close()


@pytest.mark.parametrize("lines", [["+ all_reduce_perf -b 8 -e 16G", "done"], []], ids=["no-rows", "silent"])
async def test_a_run_that_exits_0_with_nothing_to_measure_fails_and_blames_no_node(lines: list[str]) -> None:
    wf, job, certification = await _silently(lines)
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed is not None and failed["reason"] == "NoDataCollected", job["status"]["conditions"]
    assert "no node blamed" in failed["message"]
    assert not job["status"].get("failedNodes") and not blamed_nodes(wf, [job])
    assert certification["status"]["summary"]["result"] == "FAILED"  # nothing measured is never a pass
    text = render_text(build_report(certification, [wf], [job]))
    assert f"      {failed['message']}\n" in text  # the report says why a group that blamed no node failed
    assert " on None" not in text


async def test_a_run_that_exits_0_with_nothing_measured_but_names_a_failing_node_blames_that_node() -> None:
    wf, job, _ = await _silently(["gpu-node-02:1234:1240 [3] NCCL WARN NET/IB : Got completion from peer with error 12",
                                  "gpu-node-02: Test NCCL failure common.cu:1279 'remote process exited or there was a network error'"])
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed is not None and failed["reason"] == "WorkloadFailed", job["status"]["conditions"]
    assert [(f["name"], f["reason"]) for f in blamed_nodes(wf, [job])] == [("gpu-node-02", "WorkloadFailed")]


class NodeDeletingRunner:
    """The simulator's runner, deleting one Node from the store once a run reaches `phase` (the simulator itself
    plays on regardless, as a runner that never looks at Nodes would)."""

    def __init__(self, inner: Any, node: str, phase: str) -> None:
        self.inner, self.node, self.phase, self.deleted = inner, node, phase, False
        self.simulated = inner.simulated

    async def reconcile_run(self, run: Obj) -> float | None:
        delay = await self.inner.reconcile_run(run)
        meta = run["metadata"]
        current = await self.inner.store.get(WORKLOADRUN, meta["name"], meta.get("namespace"))
        if not self.deleted and (current.get("status") or {}).get("phase") == self.phase:
            await self.inner.store.delete(NODE, self.node)
            self.deleted = True
        return delay

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize(("phase", "node_reason"), [("Scheduling", "SchedulingBlocked"), ("Running", "WorkloadFailed")])
async def test_a_group_node_deleted_from_the_cluster_fails_its_job_whatever_the_runner_sees(phase: str, node_reason: str) -> None:
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    runner = NodeDeletingRunner(session.runner, "gpu-node-02", phase)
    engine = Engine(session.engine.store, session.clock, default_catalog(), runner, cache=session.cache)
    cert = certification_from_text("c", CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", "{}"),
                                   default_catalog()).to_wire()
    cert.pop("status", None)
    try:
        await session.store.create(CERTIFICATION, cert)
        await engine.run_until_settled(max_seconds=6 * 3600)
        assert runner.deleted
        [job] = (await session.store.list(JOB, "default")).items
        assert [(f["name"], f["reason"]) for f in job["status"]["failedNodes"]] == [("gpu-node-02", node_reason)]
        assert cond.find(job["status"]["conditions"], "Failed")["reason"] == "NodeNotFound"  # type: ignore[index]
        [run] = (await session.store.list(WORKLOADRUN, "default")).items
        assert run["status"]["phase"] == "Failed"  # stopped: not left to finish and pass
        [cert_now] = (await session.store.list(CERTIFICATION, "default")).items
        assert cond.phase(cert_now) == "Failed"
    finally:
        await session.close()


class ConflictOnce:
    """The store as the simulated runner sees it, answering the first WorkloadRun status write with 409 Conflict (as
    an API server does when another writer got in first) with no event to wake the run again."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.conflicts = inner, 0

    async def patch_status(self, kind: Any, name: str, namespace: str | None, status_patch: Mapping[str, Any],
                           resource_version: str | None = None) -> Obj:
        if kind is WORKLOADRUN and self.conflicts == 0:
            self.conflicts += 1
            raise Conflict.about(kind, name, namespace, "the object has been modified; please apply your changes to the latest version")
        return await self.inner.patch_status(kind, name, namespace, status_patch, resource_version)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_a_run_whose_status_write_conflicted_is_looked_at_again() -> None:
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    store = ConflictOnce(session.runner.store)
    session.runner.store = store
    cert = certification_from_text("c", CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", "{}"),
                                   default_catalog()).to_wire()
    cert.pop("status", None)
    try:
        await session.store.create(CERTIFICATION, cert)
        await session.engine.run_until_settled(max_seconds=6 * 3600)
        assert store.conflicts == 1
        [run] = (await session.store.list(WORKLOADRUN, "default")).items
        assert run["status"]["phase"] == "Succeeded"
        [done] = (await session.store.list(CERTIFICATION, "default")).items
        assert cond.phase(done) == "Succeeded"
    finally:
        await session.close()



WRONG_ELEMENTS_AFTER_A_WARNING = """gpu-node-02:4102:4102 [0] NCCL WARN NET/IB : Got async event : GID table change
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   4101 on gpu-node-01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   4102 on gpu-node-02 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    50.00   20.97   20.97      0    50.00   20.97   20.97      0
     2097152        524288     float     sum      -1    90.00   23.30   23.30    512    90.00   23.30   23.30    512
# Out of bounds values : 1024 FAILED
# Avg bus bandwidth    : 22.1
#""".split("\n")


async def test_wrong_elements_are_the_groups_failure_whatever_host_warned_on_the_way() -> None:
    """The run went on past gpu-node-02's warning and measured wrong elements: nothing ties them to that host."""
    wf, job, _ = await _silently(WRONG_ELEMENTS_AFTER_A_WARNING)
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed is not None and failed["reason"] == "DataCorruption", job["status"]["conditions"]
    assert sorted(f["name"] for f in blamed_nodes(wf, [job])) == ["gpu-node-01", "gpu-node-02"]


async def test_a_large_unschedulable_group_blames_every_node_in_a_status_of_bounded_size(tmp_path: Path) -> None:
    """Each node's entry names itself only: copying a message that lists the group into every entry grew the Job with
    the square of the group, past the API server's 1.5 MiB at 128 cloud-named nodes (ReconcileError, nobody blamed)."""
    prefix = "ip-10-100-0-1-us-west-2-compute-internal-n"
    faults = "".join(f"  - {{type: unschedulable, node: {prefix}{i:03d}}}\n" for i in range(1, 129))
    path = tmp_path / "scenario.yaml"
    path.write_text(f"name: big\nseed: 13\nnodes: [{{count: 128, cliques: 1, namePrefix: {prefix}, nameDigits: 3}}]\nfaults:\n{faults}")
    session = await SimSession.open(load_scenario(path), None, history=None)
    try:
        assert session.engine is not None
        text = CERT.replace("{nodeNames: [NODES]}", "{nodeSelector: {nvidia.com/gpu.present: \"true\"}}")
        cert = certification_from_text("c", text.replace("OPTIONS", "{testScale: full-scale, nodesPerJob: 128}"), default_catalog()).to_wire()
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)
        await session.engine.run_until_settled(max_seconds=6 * 3600)
        [wf] = (await session.store.list(WORKFLOW, "default")).items
        [job] = (await session.store.list(JOB, "default")).items
    finally:
        await session.close()
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed is not None and failed["reason"] == "SchedulingBlocked", job["status"]["conditions"]
    assert len(blamed_nodes(wf, [job])) == 128
    assert len(json.dumps(job)) < 64 * 1024
    assert "and 123 more" in failed["message"]


async def test_a_threshold_missed_over_rows_the_output_garbled_convicts_nobody() -> None:
    """The largest size's row has an inf cell: the size that would have been fastest is not measured, so a bus
    bandwidth under the threshold over the other rows is no evidence against the nodes."""
    lines = [line.replace("    90.00   23.30   23.30    512", "    90.00   23.30     inf      0").replace("1024 FAILED", "0 OK")
             for line in WRONG_ELEMENTS_AFTER_A_WARNING]
    events: list[Obj] = []
    wf, job, certification = await _silently(lines, '{thresholds: {busBandwidthGBps: "value >= 22"}}', events)
    validation = cond.find(job["status"]["conditions"], "ValidationFailed")
    assert validation is not None and validation["status"] == "True" and validation["reason"] == "MeasurementUnavailable"
    # the Job's Event says the same: a missing measurement, not a threshold violated by these nodes
    [event] = [e for e in events if e["involvedObject"]["kind"] == "Job" and e["type"] == "Warning"]
    assert event["reason"] == "MeasurementUnavailable"
    assert "over part of the output (1 row skipped: busbw inf, in-place busbw inf at size 2097152 B" in validation["message"]
    assert not blamed_nodes(wf, [job]) and certification["status"]["summary"]["result"] == "FAILED"


async def test_the_suspects_a_stopped_diagnosis_leaves_are_inconclusive_on_the_map_as_in_the_report_and_the_list() -> None:
    """One node, one state, counted alike: the diagnosis stops in round 1 with 4 suspects it never decided. The map
    (the wall's counters, the history's node results) said 4 suspect, where the report said Failed Nodes none and
    `certification list` FAILED NODES 0; they are inconclusive (the diagnosis's word for a node it could not decide)."""
    from collections import Counter

    from nvcre_tui.engine.views.nodes import certification_nodes, node_states
    from nvcre_tui.engine.views.snapshot import Snapshot

    wf, jobs, session, refused = await _diagnosis_with_a_second_wave_job_refused()
    try:
        left = wf["status"]["orchestration"]["diagnose"].get("suspectNodes") or []
        assert len(left) == 4, left
        snapshot = await Snapshot.read(session.store, "default")
        held = certification_nodes(snapshot, "c") or set()
        states = node_states(snapshot, "c")
        counted = Counter(state for node, (state, _) in states.items() if node in held)
        cert = await session.store.get(CERTIFICATION, "c", "default")
        report = build_report(cert, [wf], jobs)
        assert counted["failed"] + counted["suspect"] == len(report["failedNodes"]) == cert["status"]["summary"]["failedNodes"] == 0, counted
        assert {node: states[node][0] for node in left} == dict.fromkeys(left, "inconclusive")
        assert all("undecided: the diagnosis ended" in states[node][1] for node in left), {node: states[node][1] for node in left}
    finally:
        await session.close()


async def test_a_run_whose_output_reads_an_implausible_value_fails_and_blames_no_node() -> None:
    """One row's busbw of 1e308 GB/s passed `value >= 22` (the max over sizes): no hardware measures it. The Job fails
    ImplausibleMeasurement naming the value and the bound, stores no such value, and blames no node."""
    lines = [line.replace("   23.30    512    90.00", "  1e+308      0    90.00").replace("23.30    512", "23.30      0")
             .replace("1024 FAILED", "0 OK") for line in WRONG_ELEMENTS_AFTER_A_WARNING[1:]]
    wf, job, certification = await _silently(lines, '{thresholds: {busBandwidthGBps: "value >= 22"}}')
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed is not None and failed["reason"] == "ImplausibleMeasurement", job["status"]["conditions"]
    assert "busBandwidthGBps 1e+308 GB/s is above 10000 GB/s" in failed["message"] and "no node blamed" in failed["message"]
    assert "busBandwidthGBps" not in (job["status"].get("measurements") or {}), job["status"].get("measurements")
    assert not blamed_nodes(wf, [job]) and certification["status"]["summary"]["result"] == "FAILED"


async def test_a_value_read_over_rows_the_output_garbled_is_not_the_categorys_bandwidth() -> None:
    """The report's `Bandwidth: busBW 22.10 GB/s` (JSON bandwidth) counted the value of a run whose output lost a row
    (MeasurementUnavailable: the fastest size may be the one missing), which its group row, the history and the node
    screen read as no measurement (report.model.measured_whole): the category's bandwidth now reads the same rule."""
    lines = [line.replace("    90.00   23.30   23.30    512", "    90.00   23.30     inf      0").replace("1024 FAILED", "0 OK")
             for line in WRONG_ELEMENTS_AFTER_A_WARNING]
    wf, job, certification = await _silently(lines, '{thresholds: {busBandwidthGBps: "value >= 22"}}')
    assert job["status"]["measurements"]["busBandwidthGBps"] == 20.97  # the premise: the partial value, stored
    [category] = build_report(certification, [wf], [job])["categories"]
    assert category["bandwidth"] is None, category["bandwidth"]
    assert [(g["busBW"], g["partialBusBW"]) for g in category["groupBandwidth"]] == [(None, 20.97)], category["groupBandwidth"]
    assert "Bandwidth: " not in render_text(build_report(certification, [wf], [job]))


async def test_the_failures_pane_shows_no_value_read_over_rows_the_output_garbled() -> None:
    """The failures pane's and the wall's Measured column read `busBandwidthGBps 20.97 (value >= 22)` of the group whose
    output lost a row, as if that value had missed the threshold: it is no measurement (report.model.measured_whole)."""
    from nvcre_tui.engine.report.readmodel import CertificationView
    from nvcre_tui.engine.views.failures import category_unblamed

    lines = [line.replace("    90.00   23.30   23.30    512", "    90.00   23.30     inf      0").replace("1024 FAILED", "0 OK")
             for line in WRONG_ELEMENTS_AFTER_A_WARNING]
    wf, job, certification = await _silently(lines, '{thresholds: {busBandwidthGBps: "value >= 22"}}')
    assert [e["measured"] for e in job["status"]["evidence"]] == [20.97]  # the premise: the partial value, judged
    [category] = CertificationView.of(certification, [wf], [job]).categories
    [row] = category_unblamed(category)
    assert row.reason == "no node blamed: MeasurementUnavailable" and row.measured == "busBandwidthGBps unavailable (value >= 22)", row


class StoppedForARefusedParent(RefusingRunner):
    """The simulator's runner, but the first Job of diagnose round 1 is stopped as the engine stops a refused
    Certification's Jobs (controllers/foreign.py): failed `reason`, no node blamed, its run stopped, and its Workflow
    still running (an engine that died between the two stops, or whose Workflow write lost a race, leaves it so)."""

    def __init__(self, inner: Any, reason: str) -> None:
        super().__init__(inner, lambda run: None)
        self.reason, self.stopped = reason, ""

    async def reconcile_run(self, run: Obj) -> float | None:
        job_name = _job_of(run)
        if "-r1-" not in job_name or self.stopped not in ("", job_name):
            return await self.inner.reconcile_run(run)
        self.stopped = job_name
        job = await self.inner.store.get(JOB, job_name, "default")
        if not cond.is_terminal(job):
            now = format_time(self.inner.clock.now())
            message = "stopped: its Certification default/c was refused (StatusWrittenByAnother) and can yield no result; no node blamed"
            await self.inner.store.patch_status(JOB, job_name, "default", {
                "conditions": cond.with_phase((job.get("status") or {}).get("conditions"), "Failed", self.reason, message, now),
                "completionTime": now})
            await self.inner.stop(run)
        return None


@pytest.mark.parametrize("reason", ["CertificationRefused", "WorkflowRefused"])
async def test_a_job_stopped_for_a_refused_parent_is_no_evidence_in_a_diagnosis(reason: str) -> None:
    """A Job failed CertificationRefused or WorkflowRefused ran no test to its end and blames nobody, but neither
    reason was one that tests nothing (UNBLAMED_REASONS): a Workflow that read such a Job weighed it as a failed test,
    its members suspects of the diagnosis. It stops the diagnosis now, as any group that tested nothing, its members
    untested on the map."""
    from nvcre_tui.engine.views.nodes import node_states
    from nvcre_tui.engine.views.snapshot import Snapshot

    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    runner = StoppedForARefusedParent(session.runner, reason)
    engine = Engine(session.engine.store, session.clock, default_catalog(), runner, cache=session.cache)
    nodes = [f"gpu-node-{i:02d}" for i in range(1, 17)]
    options = "{testScale: diagnose, thresholds: {busBandwidthGBps: 'value >= 300'}}"
    cert = certification_from_text("c", CERT.replace("NODES", ", ".join(nodes)).replace("OPTIONS", options), default_catalog()).to_wire()
    cert.pop("status", None)
    try:
        await session.store.create(CERTIFICATION, cert)
        await engine.run_until_settled(max_seconds=6 * 3600)
        assert runner.stopped, "the diagnosis never planned a wave after screening"
        [wf] = (await session.store.list(WORKFLOW, "default")).items
        failed = cond.find(wf["status"]["conditions"], "Failed") or {}
        assert failed.get("reason") == "DiagnosisStopped", failed
        assert f"was not tested ({reason}: stopped: its Certification default/c was refused" in failed["message"], failed["message"]
        assert not wf["status"].get("failedNodes")
        from nvcre_tui.engine.api.bodies import group_nodes

        members = group_nodes(await session.store.get(JOB, runner.stopped, "default"))
        states = node_states(await Snapshot.read(session.store, "default"))
        assert members and all(states[node][0] not in ("suspect", "failed") for node in members), {n: states[n] for n in members}
    finally:
        await session.close()
