"""`nvcre cluster info`: the platform, GPU products and GPU nodes by rack, read with discovery's rules, from the
simulated fleet, a Node file, or a cluster (the API-server emulator over real HTTP); bad flags in one line."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.config import load_target
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kubeapi import ApiServer
from tests.kubeapi.fixtures import apiserver  # noqa: F401 - the fixture

CLIQUE = "nvidia.com/gpu.clique"


def node(name: str, *, product: str | None = "NVIDIA-GB200", provider: str = "gce://project/zone/", gpus: int | None = 4,
         block: str | None = "block-a", cordoned: bool = False, gpu: bool = True) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if gpu:
        labels["nvidia.com/gpu.present"] = "true"
    if product:
        labels["nvidia.com/gpu.product"] = product
    if block:
        labels[CLIQUE] = block
    spec: dict[str, Any] = {"providerID": provider + name}
    if cordoned:
        spec["unschedulable"] = True
    status = {"allocatable": {"nvidia.com/gpu": str(gpus)}} if gpus is not None else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}


FLEET = [node("gb-1"), node("gb-2"), node("gb-3", block="block-b", cordoned=True), node("gb-4", block=None),
         node("cpu-1", product=None, gpus=None, block=None, gpu=False)]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's usage errors
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def nodes_file(tmp_path: Path, nodes: list[dict[str, Any]]) -> str:
    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "NodeList", "items": nodes}))
    return str(path)


def test_the_simulated_fleet_by_clique(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "cluster", "info")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("Source:        the simulator (default: 32 x H100")
    assert lines[1:6] == ["Nodes:         32 (32 with GPUs)", "Platform:      aws", "GPU:           h100",
                          "  NVIDIA-H100-80GB-HBM3: 32 nodes, 256 GPUs", "Topology key:  nvidia.com/gpu.clique (intra-rack, diagnose)"]
    assert [line.split() for line in lines[7:]] == [[f"clique-{i}", "8", "64", "0"] for i in range(4)]


def test_a_node_file_read_as_discovery_reads_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GB200 on GCP by NVLink clique: the cordoned node is counted apart, the CPU node left out, a GPU node without
    the clique label is in no domain (intra-rack would leave it out)."""
    code, out, err = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, FLEET), "-o", "json")
    assert (code, err) == (0, "")
    found = json.loads(out)
    assert found == {
        "source": str(tmp_path / "nodes.yaml"), "nodes": 5, "gpuNodes": 4, "cordoned": 1, "platform": "gcp", "gpuArchitecture": "gb200",
        "topologyKey": CLIQUE, "topologyKeyDetected": True,
        "products": [{"product": "NVIDIA-GB200", "architecture": "gb200", "nodes": 4, "gpus": 16}],
        "domains": [{"name": "block-a", "nodes": 2, "gpus": 8, "cordoned": 0}, {"name": "block-b", "nodes": 1, "gpus": 4, "cordoned": 1},
                    {"name": "(none)", "nodes": 1, "gpus": 4, "cordoned": 0}],
        "excluded": {"Cordoned": 1}}
    code, out, _ = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, FLEET), "-o", "yaml", "--topology-key", "kubernetes.io/hostname")
    found = yaml.safe_load(out)
    assert code == 0 and found["topologyKey"] == "kubernetes.io/hostname" and found["topologyKeyDetected"] is False
    assert [d["name"] for d in found["domains"]] == ["gb-1", "gb-2", "gb-3", "gb-4"]


def test_a_fleet_on_two_platforms_is_described_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run refuses it; cluster info says why, so the SRE sees it before running."""
    mixed = [node("gb-1"), node("aws-1", provider="aws:///us-east-1a/", product="NVIDIA-H100-80GB-HBM3", block=None)]
    code, out, err = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, mixed))
    assert (code, err) == (0, "")
    assert "Platform:      heterogeneous (heterogeneous platforms: aws (aws-1), gcp (gb-1))" in out.splitlines()
    assert "  NVIDIA-GB200: 1 node, 4 GPUs" in out.splitlines()


def test_a_fleet_without_gpu_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, [FLEET[-1]]), "-o", "json")
    found = json.loads(out)
    assert (code, err) == (0, "")
    assert (found["gpuNodes"], found["platform"], found["gpuArchitecture"], found["domains"]) == (0, "unknown", None, [])


@pytest.mark.parametrize(("argv", "message"), [
    (["--topology-key", "not a key"], "--topology-key: 'not a key' is not a label key ([prefix/]name, as kubectl takes it)"),
    (["--nodes", "/nonexistent/nodes.yaml"], "/nonexistent/nodes.yaml: "),
    (["--nodes", "NODES", "--kubeconfig", "/nonexistent"], "--nodes and --kubeconfig/--context: each names the nodes to read; give one"),
    (["--nodes", "NODES", "--scenario", "S.yaml"], "--nodes and --scenario: each names the nodes to read; give one"),
    (["--scenario", "/nonexistent/s.yaml"], "/nonexistent/s.yaml: "),
    (["--scenario", "S.yaml", "--kubeconfig", "K"], "--scenario would be ignored"),
    (["-n", "Bad_NS!"], "--namespace: must be a lowercase DNS label"),
])
def test_bad_flags_in_one_line(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [nodes_file(tmp_path, FLEET) if arg == "NODES" else arg for arg in argv]
    code, out, err = run(capsys, "cluster", "info", *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(message) and "Traceback" not in err


def test_a_node_file_on_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(yaml.safe_dump_all(FLEET[:2])))
    code, out, err = run(capsys, "cluster", "info", "--nodes", "-", "-o", "json")
    assert (code, err) == (0, "") and json.loads(out)["gpuNodes"] == 2 and json.loads(out)["source"] == "stdin"


async def test_the_nodes_of_a_cluster(apiserver: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Over real HTTP, through the kubeconfig (the configured cluster is used without a flag)."""
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig", context="emulator")
    admin = KubeStore(await load_target(str(kubeconfig)), SystemClock(), user_agent="test-admin")
    try:
        for body in FLEET:
            await admin.create(NODE, {k: v for k, v in body.items() if k != "status"})
    finally:
        await admin.close()

    def shell(*argv: str) -> int:
        return main(list(argv))

    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    code = await asyncio.to_thread(shell, "cluster", "info", "-o", "json")
    out, err = capsys.readouterr()
    found = json.loads(out)
    assert (code, err) == (0, "")
    assert found["source"] == "cluster emulator"
    assert (found["nodes"], found["gpuNodes"], found["cordoned"], found["platform"]) == (5, 4, 1, "gcp")
    assert [(d["name"], d["nodes"]) for d in found["domains"]] == [("block-a", 2), ("block-b", 1), ("(none)", 1)]


async def test_nodes_with_gpus_but_no_gpu_present_label_are_named_not_dropped(
        apiserver: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Node registered by hand (or without GPU feature discovery) whose device plugin advertises 8 GPUs was silently
    left out: `Nodes: 3 (1 with GPUs)`, while `setup status` counted it a GPU node and no run would ever plan it. Now a
    note names it and why (JSON `withoutGPUPresentLabel`); a node with no GPU at all is not named."""
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig", context="emulator")
    bare = node("dgx-7", product=None, block=None, gpu=False, gpus=8)
    admin = KubeStore(await load_target(str(kubeconfig)), SystemClock(), user_agent="kubectl")
    try:
        for body in (FLEET[0], bare, FLEET[-1]):  # its allocatable GPUs as a device plugin reports them: nodes/status
            created = await admin.create(NODE, body)
            await admin.update_status(NODE, {**created, "status": body["status"]})
    finally:
        await admin.close()
    code = await asyncio.to_thread(main, ["cluster", "info", "--kubeconfig", str(kubeconfig)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert "Nodes:         3 (1 with GPUs)" in out.splitlines()
    assert ("Note:          1 node (dgx-7) with allocatable nvidia.com/gpu but not labelled nvidia.com/gpu.present=true, which "
            "GPU feature discovery (the GPU Operator) sets: no run plans it, whatever its target") in out.splitlines(), out
    code = await asyncio.to_thread(main, ["cluster", "info", "--kubeconfig", str(kubeconfig), "-o", "json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["withoutGPUPresentLabel"] == ["dgx-7"]


async def test_the_console_on_a_server_that_stopped_answering_is_one_line_before_the_screen(
        apiserver: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The console opened its session inside the app: a server that never answered left a blank screen that ignored
    q and ctrl-c until the transport gave up (about 190 s); now one discovery read says so first, in one line."""
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig", context="emulator")
    await apiserver.stop()
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    code = await asyncio.to_thread(main, ["--read-only"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"{apiserver.url} (kubeconfig {kubeconfig}): discovery: cannot connect to {apiserver.url}"), err
    assert "terminal" not in err, err


async def test_the_console_with_credentials_the_server_refuses_is_one_line_before_the_screen(
        apiserver: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """It said "nvcre: Unauthorized: discovery: Unauthorized (...)": the kind twice, and neither the server nor the
    kubeconfig, which every command's first read names."""
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig", token="not-a-token")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    code = await asyncio.to_thread(main, ["--read-only"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "terminal" not in err, err
    assert err.startswith(f"{apiserver.url} (kubeconfig {kubeconfig}): discovery: Unauthorized (the API server refused the "
                          "kubeconfig's credentials"), err
    assert err.count("Unauthorized") == 1, err


@pytest.mark.parametrize("command", [["cluster", "info"], ["certification", "render", "examples/burn-in.yaml"]])
async def test_a_command_that_reads_every_node_with_credentials_the_server_refuses_names_no_grant(
        apiserver: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """An expired token (401) was told as RBAC's refusal: "...; this command reads every Node: it takes get, list and watch
    on nodes ... (a ClusterRole with them and a ClusterRoleBinding)", sending the SRE to bind a role that would change
    nothing. Now the line says the credentials were refused, naming the server and the kubeconfig, and no grant."""
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig", token="expired-token")
    command = [str(Path(__file__).parents[1] / arg) if arg.endswith(".yaml") else arg for arg in command]
    code = await asyncio.to_thread(main, [*command, "--kubeconfig", str(kubeconfig)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"nodes of {apiserver.url} (kubeconfig {kubeconfig}): Node: Unauthorized (the API server refused the "
                          "kubeconfig's credentials"), err
    assert "ClusterRole" not in err and "takes" not in err, err


def test_cluster_info_refuses_a_nodes_file_whose_label_value_holds_control_characters(tmp_path: Path,
                                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A terminal escape in a label value was accepted (exit 0) and would reach the terminal; certification and
    scenario label values were checked already."""
    nodes = tmp_path / "n.json"
    nodes.write_text(json.dumps({"kind": "NodeList", "items": [{"metadata": {"name": "gpu-1", "labels": {
        "nvidia.com/gpu.product": "\u001b]0;x\u0007"}}}]}))
    assert main(["cluster", "info", "--nodes", str(nodes)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"{nodes}: items[0].metadata.labels.nvidia.com/gpu.product: must be a label value "
                                 "(letters, digits, '-', '_', '.'), got '\\x1b]0;x\\x07'\n")


def test_gpu_nodes_no_device_plugin_advertises_say_why_they_add_no_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GPU feature discovery labels nvidia.com/gpu.count, but no allocatable nvidia.com/gpu (no device plugin yet, or
    Nodes made by hand on an API server alone): "0 GPUs" alone read as a broken fleet; a note says why."""
    bare = [node(f"gb-{i}", gpus=None) for i in range(1, 8)]
    for item in bare:
        item["metadata"]["labels"]["nvidia.com/gpu.count"] = "4"
    fleet = [*bare, node("gb-9")]
    code, out, err = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, fleet))
    assert (code, err) == (0, "")
    assert "  NVIDIA-GB200: 8 nodes, 4 GPUs" in out.splitlines()
    assert ("Note:          7 GPU nodes (gb-1, gb-2, gb-3, gb-4, gb-5 and 2 more) labelled nvidia.com/gpu.count but no allocatable "
            "nvidia.com/gpu, which the NVIDIA device plugin advertises: their GPUs are not counted; a run still plans them, as the "
            "reference does (a device plugin may be restarting), and their pods wait for it") in out.splitlines()
    code, out, err = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, fleet), "-o", "json")
    assert json.loads(out)["withoutAllocatableGPUs"] == [f"gb-{i}" for i in range(1, 8)]
    code, out, err = run(capsys, "cluster", "info", "--nodes", nodes_file(tmp_path, FLEET), "-o", "json")
    assert "withoutAllocatableGPUs" not in json.loads(out)
