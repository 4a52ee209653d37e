"""`certification run --setup` (NVCRE's --setup): on an API server with nothing installed, it installs what `setup
init` installs (progress on stderr: stdout is the report), then runs; a second run finds it installed and applies
again (no change); on the simulator it is refused in one line, creating nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.protocol import CERTIFICATION, CRD
from tests.kube.cluster import installed_in_thread, store_on
from tests.kubeapi import ApiServer
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster

ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "examples" / "burn-in.yaml"


async def _installed(kubeconfig: Path) -> tuple[list[str], list[str]]:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        crds = sorted(c["metadata"]["name"] for c in (await store.list(CRD)).items)
        try:
            certs = [c["metadata"]["name"] for c in (await store.list(CERTIFICATION, "default")).items]
        except NotFound:  # no CRD: the kind is not served
            certs = []
    finally:
        await store.close()
    return crds, certs


def test_setup_installs_then_runs_on_a_bare_api_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path, bare=True) as (_, kubeconfig):
        assert asyncio.run(_installed(kubeconfig)) == ([], [])
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--setup", "--cert-file", str(CERT),
                "--wait", "--results-file", str(tmp_path / "r.json"), "--history", str(tmp_path / "h.db")]
        assert main(argv) == 1  # burn-in finds the default fleet's two faulty nodes
        out, err = capsys.readouterr()
        assert "customresourcedefinition.apiextensions.k8s.io/certifications.nvcre.nvidia.com serverside-applied" in err
        assert "nvcre is installed in namespace nvcre-system" in err
        assert out.startswith("╔") and "serverside-applied" not in out  # stdout is the report alone
        assert json.loads((tmp_path / "r.json").read_text())["failedNodes"] == ["gpu-node-07", "gpu-node-12"]
        crds, certs = asyncio.run(_installed(kubeconfig))
        assert "certifications.nvcre.nvidia.com" in crds and certs == ["burn-in"]
        argv[argv.index(str(CERT)) + 1:argv.index(str(CERT)) + 1] = ["--name", "again"]
        assert main(argv) == 1  # installed already: applied again, run again
        assert "nvcre is installed in namespace nvcre-system" in capsys.readouterr().err


def test_setup_on_the_simulator_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--sim", "--setup", "--cert-file", str(CERT), "--state", str(state)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "--setup: installs nvcre on a cluster (setup init); the simulator needs nothing installed: drop --setup, or name "
        "the cluster (--kubeconfig, --context)"]
    assert not state.exists()


async def _operator(server: ApiServer, kubeconfig: Path, folder: Path) -> Path:
    """A user who may apply CRDs, namespaces and ServiceAccounts, not RBAC."""
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING

    rbac = "rbac.authorization.k8s.io"
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        await admin.create(CLUSTER_ROLE, {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": {"name": "ops"}, "rules": [
            {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["*"]},
            {"apiGroups": [""], "resources": ["namespaces", "serviceaccounts"], "verbs": ["*"]}]})
        await admin.create(CLUSTER_ROLE_BINDING, {"apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "ops"},
                                                  "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "ops"},
                                                  "subjects": [{"kind": "User", "name": "ops", "apiGroup": rbac}]})
    finally:
        await admin.close()
    return server.write_kubeconfig(folder / "kubeconfig-ops", token=server.add_token("ops-token", "ops"))


def test_setup_by_a_user_the_server_refuses_is_one_line_and_applies_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line saying why, not that line and then "--setup: nvcre is not installed; nothing was created"."""
    with installed_in_thread(tmp_path, bare=True) as (server, kubeconfig):
        ops = asyncio.run(_operator(server, kubeconfig, tmp_path))
        argv = ["certification", "run", "--kubeconfig", str(ops), "--setup", "--cert-file", str(CERT), "--history", str(tmp_path / "h.db")]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.startswith("nvcre setup init: ") and err.endswith("(nothing applied)\n"), err
        assert asyncio.run(_installed(kubeconfig)) == ([], [])


async def _terminating_install_namespace(kubeconfig: Path) -> None:
    """nvcre-system deleted on an API server with no namespace controller: it stays Terminating."""
    from nvcre_tui.engine.store.protocol import NAMESPACE

    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nvcre-system"}})
        await admin.delete(NAMESPACE, "nvcre-system")
        assert (await admin.get(NAMESPACE, "nvcre-system"))["status"]["phase"] == "Terminating"
    finally:
        await admin.close()


def test_setup_into_a_terminating_install_namespace_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`setup init`'s line, then "--setup: nvcre is not installed; nothing was created": one line, as for RBAC."""
    with installed_in_thread(tmp_path, bare=True) as (_, kubeconfig):
        asyncio.run(_terminating_install_namespace(kubeconfig))
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--setup", "--cert-file", str(CERT), "--history", str(tmp_path / "h.db")]
        assert main(argv) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("nvcre setup init: nvcre's install namespace nvcre-system is being deleted (Terminating)"), err
        assert asyncio.run(_installed(kubeconfig)) == ([], [])


def test_setup_whose_crds_are_not_served_in_time_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.cli.run import submit
    from tests.kubeapi import Fault

    monkeypatch.setattr(submit, "SETUP_WAIT_SECONDS", 0.5)  # how long --setup waits, not how the server answers
    with installed_in_thread(tmp_path, bare=True) as (server, kubeconfig):
        server.faults.add(Fault(method="GET", path=r"^/apis/nvcre\.nvidia\.com/v1alpha1$", status=404, times=100_000))
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--setup", "--cert-file", str(CERT), "--history", str(tmp_path / "h.db")]
        assert main(argv) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if "serverside-applied" not in line]
        assert err == ["nvcre setup init: CRDs not Established and served after 0.5s: certifications.nvcre.nvidia.com, "
                       "workflows.nvcre.nvidia.com, jobs.nvcre.nvidia.com, workloadruns.nvcre.nvidia.com"], err
        assert asyncio.run(_installed(kubeconfig))[1] == []
