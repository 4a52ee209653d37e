"""`--sim-runner` on an API server plays only the Nodes its scenario registers: a Node it does not know may be a
real GPU node, and made-up measurements must never pass it (or fail it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import installed_in_thread, store_on

CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: strangers}
spec:
  target: {nodeNames: [dgx-01]}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node}
"""


async def _add_gpu_node(kubeconfig: Path, name: str, provider: str | None = None, *, labelled: bool = False) -> None:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                  "nvidia.com/gpu.count": "8", **({"nvcre.nvidia.com/simulated": "true"} if labelled else {})}
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
        if provider:
            node["spec"] = {"providerID": provider}
        await store.create(NODE, node)
    finally:
        await store.close()


def test_a_node_the_scenario_does_not_describe_is_not_played_and_blamed_on_nobody(tmp_path: Path) -> None:
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT)
    results = tmp_path / "results.json"
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_add_gpu_node(kubeconfig, "dgx-01"))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(cert),
                     "--wait", "--results-file", str(results)])
    report = json.loads(results.read_text())
    assert code == 1 and report["result"] == "FAILED"
    [category] = report["categories"]
    [group] = category["failedGroups"]
    assert group["reason"] == "WorkloadNotCreated" and "dgx-01 is no node of the simulated fleet" in group["message"]
    assert not report["failedNodes"]  # nothing tested it: nobody blamed


def test_a_report_of_runs_the_simulated_fleet_played_says_so(tmp_path: Path) -> None:
    """--sim-runner on a cluster: the report, read apart from the run, must not pass for one of real GPUs."""
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT.replace("nodeNames: [dgx-01]", "nodeNames: [gpu-node-01]"))
    results = tmp_path / "results.json"
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(cert),
                     "--wait", "--results-file", str(results)])
    report = json.loads(results.read_text())
    assert code == 0 and report["result"] == "PASSED"
    assert "simulated fleet" in report["simulated"] and "made up" in report["simulated"]


def test_a_real_node_with_a_scenario_nodes_name_is_not_played(tmp_path: Path) -> None:
    """A walkthrough's cluster had real GPU Nodes gpu-node-01..04: the fleet took them for its own (they existed) and
    recorded made-up passes in their history (`baseline: current`). A Node without the simulated label is not the
    fleet's, whatever its name: its group fails WorkloadNotCreated, naming it, and nobody is blamed."""
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT.replace("nodeNames: [dgx-01]", "nodeNames: [gpu-node-01, gpu-node-02]"))
    results = tmp_path / "results.json"
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_add_gpu_node(kubeconfig, "gpu-node-01", "aws:///us-east-1a/i-0real"))  # the same platform
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(cert),
                     "--wait", "--results-file", str(results)])
    report = json.loads(results.read_text())
    assert code == 1 and report["result"] == "FAILED"
    [category] = report["categories"]
    [group] = category["failedGroups"]  # intra-node: gpu-node-02 (the fleet's own) passed
    assert group["reason"] == "WorkloadNotCreated" and group["nodes"] == ["gpu-node-01"]
    assert "gpu-node-01 of the cluster carries the name of a node of the simulated fleet" in group["message"]
    assert not report["failedNodes"]


def test_a_real_node_labelled_simulated_by_someone_else_is_not_played_nor_written(tmp_path: Path) -> None:
    """The label alone made a Node the fleet's: a real gpu-node-01 someone labelled simulated (or a copy of a simulated
    Node) was played, cordoned as the scenario times it, and deleted by `setup reset`. The server's managedFields say who
    set the label: only a Node the simulator registered is its own."""
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT.replace("nodeNames: [dgx-01]", "nodeNames: [gpu-node-01, gpu-node-02]"))
    results = tmp_path / "results.json"
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_add_gpu_node(kubeconfig, "gpu-node-01", "aws:///us-east-1a/i-0real", labelled=True))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(cert),
                     "--wait", "--results-file", str(results)])
        written = [(r.verb, r.subresource) for r in server.requests if r.resource == "nodes" and r.name == "gpu-node-01"
                   and r.verb not in ("get", "list", "watch") and r.user_agent != "nvcre-test"]
    report = json.loads(results.read_text())
    assert code == 1 and report["result"] == "FAILED"
    [category] = report["categories"]
    [group] = category["failedGroups"]
    assert group["reason"] == "WorkloadNotCreated" and group["nodes"] == ["gpu-node-01"]
    assert "gpu-node-01 of the cluster carries the name of a node of the simulated fleet" in group["message"]
    assert "or one another client set" in group["message"]
    assert not report["failedNodes"]
    assert [w for w in written if w[0] != "create"] == []  # its create met AlreadyExists; nothing else


async def _older_fleet(kubeconfig: Path, names: list[str]) -> None:
    """Nodes as an nvcre from before the simulated label registered them with --sim-runner: created by the simulator's
    client (user agent nvcre-sim: the server records it as their field manager), without that label."""
    from nvcre_tui.engine.sim.scenario import default_scenario
    from nvcre_tui.engine.sim.scenario import build_nodes

    store = await store_on(kubeconfig, SystemClock(), "nvcre-sim")
    try:
        for node in build_nodes(default_scenario()):
            if node["metadata"]["name"] in names:
                node["metadata"]["labels"] = {k: v for k, v in node["metadata"]["labels"].items() if not k.startswith("nvcre.nvidia.com/")
                                              and k != "app.kubernetes.io/managed-by"}
                status = node.pop("status")
                stored = await store.create(NODE, node)
                await store.update_status(NODE, {**stored, "status": status})
    finally:
        await store.close()


def test_the_nodes_an_older_sim_runner_registered_are_played_counted_and_reset_as_its_own(tmp_path: Path, capsys) -> None:
    """After an upgrade, the older fleet's Nodes (no simulated label) read as real GPU nodes: `--sim-runner` refused to play
    them (every group WorkloadNotCreated), `setup status` counted them as real (kubelets missing) and `setup reset` left
    them. The server says the simulator alone wrote them: they are the fleet's. One someone else touched stays a stranger."""
    cert = tmp_path / "cert.yaml"
    cert.write_text(CERT.replace("nodeNames: [dgx-01]", "nodeNames: [gpu-node-01]"))
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_older_fleet(kubeconfig, ["gpu-node-01", "gpu-node-02"]))

        async def touch() -> None:  # a user labelled gpu-node-02: not the simulator's alone any more
            store = await store_on(kubeconfig, SystemClock(), "kubectl-label")
            try:
                node = await store.get(NODE, "gpu-node-02")
                node["metadata"]["labels"]["team"] = "a"
                await store.update(NODE, node)
            finally:
                await store.close()

        asyncio.run(touch())
        capsys.readouterr()
        assert main(["setup", "status", "--kubeconfig", str(kubeconfig)]) in (0, 1)
        rows = {line.split()[0] + " " + line.split()[1]: " ".join(line.split()) for line in capsys.readouterr().out.splitlines()}
        assert "1 simulated by --sim-runner" in rows["gpu nodes"], rows["gpu nodes"]
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(cert), "--wait"])
        out = capsys.readouterr().out
        assert code in (0, 1) and "WorkloadNotCreated" not in out and "were not registered by it" not in out, out

        async def labels(name: str) -> dict[str, str]:
            store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
            try:
                return (await store.get(NODE, name))["metadata"]["labels"]
            finally:
                await store.close()

        assert asyncio.run(labels("gpu-node-01")).get("nvcre.nvidia.com/simulated") == "true"  # adopted
        assert "nvcre.nvidia.com/simulated" not in asyncio.run(labels("gpu-node-02"))  # not the simulator's alone: left as it is
        assert main(["setup", "reset", "--yes", "--force", "--kubeconfig", str(kubeconfig)]) == 0
        out = capsys.readouterr().out
        assert [line for line in out.splitlines() if line.startswith("deleted the ")] == [
            "deleted the 31 simulated Nodes --sim-runner registered: gpu-node-01, gpu-node-03, gpu-node-04 and 28 more"], out
        assert asyncio.run(labels("gpu-node-02"))["team"] == "a"
