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


def _controller_said(capsys, before: str = "") -> list[str]:
    """The controller's lines on stderr so far; `before`: stderr a command run meanwhile captured (the controller is a
    thread: a line it said while that command ran is in that command's capture)."""
    err = before + capsys.readouterr().err
    return [line for line in err.splitlines() if line.startswith("nvcre controller: ")]


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
    said = _controller_said(capsys, before=err)
    assert said[-1] == ("nvcre controller: nvcre was uninstalled under the engine (its namespace nvcre-system is gone; the "
                        "nvcre CRDs are gone: `nvcre setup reset`?): stopping the "
                        "engine; `nvcre setup init` installs it again")
    assert not [line for line in said if "lost the engine lease" in line]


CREDENTIALS_REFUSED = ("nvcre controller: the API server refuses the engine's credentials (401 Unauthorized, to its Lease's "
                       "renewal and its reads of the nvcre CRDs): its ServiceAccount was deleted (`nvcre setup reset`?) or its "
                       "token expired: stopping the engine; `nvcre setup init` installs it again, or run it with credentials "
                       "the server accepts")
RBAC_THEN_CREDENTIALS = ("nvcre controller: nvcre was uninstalled under the engine (its RBAC is gone (refused its Lease), then "
                         "its credentials (401 Unauthorized: its ServiceAccount deleted?): `nvcre setup reset`?): stopping the "
                         "engine; `nvcre setup init` installs it again")


async def test_the_controller_as_the_engines_service_account_says_its_credentials_are_refused_and_exits_2_after_a_forced_reset(
        server, kubeconfig, admin, capsys, tmp_path) -> None:
    """The controller as it runs in the cluster: as `setup init`'s ServiceAccount, with a token bound to it (TokenRequest).
    The reset deletes its RBAC and then its ServiceAccount, and the server refuses that token (401) on every request,
    between two of the engine's renewals. It logged "lost the engine lease (not renewed for 4s: ... Unauthorized ...)"
    and exited 1, as for a Lease another engine took: a Deployment restarted it into the queue, with credentials the
    server refuses. It says its credentials are refused and why (or, should a renewal fall between the two deletions,
    its RBAC gone and then its credentials) and exits 2, as the user path."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    engine = str(server.write_kubeconfig(tmp_path / "engine", token=server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME)))
    controller = _controller(engine, "--identity", "ctl-1")

    await until(lambda: _held_by_ctl_1(admin))
    code, _, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert await asyncio.wait_for(controller, 20) == 2
    said = _controller_said(capsys, before=err)
    assert said[-1] in (CREDENTIALS_REFUSED, RBAC_THEN_CREDENTIALS), said
    assert not [line for line in said if "lost the engine lease" in line]
    assert [r for r in server.requests_where(resource="customresourcedefinitions", status=401)
            if r.user == ""]  # refused before it is anyone: its ServiceAccount is gone


async def test_the_service_account_controller_still_says_uninstalled_when_its_token_is_refused_after_its_rbac(
        server, kubeconfig, admin, capsys, tmp_path) -> None:
    """On a real cluster the reset deletes the engine's RBAC, then its ServiceAccount, and the API server then refuses
    its token (401) on every request, the CRDs' reads too: the last renewal's 401 hid the 403 before it, and the engine
    read the Lease as lost otherwise (exit 1). Here the account's deletion is slow (3 s, past a renewal), so a renewal
    meets RBAC's 403 first; then the emulator refuses the token as the real server does, the account being gone."""
    from nvcre_tui.engine.kube.install import ENGINE_NAME, INSTALL_NAMESPACE
    from tests.kubeapi.faults import Fault

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    token = server.service_account_token(INSTALL_NAMESPACE, ENGINE_NAME)
    engine = str(server.write_kubeconfig(tmp_path / "engine", token=token))
    # renewed every 2 s, lost after 4 s: the token goes (its account deleted) after a renewal refused by RBAC
    controller = asyncio.create_task(asyncio.to_thread(main, ["controller", "--kubeconfig", engine, "--metrics-port", "0",
                                                              "--lease-duration", "6", "--identity", "ctl-1"]))

    await until(lambda: _held_by_ctl_1(admin))
    server.faults.add(Fault(method="DELETE", path=rf"/serviceaccounts/{ENGINE_NAME}$", delay=3.0, times=1))
    code, _, err = await nvcre(capsys, "setup", "reset", "--yes", "--force", "--kubeconfig", kubeconfig)
    assert code == 0, err
    assert server.requests_where(api_group="coordination.k8s.io", resource="leases", status=403)  # RBAC refused it first
    assert await asyncio.wait_for(controller, 20) == 2
    # the controller (a thread) may have said it while the reset still ran: its line is then in the reset's capture
    said = _controller_said(capsys, before=err)
    assert said[-1] == RBAC_THEN_CREDENTIALS, said
    assert [r for r in server.requests_where(resource="customresourcedefinitions", status=401)]
