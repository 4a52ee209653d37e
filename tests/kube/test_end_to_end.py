"""End to end on an API server: `setup init`, a `--sim-runner` certification with `--wait`, its report from a
second command, all through the real CLI over HTTP; the report equals the embedded simulator's."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import CERTIFICATION, CONFIGMAP, CRD, NODE
from tests import envtest
from tests.kube.cluster import installed_in_thread, store_on

ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "examples" / "certification.yaml"
# Wall-clock fields: the cluster run starts at the real time, the embedded one at the simulator's epoch.
CLOCK_FIELDS = ("startTime", "completionTime")
# ... and the timestamps a kept log tail's lines carry (kubelet's --timestamps, the simulator's the same way).
LOG_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def without_clock(report: dict[str, Any]) -> dict[str, Any]:
    kept = {key: value for key, value in report.items() if key not in CLOCK_FIELDS}
    return json.loads(LOG_TIMESTAMP.sub("<time>", json.dumps(kept)))


@pytest.fixture(scope="module", params=["emulator", "kube-apiserver"])
def cluster_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The run on the emulator (installed as `setup init` installs), or on a real kube-apiserver + etcd when
    KUBEBUILDER_ASSETS names them (installed by `nvcre setup init --sim-runner` itself; skipped without)."""
    folder = tmp_path_factory.mktemp("e2e")
    if request.param == "emulator":
        with installed_in_thread(folder) as (server, kubeconfig):
            return {**_run(folder, kubeconfig), "requests": list(server.requests)}
    assets = envtest.assets_dir()
    if assets is None:
        pytest.skip(envtest.SKIP_REASON)
    with envtest.ControlPlane(assets, folder) as plane:
        kubeconfig = plane.write_kubeconfig(folder / "kubeconfig")
        assert main(["setup", "init", "--sim-runner", "--kubeconfig", str(kubeconfig)]) == 0
        return {**_run(folder, kubeconfig), "requests": None}  # a real server keeps no request log


def _run(folder: Path, kubeconfig: Path) -> dict[str, Any]:
    """`certification run --sim-runner --wait`, then `certification report` from a second command, and what they left."""
    results = folder / "run.json"
    code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(CERT),
                 "--wait", "--results-file", str(results)])
    reported = folder / "report.json"
    report_code = main(["certification", "report", "gpu-cluster-cert", "--kubeconfig", str(kubeconfig),
                        "--results-file", str(reported), "-o", "json"])
    objects = asyncio.run(_read(kubeconfig))
    return {**objects, "code": code, "report_code": report_code, "run": json.loads(results.read_text()),
            "report": json.loads(reported.read_text())}


def request_log(cluster_run: dict[str, Any]) -> list[Any]:
    """The emulator's log of every request (a real API server's audit log is not configured here)."""
    if cluster_run["requests"] is None:
        pytest.skip("a real kube-apiserver keeps no request log here; the Nodes' managedFields are checked instead")
    return list(cluster_run["requests"])


async def _read(kubeconfig: Path) -> dict[str, Any]:
    """What `kubectl get` and NVSentinel's certification monitor read: the Certification, its CRD, ConfigMaps."""
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        cert = await store.get(CERTIFICATION, "gpu-cluster-cert", "default")
        crd = await store.get(CRD, "certifications.nvcre.nvidia.com")
        maps = {m["metadata"]["name"]: m for m in (await store.list(CONFIGMAP, "default")).items}
        nodes = (await store.list(NODE)).items
    finally:
        await store.close()
    return {"cert": cert, "crd": crd, "configmaps": maps, "nodes": nodes}


def json_path(obj: Any, path: str) -> Any:
    """The first value of a printer column's JSONPath (`.a.b`, `.list[?(@.k=="v")].field`), as kubectl shows it."""
    for part in re.findall(r'\.(\w+)(\[\?\(@\.(\w+)=="([^"]*)"\)\])?', path):
        name, _, key, value = part
        obj = obj.get(name) if isinstance(obj, dict) else None
        if key and isinstance(obj, list):
            obj = next((item for item in obj if isinstance(item, dict) and item.get(key) == value), None)
    return obj


def test_kubectl_get_shows_every_printer_column_filled(cluster_run: dict[str, Any]) -> None:
    [version] = cluster_run["crd"]["spec"]["versions"]
    columns = {c["name"]: json_path(cluster_run["cert"], c["jsonPath"]) for c in version["additionalPrinterColumns"]}
    assert columns == {"Status": "Failed", "Result": "FAILED", "Passed": "1/2", "Failed Nodes": 32, "Excluded Nodes": 0,
                       "Age": cluster_run["cert"]["metadata"]["creationTimestamp"]}


def test_nvsentinel_reads_the_results_from_category_statuses(cluster_run: dict[str, Any]) -> None:
    """As NVSentinel's certification monitor: only status.categoryStatuses[], gzip ConfigMaps in binaryData."""
    seen: dict[str, Any] = {}
    for category in cluster_run["cert"]["status"]["categoryStatuses"]:
        ref = category["failedNodesRef"] if category["status"] == "Failed" else category["succeededNodesRef"]
        assert ref["kind"] == "ConfigMap"
        data = cluster_run["configmaps"][ref["name"]]["binaryData"]
        raw = gzip.decompress(base64.b64decode(data["failed-nodes.json.gz" if category["status"] == "Failed" else "succeeded-nodes.csv.gz"]))
        seen[category["variant"]] = json.loads(raw) if category["status"] == "Failed" else raw.decode().split(",")
    failed = seen["nccl-all-reduce"]
    assert len(failed) == 32 and {row["reason"] for row in failed} == {"ThresholdViolation"}
    assert all(set(row) == {"name", "reason", "message"} for row in failed)
    assert [row["name"] for row in failed] == sorted(row["name"] for row in failed)
    assert seen["nemotron5-8b"] == [f"gpu-node-{i:02d}" for i in range(1, 33)]


def test_run_and_report_from_a_second_command_agree(cluster_run: dict[str, Any]) -> None:
    assert cluster_run["code"] == 1 and cluster_run["report_code"] == 1  # the example fails its 300 GB/s threshold
    assert cluster_run["run"] == cluster_run["report"]
    assert cluster_run["run"]["result"] == "FAILED"


def test_the_report_equals_the_embedded_simulators(cluster_run: dict[str, Any], tmp_path: Path) -> None:
    results = tmp_path / "sim.json"
    code = main(["certification", "run", "--sim", "--state", str(tmp_path / "state.json"), "--cert-file", str(CERT),
                 "--wait", "--results-file", str(results)])
    assert code == cluster_run["code"]
    assert without_clock(json.loads(results.read_text())) == without_clock(cluster_run["run"])


def test_only_the_simulated_fleet_ever_wrote_a_node(cluster_run: dict[str, Any]) -> None:
    """What the server recorded on each Node (managedFields: who wrote which fields), on either server."""
    nodes = cluster_run["nodes"]
    assert len(nodes) == 32
    managers = {entry["manager"] for node in nodes for entry in node["metadata"].get("managedFields") or []}
    assert managers and all(manager.startswith("nvcre-sim") for manager in managers), managers


def test_no_engine_request_writes_a_node(cluster_run: dict[str, Any]) -> None:
    requests = request_log(cluster_run)
    engine = [r for r in requests if r.user_agent.startswith("nvcre-engine")]
    assert engine, "the engine made no request"
    writes = [r for r in engine if r.resource == "nodes" and r.verb not in ("get", "list", "watch")]
    assert writes == []
    simulator = [r for r in requests if r.user_agent.startswith("nvcre-sim") and r.resource == "nodes" and r.verb == "create"]
    assert len(simulator) == 32  # the simulated fleet registered its Nodes (the cluster had none)


def test_the_engine_lists_each_kind_once_and_then_only_watches(cluster_run: dict[str, Any]) -> None:
    lists = [r for r in request_log(cluster_run) if r.user_agent.startswith("nvcre-engine") and r.verb == "list"]
    per_resource: dict[str, int] = {}
    for request in lists:
        per_resource[request.resource] = per_resource.get(request.resource, 0) + 1
    # the run's engine lists each cached kind once; the report command (a second process) lists what it reads
    assert all(count <= 3 for count in per_resource.values()), per_resource


def test_a_sim_runner_run_into_a_missing_namespace_registers_no_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The 32 simulated Nodes were registered before the Certification's create met the missing namespace: bad
    input left the cluster changed."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "-n", "nosuchns", "--sim-runner",
                     "--cert-file", str(CERT), "--wait"])
        writes = [r for r in server.requests if r.method != "GET"]
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "namespace nosuchns not found" in err, err
    assert not [r for r in writes if "/nodes" in r.path], [r.path for r in writes]


def test_the_nodes_a_sim_runner_registered_are_said_simulated_and_reset_removes_them(tmp_path: Path,
                                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """They stayed for good, Ready and labelled as GPU nodes with nothing to tell them from real ones: `setup status`
    counted "32 of 32" GPU nodes and a later run without --sim-runner targeted them."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        node = ROOT / "tests" / "cases" / "scenarios" / "all-pass-every-category"
        assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(node / "scenario.yaml"),
                     "--cert-file", str(node / "cert.yaml"), "--wait", "--cleanup"]) == 0
        capsys.readouterr()
        assert main(["setup", "status", "--kubeconfig", str(kubeconfig)]) == 0
        status = capsys.readouterr().out
        registered = len(server.objects("", "nodes"))
        assert registered and f"{registered} simulated by --sim-runner" in status, status
        # Nodes the simulator did not register (a real GPU node; one labelled simulated by hand; a copy of a simulated
        # one, labels and all), and one an older nvcre's simulator registered (labelled simulated only)
        asyncio.run(_other_nodes(kubeconfig))
        assert main(["setup", "reset", "--kubeconfig", str(kubeconfig), "--yes"]) == 0
        out, err = capsys.readouterr()
        names = sorted(n["metadata"]["name"] for n in asyncio.run(_nodes(kubeconfig)))
        assert names == ["copied", "labelled-by-hand", "real-gpu"]
        # one line for the fleet, not one per Node
        assert [line for line in out.splitlines() if "node" in line.lower()] == [
            f"deleted the {registered + 1} simulated Nodes --sim-runner registered: gpu-node-01, gpu-node-02, gpu-node-03 and "
            f"{registered - 2} more"], out
        assert err.splitlines() == [
            "nvcre setup reset: left 2 Nodes labelled nvcre.nvidia.com/simulated=true that the simulator did not register (another "
            "client set that label): copied, labelled-by-hand; nvcre never deletes a Node it did not make"], err
        assert not [r for r in server.requests if r.resource == "nodes" and r.verb == "delete"
                    and r.name in ("copied", "labelled-by-hand", "real-gpu")]


async def _other_nodes(kubeconfig: Path) -> None:
    from nvcre_tui.engine.kube.session import SIMULATOR_AGENT

    simulated = {"nvidia.com/gpu.present": "true", "nvcre.nvidia.com/simulated": "true"}
    store = await store_on(kubeconfig, SystemClock(), "test-admin")
    older = await store_on(kubeconfig, SystemClock(), SIMULATOR_AGENT)
    try:
        for name, labels in (("real-gpu", {"nvidia.com/gpu.present": "true"}), ("labelled-by-hand", simulated),
                             ("copied", {**simulated, "app.kubernetes.io/managed-by": "nvcre-simulator"})):
            await store.create(NODE, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
        await older.create(NODE, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "zz-older-sim", "labels": simulated}})
    finally:
        await store.close()
        await older.close()


async def _nodes(kubeconfig: Path) -> list[dict]:
    store = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        return (await store.list(NODE)).items
    finally:
        await store.close()


def test_a_sim_runner_run_its_plan_refuses_registers_no_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cluster with a real GPU Node its target also matches (another platform than the fleet's): the plan is refused
    (exit 2, heterogeneous platforms), and the 32 simulated Nodes and the fleet's ConfigMap the session had written
    first stayed."""
    from tests.kube.test_setup import _gpu_node

    async def real_gpu_node(kubeconfig: Path) -> None:
        store = await store_on(kubeconfig, SystemClock(), "kubectl")
        try:
            await store.create(NODE, _gpu_node("real-gpu"))
        finally:
            await store.close()

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(real_gpu_node(kubeconfig))
        before = len(server.requests)
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(CERT), "--wait"])
        writes = [r for r in server.requests[before:] if r.method != "GET"]
    err = capsys.readouterr().err
    assert code == 2 and "heterogeneous platforms: aws (gpu-node-01" in err and "Traceback" not in err, err
    assert writes == [], sorted({r.path for r in writes})  # no Node, no fleet ConfigMap, no Lease, no Certification
