"""On the API-server emulator, a shared cluster: another team's pods (not nvcre's) hold a target node's GPUs. The test
kubelet, as kube-scheduler, counts their requests against the Node's allocatable, so an nvcre pod there would never be
placed: its whole group waited out the scheduling grace and failed WorkloadNotStarted, none of its nodes tested, the
certification FAILED, the holders unnamed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from nvcre_tui.engine.sim.scenario import Scenario, load_scenario
from tests.runner.harness import emulator_report

Obj = dict[str, Any]


def on_prem(folder: Path) -> Scenario:
    """Four 8-GPU nodes on premises (no EFA devices asked)."""
    (folder / "fleet.yaml").write_text(json.dumps({"name": "shared", "seed": 11, "nodes": [
        {"count": 4, "cliques": 1, "providerID": "onprem://{index}"}]}))
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
