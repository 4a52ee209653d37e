"""`nvcre setup status`'s `gpu operator` row over real HTTP against the emulator: GPU Feature Discovery's node label
alone (a bare API server whose Nodes carry nvidia.com/gpu.present=true) is not the GPU Operator, and is said as what it
is; the operator is found by its own objects (its ClusterPolicy CRD, its namespace)."""

from __future__ import annotations

import json
import re

from nvcre_tui.engine.store import CRD, NAMESPACE, NODE
from tests.kube.test_setup import _gpu_node, admin, kubeconfig, no_user_cluster, nvcre, register_simulated, server  # noqa: F401 - fixtures
from tests.kube.test_status_probe import trainer_crd


def _row(out: str) -> list[str]:
    """The row's CHECK, STATE and DETAIL columns (the table pads them with two spaces or more)."""
    return re.split(r"\s{2,}", next(line for line in out.splitlines() if line.startswith("gpu operator")), maxsplit=2)


async def test_labelled_nodes_alone_are_not_the_gpu_operator(server, kubeconfig, admin, capsys) -> None:
    for name in ("gpu-a", "gpu-b"):
        await admin.create(NODE, _gpu_node(name))
    await register_simulated(kubeconfig, "sim-1")  # --sim-runner's fleet: its label proves nothing either
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 1 and _row(out) == [
        "gpu operator", "not found", "no clusterpolicies.nvidia.com or nvidiadrivers.nvidia.com CRD, no gpu-operator or "
        "nvidia-gpu-operator namespace; only 2 nodes labelled nvidia.com/gpu.present=true (the label GPU Feature Discovery / "
        "the GPU Operator sets)"]
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    report = json.loads(out)
    assert (report["gpuOperator"], report["gpuLabelledNodes"]) == ([], 2)


async def test_the_gpu_operator_is_found_by_its_own_objects(server, kubeconfig, admin, capsys) -> None:
    await admin.create(NODE, _gpu_node("gpu-a"))
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator"}})
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert _row(out) == ["gpu operator", "found", "namespace gpu-operator; 1 node labelled nvidia.com/gpu.present=true (the "
                                                  "label GPU Feature Discovery / the GPU Operator sets)"]
    crd = trainer_crd("clusterpolicies.nvidia.com")
    crd["spec"].update(scope="Cluster", names={"plural": "clusterpolicies", "singular": "clusterpolicy", "kind": "ClusterPolicy"})
    crd["spec"]["versions"][0].update(storage=True, schema={"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}})
    await admin.create(CRD, crd)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert _row(out)[2].startswith("clusterpolicies.nvidia.com CRD, namespace gpu-operator; 1 node labelled")
