"""nvcre installed into a namespace other than nvcre-system (`setup init --install-namespace NS`, or -n NS), over real
HTTP against the emulator: every command that was not told the namespace says in one line where nvcre is and which flag
names it (exit 2), `nvcre controller` included (it printed `engine lease: ... not found` every 2 s for ever); and
`setup reset` finds the engine's Lease wherever nvcre is installed, and deletes no cluster-wide object of an install in
another namespace than the one it was given."""

from __future__ import annotations

import asyncio
from typing import Any

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_crds, install_objects
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.store import CERTIFICATION, CRD, LEASE, NODE, NotFound
from tests.kube.test_setup import _gpu_node, admin, kubeconfig, no_user_cluster, nvcre, present, server  # noqa: F401 - fixtures
from tests.kube.cluster import take_lease, until
from tests.kubeapi import Fault

OTHER = "nvcre-other"
STOP_IT = "stop it first (its Deployment or `nvcre controller` process; a console that runs one: quit it), or pass --force"
CATEGORY = ("certification", "run", "--category", "communication/nccl-all-reduce")


def not_installed(url: str) -> str:
    return (f"{url}: nvcre is not installed in namespace nvcre-system (no such namespace); it is installed in {OTHER}: "
            f"pass --install-namespace {OTHER}")




def _controller(kubeconfig: str, *flags: str) -> asyncio.Task[int]:
    """`nvcre controller` as from a shell, in a thread (it runs its own event loop)."""
    argv = ["controller", "--kubeconfig", kubeconfig, "--metrics-port", "0", "--lease-duration", "3", *flags]
    return asyncio.create_task(asyncio.to_thread(main, argv))


async def _stop(admin, task: asyncio.Task[int]) -> int:
    """Another engine takes the Lease over (retried: the holder renews it meanwhile): the controller exits 1."""
    await take_lease(admin, OTHER, "")
    return await asyncio.wait_for(task, 15)


async def test_reset_refuses_while_a_controller_holds_the_lease_where_nvcre_was_installed(server, kubeconfig, admin, capsys) -> None:
    """It deleted the CRDs (every certification) and ClusterRoles, then said `namespace/nvcre-system not found`, exit 0."""
    code, out, err = await nvcre(capsys, "setup", "init", "--install-namespace", OTHER, "--kubeconfig", kubeconfig)
    assert (code, out.splitlines()[-1]) == (0, f"nvcre is installed in namespace {OTHER}"), err
    controller = _controller(kubeconfig, "--lease-namespace", OTHER, "--identity", "ctl-1")  # the former name: an alias

    async def held() -> bool:
        try:
            return (await admin.get(LEASE, EngineLease.NAME, OTHER))["spec"].get("holderIdentity") == "ctl-1"
        except NotFound:
            return False

    try:
        await until(held)
        code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
        said = [line for line in err.splitlines() if not line.startswith("nvcre controller: ")]  # the controller's log
        assert (code, out, said) == (2, "", [f"nvcre setup reset: the nvcre engine ctl-1 holds the lease in {OTHER}: {STOP_IT}"])
        assert all([await present(admin, obj) for obj in install_objects(OTHER)])
    finally:
        assert await _stop(admin, controller) == 1
    capsys.readouterr()
    # No engine now, but the namespace reset was given (nvcre-system by default) holds no install: the CRDs and
    # ClusterRoles are the install's in nvcre-other. --force (for running certifications, an engine) does not change that.
    refused = (f"nvcre setup reset: nvcre is not installed in namespace nvcre-system but in {OTHER}: pass --install-namespace "
               f"{OTHER} to remove that install (nothing deleted)\n")
    for force in ((), ("--force",)):
        code, out, err = await nvcre(capsys, "setup", "reset", "--yes", *force, "--kubeconfig", kubeconfig)
        assert (code, out, err) == (2, "", refused)
        assert all([await present(admin, obj) for obj in install_objects(OTHER)])
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "-n", OTHER, "--kubeconfig", kubeconfig)  # -n: an alias
    assert code == 0, err
    assert not any([await present(admin, obj) for obj in install_objects(OTHER) if obj["kind"] != "Namespace"])


async def test_reset_finds_the_engine_lease_where_leases_cannot_be_listed_across_namespaces(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "-n", OTHER, "--kubeconfig", kubeconfig))[0] == 0
    assert await EngineLease(admin, SystemClock(), OTHER, "engine@node-7/42").try_acquire()
    server.faults.add(Fault(method="GET", path=r"^/apis/coordination\.k8s\.io/v1/leases$", status=403))
    code, out, err = await nvcre(capsys, "setup", "reset", "--yes", "--kubeconfig", kubeconfig)
    assert (code, err) == (2, f"nvcre setup reset: the nvcre engine engine@node-7/42 holds the lease in {OTHER}: {STOP_IT}\n")
    assert server.requests_where(verb="list", resource="leases")[-1].status == 403  # it did try the list first
    assert all([await present(admin, obj) for obj in install_objects(OTHER)])


async def test_a_command_not_told_the_install_namespace_says_where_nvcre_is(server, kubeconfig, admin, capsys) -> None:
    """It was `nvcre: NotFound: Lease nvcre-system/nvcre-engine: namespaces "nvcre-system" not found`."""
    assert (await nvcre(capsys, "setup", "init", "--install-namespace", OTHER, "--kubeconfig", kubeconfig))[0] == 0
    for name in ("gpu-a", "gpu-b"):
        await admin.create(NODE, _gpu_node(name))
    code, out, err = await nvcre(capsys, *CATEGORY, "--kubeconfig", kubeconfig)
    assert (code, out, err) == (2, "", not_installed(server.url) + "\n")
    assert (await admin.list(CERTIFICATION)).items == []
    code, out, err = await nvcre(capsys, *CATEGORY, "--install-namespace", OTHER, "--kubeconfig", kubeconfig, "--name", "there")
    said = err.splitlines()  # stdout is kept for the report: what it did goes to stderr
    assert code == 0 and said[1].startswith("Certification there created"), err
    assert said[-2].endswith(f"nvcre certification report there --kubeconfig {kubeconfig} --install-namespace {OTHER}`.")
    code, out, _ = await nvcre(capsys, "setup", "status", "--install-namespace", OTHER, "--kubeconfig", kubeconfig)
    assert code == 0 and f"namespace            ok         {OTHER}" in out


async def test_with_nvcre_installed_nowhere_it_says_how_to_name_or_make_the_install(server, kubeconfig, admin, capsys) -> None:
    for crd in install_crds():  # the CRDs alone (applied by hand): no install namespace anywhere
        await admin.apply(CRD, crd, field_manager=FIELD_MANAGER)
    code, out, err = await nvcre(capsys, *CATEGORY, "--sim-runner", "--kubeconfig", kubeconfig)
    assert (code, err) == (2, f"{server.url}: nvcre is not installed in namespace nvcre-system (no such namespace); pass "
                              "--install-namespace NS for the namespace `nvcre setup init --install-namespace NS` installed it "
                              "into, or run `nvcre setup init`\n")
    assert (await admin.list(NODE)).items == []  # said before the simulated fleet registered a Node


async def test_the_controller_exits_2_when_nvcre_is_not_installed_in_its_namespace(server, kubeconfig, admin, capsys) -> None:
    """README: it exits 2 when it cannot start (nvcre not installed); it printed `engine lease: ... not found` every 2 s."""
    assert (await nvcre(capsys, "setup", "init", "--install-namespace", OTHER, "--kubeconfig", kubeconfig))[0] == 0
    capsys.readouterr()
    assert await asyncio.wait_for(_controller(kubeconfig), 30) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"nvcre controller: {not_installed(server.url)}"
    assert not [line for line in err if "engine lease" in line]  # no retry loop
    assert (await admin.list(LEASE, None, field_selector=f"metadata.name={EngineLease.NAME}")).items == []
    # --install-namespace, the name every other command uses, is the controller's too (it was refused)
    controller = _controller(kubeconfig, "--install-namespace", OTHER, "--identity", "ctl-2")
    lease = await until(lambda: _holder(admin))
    assert lease == "ctl-2"
    assert await _stop(admin, controller) == 1


async def _holder(admin) -> str | None:
    try:
        return (await admin.get(LEASE, EngineLease.NAME, OTHER))["spec"].get("holderIdentity") or None
    except NotFound:
        return None

