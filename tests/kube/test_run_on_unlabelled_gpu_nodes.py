"""GPU Nodes made by hand on an API server alone (no GPU feature discovery to label them), labelled with their GPU
product, count and clique but not `nvidia.com/gpu.present=true`: `certification run --category` said only "none of the
2 Nodes matches the target", a target the user never wrote, and `setup status` counted them "2 of 2" GPU nodes. The
run now says that no Node is labelled nvidia.com/gpu.present=true, which every run's nodes need, and `setup status`
that these nodes lack it and that no run plans them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import certification_names, installed_in_thread, store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster

PRODUCT = "NVIDIA-H100-80GB-HBM3"


def _node(name: str, labels: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"nvidia.com/gpu": "8", "cpu": "192", "memory": "2000Gi"},
                       "allocatable": {"nvidia.com/gpu": "8", "cpu": "192", "memory": "2000Gi"}}}


async def _make_nodes(kubeconfig: Path, nodes: list[dict]) -> None:
    store = await store_on(kubeconfig, SystemClock(), "kubectl")
    try:
        for node in nodes:  # as `kubectl create -f` makes a Node: its status too (the store's create sends none)
            made = await store.create(NODE, node)
            await store.update_status(NODE, {**made, "status": node["status"]})
    finally:
        await store.close()


HAND_MADE = [_node(f"gpu-{i}", {"nvidia.com/gpu.product": PRODUCT, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.clique": "c1"})
             for i in (1, 2)]


def test_run_on_gpu_nodes_without_the_gpu_present_label_names_the_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_make_nodes(kubeconfig, [*HAND_MADE, _node("cpu-1", {})]))
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db"),
                "--category", "communication/nccl-all-reduce", "--wait"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        said = [line for line in err.splitlines() if line.strip()]
        assert len(said) == 1, err
        assert "none of the 3 Nodes matches the target" in said[0], err
        assert "none is labelled nvidia.com/gpu.present=true" in said[0], err
        assert asyncio.run(certification_names(kubeconfig)) == []


def test_setup_status_says_gpu_nodes_without_the_gpu_present_label_are_not_planned(tmp_path: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_make_nodes(kubeconfig, [*HAND_MADE, _node("gpu-3", {"nvidia.com/gpu.present": "true"})]))
        capsys.readouterr()
        main(["setup", "status", "--kubeconfig", str(kubeconfig)])
        out = capsys.readouterr().out
        row = next(line for line in out.splitlines() if line.startswith("gpu nodes"))
        assert "; 2 (gpu-1, gpu-2) not labelled nvidia.com/gpu.present=true" in row and row.endswith("no run plans them"), row
        main(["setup", "status", "--kubeconfig", str(kubeconfig), "-o", "json"])
        status = json.loads(capsys.readouterr().out)
        assert status["unlabelledGpuNodes"] == ["gpu-1", "gpu-2"], status


def test_cluster_info_says_there_is_no_gpu_node_not_no_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`Nodes: 3 (0 with GPUs)` then `Platform: unknown (no nodes to detect a platform from)`: there are Nodes."""
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_make_nodes(kubeconfig, [*HAND_MADE, _node("cpu-1", {})]))
        capsys.readouterr()
        assert main(["cluster", "info", "--kubeconfig", str(kubeconfig)]) == 0
        out = capsys.readouterr().out
        platform = next(line for line in out.splitlines() if line.startswith("Platform:"))
        assert platform.split(None, 1)[1] == "unknown (no GPU node (labelled nvidia.com/gpu.present=true) to detect a platform from)", out
