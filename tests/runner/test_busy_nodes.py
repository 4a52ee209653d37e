"""On the API-server emulator, a shared cluster: another team's pods (not nvcre's) hold a target node's GPUs. The test
kubelet, as kube-scheduler, counts their requests against the Node's allocatable, so an nvcre pod there would never be
placed: its whole group waited out the scheduling grace and failed WorkloadNotStarted, none of its nodes tested, the
certification FAILED, the holders unnamed."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import LABEL_JOB
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.runners.kubernetes import POLL_SECONDS, KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import Scenario, load_scenario
from nvcre_tui.engine.store.protocol import NAMESPACE as NAMESPACE_KIND
from nvcre_tui.engine.store.protocol import NODE, POD, WORKLOADRUN
from nvcre_tui.engine.workloads import group_run_spec
from tests.kube.cluster import installed, store_on
from tests.kubeapi import Fault
from tests.kubeapi.kubelet import TestKubelet
from tests.runner.harness import emulator_report, job_and_its_run, pods_caught_up, register_gpu_nodes

Obj = dict[str, Any]


def on_prem(folder: Path, nodes: int = 4) -> Scenario:
    """Four (`nodes`) 8-GPU nodes on premises (no EFA devices asked)."""
    (folder / "fleet.yaml").write_text(json.dumps({"name": "shared", "seed": 11, "nodes": [
        {"count": nodes, "cliques": 1, "providerID": "onprem://{index}"}]}))
    return load_scenario(folder / "fleet.yaml")


def others_pod(name: str, node: str, gpus: int, *, namespace: str = "team-a", phase: str = "Running") -> Obj:
    """Another team's pod bound to `node`, holding `gpus` of its GPUs."""
    return {"metadata": {"name": name, "namespace": namespace}, "status": {"phase": phase}, "spec": {"nodeName": node, "containers": [
        {"name": "train", "image": "team-a/train", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}


def test_a_node_whose_gpus_others_pods_hold_is_left_out_named_never_blamed_and_the_rest_certified(tmp_path: Path) -> None:
    """gpu-node-02's 8 GPUs are held by team-a's two training pods: its Workflow leaves it out as it starts (NodeBusy,
    naming the pods and what they hold), no nvcre pod is made for it, nothing blames it, and the three others are
    certified: INCOMPLETE. A finished pod of team-b on gpu-node-03 holds nothing: that node is certified."""
    pods = [others_pod("trainer-0", "gpu-node-02", 4), others_pod("trainer-1", "gpu-node-02", 4),
            others_pod("done-0", "gpu-node-03", 8, namespace="team-b", phase="Succeeded")]
    report, objects = asyncio.run(emulator_report(tmp_path, "all-pass-full-scale", trainer=False, pods=pods, scenario=on_prem(tmp_path)))
    busy = {"name": "gpu-node-02", "reason": "NodeBusy", "message": "8 of 8 nvidia.com/gpu requested by team-a/trainer-0, team-a/trainer-1, 8 needed"}
    assert (report["result"], report["failedNodes"], report["excludedNodes"]) == ("INCOMPLETE", [], [busy]), report
    category = report["categories"][0]
    assert (category["status"], category["failedGroups"], category["excludedNodes"]) == ("Succeeded", [], [busy])
    ran_on = sorted(str(pod["spec"].get("nodeName")) for pod in objects["pods"] if "nvcre.nvidia.com/job" in pod["metadata"].get("labels", {}))
    assert ran_on == ["gpu-node-01", "gpu-node-03", "gpu-node-04"]
    assert objects["denied"] == []  # one pods list a node, under the engine's own grants
    assert objects["occupant_reads"] == [f"list spec.nodeName=gpu-node-0{n}" for n in range(1, 5)]


CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: t, namespace: default}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: full-scale}}
"""


async def _waiting(folder: Path, members: tuple[str, ...] = ("gpu-node-01", "gpu-node-02"), held: tuple[str, ...] = ("gpu-node-01",),
                   looks: tuple[float, ...] = ()) -> tuple[dict[str, Any], list[str]]:
    """The status of a run over `members` (gpu-node-01 and gpu-node-02), planned while all were free, once team-a's
    training took the 8 GPUs of each `held` (gpu-node-01; after planning: the Workflow could not leave it out) and the
    test kubelet had the time to place what it could; and the field selectors of the pods lists the runner (apart from
    its pod watch) made to name who holds the room, at that look and at one more after each of `looks` seconds."""
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            fleet = on_prem(folder, len(members) + 2)
            await register_gpu_nodes(admin, clock, fleet)
            nodes = (await admin.list(NODE)).items
            catalog = default_catalog()
            rendered = render_certification(certification_from_text("c.yaml", CERT, catalog), nodes, catalog, "c.yaml")[0]
            spec = rendered.workflow.spec.job_template.spec.workload.workload_run
            assert spec is not None
            wire = {**group_run_spec(spec, list(members)).to_wire(), "target": {"nodeNames": list(members)}}
            _, created = await job_and_its_run(admin, wire, members)
            await admin.create(NAMESPACE_KIND, {"metadata": {"name": "team-a"}})
            for index, node in enumerate(held):
                await admin.create(POD, others_pod(f"trainer-{index}", node, 8))
            runner = KubernetesRunner(admin, clock, admin, trainer=False)
            try:
                await runner.reconcile_run(created)
                kubelet = TestKubelet(admin, server, clock, fleet)
                for _ in range(3):  # the pods made, then (the scheduling time past) placed where there is room
                    await kubelet.step()
                    clock.advance(fleet.physics.scheduling_sec + 1)
                await pods_caught_up(runner, admin)
                before = len(server.requests)
                await runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default"))
                for seconds in looks:
                    clock.advance(seconds)
                    await runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default"))
                reads = [str(r.query.get("fieldSelector")) for r in server.requests[before:] if r.resource == "pods" and r.verb == "list"
                         and not r.subresource and r.query.get("labelSelector") != LABEL_JOB]
            finally:
                await runner.close()
            status: dict[str, Any] = (await admin.get(WORKLOADRUN, "cert-job-run", "default"))["status"]
            return status, reads
        finally:
            await admin.close()


def test_a_run_waiting_for_a_node_others_pods_took_after_planning_names_the_node_and_the_pods(tmp_path: Path) -> None:
    """The pod on gpu-node-01 stays Pending (Insufficient nvidia.com/gpu): the run waits, blaming no node (its Node could
    take the pod), and says which node is busy and why in one line, from the pods bound there: that line is the Job's
    WorkloadPending message (`run --wait`, `report`, the console's job rows) and, past the scheduling grace, its
    WorkloadNotStarted one. Before, it said only that GPUs "may be held by other pods"."""
    status, _ = asyncio.run(_waiting(tmp_path))
    assert (status["phase"], status.get("reason"), status.get("blockedNodes")) == ("Scheduling", "Unschedulable", None), status
    assert status["message"] == ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
                                 "(gpu-node-01: 8 of 8 nvidia.com/gpu requested by team-a/trainer-0, 8 needed)"), status


def test_every_waiting_member_is_read_for_its_holders_in_one_pods_list(tmp_path: Path) -> None:
    """Ten members, each of whose GPUs team-a took after planning: all ten are read for the pods holding them, in one pods
    list (the cluster's unfinished pods, each member's picked out by spec.nodeName), not one list a member for the first
    eight; the first three are named and the others counted."""
    members = tuple(f"gpu-node-{n:02d}" for n in range(1, 11))
    status, reads = asyncio.run(_waiting(tmp_path, members, members))
    assert (status["phase"], status.get("reason"), status.get("blockedNodes")) == ("Scheduling", "Unschedulable", None), status
    named = "; ".join(f"gpu-node-{n:02d}: 8 of 8 nvidia.com/gpu requested by team-a/trainer-{n - 1}, 8 needed" for n in range(1, 4))
    assert status["message"] == f"0/1 nodes are available: 1 Insufficient nvidia.com/gpu. ({named}; and 7 more)", status
    assert reads == ["status.phase!=Succeeded,status.phase!=Failed"], reads


async def _occupants_of_many(folder: Path, nodes: int = 12) -> tuple[dict[str, list[Obj]], list[str]]:
    """What others_on finds on twelve target nodes (more than OCCUPANT_READS) where team-a's pods run on two, one of
    them finished and one pod nvcre's, and the pods reads it made for it."""
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock, bare=True) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-engine-test")
        try:
            await admin.create(NAMESPACE_KIND, {"metadata": {"name": "team-a"}})
            ours = others_pod("cert-run-0", "gpu-node-04", 8)
            ours["metadata"]["labels"] = {"nvcre.nvidia.com/job": "cert-run"}
            for pod in (others_pod("trainer-0", "gpu-node-02", 8), others_pod("done-0", "gpu-node-03", 8, phase="Succeeded"),
                        others_pod("trainer-1", "gpu-node-12", 4), others_pod("elsewhere-0", "cpu-node-01", 1), ours):
                await admin.create(POD, pod)
                await admin.patch_status(POD, pod["metadata"]["name"], "team-a", pod["status"])
            runner = KubernetesRunner(admin, clock, admin, trainer=False)
            before = len(server.requests)
            try:
                found = await runner.others_on([f"gpu-node-{n:02}" for n in range(1, nodes + 1)])
            finally:
                await runner.close()
            reads = [f"{r.verb} {r.query.get('fieldSelector')}" for r in server.requests[before:] if r.resource == "pods"]
            return {node: pods for node, pods in found.items() if pods}, reads
        finally:
            await admin.close()


def test_the_pods_on_many_target_nodes_are_read_in_one_list_not_one_a_node(tmp_path: Path) -> None:
    """A category over more nodes than OCCUPANT_READS reads the pods holding them in one list of the cluster's unfinished
    pods not nvcre's, split by node: it listed each node's, a thousand lists as a 1,000-node category's Workflow started,
    each read whole from etcd by the API server (a field selector filters after the read). The same pods are found:
    others' unfinished pods on a target node only."""
    found, reads = asyncio.run(_occupants_of_many(tmp_path))
    assert {node: [pod["metadata"]["name"] for pod in pods] for node, pods in found.items()} == {
        "gpu-node-02": ["trainer-0"], "gpu-node-12": ["trainer-1"]}
    assert reads == ["list status.phase!=Succeeded,status.phase!=Failed"]


def test_a_waiting_run_looked_at_again_within_a_minute_reads_who_holds_its_room_once(tmp_path: Path) -> None:
    """Each look at a run waiting for room listed the pods of its waiting members again (up to OCCUPANT_READS lists a
    look, at every pod event and each minute: hundreds of waiting runs of a second certification over the same 1,000
    nodes made thousands of lists a minute). What was read is said again for a minute (POLL_SECONDS), then read anew."""
    status, reads = asyncio.run(_waiting(tmp_path, looks=(1.0, 30.0, POLL_SECONDS)))
    assert "team-a/trainer-0" in status["message"], status
    assert reads == ["spec.nodeName=gpu-node-01", "spec.nodeName=gpu-node-01"]


@pytest.mark.parametrize("nodes", [4, 12])
def test_of_others_pods_only_what_holds_room_is_kept(tmp_path: Path, nodes: int) -> None:
    """Of each pod bound to a target node (one list a node, or one for all), the engine keeps what kube-scheduler
    counts as room held (its name, phase and containers' requests), not the whole object: a 1,000-node fleet's
    daemonset and training pods, tens of thousands of objects with their managedFields, env and volumes, were held whole
    while the category started (the engine's pod is limited to 1Gi), and a list of the cluster's pods was held whole
    until its last page was read."""
    found, _ = asyncio.run(_occupants_of_many(tmp_path, nodes))
    trainer = found["gpu-node-02"][0]
    assert trainer == {"metadata": {"name": "trainer-0", "namespace": "team-a", "uid": trainer["metadata"]["uid"]},
                       "spec": {"nodeName": "gpu-node-02", "containers": [{"resources": {"limits": {"nvidia.com/gpu": "8"}}}]},
                       "status": {"phase": "Running"}}




def test_a_category_every_node_of_which_is_busy_tests_nothing_blames_none_and_reads_incomplete(tmp_path: Path) -> None:
    """All four nodes' GPUs held by team-a, and still after the wait for a node (discovery.NODE_WAIT, as a cordoned
    fleet's): the category can test no node and none is at fault. Its Workflow fails NodesUnavailable (not
    NodeDiscoveryError) naming the first holders and the nodes, the report lists every node with what holds it,
    and the certification reads FAILED under that reason (nothing measured is nothing certified: INCOMPLETE exits 0 as a
    pass does), no node blamed."""
    pods = [others_pod(f"trainer-{n}", f"gpu-node-0{n}", 8) for n in range(1, 5)]
    report, objects = asyncio.run(emulator_report(tmp_path, "all-pass-full-scale", trainer=False, pods=pods, scenario=on_prem(tmp_path)))
    busy = [{"name": f"gpu-node-0{n}", "reason": "NodeBusy", "message": f"8 of 8 nvidia.com/gpu requested by team-a/trainer-{n}, 8 needed"}
            for n in range(1, 5)]
    assert (report["result"], report["failedNodes"], report["excludedNodes"]) == ("FAILED", [], busy), report
    category = report["categories"][0]
    assert (category["status"], category["excludedNodes"]) == ("Failed", busy)
    assert category["failureReason"] == (
        "no node to test, every one the target selects unavailable (4 nodes: GPUs, CPUs or memory a pod needs held by other "
        "pods (not nvcre's) (the first, gpu-node-01: 8 of 8 nvidia.com/gpu requested by team-a/trainer-1, 8 needed); "
        "gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04): nothing tested, no node blamed")
    [cert] = objects["Certification"]
    assert [(c["type"], c["reason"]) for c in cert["status"]["conditions"] if c["status"] == "True" and c["type"] in ("Succeeded", "Failed")] == [
        ("Failed", "NodesUnavailable")], cert["status"]["conditions"]
    assert not [pod for pod in objects["pods"] if "nvcre.nvidia.com/job" in pod["metadata"].get("labels", {})]
    assert category["notRun"] == "NodesUnavailable"
    case = ET.fromstring(render_junit([report]).split("\n", 1)[1]).find("testsuite/testcase")
    assert case is not None and case.find("failure") is None  # JUnit: an error (it could not run), no failed check
    error = case.find("error")
    assert error is not None and str(error.get("message")).startswith("category did not run: NodesUnavailable")


def test_a_node_taken_after_planning_leaves_its_group_untested_named_never_blamed_and_the_rest_certified(tmp_path: Path) -> None:
    """One node a group (intra-node: gpu-node-02 alone), planned free; team-a's training takes its 8 GPUs as the first run
    starts. Its pod waits Pending out the scheduling grace (120 s, said on the way with the holder), its Job fails
    WorkloadNotStarted blaming nobody; read again then, gpu-node-02 is excluded NodeBusy naming team-a/trainer-0 and its
    group recorded untested (NodeBusy): the three others certified, the certification INCOMPLETE. Before: FAILED, the
    holder named only in the Job's message, gpu-node-02 neither excluded nor named in the result."""
    later = [others_pod("trainer-0", "gpu-node-02", 8)]
    report, objects = asyncio.run(emulator_report(tmp_path, "unschedulable-intra-node", trainer=False, later=later, scenario=on_prem(tmp_path)))
    busy = {"name": "gpu-node-02", "reason": "NodeBusy",
            "message": "8 of 8 nvidia.com/gpu requested by team-a/trainer-0, 8 needed (after its group was planned)"}
    assert (report["result"], report["failedNodes"], report["excludedNodes"]) == ("INCOMPLETE", [], [busy]), report
    category = report["categories"][0]
    assert (category["status"], category["excludedNodes"]) == ("Succeeded", [busy]), category
    [group] = category["failedGroups"]
    assert (group["nodes"], group["reason"], group["failedNodes"]) == (["gpu-node-02"], "NodeBusy", []), group
    ran = {str(pod["spec"].get("nodeName")): pod["status"].get("phase") for pod in objects["pods"]
           if "nvcre.nvidia.com/job" in pod["metadata"].get("labels", {}) and pod["spec"].get("nodeName")}
    assert ran == {"gpu-node-01": "Succeeded", "gpu-node-03": "Succeeded", "gpu-node-04": "Succeeded"}, ran
    [workflow] = objects["Workflow"]
    done = next(c for c in workflow["status"]["conditions"] if c["type"] == "Succeeded")
    assert done["status"] == "True" and "1 group untested, members taken by other pods after planning" in done["message"], done


def test_a_full_scale_group_whose_member_was_taken_after_planning_tests_nothing_and_reads_incomplete(tmp_path: Path) -> None:
    """The one full-scale group of four, gpu-node-02 taken after planning: the whole group waits out the grace and runs
    nothing; gpu-node-02 is excluded naming its holder, the other three untested, none blamed, and with no group run the
    Workflow fails NodesUnavailable, as where every node is busy as it starts: FAILED, no node blamed."""
    later = [others_pod("trainer-0", "gpu-node-02", 8)]
    report, _ = asyncio.run(emulator_report(tmp_path, "all-pass-full-scale", trainer=False, later=later, scenario=on_prem(tmp_path)))
    assert (report["result"], report["failedNodes"], [e["name"] for e in report["excludedNodes"]]) == ("FAILED", [], ["gpu-node-02"]), report
    category = report["categories"][0]
    assert (category["status"], category.get("notRun"), [g["reason"] for g in category["failedGroups"]]) == ("Failed", "NodesUnavailable", ["NodeBusy"])
    assert "team-a/trainer-0" in category["failureReason"], category["failureReason"]


@pytest.mark.parametrize(("status", "said"), [
    (400, "Pod: the proxy in between refused the request"),
    (403, 'Pod: pods is forbidden: User "nvcre-engine" cannot list resource "pods" in API group "" at the cluster scope'),
], ids=["proxy-400", "rbac-403"])
def test_a_failed_read_of_others_pods_leaves_no_node_out_fails_nothing_and_is_said_once(tmp_path: Path, status: int, said: str) -> None:
    """The pods list that finds nodes busy with others' pods answered 400 (a proxy in between) or 403 (the engine's role
    trimmed): read as nothing known, every node is tested and certified, and the Workflow says once, in a Warning Event,
    that no node was left out as busy. A 400 failed the category with ReconcileError, none of its nodes tested; a 403 was
    read as nothing known without a word."""
    fault = Fault(method="GET", path=r"/pods$", query=r"labelSelector=(!|%21)nvcre", status=status,
                  message="the proxy in between refused the request" if status == 400 else said.removeprefix("Pod: "))
    report, objects = asyncio.run(emulator_report(tmp_path, "all-pass-full-scale", trainer=False, scenario=on_prem(tmp_path), server_faults=(fault,)))
    assert (report["result"], report["failedNodes"], report["excludedNodes"]) == ("PASSED", [], []), report
    warned = [(e["involvedObject"]["kind"], e["reason"], e.get("count"), e["message"]) for e in objects["Event"] if e.get("type") == "Warning"]
    assert warned == [("Workflow", "BusyNodesUnknown", 1, f"the pods on its nodes could not be read ({said}): no node is left out as busy "
                                                            "with others' pods")], warned
    assert fault.hits == 4  # one list a node, once


class _Until(Fault):
    """A fault that answers while the engine's clock is before `until` (an API server failing for that long), then lets
    every request through."""

    def __init__(self, clock: ManualClock, until: datetime, **fields: Any) -> None:
        super().__init__(**fields)
        self.clock, self.until = clock, until

    def matches(self, method: str, path: str, query: str, user_agent: str) -> bool:
        return self.clock.now() < self.until and super().matches(method, path, query, user_agent)


def _busy_read_failing_for(folder: Path, seconds: float) -> tuple[Obj, list[tuple[str, str, Any, str]], _Until]:
    """The all-pass certification on four free nodes while the API server answers 503 to the pods list the busy check
    needs for the clock's first `seconds`; its report and the Workflow's Events (type, reason, count, message)."""
    clock = ManualClock(SIM_START)
    fault = _Until(clock, SIM_START + timedelta(seconds=seconds), method="GET", path=r"/pods$", query=r"labelSelector=(!|%21)nvcre",
                   status=503, message="etcdserver: leader changed")
    report, objects = asyncio.run(emulator_report(folder, "all-pass-full-scale", trainer=False, scenario=on_prem(folder),
                                                  server_faults=(fault,), clock=clock))
    events = [(e.get("type"), e["reason"], e.get("count"), e["message"]) for e in objects["Event"]
              if e["involvedObject"]["kind"] == "Workflow" and "busy" in e["reason"].lower()]
    return report, events, fault


def test_a_pods_list_the_busy_check_needs_failing_for_minutes_is_said_once_then_said_over(tmp_path: Path) -> None:
    """The API server answers 503 to the pods list that finds busy nodes for three minutes: the Workflow waits (retried
    with backoff), and once it has failed for BUSY_READ_PATIENCE its Workflow says so once in a Warning Event, with the
    error; when a later list answers, a Normal Event says it is over, and the four nodes are certified. Before, nothing
    said why the Workflow stood still: `certification describe` and the Events showed nothing."""
    report, events, fault = _busy_read_failing_for(tmp_path, 180)
    assert (report["result"], report["failedNodes"], report["excludedNodes"]) == ("PASSED", [], []), report
    assert fault.hits > 5, fault.hits  # retried all along
    [(kind, reason, times, said), (kind2, reason2, times2, said2)] = sorted(events, key=lambda e: e[0] != "Warning")
    assert (kind, reason, times) == ("Warning", "BusyNodesUnread", 1), events
    assert said.startswith("the pods on its nodes could not be read for 1m0") and "(the API server failed: " in said, said
    assert said.endswith("): it waits for them to tell busy nodes, retried with backoff"), said
    assert (kind2, reason2, times2) == ("Normal", "BusyNodesRead", 1), events
    assert said2.startswith("the pods on its nodes were read again, after failing for 3m"), said2


def test_a_pods_list_the_busy_check_needs_failing_briefly_is_not_said(tmp_path: Path) -> None:
    """A blip (503s for 20 s, an API server restarting) is retried without a word: no Event either way."""
    report, events, fault = _busy_read_failing_for(tmp_path, 20)
    assert (report["result"], events) == ("PASSED", []), (report["result"], events)
    assert fault.hits > 1, fault.hits
