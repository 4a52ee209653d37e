"""`nvcre setup controller`: the Deployment that runs `nvcre controller` in the install namespace, printed, dry-run and
applied over real HTTP against the API-server emulator (which stores apps/v1 Deployments and runs no controller-manager:
no pod comes of it, as on an API server alone), and removed by `setup reset`."""

from __future__ import annotations

import asyncio

import pytest
import yaml

from nvcre_tui.engine.api.vocabulary import ENGINE_NAME
from nvcre_tui.engine.kube.deployment import controller_deployment
from nvcre_tui.engine.kube.install import FIELD_MANAGER
from nvcre_tui.engine.store import NotFound
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.protocol import DEPLOYMENT
from tests.kube.test_setup import admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures

NS = "nvcre-system"
IMAGE = "registry.example.com/nvcre:0.1.0"


async def deployments(admin: KubeStore) -> list[dict]:
    return (await admin.list(DEPLOYMENT, None)).items


@pytest.fixture(autouse=True)
def short_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator runs no Deployment controller: how long `setup controller` looks for one, short here."""
    monkeypatch.setattr("nvcre_tui.cli.setup.controller.SEEN_SECONDS", 0.5)
    monkeypatch.setattr("nvcre_tui.cli.setup.controller.SEEN_POLL_SECONDS", 0.05)


def test_the_deployment_runs_one_engine_as_its_service_account_non_root_and_without_a_gpu() -> None:
    deployment = controller_deployment(IMAGE, "gpu-cert")
    assert (deployment["metadata"]["name"], deployment["metadata"]["namespace"], deployment["spec"]["replicas"]) == (
        ENGINE_NAME, "gpu-cert", 1)
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert pod["serviceAccountName"] == ENGINE_NAME and pod["securityContext"]["runAsNonRoot"] is True
    assert deployment["spec"]["selector"]["matchLabels"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    assert container["image"] == IMAGE and container["args"][:3] == ["controller", "--install-namespace", "gpu-cert"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert [port["name"] for port in container["ports"]] == ["metrics"]
    assert "nvidia.com/gpu" not in yaml.safe_dump(container["resources"]) and container["resources"]["requests"]
    # every place it may write (HOME, XDG_STATE_HOME) is the emptyDir, the only writable path
    env = {entry["name"]: entry.get("value") for entry in container["env"]}
    [mount] = container["volumeMounts"]
    [volume] = pod["volumes"]
    assert volume == {"name": mount["name"], "emptyDir": {}} and env["HOME"] == env["XDG_STATE_HOME"] == mount["mountPath"]
    assert "POD_NAME" in env  # the Lease holder's identity


async def test_output_yaml_prints_it_without_a_cluster(capsys) -> None:
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--install-namespace", "gpu-cert", "-o", "yaml")
    assert (code, err) == (0, "")
    assert list(yaml.safe_load_all(out)) == [controller_deployment(IMAGE, "gpu-cert")]


async def test_dry_run_is_accepted_by_the_server_and_creates_nothing(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    server.clear_requests()
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--dry-run", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert err.strip() == f"deployment.apps/{ENGINE_NAME} serverside-applied (server dry run)"
    assert list(yaml.safe_load_all(out)) == [controller_deployment(IMAGE, NS)]
    asked = server.requests_where(resource="deployments")
    assert asked and all(r.verb == "patch" and r.query.get("dryRun") == "All" for r in asked)
    assert await deployments(admin) == []


async def test_applied_twice_changes_nothing(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig)
    assert (code, err) == (0, ""), err
    assert out.splitlines()[0] == f"deployment.apps/{ENGINE_NAME} serverside-applied"
    first = await admin.get(DEPLOYMENT, ENGINE_NAME, NS)
    assert [entry["manager"] for entry in first["metadata"]["managedFields"]] == [FIELD_MANAGER]
    assert first["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    assert (await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig))[0] == 0
    again = await admin.get(DEPLOYMENT, ENGINE_NAME, NS)
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    writes = [r for r in server.requests_where(resource="deployments") if r.verb == "patch"]
    assert all(r.content_type == "application/apply-patch+yaml" and r.query.get("fieldManager") == FIELD_MANAGER
               for r in writes)


async def test_another_install_namespace(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--install-namespace", "gpu-cert"))[0] == 0
    code, _, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--install-namespace", "gpu-cert",
                               "--kubeconfig", kubeconfig)
    assert code == 0, err
    stored = await admin.get(DEPLOYMENT, ENGINE_NAME, "gpu-cert")
    assert stored["spec"]["template"]["spec"]["containers"][0]["args"][:3] == ["controller", "--install-namespace", "gpu-cert"]


async def test_reset_removes_it_before_the_lease(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    assert (await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert out.splitlines()[0] == f"deployment.apps/{ENGINE_NAME} deleted"  # first: its engine would take a new Lease
    with pytest.raises(NotFound):
        await admin.get(DEPLOYMENT, ENGINE_NAME, NS)


@pytest.mark.parametrize("argv, says", [
    (["--image", ""], "--image"),
    (["--image", "registry.example.com/nvcre 0.1.0"], "--image"),
    (["--image", "   "], "--image"),
    (["--image", IMAGE, "--install-namespace", "Not_A_Namespace"], "--install-namespace"),
    ([], "--image"),
    (["--image", IMAGE, "--dry-run", "-o", "yaml"], "not allowed with"),
])
async def test_bad_flags_are_one_line_exit_2_and_nothing_created(server, kubeconfig, admin, capsys, argv, says) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    server.clear_requests()
    code, out, err = await nvcre(capsys, "setup", "controller", *argv, "--kubeconfig", kubeconfig)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err, err
    assert "Traceback" not in err
    assert server.requests_where(resource="deployments") == [] and await deployments(admin) == []


@pytest.mark.parametrize("namespace, says", [
    (NS, f"nvcre is not installed in namespace {NS} (no such namespace)"),
    ("default", "nvcre is not installed in namespace default (no engine ServiceAccount there); run `nvcre setup init"),
])
async def test_where_nvcre_is_not_installed_nothing_is_applied(server, kubeconfig, admin, capsys, namespace, says) -> None:
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--install-namespace", namespace,
                                 "--kubeconfig", kubeconfig)
    assert code == 2 and len(err.strip().splitlines()) == 1 and says in err and "(nothing applied)" in err, err
    assert server.requests_where(resource="deployments") == [] and await deployments(admin) == []


async def test_reset_by_a_user_who_may_not_delete_the_deployment_deletes_nothing(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """The Deployment is asked of RBAC with the rest, first: a user who reads it but may not delete it deletes nothing
    (the CRDs took every certification, then its engine took the Lease again); without one, the same user resets it."""
    from nvcre_tui.engine.kube.install import install_objects
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING, kind_of

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    assert (await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig))[0] == 0
    rules = [{"apiGroups": ["apiextensions.k8s.io", "nvcre.nvidia.com", "coordination.k8s.io", "rbac.authorization.k8s.io", ""],
              "resources": ["*"], "verbs": ["*"]},
             {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]}]
    await admin.create(CLUSTER_ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                      "metadata": {"name": "ops"}, "rules": rules})
    await admin.create(CLUSTER_ROLE_BINDING, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "ops"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ops"},
        "subjects": [{"kind": "User", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"}]})
    ops = str(server.write_kubeconfig(tmp_path / "kubeconfig-ops", token=server.add_token("ops-token", "ops")))
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", ops)
    assert (code, out) == (2, ""), out + err
    assert err == (f"nvcre setup reset: this user may not delete Deployment {ENGINE_NAME} in namespace {NS} (RBAC); setup "
                   "reset needs a cluster admin (nothing deleted)\n"), err
    assert len(await deployments(admin)) == 1
    for obj in install_objects(NS):  # nothing deleted
        await admin.get(kind_of(obj), obj["metadata"]["name"], obj["metadata"].get("namespace"))
    await admin.delete(DEPLOYMENT, ENGINE_NAME, NS)
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", ops)
    # (the namespace then waits: this user may not read every kind it could hold, to finalize it)
    assert "may not delete" not in err and "customresourcedefinition.apiextensions.k8s.io/certifications.nvcre.nvidia.com deleted" in out


async def test_its_pod_runs_the_engine_as_the_service_account_and_answers_the_liveness_probe(
        server, kubeconfig, admin, tmp_path, monkeypatch, capsys) -> None:
    """What the kubelet would run from the applied Deployment (an API server alone runs no pod): the image's ENTRYPOINT
    `nvcre` with the container's args and env, as ServiceAccount nvcre-engine; it holds the Lease as $POD_NAME and its
    /healthz answers on the port the probe names. (The metrics port is swapped for a free one.)"""
    import socket
    import urllib.request

    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.store.protocol import LEASE
    from tests.kube.cluster import take_lease, until

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    assert (await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig))[0] == 0
    [container] = (await admin.get(DEPLOYMENT, ENGINE_NAME, NS))["spec"]["template"]["spec"]["containers"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [str(port) if arg == str(container["ports"][0]["containerPort"]) else arg for arg in container["args"]]
    for entry in container["env"]:
        monkeypatch.setenv(entry["name"], "nvcre-engine-7d9f-abcde" if "valueFrom" in entry else str(tmp_path))
    engine = str(server.write_kubeconfig(tmp_path / "engine", token=server.service_account_token(NS, ENGINE_NAME)))
    running = asyncio.create_task(nvcre(capsys, *args, "--kubeconfig", engine))
    try:
        async def held() -> bool:
            try:
                return (await admin.get(LEASE, EngineLease.NAME, NS))["spec"].get("holderIdentity") == "nvcre-engine-7d9f-abcde"
            except NotFound:
                return False

        await until(held)

        def healthz() -> int:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{container['livenessProbe']['httpGet']['path']}", timeout=5) as answer:
                return int(answer.status)

        assert await asyncio.to_thread(healthz) == 200
    finally:
        await take_lease(admin, NS, "someone-else")  # it stops on losing the Lease (exit 1, the Deployment restarts it)
        code, _, err = await asyncio.wait_for(running, 10)
    assert code == 1 and "Traceback" not in err, err
    assert not [r for r in server.requests if r.status == 403 and r.user.startswith("system:serviceaccount")]


async def test_a_user_who_may_not_apply_deployments_gets_one_line(server, kubeconfig, admin, tmp_path, capsys) -> None:
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await admin.create(CLUSTER_ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                      "metadata": {"name": "ops"},
                                      "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}]})
    await admin.create(CLUSTER_ROLE_BINDING, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "ops"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ops"},
        "subjects": [{"kind": "User", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"}]})
    ops = str(server.write_kubeconfig(tmp_path / "kubeconfig-ops", token=server.add_token("ops-token", "ops")))
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", ops)
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1, err
    assert err.startswith("nvcre setup controller: ") and "deployments" in err and "forbidden" in err, err
    assert await deployments(admin) == []


def controller_row(out: str) -> str:
    [row] = [line for line in out.splitlines() if line.startswith("controller ")]
    return row


async def test_status_does_not_say_no_controller_saw_a_deployment_one_saw_before_its_new_image(server, kubeconfig, admin, capsys) -> None:
    """A Deployment controller that has seen an earlier spec (status.observedGeneration 1) of one applied again with
    another image (generation 2), no pod of it ready yet: the row said that no Deployment controller had seen it and
    that an API server without kube-controller-manager makes no pod, while one runs and is rolling it out."""
    import json

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    assert (await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig))[0] == 0
    stored = await admin.get(DEPLOYMENT, ENGINE_NAME, NS)
    await admin.patch_status(DEPLOYMENT, ENGINE_NAME, NS, {"observedGeneration": stored["metadata"]["generation"], "replicas": 1})
    newer = "registry.example.com/nvcre:0.2.0"
    assert (await nvcre(capsys, "setup", "controller", "--image", newer, "--kubeconfig", kubeconfig))[0] == 0
    stored = await admin.get(DEPLOYMENT, ENGINE_NAME, NS)
    assert stored["status"]["observedGeneration"] < stored["metadata"]["generation"]  # not seen yet: the controller's next look
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = controller_row(out)
    assert f"({newer}): 0/1 replicas ready" in row and "no Deployment controller" not in row, row
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert json.loads(out)["controllerDeployment"]["observed"] is True, out


async def test_status_has_a_row_for_it_outside_the_exit_code(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """`setup status` said nothing of the Deployment `setup controller` applies: none (with how to run an engine), its
    image and ready replicas, or unknown naming the permission refused; never in the exit code (nvcre's own install)."""
    import json

    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, ""), err
    assert controller_row(out).split()[1] == "none", out
    assert (f"no Deployment {ENGINE_NAME} in {NS}: run `nvcre controller` somewhere, or `nvcre setup controller --image IMG`"
            in controller_row(out))
    assert (await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 0, err
    row = controller_row(out)  # no controller-manager in the emulator: no pod is ever ready
    assert row.split()[1:3] == ["not", "ready"] and f"Deployment {ENGINE_NAME} ({IMAGE}): 0/1 replicas ready" in row, row
    # "0/1 replicas ready" alone sent the user looking for a pod no controller would make: said why, and what to do instead
    assert row.endswith("replicas ready; no Deployment controller has seen it (status.observedGeneration): an API server without "
                        "kube-controller-manager makes no pod of it; run `nvcre controller` from a workstation instead, with a "
                        "kubeconfig holding the engine's rights"), row
    stored = await admin.get(DEPLOYMENT, ENGINE_NAME, NS)
    await admin.patch_status(DEPLOYMENT, ENGINE_NAME, NS, {"observedGeneration": stored["metadata"]["generation"], "replicas": 1})
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert "0/1 replicas ready" in controller_row(out) and "no Deployment controller" not in controller_row(out), out  # seen, pod to come
    await admin.patch_status(DEPLOYMENT, ENGINE_NAME, NS, {"replicas": 1, "readyReplicas": 1})
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    assert code == 0 and json.loads(out)["controllerDeployment"] == {"images": [IMAGE], "replicas": 1, "ready": 1, "observed": True}, out
    assert stored["spec"]["replicas"] == 1
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert controller_row(out).split()[1] == "ok" and "1/1 replicas ready" in controller_row(out)
    # a user who reads all of nvcre's install but not Deployments: unknown, the permission named, exit still 0
    rules = [{"apiGroups": ["apiextensions.k8s.io", "nvcre.nvidia.com", "coordination.k8s.io", "rbac.authorization.k8s.io", ""],
              "resources": ["*"], "verbs": ["get", "list", "watch"]}]
    await admin.create(CLUSTER_ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                      "metadata": {"name": "reader"}, "rules": rules})
    await admin.create(CLUSTER_ROLE_BINDING, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
        "subjects": [{"kind": "User", "name": "reader", "apiGroup": "rbac.authorization.k8s.io"}]})
    reader = str(server.write_kubeconfig(tmp_path / "kubeconfig-reader", token=server.add_token("reader-token", "reader")))
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", reader)
    row = controller_row(out)
    assert code == 0 and row.split()[1] == "unknown" and 'cannot get resource "deployments"' in row, out + err
    assert "whether nvcre is installed is not known" not in err and "may not read 1 of 14 checks" in err, err


def test_no_image_is_said_to_be_required(capsys: pytest.CaptureFixture[str]) -> None:
    """It said "--image: must be an image reference such as ... got None"."""
    from nvcre_tui.cli import main

    assert main(["setup", "controller", "-o", "yaml"]) == 2
    assert capsys.readouterr() == ("", "--image: required: an image with this package installed and ENTRYPOINT nvcre (the "
                                       "repository's Dockerfile), such as registry.example.com/nvcre:0.1.0\n")


async def test_on_an_api_server_alone_it_says_what_setup_status_says(server, kubeconfig, admin, capsys) -> None:
    """With no controller-manager no pod comes of the Deployment, which `setup status` says; `setup controller` said
    its pod was made by the cluster's controller-manager and sent the user to `kubectl get pods` for it."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig)
    assert (code, err) == (0, ""), err
    assert "made by the cluster's controller-manager" not in out, out
    from nvcre_tui.engine.kube.deployment import NO_DEPLOYMENT_CONTROLLER

    assert out.splitlines() == [f"deployment.apps/{ENGINE_NAME} serverside-applied",
                                f"Deployment {ENGINE_NAME} ({IMAGE}) in namespace {NS}: {NO_DEPLOYMENT_CONTROLLER} (none in "
                                "0.5 s; `nvcre setup status` says if one has since)"]  # a busy controller-manager may see it later
    status = (await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig))[1]
    assert controller_row(status).endswith(f"replicas ready; {NO_DEPLOYMENT_CONTROLLER}")  # the same words


async def test_where_a_deployment_controller_sees_it_its_pod_is_to_come(server, kubeconfig, admin, capsys) -> None:
    """A Deployment controller (played here: it writes status.observedGeneration, as kube-controller-manager's does
    within a second) sees it while `setup controller` looks: its pod is made by the controller-manager."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0

    async def deployment_controller() -> None:
        while True:
            try:
                stored = await admin.get(DEPLOYMENT, ENGINE_NAME, NS)
            except NotFound:
                await asyncio.sleep(0.02)
                continue
            await admin.patch_status(DEPLOYMENT, ENGINE_NAME, NS, {"observedGeneration": stored["metadata"]["generation"]})
            return

    playing = asyncio.create_task(deployment_controller())
    code, out, err = await nvcre(capsys, "setup", "controller", "--image", IMAGE, "--kubeconfig", kubeconfig)
    await playing
    assert (code, err) == (0, ""), err
    assert out.splitlines()[1] == (f"nvcre controller runs from {IMAGE} in namespace {NS} (one replica: the nvcre-engine Lease "
                                   f"elects the engine); its pod is made by the cluster's controller-manager: "
                                   f"kubectl -n {NS} get pods"), out
