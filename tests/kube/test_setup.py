"""`nvcre setup init / status / reset` as a user runs them, over real HTTP against the API-server emulator.

The command runs in a worker thread (it owns its event loop, as from a shell) while the emulator serves
from the test's loop; stdout/stderr are captured, stdin is replaced to play a terminal or a pipe.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.api.vocabulary import ANNOTATION_SCHEMA_HASH
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.config import load_target
from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_objects
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.store import (
    CERTIFICATION, CLUSTER_ROLE, CLUSTER_ROLE_BINDING, CONFIGMAP, CRD, LEASE, NAMESPACE, NODE, ROLE, ROLE_BINDING, NotFound, kind_of,
)
from nvcre_tui.engine.store.kube import KubeStore
from tests import envtest
from tests.kubeapi import ApiServer, Fault
from tests.scenarios.harness import catalog

NS = "nvcre-system"
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: soak}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories: [{domain: communication, variant: nccl-loopback}]
"""


class Terminal(io.StringIO):
    """stdin as a terminal that will type `answer`."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def no_user_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Never read the developer's own kubeconfig or service account."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # a pipe, not a terminal


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    api = ApiServer()
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


@pytest.fixture
def kubeconfig(server: ApiServer, tmp_path: Path) -> str:
    return str(server.write_kubeconfig(tmp_path / "kubeconfig", namespace="default", context="emulator"))


@pytest.fixture
async def admin(kubeconfig: str) -> AsyncIterator[KubeStore]:
    """The test's own view of the cluster (another client, as a second kubectl would be)."""
    store = KubeStore(await load_target(kubeconfig), SystemClock(), user_agent="test-admin")
    try:
        yield store
    finally:
        await store.close()


async def nvcre(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run `nvcre ARGV` as from a shell; (exit code, stdout, stderr)."""
    def shell() -> int:
        try:
            return main(list(argv))
        except SystemExit as exit_:  # argparse's usage errors exit, as from a shell
            return int(exit_.code or 0)

    code = await asyncio.to_thread(shell)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def present(store: KubeStore, obj: dict) -> bool:
    meta = obj["metadata"]
    try:
        await store.get(kind_of(obj), meta["name"], meta.get("namespace"))
    except NotFound:
        return False
    return True


async def create_certification(store: KubeStore, namespace: str = "default") -> dict:
    cert = certification_from_text("cert.yaml", CERT, catalog()).to_wire()
    cert["metadata"]["namespace"] = namespace
    cert.pop("status", None)
    return await store.create(CERTIFICATION, cert)


# ----- init -------------------------------------------------------------------------------------------


async def test_init_applies_everything_server_side_and_waits_for_the_crds(server, kubeconfig, admin, capsys) -> None:
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, "")
    objects = install_objects(NS)
    assert out.splitlines()[:2] == ["customresourcedefinition.apiextensions.k8s.io/certifications.nvcre.nvidia.com "
                                    "serverside-applied",
                                    "customresourcedefinition.apiextensions.k8s.io/workflows.nvcre.nvidia.com "
                                    "serverside-applied"]
    assert out.splitlines()[-1] == f"nvcre is installed in namespace {NS}"
    for obj in objects:
        assert await present(admin, obj), obj["metadata"]["name"]
    crd = await admin.get(CRD, "certifications.nvcre.nvidia.com")
    assert any(c["type"] == "Established" and c["status"] == "True" for c in crd["status"]["conditions"])
    assert crd["metadata"]["annotations"][ANNOTATION_SCHEMA_HASH] == objects[0]["metadata"]["annotations"][ANNOTATION_SCHEMA_HASH]
    asked = [r for r in server.requests if r.user_agent.startswith("nvcre-setup") and r.verb not in ("get", "list", "watch")]
    writes = [r for r in asked if r.query.get("dryRun") != "All" and r.resource != "selfsubjectaccessreviews"]
    assert len(writes) == len(objects)
    # asked first (a dry run of what it can, RBAC's word where the namespace is still to be made), so nothing is half-applied
    first_write = asked.index(writes[0])
    assert all(r.query.get("dryRun") == "All" or r.resource == "selfsubjectaccessreviews" for r in asked[:first_write])
    assert all(r.verb == "patch" and r.content_type == "application/apply-patch+yaml" for r in writes)
    assert all(r.query.get("fieldManager") == FIELD_MANAGER and r.query.get("force") == "true" for r in writes)
    assert [(r.resource, r.name, r.warnings) for r in writes if r.warnings] == []  # no field dropped by the schemas


async def test_init_returns_once_the_crds_are_served_not_only_established(server, kubeconfig, admin, capsys) -> None:
    """A real API server serves a CRD's kind a moment after it is Established (its handlers answer 404 meanwhile):
    `setup init && certification run` found nvcre not installed. Discovery not listing the kinds yet is waited out."""
    late = server.faults.add(Fault(method="GET", path=r"^/apis/nvcre\.nvidia\.com/v1alpha1$", status=404, times=6))
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, "") and out.rstrip().endswith(f"nvcre is installed in namespace {NS}")
    assert late.hits == 6  # asked again until served
    cert = await create_certification(admin)
    assert cert["metadata"]["name"] == "soak"


async def test_init_twice_changes_nothing(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    before = await admin.get(CLUSTER_ROLE, "nvcre-engine")
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    after = await admin.get(CLUSTER_ROLE, "nvcre-engine")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


async def test_init_in_another_namespace(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "-n", "gpu-cert"))[0] == 0
    binding = await admin.get(ROLE_BINDING, "nvcre-engine", "gpu-cert")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "nvcre-engine", "namespace": "gpu-cert"}]


async def test_init_dry_run_on_a_cluster_creates_nothing(server, kubeconfig, admin, capsys) -> None:
    code, out, err = await nvcre(capsys, "setup", "init", "--dry-run", "--kubeconfig", kubeconfig)
    assert code == 0
    assert list(yaml.safe_load_all(out)) == install_objects(NS)
    assert "serverside-applied (server dry run)" in err
    assert f"not validated (namespace {NS} does not exist yet)" in err  # nothing in it can be dry-run
    for obj in install_objects(NS):
        assert not await present(admin, obj)
    applied = [r for r in server.requests if r.verb == "patch"]
    assert applied and all(r.query.get("dryRun") == "All" for r in applied)


async def test_init_dry_run_after_init_validates_every_object(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    before = await admin.get(CLUSTER_ROLE, "nvcre-engine")
    server.clear_requests()
    code, out, err = await nvcre(capsys, "setup", "init", "--dry-run", "--kubeconfig", kubeconfig)
    assert code == 0 and "not validated" not in err
    assert err.count("serverside-applied (server dry run)") == len(install_objects(NS))
    assert all(r.query.get("dryRun") == "All" for r in server.requests if r.verb == "patch")
    assert (await admin.get(CLUSTER_ROLE, "nvcre-engine"))["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


async def test_init_dry_run_without_a_cluster_renders_offline(capsys) -> None:
    code, out, err = await nvcre(capsys, "setup", "init", "--dry-run", "-n", "elsewhere")
    assert code == 0 and "offline" in err
    assert list(yaml.safe_load_all(out)) == install_objects("elsewhere")


async def test_init_dry_run_on_a_server_that_does_not_answer_renders_offline(server, kubeconfig, capsys) -> None:
    """A server that accepts connections and never answers printed one error line and no manifests, where a refused
    connection rendered offline (a walkthrough found the two differ): both are a cluster not reachable."""
    server.faults.add(Fault(method="GET", path=r"/namespaces/", status=504))  # a gateway's "no answer in time"
    code, out, err = await nvcre(capsys, "setup", "init", "--dry-run", "--kubeconfig", kubeconfig)
    assert code == 0 and "# cluster unreachable (" in err and "offline render" in err, err
    assert list(yaml.safe_load_all(out)) == install_objects(NS)


async def test_init_refused_by_the_server_is_one_line(server, kubeconfig, capsys) -> None:
    server.faults.add(Fault(method="PATCH", path=r"/clusterroles/", status=403))
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "ClusterRole nvcre-engine" in err and "Traceback" not in err


async def test_bad_flags_are_one_line_and_exit_2(capsys) -> None:
    for argv in (["setup", "init", "-n", "Not_A_Namespace"], ["setup", "status", "--kubeconfig", "/no/such/file"],
                 ["setup", "reset", "--timeout", "soon"]):
        code, out, err = await nvcre(capsys, *argv)
        assert code == 2 and "Traceback" not in err, argv


# ----- status -----------------------------------------------------------------------------------------


async def test_status_says_not_installed_then_installed(server, kubeconfig, capsys) -> None:
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert code == 1 and json.loads(out)["installed"] is False
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    report = json.loads(out)
    assert code == 0 and report["installed"] is True
    assert [c["current"] for c in report["crds"]] == [True] * 4
    assert report["lease"] is None and report["gpuNodes"] == 0


async def test_status_reads_crds_applied_from_setup_crds_as_this_nvcres(server, kubeconfig, admin, capsys) -> None:
    """CRDs applied from `nvcre setup crds` (kubectl apply, a GitOps repository) instead of by init carried no stamps, so
    `setup status` called them another nvcre's schema (outdated, exit 1) while the engine accepted them."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    code, printed, _ = await nvcre(capsys, "setup", "crds")
    assert code == 0
    for crd in yaml.safe_load_all(printed):  # as `kubectl apply -f` replaces what init applied: its annotations too
        crd["metadata"]["resourceVersion"] = (await admin.get(CRD, crd["metadata"]["name"]))["metadata"]["resourceVersion"]
        await admin.update(CRD, crd)
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    report = json.loads(out)
    assert code == 0 and [c["current"] for c in report["crds"]] == [True] * 4, out + err


def _gpu_node(name: str, simulated: bool = False) -> dict:
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    if simulated:
        labels["nvcre.nvidia.com/simulated"] = "true"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"nvidia.com/gpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}]}}


async def register_simulated(kubeconfig: str, name: str) -> None:
    """A Node as --sim-runner's fleet registers it: labelled simulated by the simulator itself (its user agent)."""
    from nvcre_tui.engine.api.vocabulary import SIMULATOR_AGENT

    simulator = KubeStore(await load_target(kubeconfig), SystemClock(), user_agent=SIMULATOR_AGENT)
    try:
        await simulator.create(NODE, _gpu_node(name, simulated=True))
    finally:
        await simulator.close()


def _node_lease(name: str, seconds_ago: float) -> dict:
    from datetime import timedelta

    renewed = SystemClock().now() - timedelta(seconds=seconds_ago)
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}


async def test_status_says_when_no_kubelet_runs_the_gpu_nodes(server, kubeconfig, admin, capsys) -> None:
    """A bare kube-apiserver + etcd with GPU Nodes registered and no kubelet: no pod will ever start there, and
    status says so beforehand rather than leaving the user to find out from a run that fails minutes later."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    for name in ("gpu-a", "gpu-b"):
        await admin.create(NODE, _gpu_node(name))
    await register_simulated(kubeconfig, "sim-1")  # --sim-runner's fleet plays its own kubelets

    def kubelet_row(out: str) -> str:
        return next(line for line in out.splitlines() if line.startswith("kubelets"))

    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = kubelet_row(out)
    assert code == 0 and "missing" in row and "none of the 2 GPU nodes" in row and "no pod will start" in row
    await admin.create(LEASE, _node_lease("gpu-a", 5))  # a kubelet renewing every 10 s
    await admin.create(LEASE, _node_lease("gpu-b", 600))  # one gone silent 10 minutes ago
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = kubelet_row(out)
    assert "partial" in row and "1 of 2 GPU nodes" in row and row.endswith("no kubelet heard from: gpu-b")
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert json.loads(out)["silentNodes"] == ["gpu-b"] and json.loads(out)["kubeletChecked"] == 2
    # labelled simulated by someone else: a real Node to nvcre (the fleet does not play it, reset leaves it), so it needs a kubelet
    await admin.create(NODE, _gpu_node("labelled-1", simulated=True))
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert kubelet_row(out).endswith("no kubelet heard from: gpu-b, labelled-1"), out
    [nodes] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("gpu nodes")]
    assert nodes == ("gpu nodes 4 of 4 nodes; 1 simulated by --sim-runner (no GPU behind them; `setup reset` removes them); 1 labelled "
                     "simulated by another client, not the simulator (real Nodes to nvcre: --sim-runner does not play them and "
                     "`setup reset` leaves them)"), out


async def test_status_says_when_no_scheduler_runs(server, kubeconfig, admin, capsys) -> None:
    """An API server alone places no pod: status says so once there are GPU nodes that need one, and sees
    kube-scheduler by its leader-election Lease in kube-system."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)

    async def scheduler_row() -> str:
        code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
        assert code == 0
        return next(line for line in out.splitlines() if line.startswith("scheduler"))

    assert "no GPU nodes" in await scheduler_row()
    await register_simulated(kubeconfig, "sim-1")
    assert "only simulated GPU nodes" in await scheduler_row()
    await admin.create(NODE, _gpu_node("gpu-a"))
    row = await scheduler_row()
    assert "not seen" in row and "kube-system/kube-scheduler" in row and "pods stay unplaced" in row
    if not any(item["metadata"]["name"] == "kube-system" for item in (await admin.list(NAMESPACE)).items):
        await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
    lease = _node_lease("kube-scheduler", 700)  # last renewed before a restart 11 minutes ago: not running
    lease["metadata"]["namespace"] = "kube-system"
    await admin.create(LEASE, lease)
    assert "not seen" in await scheduler_row()
    lease = await admin.get(LEASE, "kube-scheduler", "kube-system")
    lease["spec"]["renewTime"] = _node_lease("x", 2)["spec"]["renewTime"]
    await admin.update(LEASE, lease)
    row = await scheduler_row()
    assert "ok" in row and "renewed" in row
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert json.loads(out)["scheduler"] is True


async def test_status_table_names_the_lease_holder(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert await EngineLease(admin, SystemClock(), NS, "engine@node-7/42").try_acquire()
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 0
    lease_row = next(line for line in out.splitlines() if line.startswith("engine lease"))
    assert "held" in lease_row and "engine@node-7/42" in lease_row


# ----- reset ------------------------------------------------------------------------------------------


async def test_reset_without_a_terminal_or_yes_refuses(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    code, out, err = await nvcre(capsys, "setup", "reset", "--kubeconfig", kubeconfig)
    assert code == 2 and "pass --yes" in err and len(err.strip().splitlines()) == 1
    assert all([await present(admin, obj) for obj in install_objects(NS)])


async def test_reset_refuses_while_a_certification_runs(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await create_certification(admin)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 2 and "1 certification still running (default/soak)" in err
    assert "no nvcre engine holds the lease, so they will not finish" in err  # waiting would not help
    engine = EngineLease(admin, SystemClock(), NS, "engine@node-7/42")
    assert await engine.try_acquire()
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 2 and err.rstrip().endswith("wait for them, delete them, or pass --force")
    assert await present(admin, install_objects(NS)[0])
    await admin.patch_status(CERTIFICATION, "soak", "default",
                             {"conditions": [{"type": "Succeeded", "status": "True", "reason": "Done", "message": "",
                                              "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    # Nothing runs, but an engine does: reset would take its CRDs, RBAC and lease from under it (a review's engine then
    # retried 403s for ever, saying the API server gave no answer).
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 2 and "the nvcre engine engine@node-7/42 holds the lease in nvcre-system: stop it first" in err, err
    assert len(err.strip().splitlines()) == 1 and all([await present(admin, obj) for obj in install_objects(NS)])
    await engine.release()
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0, err


async def test_reset_goes_ahead_over_an_expired_lease_or_with_force(server, kubeconfig, admin, capsys) -> None:
    """Only a live holder stops a reset: an engine that stopped without releasing its Lease (killed) holds nothing."""
    from nvcre_tui.engine.lease import LEASE_NAME

    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    expired = _node_lease("engine@gone/7", 600)
    expired["metadata"] = {"name": LEASE_NAME, "namespace": NS}
    await admin.create(LEASE, expired)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0, err
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert await EngineLease(admin, SystemClock(), NS, "engine@node-7/42").try_acquire()
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert not await present(admin, install_objects(NS)[0])


async def test_reset_force_removes_everything_init_made(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await create_certification(admin)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert "customresourcedefinition.apiextensions.k8s.io/certifications.nvcre.nvidia.com deleted" in out.splitlines()
    for obj in install_objects(NS):
        if obj["kind"] != "Namespace":
            assert not await present(admin, obj), obj["metadata"]["name"]
    # No namespace controller on a bare API server: reset removed the empty namespace's finalizer itself.
    assert f"namespace/{NS} finalized" in out
    with pytest.raises(NotFound):
        await admin.get(NAMESPACE, NS)
    assert (await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig))[0] == 1
    assert (await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig))[0] == 0  # twice is fine
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)  # and init works again
    assert code == 0, err


async def test_reset_deletes_what_only_nvcre_objects_owned(server, kubeconfig, admin, capsys) -> None:
    """No garbage collector (an API server alone): the CRDs took every nvcre object, and what they owned stayed (a
    TrainJob's ConfigMaps, a pull secret: the trial found a live TrainJob, 7 TrainingRuntimes and 8 ConfigMaps). Reset
    deletes what only nvcre objects owned, and never an object another owner also holds or one with no owner."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    cert = await create_certification(admin)
    nvcre_ref = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "c", "uid": cert["metadata"]["uid"]}
    theirs = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "0000-theirs"}
    for name, refs in (("results", [nvcre_ref]), ("shared", [nvcre_ref, theirs]), ("nobodys", [])):
        await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": name, "namespace": "default", "ownerReferences": refs}})
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert "1 ConfigMap (results, run configs) deleted (its nvcre owners are gone): 1 in default" in out.splitlines()
    with pytest.raises(NotFound):
        await admin.get(CONFIGMAP, "results", "default")
    assert await admin.get(CONFIGMAP, "shared", "default") and await admin.get(CONFIGMAP, "nobodys", "default")
    assert "not found" not in out  # the simulator's rights, never granted here, are no news


async def test_reset_counts_the_configmaps_it_deleted_per_namespace_in_one_line(server, kubeconfig, admin, capsys) -> None:
    """A cluster that certified for months holds two result ConfigMaps per Workflow and a config per run: reset printed
    a line for each, hundreds of lines. One line counts them per namespace; every other kind keeps its line per object."""
    from nvcre_tui.engine.store import SERVICE

    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    cert = await create_certification(admin)
    ref = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "c", "uid": cert["metadata"]["uid"]}]
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    for namespace, n in (("default", 12), ("team-a", 3)):
        for i in range(n):
            await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": f"failed-nodes-{i:08x}", "namespace": namespace, "ownerReferences": ref}})
    await admin.create(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "rdzv", "namespace": "default",
                                 "ownerReferences": ref}, "spec": {"clusterIP": "None", "ports": [{"port": 29500}]}})
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    lines = out.splitlines()
    assert [line for line in lines if "nvcre owners are gone" in line] == [
        "service/rdzv in default deleted (its nvcre owners are gone)",
        "15 ConfigMaps (results, run configs) deleted (their nvcre owners are gone): 12 in default, 3 in team-a"]
    assert not [line for line in lines if line.startswith("configmap/")]
    assert (await admin.list(CONFIGMAP, "default")).items == [] and (await admin.list(CONFIGMAP, "team-a")).items == []


async def test_reset_deletes_a_roce_claim_template_only_nvcre_objects_owned(server, kubeconfig, admin, capsys) -> None:
    """AWS GB300's RoCE ResourceClaimTemplate (resource.k8s.io, a run's own, owned by its Job) stays, like a ComputeDomain,
    where no garbage collector follows the ownerReferences: reset deletes it in the DRA version the server serves."""
    from tests.runner.harness import served
    from tests.runner.test_claim_templates import V1BETA2, _dra_crd

    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    cert = await create_certification(admin)
    await admin.create(CRD, _dra_crd("v1beta2"))
    await served(admin, {"resource.k8s.io/v1beta2": ["resourceclaimtemplates"]})
    ref = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "c", "uid": cert["metadata"]["uid"]}]
    await admin.create(V1BETA2, {"apiVersion": "resource.k8s.io/v1beta2", "kind": "ResourceClaimTemplate",
                                 "metadata": {"name": "c-job-roce-1f0e4a9e", "namespace": "default", "ownerReferences": ref}, "spec": {}})
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert "resourceclaimtemplate.resource.k8s.io/c-job-roce-1f0e4a9e in default deleted (its nvcre owners are gone)" in out.splitlines()
    assert (await admin.list(V1BETA2, "default")).items == []


async def test_init_into_a_second_namespace_is_refused_before_anything_is_applied(server, kubeconfig, admin, capsys) -> None:
    """`setup init -n other` on a cluster installed in nvcre-system force-applied the cluster-wide ClusterRoleBinding
    nvcre-engine to other's ServiceAccount: the first install's engine lost its rights, and two Leases elected two
    engines over the same certifications."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    for dry in ([], ["--dry-run"]):
        code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "other", *dry)
        assert (code, out) == (2, ""), out + err
        assert err == ("nvcre setup init: nvcre is installed in namespace nvcre-system, and a cluster holds one install (its "
                       "CRDs, ClusterRoles and the engine's ClusterRoleBinding are cluster-wide): pass --install-namespace "
                       "nvcre-system, or move it with `nvcre setup reset --install-namespace nvcre-system` first (nothing applied)\n")
    with pytest.raises(NotFound):
        await admin.get(NAMESPACE, "other")
    binding = await admin.get(CLUSTER_ROLE_BINDING, "nvcre-engine")
    assert [s["namespace"] for s in binding["subjects"]] == [NS]
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0  # the install's own namespace: again, fine
    assert (await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "other")
    assert code == 0 and out.endswith("nvcre is installed in namespace other\n"), err  # moved


async def test_reset_leaves_a_namespace_that_existed_before_init(server, kubeconfig, admin, capsys) -> None:
    """Installed into a team's namespace, reset deleted that namespace, and on a cluster its namespace controller then
    deletes everything in it. A namespace init did not create stays, with what else it holds; one it made goes."""
    from nvcre_tui.engine.api.vocabulary import LABEL_PART_OF

    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-team", "labels": {"team": "a"}}})
    await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "theirs", "namespace": "gpu-team"}})
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "gpu-team")
    assert code == 0, err
    assert "namespace/gpu-team serverside-applied (it existed before: `setup reset` will leave it)" in out.splitlines()
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig, "--install-namespace", "gpu-team")
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "namespace/gpu-team kept: setup init did not create it (nvcre's label removed)"
    namespace = await admin.get(NAMESPACE, "gpu-team")
    assert namespace["status"]["phase"] == "Active" and not namespace["metadata"].get("deletionTimestamp")
    assert namespace["metadata"]["labels"].get("team") == "a" and LABEL_PART_OF not in namespace["metadata"]["labels"]
    assert await admin.get(CONFIGMAP, "theirs", "gpu-team")
    with pytest.raises(NotFound):
        await admin.get(CLUSTER_ROLE, "nvcre-engine")
    # a namespace init creates is init's: marked so, and reset removes it
    from nvcre_tui.engine.api.vocabulary import ANNOTATION_MADE_BY_INIT

    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "made-here")
    assert code == 0 and "it existed before" not in out, err
    assert (await admin.get(NAMESPACE, "made-here"))["metadata"]["annotations"][ANNOTATION_MADE_BY_INIT] == "true"
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "made-here"))[0] == 0  # again
    assert (await admin.get(NAMESPACE, "made-here"))["metadata"]["annotations"][ANNOTATION_MADE_BY_INIT] == "true"
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig, "--install-namespace", "made-here")
    assert code == 0 and "namespace/made-here deleted" in out.splitlines(), out + err
    with pytest.raises(NotFound):
        await admin.get(NAMESPACE, "made-here")


async def test_init_and_reset_leave_a_team_namespaces_own_part_of_label(server, kubeconfig, admin, capsys) -> None:
    """A team's namespace labelled app.kubernetes.io/part-of=<theirs>: init force-applied part-of=nvcre over it, and reset,
    taking nvcre's label back, removed the label altogether (the team's value lost). nvcre marks an install with its own
    key, and sets the shared one only on a namespace it creates."""
    from nvcre_tui.engine.api.vocabulary import LABEL_INSTALL, LABEL_PART_OF

    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": "gpu-team", "labels": {LABEL_PART_OF: "team-a"}}})
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "gpu-team")
    assert code == 0, err
    labels = (await admin.get(NAMESPACE, "gpu-team"))["metadata"]["labels"]
    assert labels.get(LABEL_PART_OF) == "team-a", labels
    assert labels.get(LABEL_INSTALL) == "true", labels
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "--install-namespace", "gpu-team", "-o", "json")
    assert json.loads(out)["namespaceHoldsInstall"] is True, out + err
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)  # the install is found by its own key
    assert code == 2 and "nvcre is installed in namespace gpu-team" in err, out + err
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig, "--install-namespace", "gpu-team")
    assert code == 0, out + err
    labels = (await admin.get(NAMESPACE, "gpu-team"))["metadata"]["labels"]
    assert labels.get(LABEL_PART_OF) == "team-a" and LABEL_INSTALL not in labels, labels
    # a namespace init creates carries both
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    labels = (await admin.get(NAMESPACE, NS))["metadata"]["labels"]
    assert (labels[LABEL_PART_OF], labels[LABEL_INSTALL]) == ("nvcre", "true"), labels


async def test_init_by_a_user_who_may_not_apply_rbac_applies_nothing(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """A user who may apply CRDs, namespaces and ServiceAccounts but not RBAC: init applied the CRDs, the namespace and the
    ServiceAccount, then stopped on the ClusterRole (a half-made install). The server is asked first, by a dry run."""
    rules = [{"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["*"]},
             {"apiGroups": [""], "resources": ["namespaces", "serviceaccounts"], "verbs": ["*"]}]
    ops = await _ops_user(server, admin, tmp_path, rules)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", ops)
    assert (code, out) == (2, ""), out + err
    assert len(err.splitlines()) == 1 and err.startswith("nvcre setup init: ") and "ClusterRole nvcre-engine" in err, err
    assert 'User "ops" cannot patch resource "clusterroles"' in err and err.endswith("(nothing applied)\n"), err
    for obj in install_objects(NS):
        assert not await present(admin, obj), obj["metadata"]["name"]


async def _ops_user(server: ApiServer, admin: KubeStore, tmp_path: Path, rules: list[dict]) -> str:
    """A kubeconfig for the user "ops", granted `rules` cluster-wide."""
    await admin.create(CLUSTER_ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "ops"},
                                      "rules": rules})
    await admin.create(CLUSTER_ROLE_BINDING, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "ops"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ops"},
        "subjects": [{"kind": "User", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"}]})
    return str(server.write_kubeconfig(tmp_path / "kubeconfig-ops", token=server.add_token("ops-token", "ops")))


# What init applies, without `bind` (nor `escalate`, unless added): RBAC's own check then decides the bindings.
INSTALLER_RULES = [
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "create", "patch"]},
    {"apiGroups": [""], "resources": ["namespaces", "serviceaccounts"], "verbs": ["get", "list", "create", "patch"]},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "clusterrolebindings", "roles", "rolebindings"],
     "verbs": ["get", "list", "create", "patch"]}]


async def test_init_preflight_of_a_binding_before_its_role_exists(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """Init's dry run of ClusterRoleBinding nvcre-engine comes before its ClusterRole exists. A real server answers a user
    without `bind` by reading that role, and so NotFound, which the preflight did not expect: a user who holds every
    right the role grants (the binding would be admitted) was refused with "not found", and one who may create the role
    (`escalate`) but may not bind it got "not found" instead of the line saying what it may not do."""
    import copy

    from nvcre_tui.engine.kube.install import USER_ROLES, lease_reader_objects
    from nvcre_tui.engine.kube.rbac import CLUSTER_RULES, LEASE_RULES

    held = [*copy.deepcopy(CLUSTER_RULES), *copy.deepcopy(LEASE_RULES), *lease_reader_objects(NS)[0]["rules"],
            *(copy.deepcopy(rule) for _, rules in USER_ROLES.values() for rule in rules)]
    # may create the ClusterRole (escalate) but not bind it, and holds none of its rights: refused, in the "may not" line
    ops = await _ops_user(server, admin, tmp_path, [*INSTALLER_RULES, {"apiGroups": ["rbac.authorization.k8s.io"],
                                                                       "resources": ["clusterroles"], "verbs": ["escalate"]}])
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", ops)
    assert (code, out) == (2, ""), out + err
    assert err.startswith("nvcre setup init: clusterrolebinding.rbac.authorization.k8s.io/nvcre-engine: this user may not bind "
                          "ClusterRole nvcre-engine"), err
    assert err.endswith("setup init needs a cluster admin (nothing applied)\n") and len(err.splitlines()) == 1, err
    for obj in install_objects(NS):
        assert not await present(admin, obj), obj["metadata"]["name"]
    # holds every right the roles grant, with neither bind nor escalate: the server admits it all, and so does the preflight
    role = await admin.get(CLUSTER_ROLE, "ops")
    role["rules"] = [*INSTALLER_RULES, *held]
    await admin.update(CLUSTER_ROLE, role)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", ops)
    assert code == 0 and out.endswith(f"nvcre is installed in namespace {NS}\n"), out + err
    for obj in install_objects(NS):
        assert await present(admin, obj), obj["metadata"]["name"]


async def test_init_preflight_of_a_role_in_a_namespace_init_creates(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """Roles in the namespace init creates cannot be dry-run (it does not exist yet), and the preflight asked RBAC only for
    patch on them: a user who may create the cluster-wide roles but not grant a namespace Role's rights (RBAC's escalation
    check) got the CRDs, the namespace, the ClusterRoles and bindings applied, then a refusal. Asked first, right by right."""
    import copy

    from nvcre_tui.engine.kube.install import USER_ROLES
    from nvcre_tui.engine.kube.rbac import CLUSTER_RULES, LEASE_RULES

    # every right but the lease reader's `watch` on the engine Lease, and neither bind nor escalate
    held = [*copy.deepcopy(CLUSTER_RULES), *copy.deepcopy(LEASE_RULES),
            *(copy.deepcopy(rule) for _, rules in USER_ROLES.values() for rule in rules)]
    assert not any("watch" in rule["verbs"] and "leases" in rule.get("resources", []) for rule in held)
    ops = await _ops_user(server, admin, tmp_path, [*INSTALLER_RULES, *held])
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", ops)
    assert (code, out) == (2, ""), out + err
    assert err == ("nvcre setup init: role.rbac.authorization.k8s.io/nvcre-engine-lease-reader: this user may not grant the "
                   "rights of Role nvcre-engine-lease-reader (RBAC: no escalate on it, and it does not hold every right the "
                   "role grants, such as watch leases.coordination.k8s.io nvcre-engine); setup init needs a cluster admin "
                   "(nothing applied)\n"), err
    for obj in install_objects(NS):
        assert not await present(admin, obj), obj["metadata"]["name"]


async def test_reset_by_a_user_who_may_not_delete_rbac_deletes_nothing(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """A user who may delete the CRDs but not the RBAC: reset deleted the CRDs, and with them every certification, then
    stopped on the first ClusterRole. RBAC is asked first."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await create_certification(admin)
    rules = [{"apiGroups": ["apiextensions.k8s.io", "nvcre.nvidia.com", "coordination.k8s.io", ""], "resources": ["*"], "verbs": ["*"]}]
    ops = await _ops_user(server, admin, tmp_path, rules)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", ops)
    assert (code, out) == (2, ""), out + err
    assert err == ("nvcre setup reset: this user may not delete ClusterRole nvcre-engine (RBAC); setup reset needs a cluster "
                   "admin (nothing deleted)\n"), err
    for obj in install_objects(NS):
        assert await present(admin, obj), obj["metadata"]["name"]
    assert len((await admin.list(CERTIFICATION)).items) == 1


async def test_reset_by_a_user_who_may_not_delete_the_simulated_nodes_deletes_nothing(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """A user who may delete the whole install but not Nodes: reset deleted the engine Lease and the fleet's ConfigMap, then
    stopped on the first simulated Node, half-applied. Deleting them is asked of RBAC with the rest, first."""
    from nvcre_tui.engine.api.vocabulary import SIMULATOR_AGENT

    await nvcre(capsys, "setup", "init", "--sim-runner", "--kubeconfig", kubeconfig)
    simulator = KubeStore(await load_target(kubeconfig), SystemClock(), user_agent=SIMULATOR_AGENT)
    try:
        await simulator.create(NODE, _gpu_node("sim-1", simulated=True))
    finally:
        await simulator.close()
    await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nvcre-sim-fleet", "namespace": NS}})
    core = ["namespaces", "serviceaccounts", "configmaps", "pods", "services", "secrets", "events"]
    rules = [{"apiGroups": ["apiextensions.k8s.io", "nvcre.nvidia.com", "coordination.k8s.io", "rbac.authorization.k8s.io"],
              "resources": ["*"], "verbs": ["*"]},
             {"apiGroups": [""], "resources": core, "verbs": ["*"]},
             {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    ops = await _ops_user(server, admin, tmp_path, rules)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", ops)
    assert (code, out) == (2, ""), out + err
    assert err == ("nvcre setup reset: this user may not delete Node sim-1 (RBAC); setup reset needs a cluster admin (nothing "
                   "deleted)\n"), err
    assert await admin.get(CONFIGMAP, "nvcre-sim-fleet", NS) and await admin.get(NODE, "sim-1")
    for obj in install_objects(NS, simulator=True):
        assert await present(admin, obj), obj["metadata"]["name"]


async def test_status_of_another_namespace_says_where_nvcre_is_installed(server, kubeconfig, capsys) -> None:
    """`setup status -n other` said only "namespace missing other" and to run setup init, which refuses a second install."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "--install-namespace", "other")
    assert code == 1, err
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert rows["namespace"].endswith("nvcre is not installed in namespace other (no such namespace); it is installed in "
                                      "nvcre-system: pass --install-namespace nvcre-system"), out
    assert "setup init" not in rows["RBAC"], out


async def _second_install(admin: KubeStore, namespace: str = "older") -> None:
    """What an older init that allowed a second install left: the namespace labelled as an install, its engine's
    ServiceAccount, and that ServiceAccount among the subjects of the cluster-wide binding."""
    from nvcre_tui.engine.api.vocabulary import LABEL_PART_OF
    from nvcre_tui.engine.store import SERVICE_ACCOUNT

    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {LABEL_PART_OF: "nvcre"}}})
    await admin.create(SERVICE_ACCOUNT, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nvcre-engine", "namespace": namespace}})
    binding = await admin.get(CLUSTER_ROLE_BINDING, "nvcre-engine")
    binding["subjects"].append({"kind": "ServiceAccount", "name": "nvcre-engine", "namespace": namespace})
    await admin.update(CLUSTER_ROLE_BINDING, binding)


async def test_one_of_two_installs_is_upgraded_and_removed_alone(server, kubeconfig, admin, capsys) -> None:
    """Two install namespaces (an older init allowed a second) share the CRDs and ClusterRoles: init refused to re-apply
    either (an upgrade), and reset refused either unless --force, which deleted the CRDs and every certification with them.
    Re-applying one is allowed and keeps the other's engine bound; reset of one removes only its own objects."""
    from nvcre_tui.engine.store import SERVICE_ACCOUNT

    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await _second_install(admin)
    await create_certification(admin)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)  # the upgrade, in place
    assert code == 0 and out.endswith(f"nvcre is installed in namespace {NS}\n"), out + err
    subjects = (await admin.get(CLUSTER_ROLE_BINDING, "nvcre-engine"))["subjects"]
    assert sorted(s["namespace"] for s in subjects) == ["nvcre-system", "older"], subjects
    # a third namespace is refused, and the advice names both installs
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "third")
    assert (code, out) == (2, "") and err == (
        "nvcre setup init: nvcre is installed in namespace nvcre-system, older, and a cluster holds one install (its CRDs, "
        "ClusterRoles and the engine's ClusterRoleBinding are cluster-wide): pass --install-namespace nvcre-system, or move it "
        "with `nvcre setup reset --install-namespace nvcre-system` then `nvcre setup reset --install-namespace older` first "
        "(nothing applied)\n"), err
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)  # no --force
    assert (code, err) == (0, ""), out + err
    assert ("left the CRDs (and every Certification) and the ClusterRoles: nvcre is also installed in namespace older"
            in out.splitlines()), out
    assert f"namespace/{NS} deleted" in out.splitlines(), out
    assert await present(admin, install_objects(NS)[0]) and await admin.get(CLUSTER_ROLE, "nvcre-engine")
    assert len((await admin.list(CERTIFICATION)).items) == 1
    subjects = (await admin.get(CLUSTER_ROLE_BINDING, "nvcre-engine"))["subjects"]
    assert [s["namespace"] for s in subjects] == ["older"], subjects
    assert await admin.get(SERVICE_ACCOUNT, "nvcre-engine", "older") and await admin.get(NAMESPACE, "older")
    with pytest.raises(NotFound):
        await admin.get(NAMESPACE, NS)
    # the one left is the sole install now: reset removes everything, as ever
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig, "--install-namespace", "older")
    assert code == 0 and not await present(admin, install_objects(NS)[0]), out + err


async def test_init_without_sim_runner_unbinds_only_its_own_engine_from_the_simulator_role(server, kubeconfig, admin, capsys) -> None:
    """Where two installs' engines are bound to the simulated fleet's ClusterRole, init of one without --sim-runner
    deleted the binding and the role: the other install's engine lost its Node rights too. Only its own subject goes."""
    assert (await nvcre(capsys, "setup", "init", "--sim-runner", "--kubeconfig", kubeconfig))[0] == 0
    await _second_install(admin)
    binding = await admin.get(CLUSTER_ROLE_BINDING, "nvcre-simulator")
    binding["subjects"].append({"kind": "ServiceAccount", "name": "nvcre-engine", "namespace": "older"})
    await admin.update(CLUSTER_ROLE_BINDING, binding)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert code == 0, out + err
    assert ("clusterrolebinding.rbac.authorization.k8s.io/nvcre-simulator updated: the engine of namespace nvcre-system "
            "unbound (init without --sim-runner)") in out.splitlines(), out
    assert [s["namespace"] for s in (await admin.get(CLUSTER_ROLE_BINDING, "nvcre-simulator"))["subjects"]] == ["older"]
    assert await admin.get(CLUSTER_ROLE, "nvcre-simulator")


async def test_reset_of_one_of_two_installs_being_deleted_removes_only_it(server, kubeconfig, admin, capsys) -> None:
    """An install namespace deleted (Terminating) while an older init's second install stays: every command's ways out
    (`terminating`) name `setup reset` of it, which refused ("not installed in nvcre-system but in older"), as a
    Terminating namespace no longer counted as an install. It removes that namespace's objects, and the namespace."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await _second_install(admin)
    await admin.delete(NAMESPACE, NS)  # no namespace controller here: it stays Terminating, holding the install's objects
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    # The ways out said reset "also deletes the CRDs and with them every Certification": of one of two installs it keeps them.
    keeps = ("while `nvcre setup reset` removes it too, with its engine's place in the cluster-wide bindings, and keeps the "
             "CRDs, every Certification and the ClusterRoles for the install in older")
    [row] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("namespace ")]
    assert row.endswith(keeps) and "deletes the CRDs" not in row, out
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert code == 1 and err.rstrip("\n").endswith(keeps) and "deletes the CRDs" not in err, err
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, ""), out + err
    assert "left the CRDs (and every Certification) and the ClusterRoles: nvcre is also installed in namespace older" in out
    with pytest.raises(NotFound):
        await admin.get(NAMESPACE, NS)
    assert await present(admin, install_objects(NS)[0])
    assert [s["namespace"] for s in (await admin.get(CLUSTER_ROLE_BINDING, "nvcre-engine"))["subjects"]] == ["older"]


async def test_reset_leaves_an_nvcre_system_made_before_init(server, kubeconfig, admin, capsys) -> None:
    """nvcre-system created beforehand (by GitOps, with its quotas): init uses it, reset leaves it."""
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert code == 0 and f"namespace/{NS} serverside-applied (it existed before: `setup reset` will leave it)" in out.splitlines(), err
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0  # again: still not init's
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0 and out.splitlines()[-1] == f"namespace/{NS} kept: setup init did not create it (nvcre's label removed)", out + err


async def _older_init(store: KubeStore, namespace: str) -> None:
    """What an init that wrote no made-by annotation applied to its namespace: part-of=nvcre, by nvcre's field manager."""
    from nvcre_tui.engine.api.vocabulary import LABEL_PART_OF

    await store.apply(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": namespace, "labels": {LABEL_PART_OF: "nvcre"}}},
                      field_manager=FIELD_MANAGER, force=True)


async def test_reset_tells_an_older_inits_namespace_by_its_managed_fields(server, kubeconfig, admin, capsys) -> None:
    """An older init left no made-by annotation. Taking its part-of=nvcre label on nvcre-system for "init made it", reset
    deleted a GitOps-made nvcre-system an older init had run on; and it kept forever a custom namespace an older init had
    created. Where the annotation is absent, the namespace's managedFields say it: init made it when nvcre's field manager
    is the only one the server records."""
    # a GitOps-made nvcre-system (another manager created it), which an older init then labelled
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"quota": "gpu"}}})
    await _older_init(admin, NS)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0 and out.splitlines()[-1] == f"namespace/{NS} kept: setup init did not create it (nvcre's label removed)", out + err
    assert (await admin.get(NAMESPACE, NS))["metadata"]["labels"]["quota"] == "gpu"
    # the same after an upgrade: init reads them too, and marks it not init's
    await _older_init(admin, NS)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert code == 0 and f"namespace/{NS} serverside-applied (it existed before: `setup reset` will leave it)" in out.splitlines(), err
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0 and out.splitlines()[-1] == f"namespace/{NS} kept: setup init did not create it (nvcre's label removed)", out + err
    # a custom namespace an older init created: only nvcre's field manager ever wrote it, so reset removes it
    await _older_init(admin, "custom")
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig, "--install-namespace", "custom")
    assert code == 0 and "namespace/custom deleted" in out.splitlines(), out + err
    with pytest.raises(NotFound):
        await admin.get(NAMESPACE, "custom")


async def test_status_says_a_namespace_kept_by_reset_holds_no_install(server, kubeconfig, admin, capsys) -> None:
    """After reset kept a namespace init had not created, status said "namespace ok" beside the missing CRDs and RBAC, as
    if the install's namespace were still there: it says what the namespace is."""
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)  # made beforehand, no init yet
    [row] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("namespace ")]
    assert code == 1 and row == (f"namespace no install {NS} exists but holds no nvcre install (no setup init label: made beforehand, "
                                 "or kept by setup reset because init had not created it): run nvcre setup init to install into it"), out + err
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    [row] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("namespace ")]
    assert (code, row) == (0, f"namespace ok {NS}"), out + err
    assert (await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    status = json.loads(out)
    assert (code, status["namespacePresent"], status["namespaceHoldsInstall"], status["installed"]) == (1, True, False, False)
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    [row] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("namespace ")]
    assert row.startswith(f"namespace no install {NS} exists but holds no nvcre install"), out
    # another namespace: the init that installs into it names it
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "--install-namespace", "team")
    [row] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("namespace ")]
    assert row.endswith(": run nvcre setup init --install-namespace team to install into it"), out


async def test_status_checks_the_users_roles(server, kubeconfig, admin, capsys) -> None:
    """Without nvcre-edit every user bound to it is refused creating certifications; status said ok, exit 0."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await admin.delete(CLUSTER_ROLE, "nvcre-edit")
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 1, out + err
    [row] = [line for line in out.splitlines() if line.startswith(("RBAC ", "engine RBAC "))]
    assert row.split()[1] == "missing" and row.endswith("missing ClusterRole nvcre-edit (run nvcre setup init)"), row
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert json.loads(out)["installed"] is False
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    [row] = [line for line in out.splitlines() if line.startswith(("RBAC ", "engine RBAC "))]
    assert code == 0 and row.split()[1] == "ok" and "users' roles (nvcre-view, nvcre-edit)" in row, out


async def test_reset_of_an_older_install_says_only_what_it_removed(server, kubeconfig, admin, capsys) -> None:
    """An older version's init made no users' roles and no Lease reader: reset printed "not found" for each, which an SRE
    reads as a fault. Parts that install never had are no news; what it removed is listed."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    for kind, name, namespace in ((CLUSTER_ROLE, "nvcre-view", None), (CLUSTER_ROLE, "nvcre-edit", None),  # as an older
                                  (ROLE, "nvcre-engine-lease-reader", NS), (ROLE_BINDING, "nvcre-engine-lease-reader", NS)):  # init left it
        await admin.delete(kind, name, namespace)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0, err
    lines = out.splitlines()
    assert "not found" not in out and not any("absent" in line for line in lines), out
    assert "clusterrole.rbac.authorization.k8s.io/nvcre-engine deleted" in lines
    assert all(line.endswith(("deleted", "finalized: it held nothing, and this API server has no namespace controller to do it"))
               for line in lines), out


async def test_reset_names_in_one_line_what_was_already_absent(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await admin.delete(CLUSTER_ROLE, "nvcre-edit")  # one of a part the install has: removed by hand before
    await admin.delete(ROLE_BINDING, "nvcre-engine", NS)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0, err
    absent = [line for line in out.splitlines() if "absent" in line or "not found" in line]
    assert absent == ["already absent: clusterrole.rbac.authorization.k8s.io/nvcre-edit, "
                      "rolebinding.rbac.authorization.k8s.io/nvcre-engine"], out
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)  # again: nothing there
    assert (code, out) == (0, f"nvcre is not installed (namespace {NS}): none of what setup init makes was there\n"), out + err


async def test_reset_leaves_a_namespace_that_holds_what_nvcre_did_not_make(server, kubeconfig, admin, capsys) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "theirs", "namespace": NS}})
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 1 and f"namespace {NS} is still Terminating" in err and "holds configmaps (1)" in err
    assert len(err.strip().splitlines()) == 1
    assert (await admin.get(NAMESPACE, NS))["status"]["phase"] == "Terminating"
    assert await admin.get(CONFIGMAP, "theirs", NS)  # never deleted by nvcre


async def test_reset_says_why_a_resource_it_could_not_list_counts_as_held(server, kubeconfig, admin, capsys) -> None:
    """A resource whose list the server refused counts as held, and the line said only `services (unreadable:
    Forbidden)`, a Python class name; it says why, in the server's words, once."""
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    server.faults.add(Fault(method="GET", path=rf"^/api/v1/namespaces/{NS}/(services|serviceaccounts)$", status=403,
                            message="listing is forbidden: injected"))
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 1 and f"namespace {NS} is still Terminating" in err and "Traceback" not in err, err
    assert (f"holds serviceaccounts (not listed: ServiceAccount in namespace {NS}: listing is forbidden: injected), "
            "services (not listed);") in err, err


async def test_reset_asks_on_a_terminal(server, kubeconfig, admin, capsys, monkeypatch) -> None:
    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    code, out, err = await nvcre(capsys, "setup", "reset", "--kubeconfig", kubeconfig)
    assert code == 1 and "Continue? [y/N]" in err and "nothing deleted" in err
    assert await present(admin, install_objects(NS)[0])
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    code, out, err = await nvcre(capsys, "setup", "reset", "--kubeconfig", kubeconfig)
    assert code == 0
    assert not await present(admin, install_objects(NS)[0])


# ----- the same on a real kube-apiserver + etcd (when KUBEBUILDER_ASSETS names them) ----------------------


@pytest.mark.skipif(envtest.assets_dir() is None, reason=envtest.SKIP_REASON)
async def test_init_status_reset_on_a_real_api_server(tmp_path, capsys) -> None:
    with envtest.ControlPlane(envtest.assets_dir(), tmp_path) as plane:  # type: ignore[arg-type]
        kubeconfig = str(plane.write_kubeconfig(tmp_path / "kubeconfig"))
        code, out, err = await nvcre(capsys, "setup", "init", "--dry-run", "--kubeconfig", kubeconfig)
        assert code == 0, err
        code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
        assert code == 0, err
        code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
        assert code == 0 and json.loads(out)["installed"], out + err
        code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
        assert code == 0, err
        code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
        assert code == 1 and not any(c["present"] for c in json.loads(out)["crds"])


async def test_status_for_a_user_who_may_read_nothing_says_unknown(server, tmp_path, capsys) -> None:
    token = server.add_token("no-rights", "jane")
    kubeconfig = str(server.write_kubeconfig(tmp_path / "jane", token=token))
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 2 and "Traceback" not in err  # not known: 1 is nvcre not installed
    rows = {line.split()[0] + " " + line.split()[1]: line for line in out.splitlines()[1:]}
    assert "unknown" in rows["nvcre CRDs"] and "forbidden" in rows["nvcre CRDs"]
    assert "unknown" in rows["gpu nodes"]
    # The Trainer's CRDs unread: its controllers' row cannot tell either (it said "no Kubeflow Trainer CRDs").
    assert "unknown" in rows["kubeflow trainer"]
    assert "unknown" in rows["trainer controllers"] and "kubeflow trainer: " in rows["trainer controllers"], rows["trainer controllers"]
    assert "no Kubeflow Trainer CRDs" not in out


async def test_status_of_a_user_who_reads_part_of_the_rbac_says_what_it_read_missing(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """A user who reads the CRDs, the namespace and the cluster's RBAC but not the Roles in nvcre-system, of an install
    without ClusterRole nvcre-view: the RBAC check read a missing object, so nvcre is not installed (exit 1). It said
    that whether nvcre is installed is not known (exit 2, JSON installed null), its RBAC row `unknown` alone."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await admin.delete(CLUSTER_ROLE, "nvcre-view")
    rules = [{"apiGroups": ["", "apiextensions.k8s.io", "coordination.k8s.io", "apps", "nvcre.nvidia.com"], "resources": ["*"],
              "verbs": ["get", "list", "watch"]},
             {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "clusterrolebindings"], "verbs": ["get", "list"]}]
    await admin.create(CLUSTER_ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "auditor"},
                                      "rules": rules})
    await admin.create(CLUSTER_ROLE_BINDING, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "auditor"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "auditor"},
        "subjects": [{"kind": "User", "name": "auditor", "apiGroup": "rbac.authorization.k8s.io"}]})
    auditor = str(server.write_kubeconfig(tmp_path / "auditor", token=server.add_token("auditor-token", "auditor")))
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", auditor)
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines()[1:]}
    assert code == 1, out + err
    assert rows["RBAC"].split()[1] == "missing" and "missing ClusterRole nvcre-view (run nvcre setup init)" in rows["RBAC"], rows["RBAC"]
    assert 'cannot get resource "role' in rows["RBAC"] and "Role nvcre-engine" not in rows["RBAC"].split("cannot")[0], rows["RBAC"]
    assert "is not known" not in err, err
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", auditor, "-o", "json")
    assert code == 1 and json.loads(out)["installed"] is False, out


async def test_init_without_sim_runner_takes_the_simulators_node_rights_back(server, kubeconfig, admin, capsys) -> None:
    from nvcre_tui.engine.kube.install import simulator_objects

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--sim-runner"))[0] == 0
    assert all([await present(admin, obj) for obj in simulator_objects(NS)])
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--dry-run")
    assert code == 0 and "clusterrolebinding.rbac.authorization.k8s.io/nvcre-simulator would be deleted" in err
    assert all([await present(admin, obj) for obj in simulator_objects(NS)])  # a dry run deletes nothing
    before = len(server.requests)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, "")
    assert not any([await present(admin, obj) for obj in simulator_objects(NS)])
    assert "clusterrolebinding.rbac.authorization.k8s.io/nvcre-simulator deleted (init without --sim-runner" in out
    assert all([await present(admin, obj) for obj in install_objects(NS)])  # the engine's own install is whole
    deletes = [r for r in server.requests[before:] if r.verb == "delete"]
    assert sorted(r.resource for r in deletes) == ["clusterrolebindings", "clusterroles"]
    before = len(server.requests)
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    assert [r for r in server.requests[before:] if r.verb == "delete"] == []  # nothing left to take back: no delete sent


async def test_init_into_a_terminating_namespace_is_one_line_and_applies_nothing(server, kubeconfig, admin, capsys) -> None:
    # A namespace whose finalizer nobody removes (no kube-controller-manager) stays Terminating after `setup reset`.
    await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "finalizers": ["example.com/hold"]}})
    await admin.delete(NAMESPACE, NS)
    before = len(server.requests)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert f"namespace {NS} is being deleted (Terminating)" in err and "Traceback" not in err
    assert [r.verb for r in server.requests[before:] if r.verb not in ("get", "list", "watch")] == []


async def test_reset_waits_for_a_namespace_controller_still_emptying_the_namespace(tmp_path, capsys) -> None:
    """With kube-controller-manager (the emulator's namespace controller), a namespace whose content takes a while to
    go (pods in their grace period; here an object whose finalizer goes 2 s in, ten times the namespace controller wait
    tests/kube/conftest.py sets) is waited for, never finalized by nvcre."""
    api = ApiServer(garbage_collector=True)
    await api.start()
    try:
        kubeconfig = str(api.write_kubeconfig(tmp_path / "kubeconfig", namespace="default", context="emulator"))
        admin = KubeStore(await load_target(kubeconfig), SystemClock(), user_agent="test-admin")
        await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
        await admin.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": "graceful", "namespace": NS, "finalizers": ["example.com/graceful"]}})

        async def kubelet() -> None:  # finishes the graceful end once the namespace is being deleted
            while not (await admin.get(NAMESPACE, NS))["metadata"].get("deletionTimestamp"):
                await asyncio.sleep(0.1)
            await asyncio.sleep(2)
            held = await admin.get(CONFIGMAP, "graceful", NS)
            await admin.update(CONFIGMAP, {**held, "metadata": {**held["metadata"], "finalizers": []}})

        ending = asyncio.create_task(kubelet())
        code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
        await ending
        assert code == 0, err
        assert "finalized" not in out and "finalize" not in err
        with pytest.raises(NotFound):
            await admin.get(NAMESPACE, NS)
        await admin.close()
    finally:
        await api.stop()


async def test_status_with_credentials_the_server_refuses_is_one_line(server: ApiServer, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong token printed a table of ten "unknown ... Unauthorized" rows and exited 1."""
    kubeconfig = server.write_kubeconfig(tmp_path / "wrong-token", token="not-a-token")
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", str(kubeconfig))
    assert (code, out) == (2, "") and len(err.splitlines()) == 1 and "Unauthorized" in err, err


async def test_init_gives_users_roles_that_read_nvcre_and_create_certifications_only(server, kubeconfig, admin, capsys) -> None:
    """`nvcre-view` folds into the built-in view, edit and admin roles, `nvcre-edit` into admin only; bound in a
    namespace, nvcre-edit alone reads and creates Certifications but not Workflows (whose spec reaches pod fields),
    nvcre-view only reads."""
    from nvcre_tui.engine.store import WORKFLOW, Forbidden

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    view, edit = [await admin.get(CLUSTER_ROLE, name) for name in ("nvcre-view", "nvcre-edit")]
    aggregate = "rbac.authorization.k8s.io/aggregate-to-"
    assert {k for k, v in view["metadata"]["labels"].items() if k.startswith(aggregate) and v == "true"} == {
        f"{aggregate}view", f"{aggregate}edit", f"{aggregate}admin"}
    assert {k for k in edit["metadata"]["labels"] if k.startswith(aggregate)} == {f"{aggregate}admin"}  # not edit's bindings
    stores = {}
    for user, role in (("bob", "nvcre-edit"), ("carol", "nvcre-view")):
        await admin.create(ROLE_BINDING, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                          "metadata": {"name": user, "namespace": "default"},
                                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                                          "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]})
        path = server.write_kubeconfig(Path(kubeconfig).with_name(user), token=server.add_token(f"{user}-token", user))
        stores[user] = KubeStore(await load_target(str(path)), SystemClock(), user_agent=f"test-{user}")
    try:
        cert = await create_certification(stores["bob"])
        assert [c["metadata"]["name"] for c in (await stores["bob"].list(CERTIFICATION, "default")).items] == ["soak"]
        with pytest.raises(Forbidden):
            await stores["bob"].create(WORKFLOW, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                                  "metadata": {"name": "w", "namespace": "default"}, "spec": {}})
        assert [c["metadata"]["name"] for c in (await stores["carol"].list(CERTIFICATION, "default")).items] == [cert["metadata"]["name"]]
        with pytest.raises(Forbidden):
            await stores["carol"].delete(CERTIFICATION, cert["metadata"]["name"], "default")
    finally:
        for store in stores.values():
            await store.close()


async def test_status_says_when_the_trainers_controllers_do_not_run(server, kubeconfig, admin, capsys) -> None:
    """The Trainer's and JobSet's CRDs applied and their controllers not running (an API server alone): every TrainJob
    waits for pods that never come. Each controller renews a leader-election Lease wherever it was installed."""
    from tests.kubeapi.trainer_crds import jobset_crd, real_trainer_crd

    await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)

    def controller_row(out: str) -> str:
        return next(line for line in out.splitlines() if line.startswith("trainer controllers"))

    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert "no Kubeflow Trainer CRDs" in controller_row(out)
    for crd in (real_trainer_crd("trainjobs"), real_trainer_crd("trainingruntimes")):
        await admin.create(CRD, crd)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = controller_row(out)  # no JobSet CRD: a TrainJob is never made, whatever controllers run
    assert "missing" in row and "no JobSet CRD is served" in row and "WorkloadNotCreated" in row, row
    await admin.create(CRD, jobset_crd())
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = controller_row(out)
    assert "missing" in row and "Kubeflow Trainer or JobSet's controller" in row and "TrainJobs get no pods" in row
    for namespace, name, seconds_ago in (("kubeflow-system", "trainer.kubeflow.org", 3), ("jobset-system", "6d4f6a47.jobset.x-k8s.io", 900)):
        await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        lease = _node_lease(name, seconds_ago)
        lease["metadata"]["namespace"] = namespace
        await admin.create(LEASE, lease)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = controller_row(out)
    assert "missing" in row and "of JobSet's controller" in row  # its Lease was last renewed 15 minutes ago
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert json.loads(out)["controllers"] == {"trainer": "kubeflow-system", "jobset": None}
    renewed = await admin.get(LEASE, "6d4f6a47.jobset.x-k8s.io", "jobset-system")
    renewed["spec"]["renewTime"] = _node_lease("x", 1)["spec"]["renewTime"]
    await admin.update(LEASE, renewed)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert controller_row(out).split(None, 3)[2:] == ["ok", "Kubeflow Trainer in kubeflow-system, JobSet in jobset-system (leader Lease renewed)"]
