"""What each scenario case must show, written by hand: the goldens pin the whole digest, these pin the meaning
(a golden regenerated from a broken engine still fails here).

EXPECT (expectations.py) lists, per case, the result, each category's status and exactly which nodes it
blames with which reason, and the excluded nodes. The other tests check what a table cannot say: timing
(timeouts, ordering, concurrency), evidence values, grouping and diagnose verdicts.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest

from nvcre_tui.engine.api.bodies import GroupStatus
from nvcre_tui.engine.clock import parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import finished_iterations
from nvcre_tui.engine.judging.results import read_succeeded_nodes
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.readmodel import CertificationView
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.views.diagnosis import category_faults
from tests.scenarios.expectations import EXPECT, HW, N
from tests.scenarios.harness import CaseRun, case_names, run_case

Obj = dict[str, Any]
EPOCH = "2026-01-01T00:00:00Z"  # the simulator session's start: the fleet epoch of every case


# --------------------------------------------------------------------------- helpers


def at(text: str) -> datetime:
    """A status timestamp."""
    return parse_time(text)


def seconds(start: str, end: str) -> float:
    """Seconds from one status timestamp to another."""
    return (at(end) - at(start)).total_seconds()


def blame(category: Obj) -> dict[str, str]:
    """node -> reason of a category's failed nodes (one reason per node in these cases)."""
    return {f["name"]: f["reason"] for f in category.get("failedNodes") or []}


def groups_of(workflow: Obj) -> list[GroupStatus]:
    """Every group of every iteration (or diagnose round), with its times."""
    return [g for record in finished_iterations(workflow) for g in record["groups"]]


def most_at_once(groups: list[GroupStatus]) -> int:
    """The largest number of groups whose [start, completion) intervals overlap at one instant."""
    edges = sorted([(at(g["startTime"]), 1) for g in groups] + [(at(g["completionTime"]), -1) for g in groups])
    running = peak = 0
    for _, step in edges:  # at equal times -1 sorts first: a group ending as another starts is not concurrent
        running += step
        peak = max(peak, running)
    return peak


def jobs_of(run: CaseRun, workflow: Obj) -> list[Obj]:
    """The Jobs of a Workflow, by name."""
    return [j for j in run.objects["Job"] if j["metadata"]["labels"].get("nvcre.nvidia.com/workflow") == workflow["metadata"]["name"]]


def evidence(category: Obj, node: str) -> list[Obj]:
    """Threshold evidence recorded against a failed node."""
    return next(f.get("evidence") or [] for f in category["failedNodes"] if f["name"] == node)


# --------------------------------------------------------------------------- the table


def test_every_case_has_a_written_expectation() -> None:
    assert sorted(EXPECT) == case_names()


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_result_statuses_blame_and_exclusions(case: str) -> None:
    expect, run = EXPECT[case], run_case(case)
    report = run.report
    assert report["result"] == expect.result
    assert [(c["status"], blame(c)) for c in report["categories"]] == list(expect.categories)
    # every category's exclusions; the certification counts those of nodes in no worse state (one node, one state:
    # none blamed, none inconclusive; test_counts_agree holds them to the wall's)
    assert {e["name"]: e["reason"] for c in report["categories"] for e in c.get("excludedNodes") or []} == expect.excluded
    assert {e["name"] for e in report["excludedNodes"]} <= set(expect.excluded) - set(report["failedNodes"])
    assert report["failedNodes"] == sorted({n for _, nodes in expect.categories for n in nodes})
    for category in report["categories"]:
        if category["status"] == "Failed":
            assert category.get("failureReason"), f"{case}: a failed category must say why"


# --------------------------------------------------------------------------- evidence


def test_slow_gpu_named_with_its_measured_bandwidth() -> None:
    category = run_case("slow-gpu-intra-node").category("nccl-all-reduce")
    [record] = evidence(category, "gpu-node-03")
    assert record["metric"] == "busBandwidthGBps" and record["expression"] == "value >= 400" and not record["passed"]
    assert 200 < record["measured"] < 280  # half-speed GPU on a ~480 GB/s NVLink path
    healthy = [g["busBW"] for g in category["groupBandwidth"] if g["nodes"] != ["gpu-node-03"]]
    assert len(healthy) == 3 and all(bw >= 400 for bw in healthy)


def test_a_report_of_the_simulated_fleet_says_no_gpu_ran_it() -> None:
    """Exported (JSON, JUnit, HTML, text) a simulated PASS must never pass for one of a real fleet."""
    from xml.etree import ElementTree

    from nvcre_tui.engine.report.junit import render_junit

    run = run_case("all-pass-every-category")
    assert run.report["result"] == "PASSED"
    assert "simulated fleet" in run.report["simulated"] and "made up" in run.report["simulated"]
    for kind in ("Certification", "Job"):
        assert all(cond.is_true(obj, cond.SIMULATED) for obj in run.objects[kind]), kind
    assert "Workloads:      simulated (no GPU ran them" in render_text(run.report).split("\n\n")[0]
    suite = ElementTree.fromstring(render_junit([run.report])).find("testsuite")
    assert suite is not None and suite[0].tag == "properties" and suite[0][0].get("name") == "simulated"
    assert "simulated: played by nvcre" in render_html(run.report)
    # how a run went never hides what it is: kubectl's Status column still shows the phase
    shown = [c["type"] for c in run.objects["Certification"][0]["status"]["conditions"] if c["status"] == "True"]
    assert shown[0] == "Succeeded" and cond.SIMULATED in shown


def test_degraded_nic_passes_intra_node_and_fails_full_scale() -> None:
    run = run_case("degraded-nic-only-at-full-scale")
    intra, full = run.report["categories"]
    assert intra["testScale"] == "intra-node" and all(g["busBW"] >= 400 for g in intra["groupBandwidth"])
    assert full["testScale"] == "full-scale"
    [record] = evidence(full, "gpu-node-02")
    assert record["measured"] < 300 and record["expression"] == "value >= 300"


def test_dcgm_pass_with_skipped_tests_is_marked_not_clean() -> None:
    """A dcgmi run that skipped 9 of 10 tests passes only where no threshold asks, and is marked everywhere."""
    run = run_case("dcgm-skipped-tests-marked")
    unguarded, guarded = run.report["categories"]
    [marked] = unguarded["diagnostics"]["passedWithSkippedTests"]
    assert unguarded["status"] == "Succeeded" and unguarded["diagnostics"]["samples"] == 4
    assert marked["nodes"] == ["gpu-node-02"] and marked["verdict"] == "passed, 9 of 10 tests skipped"
    assert "pcie" in marked["message"] and "software" not in marked["message"].split(": ")[-1]
    [record] = evidence(guarded, "gpu-node-02")
    assert record["metric"] == "diagTestsSkipped" and record["measured"] == 9.0 and not record["passed"]
    text = render_text(run.report)
    assert "gpu-node-02: passed, 9 of 10 tests skipped" in text
    assert "<td>gpu-node-02</td><td>passed, 9 of 10 tests skipped</td>" in render_html(run.report)


@pytest.mark.parametrize(("case", "node", "words"), [
    # what a pod's log shows of an XID: CUDA's error on that GPU (the XID itself is the kernel's, in dmesg)
    ("xid-mid-run-full-scale", "gpu-node-03", ("GPU 5", "Cuda failure 999 'unknown error'")),
    ("xid-before-run-intra-node", "gpu-node-02", ("GPU 1", "uncorrectable ECC error")),
    ("dcgm-xid-names-test-and-gpu", "gpu-node-02", ("Xid 79", "memory failed on GPU 5")),
    ("dcgm-flaky-pcie", "gpu-node-03", ("pcie failed on GPU 2",)),
    ("unschedulable-full-scale", "gpu-node-03", ("unschedulable", "gpu-node-03")),
])
def test_failure_message_names_the_cause(case: str, node: str, words: tuple[str, ...]) -> None:
    [category] = run_case(case).report["categories"]
    message = next(f["message"] for f in category["failedNodes"] if f["name"] == node)
    for word in words:
        assert word in message


def test_xid_mid_run_ends_the_run_at_the_xid() -> None:
    run = run_case("xid-mid-run-full-scale")
    [workload] = run.objects["WorkloadRun"]
    assert workload["status"]["phase"] == "Failed" and seconds(EPOCH, workload["status"]["completionTime"]) == 240


@pytest.mark.parametrize(("case", "variant", "metric", "limit"), [
    ("training-slow-gpu-tflops", "nemotron5-8b", "avgTFLOPsPerGPU", 400),
    ("training-goodput-threshold", "nemotron5-8b", "goodputRatio", 0.95),
    ("loopback-catches-degraded-nic", "nccl-loopback", "busBandwidthGBps", 300),
    ("nvswitch-loopback-catches-slow-gpu", "nccl-loopback-nvswitch", "busBandwidthGBps", 400),
    ("threshold-fail-healthy-fleet", "nccl-all-reduce", "busBandwidthGBps", 450),
])
def test_threshold_evidence_is_below_the_limit(case: str, variant: str, metric: str, limit: float) -> None:
    category = run_case(case).category(variant)
    for node in blame(category):
        [record] = evidence(category, node)  # only the missed threshold is evidence against the node
        assert record["metric"] == metric and record["measured"] < limit and not record["passed"]


def test_range_threshold_fails_above_its_upper_bound() -> None:
    category = run_case("threshold-range-fail-above").category("nccl-all-reduce")
    [record] = evidence(category, "gpu-node-01")
    assert record["measured"] > 200 and record["expression"] == "value >= 100 && value <= 200"


@pytest.mark.parametrize("case", ["threshold-pass-two-metrics", "training-healthy-all-metrics"])
def test_met_thresholds_are_recorded_as_evidence(case: str) -> None:
    run = run_case(case)
    [job] = run.objects["Job"]
    thresholds = job["spec"]["thresholds"]
    assert {e["metric"] for e in job["status"]["evidence"]} == set(thresholds) and all(e["passed"] for e in job["status"]["evidence"])
    validation = cond.find(job["status"]["conditions"], "ValidationFailed")
    assert validation and validation["status"] == "False" and validation["reason"] == "ThresholdsMet"


def test_missing_measurement_fails_closed() -> None:
    run = run_case("missing-measurement-short-training")
    [job] = run.objects["Job"]
    validation = cond.find(job["status"]["conditions"], "ValidationFailed")
    assert validation and validation["status"] == "True" and validation["reason"] == "MeasurementUnavailable"
    assert validation["message"].endswith("; no node blamed")  # a measurement missing convicts no node ...
    assert "(training: the only logged step is warm-up" in validation["message"]  # ... and says why it is missing
    assert run.category("nemotron5-8b")["status"] == "Failed" and not run.category("nemotron5-8b")["failedNodes"]  # ... and never passes
    records = job["status"]["evidence"]
    assert [(r["metric"], r["measured"], r["reason"]) for r in records] == [
        ("avgStepTimeSec", None, "MeasurementUnavailable"), ("goodputRatio", None, "MeasurementUnavailable")]
    assert "no goodputRatio, avgTFLOPsPerGPU or avgStepTimeSec measured" in validation["message"]
    # No measurement is no number: the report says no goodput (it said "Goodput: 1.00 (100%)" of warm-up alone).
    assert run.category("nemotron5-8b")["training"] is None and "Goodput" not in render_text(run.report)


# --------------------------------------------------------------------------- time


@pytest.mark.parametrize(("case", "budget"), [("hang-full-scale-timeout", 1800), ("timeout-shorter-than-run", 180)])
def test_timeout_counts_from_the_workload_start(case: str, budget: float) -> None:
    [job] = run_case(case).objects["Job"]
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed and failed["reason"] == "JobTimedOut"
    assert seconds(job["status"]["workloadStartTime"], job["status"]["completionTime"]) == budget


def test_a_training_that_stops_making_progress_fails_stalled_long_before_its_timeout() -> None:
    """NVCRE's WorkloadStalled: no step for 3 x the average step time x the log interval (at least 3 minutes)."""
    [job] = run_case("hang-training-stalled").objects["Job"]
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert failed and failed["reason"] == "WorkloadStalled"
    assert "no training progress for" in failed["message"] and "after step 20/50" in failed["message"]
    ran = seconds(job["status"]["workloadStartTime"], job["status"]["completionTime"])
    assert ran < 20 * 60  # timeoutPerJob is 2h; the last step came about two minutes in
    assert job["spec"]["stallMultiplier"] == 3 and job["spec"]["startupStallTimeoutSeconds"] == 1200


def test_scheduling_delay_does_not_consume_the_timeout() -> None:
    run = run_case("timeout-from-workload-start")
    [job] = run.objects["Job"]
    created, state = job["metadata"]["creationTimestamp"], job["status"]
    assert seconds(created, state["workloadStartTime"]) >= 1200  # 20 minutes waiting for pods
    assert seconds(created, state["completionTime"]) > 600  # longer than timeoutPerJob 10m in all
    assert seconds(state["workloadStartTime"], state["completionTime"]) < 600
    assert cond.phase(job) == "Succeeded"


@pytest.mark.parametrize(("case", "said"), [("no-matching-nodes-waits-then-fails", "no eligible nodes match"),
                                            ("all-nodes-cordoned-waits-then-fails", "no node to test, every one the target selects unavailable")])
def test_no_eligible_nodes_waits_five_minutes_then_fails(case: str, said: str) -> None:
    """Five minutes: discovery.NODE_WAIT, the wait of a category every node of which is busy too (engine/test_busy_nodes_wait.py),
    whose words a cordoned fleet's now shares."""
    run = run_case(case)
    [cert] = run.objects["Certification"]
    assert seconds(cert["metadata"]["creationTimestamp"], cert["status"]["completionTime"]) == 300
    assert run.objects["Workflow"] == [] and run.objects["Job"] == []
    assert run.report["categories"][0]["failureReason"].startswith(said), run.report["categories"][0]


@pytest.mark.parametrize("case", ["categories-same-nodes-sequential", "degraded-nic-only-at-full-scale", "loopbacks-split-nic-and-nvlink"])
def test_categories_on_the_same_nodes_run_one_after_another(case: str) -> None:
    workflows = sorted(run_case(case).objects["Workflow"], key=lambda wf: wf["status"]["startTime"])
    assert len(workflows) == 2
    first, second = workflows
    assert at(second["status"]["startTime"]) >= at(first["status"]["completionTime"])


@pytest.mark.parametrize(("case", "limit"), [("max-concurrent-two", 2), ("max-concurrent-one-loopback", 1)])
def test_max_concurrent_is_respected_and_used(case: str, limit: int) -> None:
    run = run_case(case)
    [workflow] = run.objects["Workflow"]
    groups = groups_of(workflow)
    assert len(groups) == len(workflow["status"]["orchestration"]["groups"]) >= 4
    assert most_at_once(groups) == limit


def test_categories_on_disjoint_nodes_run_in_parallel() -> None:
    workflows = run_case("parallel-categories-disjoint-targets").objects["Workflow"]
    assert len(workflows) == 2
    first, second = sorted(workflows, key=lambda wf: wf["status"]["startTime"])
    assert at(second["status"]["startTime"]) < at(first["status"]["completionTime"])  # they overlap in time
    nodes = [{n for g in groups_of(wf) for n in g["nodes"]} for wf in workflows]
    assert nodes[0].isdisjoint(nodes[1])


def test_disjoint_groups_run_side_by_side() -> None:
    [workflow] = run_case("full-scale-even-chunks").objects["Workflow"]
    assert most_at_once(groups_of(workflow)) == 2


def test_overflow_group_borrows_nodes_and_waits_for_the_lender() -> None:
    [workflow] = run_case("full-scale-overflow-groups").objects["Workflow"]
    groups = {g["name"]: g for g in groups_of(workflow)}
    assert {name: g["nodes"] for name, g in groups.items()} == {
        "group-0": N[0:2], "group-1": N[2:4], "group-2-overflow": [N[3], N[4]],
    }
    assert groups["group-2-overflow"]["overflow"] is True
    lender, overflow = groups["group-1"], groups["group-2-overflow"]
    assert at(overflow["startTime"]) >= at(lender["completionTime"]) or at(lender["startTime"]) >= at(overflow["completionTime"])


def test_fault_that_begins_later_hits_only_the_later_category() -> None:
    run = run_case("slow-gpu-appears-mid-certification")
    first, second = (run.workflow("nccl-all-reduce"), run.workflow("nccl-loopback-nvswitch"))
    assert all(seconds(EPOCH, g["startTime"]) < 180 for g in groups_of(first))
    assert all(seconds(EPOCH, g["startTime"]) >= 180 for g in groups_of(second))


# --------------------------------------------------------------------------- grouping, topology, diagnose


@pytest.mark.parametrize(("case", "cliques"), [
    ("intra-rack-per-clique", {"clique-0": N[0:2], "clique-1": N[2:4], "clique-2": N[4:6]}),
    ("gb200-intra-rack-mnnvl", {"clique-0": N[0:4], "clique-1": N[4:8]}),
])
def test_intra_rack_runs_one_group_per_clique(case: str, cliques: dict[str, list[str]]) -> None:
    run = run_case(case)
    [workflow] = run.objects["Workflow"]
    assert {g["domains"][0]: g["nodes"] for g in groups_of(workflow)} == cliques
    [category] = run.report["categories"]
    assert [(c["name"], c["total"], c["passed"]) for c in category["cliques"]] == [(k, len(v), True) for k, v in cliques.items()]


def test_gb200_runs_with_mnnvl() -> None:
    [category] = run_case("gb200-intra-rack-mnnvl").report["categories"]
    assert category["gpu"] == "gb200" and category["mnnvl"] is True


def test_intra_rack_blames_only_the_slow_clique() -> None:
    [category] = run_case("intra-rack-slow-clique").report["categories"]
    assert [(c["name"], c["passed"]) for c in category["cliques"]] == [("clique-0", True), ("clique-1", False), ("clique-2", True)]


@pytest.mark.parametrize(("case", "limit"), [("diagnose-flaky-and-fabric", 8), ("full-scale-on-failure-repeated", 8), ("intra-rack-on-failure-diagnose", 0)])
def test_the_engine_launches_each_diagnose_round_as_planned_at_once(case: str, limit: int) -> None:
    """Issue 10's first deliverable, from the engine's side: each round the state machine planned (testScale
    diagnose, or onFailure's rounds after the iterations) runs as one wave, every group of it started together, no
    node in two of its groups, at most maxConcurrent of them, and no round overlapping the next."""
    run = run_case(case)
    [workflow] = run.objects["Workflow"]
    records = finished_iterations(workflow)
    assert len(records) >= 3
    for record, following in zip(records, [*records[1:], None], strict=True):
        groups = record["groups"]
        nodes = [n for g in groups for n in g["nodes"]]
        assert len({g["startTime"] for g in groups}) == 1 and len(nodes) == len(set(nodes)), record["iteration"]
        assert not limit or len(groups) <= limit
        if following is not None:
            assert max(at(g["completionTime"]) for g in groups) <= at(following["groups"][0]["startTime"])


@pytest.mark.parametrize(("case", "faulty"), [("diagnose-slow-gpu", ["gpu-node-06"]), ("diagnose-degraded-nic", ["gpu-node-02"]), ("diagnose-all-healthy", [])])
def test_diagnose_verdicts(case: str, faulty: list[str]) -> None:
    [category] = run_case(case).report["categories"]
    state = category["diagnose"]
    assert state["stage"] == "complete"
    assert state["faultyNodes"] == faulty and state["inconclusiveNodes"] == []
    assert sorted(state["healthyNodes"]) == [n for n in N if n not in faulty]
    for node in faulty:  # a confirmed node carries the evidence of the test that convicted it
        [record] = evidence(category, node)
        assert record["metric"] == "busBandwidthGBps" and record["measured"] < 300


def test_a_hardware_fault_after_a_pass_convicts_its_node_faulty_and_no_partner() -> None:
    """gpu-node-05 passed screening, then the node health check flagged it (its GPU fell off the bus, the node was
    cordoned): it read "intermittent, failed 4 of 5 tests" after four more tests that each failed on the health check
    again, and each of those tests was held against its partner too."""
    [category] = run_case("diagnose-hardware-fault-after-a-pass").report["categories"]
    state = category["diagnose"]
    assert state["faultyNodes"] == ["gpu-node-02", "gpu-node-05"] and state["intermittentNodes"] == [] and state["inconclusiveNodes"] == []
    flagged = [t for t in state["tests"] if t.get("hardware")]
    assert [t["hardware"] for t in flagged] == [["gpu-node-05"]] and flagged[0]["reason"] == HW  # convicted at once: no test after
    assert any(t["passed"] for t in state["tests"] if "gpu-node-05" in t["nodes"])  # the premise: it passed before
    [row] = [v for v in state["verdicts"] if v["node"] == "gpu-node-05"]
    assert row["verdict"] == "faulty" and f"{flagged[0]['group']} {HW})" in row["record"]
    partners = [n for n in flagged[0]["nodes"] if n != "gpu-node-05"]
    assert partners and all(n in state["healthyNodes"] or n in state["faultyNodes"] for n in partners)
    others = [v["record"] for v in state["verdicts"] if v["node"] in partners]  # a convicted partner's record names whose fault it was
    assert all(f"{flagged[0]['group']} {HW} on gpu-node-05" in record for record in others if flagged[0]["group"] in record)


def test_a_fabric_wide_fault_says_what_was_measured_and_what_to_check_everywhere() -> None:
    """A fault naming every clique read "tests across them fail and tests inside them pass (or the threshold asks more
    than the path between cliques gives)": a hedge, no value. Now one wording, in the Workflow's message (the report's
    Reason), the JSON, the text report and the console: the tests across cliques that failed, the best value against
    the threshold, what to check."""
    run = run_case("diagnose-fabric-wide")
    [category] = run.report["categories"]
    [fault] = category["diagnose"]["infrastructureFaults"]
    assert fault["cliques"] == ["clique-0", "clique-1", "clique-2", "clique-3"]
    best = max(m["value"] for m in fault["evidence"]["failedTests"])
    said = fault["message"]
    assert said.startswith(f"degraded fabric between all 4 cliques: {len(fault['tests'])} of {len(fault['tests'])} tests across them failed ({fault['tests'][0]}, ")
    assert f", best {best:.2f} GB/s against value >= 300, " in said and "check the network between the cliques" in said
    assert "or the threshold" not in said
    [failed] = [c for c in run.workflow("nccl-all-reduce")["status"]["conditions"] if c["type"] == "Failed"]
    assert failed["message"].endswith(f"infrastructure fault: {said}")
    text = render_text(run.report)
    # the message says the best value: no span of the same values after it (it said the best twice)
    assert f"Infra fault:  {said}\n" in text and f"  - {said} [communication/nccl-all-reduce]" in text
    view = CertificationView.of(run.objects["Certification"][0], run.objects["Workflow"], run.objects["Job"])
    assert [f.message for f in category_faults(view.categories[0])] == [said]


@pytest.mark.parametrize("case", ["diagnose-cordoned-between-rounds", "diagnose-cordoned-before-its-test-started"])
def test_a_node_cordoned_before_its_test_started_is_excluded_never_convicted(case: str) -> None:
    """gpu-node-05 passed screening and was cordoned before its next test's workload started (between rounds, or after
    its round was planned): the node health check flagged that test at its Job's first look, and the diagnosis read it
    as a hardware fault during a test, 'faulty' on a test that never ran on it. Now that test (if planned) is untested,
    its partner not held to it, and gpu-node-05 is excluded Cordoned, in no later test, never blamed."""
    run = run_case(case)
    [category] = run.report["categories"]
    state = category["diagnose"]
    assert state["faultyNodes"] == ["gpu-node-02"] and state["inconclusiveNodes"] == [] and state["intermittentNodes"] == []
    assert "gpu-node-05" not in [f["name"] for f in category["failedNodes"]]
    assert [(e["name"], e["reason"]) for e in category["excludedNodes"]] == [("gpu-node-05", "Cordoned")]
    after = [t for t in state["tests"] if "gpu-node-05" in t["nodes"] and t["round"] > 0]
    assert all(t["passed"] is None and "hardware" not in t for t in after)  # ran nothing: no evidence either way
    partners = {n for t in after for n in t["nodes"]} - {"gpu-node-05"}
    assert all(n in state["healthyNodes"] for n in partners)
    ref = run.workflow("nccl-all-reduce")["status"]["succeededNodesRef"]["name"]
    [configmap] = [c for c in run.objects["ConfigMap"] if c["metadata"]["name"] == ref]
    assert "gpu-node-05" not in read_succeeded_nodes(configmap) and "gpu-node-06" in read_succeeded_nodes(configmap)  # left out: never certified


def test_on_failure_diagnose_starts_from_every_iteration() -> None:
    """A node that failed only the first of two iterations is evidence the diagnosis weighs: it is rechecked, not
    cleared by the second iteration's pass; its record names the first iteration's test."""
    [category] = run_case("repeat-on-failure-every-iteration").report["categories"]
    state = category["diagnose"]
    assert state["intermittentNodes"] == ["gpu-node-02"] and state["faultyNodes"] == ["gpu-node-07"]
    imported = {t["group"]: t["passed"] for t in state["tests"] if "gpu-node-02" in t["nodes"] and "-iter-" in t["group"]}
    assert imported == {"group-0-iter-1": False, "group-0-iter-2": True}  # the premise: the last iteration passed it


def test_repeat_count_runs_each_iteration_and_blames_only_the_flaky_node() -> None:
    run = run_case("repeat-count-flaky-node")
    [category] = run.report["categories"]
    statuses = [i["status"] for i in category["iterations"]]
    assert len(statuses) == 3 and "Succeeded" in statuses and "Failed" in statuses
    names = sorted(j["metadata"]["name"] for j in run.objects["Job"])
    assert names == [f"repeat-count-flaky-node-communication-nccl-all-reduce-group-0-iter-{i}" for i in (1, 2, 3)]


def test_a_failed_category_does_not_stop_the_next() -> None:
    run = run_case("training-too-few-gpus")
    first, second = run.report["categories"]
    assert "needs at least 32 GPUs" in first["failureReason"] and "testScale" not in first
    assert second["status"] == "Succeeded" and second["jobs"] == 1


def test_cordoned_node_is_excluded_from_a_category_rendered_after_the_cordon() -> None:
    run = run_case("cordon-during-first-category")
    first, second = run.report["categories"]
    assert first["totalNodes"] == 4 and second["totalNodes"] == 3
    assert [e["name"] for e in second["excludedNodes"]] == ["gpu-node-02"]


def test_a_node_that_leaves_the_target_between_categories_is_named_not_silently_untested() -> None:
    run = run_case("node-leaves-target-between-categories")
    first, second = run.report["categories"]
    assert first["totalNodes"] == 4 and second["totalNodes"] == 3
    [left] = second["excludedNodes"]
    assert left["name"] == "gpu-node-04" and left["reason"] == "LeftTarget" and "no longer matches the target" in left["message"]
    assert run.report["result"] == "INCOMPLETE"


def test_hardware_failure_sets_the_condition_on_the_job() -> None:
    for case in ("cordon-mid-run-full-scale", "cordon-mid-run-intra-node"):
        jobs = run_case(case).objects["Job"]
        flagged = [j for j in jobs if cond.is_true(j, "HardwareFailed")]
        assert len(flagged) == 1, case
        failed = cond.find(flagged[0]["status"]["conditions"], "Failed")
        assert failed and failed["reason"] == HW
        assert all(cond.phase(j) == "Succeeded" for j in jobs if j is not flagged[0])


def test_a_node_cordoned_in_one_iteration_fails_at_once_in_the_next() -> None:
    [workflow] = run_case("cordon-persists-into-next-iteration").objects["Workflow"]
    history = workflow["status"]["orchestration"]["iterationHistory"]
    first, second = ({g["name"]: g for g in record["groups"]} for record in history)
    assert first["group-1"]["reason"] == second["group-1"]["reason"] == HW
    assert seconds(second["group-1"]["startTime"], second["group-1"]["completionTime"]) == 0
    assert all(first[g]["phase"] == second[g]["phase"] == "Succeeded" for g in ("group-0", "group-2"))


def test_text_report_names_what_it_shows() -> None:
    """Labels say what a line is: an out-of-reach threshold, diagnose rounds (not iterations), and no
    bandwidth table for a category that measures none."""
    diagnose = render_text(run_case("diagnose-threshold-out-of-reach").report)
    assert "Out of reach:" in diagnose and "│ :" not in diagnose
    assert " rounds)" in diagnose and " iterations)" not in diagnose
    training = render_text(run_case("training-slow-gpu-tflops").report)
    assert "Failed Groups:" in training and "Bandwidth by group" not in training


def test_a_node_archived_as_passed_carries_the_measurements_of_a_test_it_passed() -> None:
    """The history keeps one Job's evidence and measurements per node: a healthy partner of a slow node in a failed
    diagnose test is archived with the value of a test it passed, not the failed test's (another node's) value."""
    from nvcre_tui.engine.history.record import category_results

    run = run_case("repeat-on-failure-every-iteration")
    [cert] = run.objects["Certification"]
    [workflow] = run.objects["Workflow"]
    results = category_results(cert, workflow, run.objects["Job"], [])
    passed = {r.node: r.measurements for r in results if r.state == "passed"}
    assert "gpu-node-08" in passed  # sat beside the slow gpu-node-07 in failed tests, and passed others
    assert all(values.get("busBandwidthGBps", 300) >= 300 for values in passed.values()), passed


def test_a_diagnose_tests_blame_the_diagnosis_cleared_is_said_beside_it() -> None:
    """A failed link test blames its members; the diagnosis then clears them (the link was at fault): the report says
    so beside that test, never leaving healthy nodes under ThresholdViolation with nothing more."""
    [category] = run_case("diagnose-flaky-and-fabric").report["categories"]
    healthy = set(category["diagnose"]["healthyNodes"])
    cleared = {name for group in category["failedGroups"] for name in group.get("clearedNodes") or []}
    blamed = {f["name"] for group in category["failedGroups"] for f in group["failedNodes"]}
    assert cleared and cleared == blamed & healthy


def test_two_degraded_links_of_one_clique_are_named_as_the_two_pairs() -> None:
    """clique-2's links to clique-0 and clique-1 are degraded, its link to clique-3 is not: two pairs, not its uplink
    (which a test with clique-3 passed), and every node healthy."""
    [category] = run_case("diagnose-two-degraded-links").report["categories"]
    faults = category["diagnose"]["infrastructureFaults"]
    assert sorted(tuple(f["cliques"]) for f in faults) == [("clique-0", "clique-2"), ("clique-1", "clique-2")]
    assert len(category["diagnose"]["healthyNodes"]) == 32


def test_the_html_size_curves_say_why_a_groups_curve_is_missing() -> None:
    """A group whose pods never ran has no log to read (not NoDataCollected), and a simulated run read without the
    simulated fleet (a report without --sim-runner on a cluster) has no pod holding its output."""
    from nvcre_tui.engine.report.html import size_curves

    class NoPods:
        async def lines(self, run: dict[str, Any]) -> list[str]:
            return []

    run = run_case("intra-rack-per-clique")
    runs = [dict(r) for r in run.objects["WorkloadRun"]]
    runs[0] = {**runs[0], "status": {**runs[0]["status"], "phase": "Failed", "reason": "WorkloadNotStarted"}}
    curves, notes = asyncio.run(size_curves(NoPods(), run.objects["Workflow"], run.objects["Job"], runs))
    assert not curves
    [said] = notes.values()
    assert "no pod ran (WorkloadNotStarted)" in said and "a simulated run, whose output only --sim-runner makes" in said
    assert "NoDataCollected" not in said
    assert said.count("a simulated run, whose output only --sim-runner makes") == 1, f"one sentence for all its groups, said once: {said}"


def test_a_crash_its_log_puts_on_a_node_is_no_evidence_against_the_link_it_crossed() -> None:
    """The flaky node crashes a test between clique-0 and clique-3 and its log names it: the node is intermittent,
    and the one link named is the degraded pair (clique-1, clique-2), not the pair its crash crossed."""
    [category] = run_case("diagnose-flaky-crash-across-cliques").report["categories"]
    state = category["diagnose"]
    assert state["intermittentNodes"] == ["gpu-node-05"] and not state.get("faultyNodes")
    assert [f["cliques"] for f in state["infrastructureFaults"]] == [["clique-1", "clique-2"]]
    crashed = [t["group"] for t in state["tests"] if t["stage"] == "link" and t.get("culprits") == ["gpu-node-05"]]
    assert crashed == ["r2-link-2"], "the crash of a link test, its culprit recorded on it"


def test_on_failure_diagnose_after_repeated_full_scale_runs_splits_the_group() -> None:
    """Two iterations of one full-scale group are one group run again, not two tests of the links: the diagnosis
    splits it and names the slow GPU's node; a diagnosis the iterations already decide finishes at once."""
    [category] = run_case("full-scale-on-failure-repeated").report["categories"]
    assert category["diagnose"]["faultyNodes"] == ["gpu-node-07"] and not category["diagnose"]["inconclusiveNodes"]
    assert any(t["group"].startswith("r1-part-") for t in category["diagnose"]["tests"])
    [decided] = run_case("on-failure-decided-by-iterations").report["categories"]
    assert decided["status"] == "Failed" and decided["diagnose"]["faultyNodes"] == ["gpu-node-03"]
    assert all("-iter-" in t["group"] for t in decided["diagnose"]["tests"])  # no round of its own
