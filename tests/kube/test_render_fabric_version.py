"""`certification render --workloads` on a cluster's Nodes renders GKE's TCPXO fabric as the runner would there: on an
API server older than Kubernetes 1.29 (no native sidecars) not at all, with the note naming the server's version."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import installed_in_thread, store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.runner.harness import register_gpu_nodes

CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: gke}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce}
"""


async def _a3_mega_nodes(kubeconfig: Path, folder: Path) -> None:
    """Two GKE A3 Mega nodes listing the 8 GPU NIC networks TCPXO attaches."""
    scenario = folder / "scenario.yaml"
    scenario.write_text(json.dumps({"name": "gke", "seed": 1, "nodes": [
        {"count": 2, "providerID": "gce://project/us-central1-c/gke-a3-{index:02d}",
         "labels": {"node.kubernetes.io/instance-type": "a3-megagpu-8g"}}]}))
    clock = ManualClock(SIM_START)
    admin = await store_on(kubeconfig, clock, "nvcre-test")
    try:
        await register_gpu_nodes(admin, clock, load_scenario(scenario))
        for node in (await admin.list(NODE)).items:
            allocatable = {**node["status"]["allocatable"], **{f"networking.gke.io.networks/gpu-nic{i}": "1" for i in range(8)}}
            await admin.patch_status(NODE, node["metadata"]["name"], None, {"allocatable": allocatable}, None)
    finally:
        await admin.close()


@pytest.mark.parametrize("minor", ["28", "29"])
def test_render_workloads_reads_the_clusters_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], minor: str) -> None:
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT)
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        server.version_info.update(minor=minor, gitVersion=f"v1.{minor}.0-nvcre-emulator")
        asyncio.run(_a3_mega_nodes(kubeconfig, tmp_path))
        assert main(["certification", "render", str(cert), "--workloads", "--kubeconfig", str(kubeconfig)]) == 0
    out = capsys.readouterr().out
    if minor == "28":
        assert ("# GPUDirect-TCPXO not rendered: this API server is Kubernetes 1.28, and its daemon tcpxo-daemon "
                "runs as a native sidecar") in out, out[:2000]
        assert "name: tcpxo-daemon" not in out and "networking.gke.io/interfaces" not in out
    else:
        assert "not rendered" not in out and "name: tcpxo-daemon" in out, out[:2000]
