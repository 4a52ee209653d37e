"""On the API-server emulator: a Nemotron category planned on the cluster's Nodes, which allocate 491Gi of memory (an 8x
L40S server of 512 GB), creates pods those Nodes can take, and the test kubelet (playing kube-scheduler) runs them.
The catalog's 500Gi request, as it was rendered before, left every pod Pending, Unschedulable (`Insufficient memory`),
and the run waited out its pending bound to fail."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.fit import cannot_host
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.planning.render import render_certification
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, NODE, POD, WORKLOADRUN
from nvcre_tui.engine.workloads import group_run_spec
from tests.kube.cluster import installed, store_on
from tests.kubeapi.kubelet import TestKubelet
from tests.runner.harness import comparable, emulator_report, job_and_its_run, register_gpu_nodes, simulator_report

NODES = ["gpu-node-01", "gpu-node-02"]
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: t, namespace: default}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: training, variant: nemotron5-8b}
"""


DAEMON = "node-agent-gpu-node-01"


async def _started(folder: Path, daemon_memory: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """The run's status, the cluster's Nodes, the batch Job the runner created for the category's group, and its pods
    once the test kubelet had the time to place them; `daemon_memory`: what a daemonset's pod already bound to
    gpu-node-01 requests (kube-scheduler counts it against the Node's allocatable)."""
    scenario = folder / "scenario.yaml"
    scenario.write_text(json.dumps({"name": "l40s", "seed": 1, "nodes": [
        {"count": 2, "gpuProduct": "NVIDIA-L40S", "providerID": "onprem://{index}"}]}))
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            fleet = load_scenario(scenario)
            await register_gpu_nodes(admin, clock, fleet)
            for name in NODES:  # what a 512 GB server's kubelet reports, less what it reserves
                node = await admin.get(NODE, name)
                allocatable = {**node["status"]["allocatable"], "cpu": "127900m", "memory": "491Gi"}
                await admin.patch_status(NODE, name, None, {"allocatable": allocatable}, None)
            if daemon_memory is not None:
                await admin.create(POD, {"metadata": {"name": DAEMON, "namespace": "default"}, "spec": {"nodeName": NODES[0], "containers": [
                    {"name": "agent", "image": "agent", "resources": {"requests": {"memory": daemon_memory}}}]}})
            nodes = (await admin.list(NODE)).items
            catalog = default_catalog()
            rendered = render_certification(certification_from_text("c.yaml", CERT, catalog), nodes, catalog, "c.yaml")[0]
            spec = rendered.workflow.spec.job_template.spec.workload.workload_run
            assert spec is not None
            wire = {**group_run_spec(spec, NODES).to_wire(), "target": {"nodeNames": NODES}}  # as the Job controller writes it
            _, created = await job_and_its_run(admin, wire, NODES)
            runner = KubernetesRunner(admin, clock, admin, trainer=False)
            try:
                await runner.reconcile_run(created)
                kubelet = TestKubelet(admin, server, clock, fleet)
                for _ in range(3):  # the pods made, then (the scheduling time past) placed
                    await kubelet.step()
                    clock.advance(fleet.physics.scheduling_sec + 1)
                await runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default"))  # what it makes of them
            finally:
                await runner.close()
            run = await admin.get(WORKLOADRUN, "cert-job-run", "default")
            pods = [pod for pod in (await admin.list(POD, "default")).items if pod["metadata"]["name"] != DAEMON]
            return run["status"], nodes, await admin.get(BATCH_JOB, "cert-job-workload", "default"), pods
        finally:
            await admin.close()


def test_training_pods_fit_nodes_allocating_less_than_the_catalogs_figures(tmp_path: Path) -> None:
    status, nodes, job, pods = asyncio.run(_started(tmp_path))
    assert status["phase"] == "Running", status  # the runner, looking again once the kubelet placed them
    # placed and running (before: Pending, Unschedulable, `0/1 nodes are available: 1 Insufficient memory.`)
    assert sorted((p["spec"].get("nodeName"), p["status"]["phase"]) for p in pods) == [(name, "Running") for name in NODES], \
        [p["status"] for p in pods]
    pod = job["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["requests"]["memory"] == "392Gi"  # 80% of 491Gi
    # the scheduler's fit rule, which the runner blames unplaced members by: before, "491Gi memory allocatable, 500Gi requested"
    assert {node["metadata"]["name"]: cannot_host(node, pod) for node in nodes} == dict.fromkeys(NODES)


def test_a_daemonsets_requests_within_the_share_left_leave_the_pods_room(tmp_path: Path) -> None:
    """A daemonset's pod requesting 90Gi on gpu-node-01: 392Gi (80% of 491Gi) still fits beside it, as kube-scheduler
    counts (allocatable less the bound pods' requests): both pods placed."""
    status, _, _, pods = asyncio.run(_started(tmp_path, daemon_memory="90Gi"))
    assert sorted((p["spec"].get("nodeName"), p["status"]["phase"]) for p in pods) == [(name, "Running") for name in NODES], \
        [p["status"] for p in pods]


def test_a_node_whose_other_pods_hold_more_than_the_share_left_keeps_the_pod_pending_blaming_no_node(tmp_path: Path) -> None:
    """A daemonset's pod requesting 120Gi on gpu-node-01 leaves 371Gi, less than the 392Gi asked: the test kubelet, as
    kube-scheduler, leaves the pod Pending (Insufficient memory; before, it counted allocatable alone and ran it). By
    its Node object gpu-node-01 could take the pod, so the run waits Unschedulable and convicts no node, naming the node
    and the pod holding its room (before: only that the members "could take their pods")."""
    status, _, _, pods = asyncio.run(_started(tmp_path, daemon_memory="120Gi"))
    placed = {p["spec"].get("nodeName"): p["status"].get("phase") for p in pods if p["spec"].get("nodeName")}
    assert placed == {NODES[1]: "Running"}, [p["status"] for p in pods]
    waiting = [p["status"]["conditions"][0] for p in pods if not p["spec"].get("nodeName")]
    assert [(c["reason"], c["message"]) for c in waiting] == [("Unschedulable", "0/1 nodes are available: 1 Insufficient memory.")]
    assert (status["phase"], status.get("reason")) == ("Scheduling", "Unschedulable"), status
    assert not status.get("blockedNodes") and status["message"] == ("0/1 nodes are available: 1 Insufficient memory. (gpu-node-01: "
                                                                    "120Gi of 491Gi memory requested by default/node-agent-gpu-node-01, 392Gi needed)"), status


def test_a_node_too_small_for_the_workload_is_left_out_on_the_cluster_as_in_the_simulator(tmp_path: Path) -> None:
    """node-short-of-memory on the emulator (batch fallback, the test kubelet placing the pods): gpu-node-05 allocates
    60Gi, too little for Nemotron's least. The Workflow's own discovery leaves it out, named with what it has and what a
    pod asks; no pod is made for it, nothing blames it, the four others are certified: INCOMPLETE, as the simulator."""
    report, objects = asyncio.run(emulator_report(tmp_path, "node-short-of-memory", trainer=False))
    assert comparable(report) == comparable(simulator_report("node-short-of-memory"))
    assert (report["result"], report["failedNodes"]) == ("INCOMPLETE", [])
    said = {"name": "gpu-node-05", "reason": "InsufficientResources", "message": "60Gi memory allocatable, 1200Gi requested"}
    assert report["excludedNodes"] == [said] and report["categories"][0]["excludedNodes"] == [said]
    assert report["excludedNodes"] == simulator_report("node-short-of-memory")["excludedNodes"]
    assert all(pod["spec"].get("nodeName") != "gpu-node-05" for pod in objects["pods"]) and objects["pods"]
    assert objects["denied"] == []


def test_a_node_whose_share_is_below_the_ask_is_left_out_on_the_cluster_as_in_the_simulator(tmp_path: Path) -> None:
    """node-below-its-share on the emulator: gpu-node-05 allocates 79Gi, more than the 64Gi a pod asks (80% of the
    81Gi the others allocate), less than that ask's share. The Workflow's own discovery, reading the share render
    recorded, leaves it out as render did, named; no pod is made for it, nothing blames it: INCOMPLETE."""
    report, objects = asyncio.run(emulator_report(tmp_path, "node-below-its-share", trainer=False))
    simulated = simulator_report("node-below-its-share")
    assert comparable(report) == comparable(simulated)
    assert (report["result"], report["failedNodes"]) == ("INCOMPLETE", [])
    said = {"name": "gpu-node-05", "reason": "InsufficientResources", "message": "79Gi memory allocatable, 64Gi requested: "
            "more than the 80% a pod may ask, the rest being the node's other pods' (daemonsets)"}
    assert report["excludedNodes"] == [said] == simulated["excludedNodes"]
    assert all(pod["spec"].get("nodeName") != "gpu-node-05" for pod in objects["pods"]) and objects["pods"]
    assert objects["denied"] == []
