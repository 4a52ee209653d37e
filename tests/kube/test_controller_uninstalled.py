"""`nvcre setup reset --force` under a running `nvcre controller`, over real HTTP against the emulator."""

from __future__ import annotations

import asyncio

from nvcre_tui.cli import main
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.store import LEASE, NotFound
from tests.kube.cluster import until
from tests.kube.test_install_namespace import _controller
from tests.kube.test_setup import admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures


async def _held_by_ctl_1(admin) -> bool:
    """Whether the controller started as ctl-1 holds the engine Lease."""
    try:
        return (await admin.get(LEASE, EngineLease.NAME, "nvcre-system"))["spec"].get("holderIdentity") == "ctl-1"
    except NotFound:
        return False


def _controller_said(capsys) -> list[str]:
    """The controller's lines on stderr so far."""
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("nvcre controller: ")]


async def test_the_controller_says_nvcre_was_uninstalled_and_exits_2_after_a_forced_reset(server, kubeconfig, admin, capsys) -> None:
    """It logged "lost the engine lease (not renewed for 2s: ... namespaces "nvcre-system" not found)" and exited 1, as
    for a Lease another engine took: a Deployment restarts into the queue for it, and the line reads as the API server's
    or another engine's doing. It says nvcre was uninstalled, and exits 2 as a controller that finds no install at start."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    controller = _controller(kubeconfig, "--identity", "ctl-1")

    await until(lambda: _held_by_ctl_1(admin))
    code, _, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert await asyncio.wait_for(controller, 20) == 2
    said = _controller_said(capsys)
    assert said[-1] == ("nvcre controller: nvcre was uninstalled under the engine (its namespace nvcre-system is gone; the "
                        "nvcre CRDs are gone: `nvcre setup reset`?): stopping the "
                        "engine; `nvcre setup init` installs it again")
    assert not [line for line in said if "lost the engine lease" in line]


async def test_the_controller_as_the_engines_service_account_says_nvcre_was_uninstalled_and_exits_2_after_a_forced_reset(
        server, kubeconfig, admin, capsys, tmp_path) -> None:
    """The controller as it runs in the cluster: as `setup init`'s ServiceAccount, whose RBAC the reset deletes with the
    CRDs. Its Lease's renewal and its reads of the CRDs are then refused (403): it logged "lost the engine lease (not
    renewed for 2s: ... forbidden ...)" and exited 1, which the user's kubeconfig (allowed to read the CRDs, and finding
    the Lease's namespace gone) did not. It says nvcre was uninstalled (the CRDs gone, as discovery, which every user may
    read, says; its RBAC gone) and exits 2, as the user path."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    engine = str(server.write_kubeconfig(tmp_path / "engine", token=server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME)))
    controller = _controller(engine, "--identity", "ctl-1")

    await until(lambda: _held_by_ctl_1(admin))
    code, _, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert await asyncio.wait_for(controller, 20) == 2
    said = _controller_said(capsys)
    assert said[-1] == ("nvcre controller: nvcre was uninstalled under the engine (the nvcre CRDs are gone; its RBAC is gone "
                        "(refused its Lease and the nvcre CRDs): `nvcre setup reset`?): stopping the engine; `nvcre setup "
                        "init` installs it again"), said
    assert not [line for line in said if "lost the engine lease" in line]
    assert [r for r in server.requests_where(resource="customresourcedefinitions", status=403)
            if r.user == f"system:serviceaccount:{INSTALL_NAMESPACE}:{ENGINE_NAME}"]  # refused as the ServiceAccount


async def test_the_service_account_controller_still_says_uninstalled_when_its_token_is_refused_after_its_rbac(
        server, kubeconfig, admin, capsys, tmp_path) -> None:
    """On a real cluster the reset deletes the engine's ServiceAccount with its namespace, and the API server then refuses
    its token (401) on every request, the CRDs' reads too: the last renewal's 401 hid the 403 before it, and the engine
    read the Lease as lost otherwise (exit 1). The emulator is made to refuse that token once RBAC refused the Lease."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    token = server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME)
    engine = str(server.write_kubeconfig(tmp_path / "engine", token=token))
    # renewed every 2 s, lost after 4 s: the token goes well before the renewal that finds the Lease lost
    controller = asyncio.create_task(asyncio.to_thread(main, ["controller", "--kubeconfig", engine, "--metrics-port", "0",
                                                              "--lease-duration", "6", "--identity", "ctl-1"]))

    async def lease_refused() -> bool:
        return bool(server.requests_where(api_group="coordination.k8s.io", resource="leases", status=403))

    await until(lambda: _held_by_ctl_1(admin))
    code, _, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    await until(lease_refused)
    del server.tokens[token]  # its ServiceAccount deleted: the token no longer authenticates (401)
    assert await asyncio.wait_for(controller, 20) == 2
    said = _controller_said(capsys)
    assert said[-1] == ("nvcre controller: nvcre was uninstalled under the engine (its RBAC is gone (refused its Lease), then "
                        "its credentials (401 Unauthorized: its ServiceAccount deleted?): `nvcre setup reset`?): stopping the "
                        "engine; `nvcre setup init` installs it again"), said
    assert [r for r in server.requests_where(resource="customresourcedefinitions", status=401)]
