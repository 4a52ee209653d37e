"""A run whose fabric its nodes do not let be rendered (GKE A3 Edge H100: GPUDirect-TCPXO is A3 Mega's, TCPX A3 High's)
still runs, over TCP, and says why: a FabricNotRendered Warning Event on the run, and its FabricNotRendered condition
(a note on its result). A run on A3 Mega nodes carrying the
8 GPU NIC networks gets the daemon sidecar and their networks, and no such Event, from Kubernetes 1.29 on: an older API
server drops the sidecar's restartPolicy (the daemon would never exit, nor the pod complete), so there the fabric is not
rendered either, and the note names the server's version."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import FABRIC_NOT_RENDERED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import BATCH_JOB, EVENT, JOB, NODE, WORKLOADRUN
from tests.kube.cluster import installed, store_on
from tests.runner.harness import job_and_its_run, register_gpu_nodes

NODES = ["gpu-node-01", "gpu-node-02"]
SPEC = {"image": "nvcr.io/nvidia/pytorch:25.06-py3", "numNodes": 2, "gpusPerNode": 8, "target": {"nodeNames": NODES},
        "framework": {"torch": {"script": "train.py"}},
        "env": [{"name": "NCCL_FASTRAK_IFNAME", "value": "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"}]}


def _scenario(folder: Path, machine: str) -> Path:
    path = folder / "scenario.yaml"
    path.write_text(json.dumps({"name": "gke", "seed": 1, "nodes": [
        {"count": 2, "providerID": "gce://project/us-central1-c/gke-a3-{index:02d}", "labels": {"node.kubernetes.io/instance-type": machine}}]}))
    return path


async def _start(folder: Path, machine: str, networks: int, minor: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """The run's status, the Events on it and its batch Job, once the runner started it on two GKE H100 nodes (of an API
    server of Kubernetes 1.`minor` when given)."""
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock) as (server, kubeconfig):
        if minor is not None:
            server.version_info.update(minor=minor, gitVersion=f"v1.{minor}.0-nvcre-emulator")
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        try:
            await register_gpu_nodes(admin, clock, load_scenario(_scenario(folder, machine)))
            for name in NODES:  # GKE lists a node pool's networks in its Nodes' allocatable
                node = await admin.get(NODE, name)
                allocatable = {**node["status"]["allocatable"], **{f"networking.gke.io.networks/gpu-nic{i}": "1" for i in range(networks)}}
                await admin.patch_status(NODE, name, None, {"allocatable": allocatable}, None)
            job, created = await job_and_its_run(admin, SPEC, NODES)
            runner = KubernetesRunner(admin, clock, admin, trainer=False)
            try:
                await runner.reconcile_run(created)
            finally:
                await runner.close()
            run = await admin.get(WORKLOADRUN, "cert-job-run", "default")
            events = [e for e in (await admin.list(EVENT, "default")).items if e["involvedObject"].get("name") == "cert-job-run"]
            return run["status"], events, await admin.get(BATCH_JOB, "cert-job-workload", "default")
        finally:
            await admin.close()


def test_a_run_on_a3_edge_nodes_goes_over_tcp_and_says_why(tmp_path: Path) -> None:
    status, events, job = asyncio.run(_start(tmp_path, "a3-edgegpu-8g", networks=4))
    assert status["phase"] == "Scheduling", status
    why = ("GPUDirect-TCPXO or GPUDirect-TCPX not rendered: GPUDirect-TCPXO: node gpu-node-01 is "
           "node.kubernetes.io/instance-type=a3-edgegpu-8g")
    assert [(e["type"], e["reason"]) for e in events] == [("Warning", FABRIC_NOT_RENDERED)]
    assert events[0]["message"].startswith(why)
    # the same note on the run's result (its Job carries it to the report and the console: tests/engine/test_fabric_note_report.py)
    [noted] = [c for c in status["conditions"] if c["type"] == FABRIC_NOT_RENDERED]
    assert (noted["status"], noted["message"]) == ("True", events[0]["message"])
    assert "initContainers" not in job["spec"]["template"]["spec"]


def test_a_run_on_a3_mega_nodes_gets_the_daemon_and_their_networks(tmp_path: Path) -> None:
    status, events, job = asyncio.run(_start(tmp_path, "a3-megagpu-8g", networks=8))
    assert status["phase"] == "Scheduling" and events == [], status
    assert FABRIC_NOT_RENDERED not in [c["type"] for c in status.get("conditions") or []]
    template = job["spec"]["template"]
    assert [c["name"] for c in template["spec"]["initContainers"]] == ["tcpxo-daemon"]
    attached = json.loads(template["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [a["network"] for a in attached] == ["default", *(f"gpu-nic{i}" for i in range(8))]


def test_a_run_on_a3_mega_nodes_of_a_server_older_than_1_29_goes_over_tcp_and_says_why(tmp_path: Path) -> None:
    status, events, job = asyncio.run(_start(tmp_path, "a3-megagpu-8g", networks=8, minor="28"))
    assert status["phase"] == "Scheduling", status
    assert [(e["type"], e["reason"]) for e in events] == [("Warning", FABRIC_NOT_RENDERED)]
    assert events[0]["message"] == (
        "GPUDirect-TCPXO not rendered: this API server is Kubernetes 1.28, and its daemon tcpxo-daemon runs as "
        "a native sidecar (an init container with restartPolicy: Always), from Kubernetes 1.29 on: an older server drops "
        "that field, and the daemon, never exiting, would hold the pod until the Job's timeout; NCCL between the nodes "
        "goes over TCP on eth0")
    [noted] = [c for c in status["conditions"] if c["type"] == FABRIC_NOT_RENDERED]
    assert (noted["status"], noted["message"]) == ("True", events[0]["message"])
    template = job["spec"]["template"]
    assert "initContainers" not in template["spec"] and "networking.gke.io/interfaces" not in (template["metadata"].get("annotations") or {})


def test_a_run_on_a3_mega_nodes_of_kubernetes_1_29_gets_the_daemon(tmp_path: Path) -> None:
    status, events, job = asyncio.run(_start(tmp_path, "a3-megagpu-8g", networks=8, minor="29"))
    assert status["phase"] == "Scheduling" and events == [], status
    assert [c["name"] for c in job["spec"]["template"]["spec"]["initContainers"]] == ["tcpxo-daemon"]
