"""A user bound to nvcre-edit and nvcre-view in one namespace certifies there and opens the console (README, "Users'
roles"). Both exited 2 on `Forbidden: Lease nvcre-system/nvcre-engine`: they tried to run the engine, which such a user
may not. They are viewers now that say why, and the certification waits for `nvcre controller`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE, install_objects
from nvcre_tui.engine.kube.rbac import grants_for, rbac_allows
from nvcre_tui.engine.lease import LEASE_NAME, EngineLease
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.protocol import CERTIFICATION, LEASE
from nvcre_tui.screens.confirm import ConfirmModal
from textual.widgets import Button
from tests.kube.cluster import certification_names, installed, installed_in_thread, store_on
from tests.kube.test_console_on_cluster import args_for, opened, opener, until
from tests.kube.test_run_engine_leaves import _register
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import as_installed_before, least_privileged

CATEGORY = "communication/nccl-all-reduce"
NEEDS_CONTROLLER = "progress needs `nvcre controller` running"
# What a refused read of the engine Lease says grants it (grants.READS)
LEASE_READ = ("reading the engine Lease in namespace nvcre-system takes the Role nvcre-engine-lease-reader there, which setup "
              "init binds to every authenticated user (an install made before it has none: setup init again)")


async def _lease(kubeconfig: Path) -> dict | None:
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        return await admin.get(LEASE, LEASE_NAME, INSTALL_NAMESPACE)
    except NotFound:
        return None
    finally:
        await admin.close()


def _run(kubeconfig: Path, tmp_path: Path, name: str, *extra: str) -> list[str]:
    return ["certification", "run", "--kubeconfig", str(kubeconfig), "--category", CATEGORY, "--name", name,
            "--history", str(tmp_path / "h.db"), *extra]


def test_an_edit_user_creates_a_certification_and_is_told_an_engine_must_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice"))
        assert main(_run(alice, tmp_path, "alice-1")) == 0
        err = capsys.readouterr().err
        assert "Certification alice-1 created in namespace default" in err and "Traceback" not in err
        [viewer] = [line for line in err.splitlines() if line.startswith("viewer:")]
        # setup init lets every user read who holds the engine Lease: nobody here
        assert viewer == ("viewer: no engine holds the lease; this user may not run the engine (RBAC: no update on Lease "
                          f"nvcre-system/nvcre-engine): {NEEDS_CONTROLLER}")
        assert asyncio.run(certification_names(kubeconfig)) == ["alice-1"]
        assert asyncio.run(_lease(kubeconfig)) is None  # it never tried to become the engine

        asyncio.run(as_installed_before(kubeconfig))  # an install that lets no user read the Lease
        assert main(_run(alice, tmp_path, "alice-2")) == 0
        err = capsys.readouterr().err
        [viewer] = [line for line in err.splitlines() if line.startswith("viewer:")]
        assert viewer.startswith("viewer: cannot read the engine Lease nvcre-system/nvcre-engine (forbidden), so not whether an "
                                 f"engine runs; {LEASE_READ}; this user may not run the engine") and viewer.endswith(NEEDS_CONTROLLER)


def test_an_edit_users_run_wait_follows_as_a_viewer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice"))
        assert main(_run(alice, tmp_path, "waits", "--wait", "--timeout", "2s")) == 3  # timed out following: no engine runs
        out, err = capsys.readouterr()
        # no engine ran it: the report says it waits to start (its phase), not that it runs
        assert "Result:         WAITING to start" in out and "Traceback" not in err and "Forbidden" not in err
        assert NEEDS_CONTROLLER in err
        assert asyncio.run(_lease(kubeconfig)) is None


async def test_an_edit_users_console_opens_as_a_viewer_that_says_why(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "test-admin")
        try:
            assert await EngineLease(admin, SystemClock(), INSTALL_NAMESPACE, "controller-7f9c", duration=3600).try_acquire()
        finally:
            await admin.close()
        alice = await least_privileged(server, kubeconfig, "alice")
        app = NvcreApp(opener=opener(args_for(alice), read_only=False), live=True)
        async with app.run_test(size=(200, 50)) as pilot:
            await opened(app, pilot)
            assert app.return_code is None and app.session is not None and app.session.engine is None
            assert "engine held by controller-7f9c" in app.sub_title and "this user may not run the engine" in app.sub_title
            await app.take_over()  # the console's periodic try: never for a user who may not
            assert app.session.engine is None

        await as_installed_before(kubeconfig)
        app = NvcreApp(opener=opener(args_for(alice), read_only=False), live=True)
        async with app.run_test(size=(300, 50)) as pilot:
            await opened(app, pilot)
            assert app.return_code is None and app.session is not None and app.session.engine is None
            assert "cannot read the engine Lease nvcre-system/nvcre-engine (forbidden)" in app.sub_title
            assert NEEDS_CONTROLLER in app.sub_title


def test_every_user_may_read_the_engine_lease_and_nobody_new_may_write_it() -> None:
    objects = install_objects(INSTALL_NAMESPACE)
    binding = next(o for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "nvcre-engine-lease-reader")
    assert binding["subjects"] == [{"kind": "Group", "name": "system:authenticated", "apiGroup": "rbac.authorization.k8s.io"}]
    role = next(o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == "nvcre-engine-lease-reader")
    rules = role["rules"]
    assert rbac_allows(rules, "get", "coordination.k8s.io", "leases", name=LEASE_NAME)
    assert not rbac_allows(rules, "get", "coordination.k8s.io", "leases", name="kube-scheduler")
    assert not rbac_allows(rules, "list", "coordination.k8s.io", "leases")
    assert not any(rbac_allows(rules, verb, "coordination.k8s.io", "leases", name=LEASE_NAME) for verb in ("update", "patch", "delete"))
    assert grants_for(objects, INSTALL_NAMESPACE, "someone") == []  # the engine's ServiceAccount rules stay its own


async def _spec_of(kubeconfig: Path, name: str) -> dict:
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        return (await admin.get(CERTIFICATION, name, "default"))["spec"]
    finally:
        await admin.close()


@pytest.mark.parametrize("source", ["category", "file"])
def test_an_edit_user_who_may_not_list_nodes_certifies_and_the_engine_plans(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str) -> None:
    """nvcre-edit and nvcre-view only, as setup grants users (no namespaced role reads Nodes): `run --category` exited 2
    with "no eligible nodes match (there is no Node at all ...)" on a cluster full of GPU nodes, since the CLI planned
    on the Nodes it could not read. The engine reads them and plans; the CLI creates the certification and says so."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        bob = asyncio.run(least_privileged(server, kubeconfig, "bob", nodes=False))
        if source == "category":
            argv = _run(bob, tmp_path, "bob-1", "--gpus-per-node", "4")
        else:
            cert = tmp_path / "cert.yaml"
            cert.write_text("apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: bob-1}\n"
                            "spec:\n  target: {nodeSelector: {nvidia.com/gpu.present: 'true'}}\n"
                            "  categories: [{domain: communication, variant: nccl-all-reduce}]\n")
            argv = ["certification", "run", "--kubeconfig", str(bob), "--cert-file", str(cert), "--history", str(tmp_path / "h.db")]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, err
        assert "Certification bob-1 created in namespace default" in err and "Traceback" not in err
        [line] = [line for line in err.splitlines() if line.startswith("not planned here")]
        assert "may not list Nodes" in line and "the engine plans it" in line
        # the options the nodes' GPU architecture and platform decide, unless set, are named: planning here needed them
        shape = "mlnxPerNode, enableMNNVL and maxBytes come" if source == "category" else "gpusPerNode, mlnxPerNode, enableMNNVL and maxBytes come"
        assert f"; checked here: what needs no Node; {shape} from the nodes' GPU architecture and platform" in line, line
        assert ("GPU product not narrowed" in line) == (source == "category")
        assert asyncio.run(certification_names(kubeconfig)) == ["bob-1"]
        assert "nvidia.com/gpu.product" not in asyncio.run(_spec_of(kubeconfig, "bob-1"))["target"].get("nodeSelector", {})


def test_a_view_user_is_told_which_role_creates_certifications(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bound to nvcre-view only (what the built-in view and edit roles gain): the create was refused with the server's
    words alone; the line now names the role that grants it."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        carol = asyncio.run(least_privileged(server, kubeconfig, "carol", roles=("nvcre-view",)))
        assert main(_run(carol, tmp_path, "carol-1")) == 2
        err = capsys.readouterr().err
        [line] = [line for line in err.splitlines() if "forbidden" in line and "certifications" in line]
        assert 'User "carol" cannot create resource "certifications"' in line
        assert line.endswith("creating certifications takes nvcre-edit in namespace default, which setup init folds into the "
                             "built-in admin role: a RoleBinding to admin or nvcre-edit there (nothing was created)"), line
        assert asyncio.run(certification_names(kubeconfig)) == []


@pytest.mark.parametrize("command", [["cluster", "info"], ["certification", "render", str(Path(__file__).parents[2] / "examples" / "burn-in.yaml")]])
def test_a_command_that_reads_every_node_names_the_grant_it_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  command: list[str]) -> None:
    """`cluster info` and `render` plan on the cluster's Nodes: a user bound as setup's docs say (no Node reading) got the
    server's refusal alone."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        dave = asyncio.run(least_privileged(server, kubeconfig, "dave", nodes=False))
        assert main([*command, "--kubeconfig", str(dave)]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and 'User "dave" cannot list resource "nodes"' in err, err
        assert err.endswith("it takes get, list and watch on nodes, which no namespaced role grants (a ClusterRole with them "
                            "and a ClusterRoleBinding)\n"), err


CERT_HEAD = ("apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: bob-bad}\n"
             "spec:\n  target: {nodeSelector: {nvidia.com/gpu.present: 'true'}}\n  categories:\n")


@pytest.mark.parametrize(("category", "flags", "expected"), [
    ("    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node, onFailure: diagnose}}\n", (),
     "cert.yaml: spec.categories[0].options.onFailure: onFailure: diagnose needs testScale intra-rack or full-scale (a multi-node "
     "test), not intra-node"),
    ("    - {domain: diagnostics, variant: dcgm-level4, options: {onFailure: diagnose}}\n", (),
     "cert.yaml: spec.categories[0].options.onFailure: onFailure: diagnose needs testScale intra-rack or full-scale (a multi-node "
     "test), not intra-node"),
    ("    - {domain: training, variant: nemotron5-8b, options: {maxSteps: -1, exitDurationMins: 60, timeoutPerJob: 1h}}\n", (),
     "cert.yaml: spec.categories[0].options.maxSteps: -1 trains until exitDurationMins (1h00m) but timeoutPerJob 1h would end the "
     "run first: give timeoutPerJob at least 1h10m, or a step count"),
    (None, ("--category", "training/nemotron5-8b", "--max-steps", "-1", "--exit-duration-mins", "60"),
     "--category: spec.categories[0].options.maxSteps: -1 trains until exitDurationMins (1h00m) but timeoutPerJob 1h would end the "
     "run first"),
])
def test_an_edit_user_who_may_not_list_nodes_is_refused_what_no_node_would_make_right(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], category: str | None, flags: tuple[str, ...], expected: str) -> None:
    """Planning left to the engine skipped every check of the plan for such a user, those that need no Node too: input a
    user with Nodes readable is refused (exit 2, one line) created a Certification the engine failed later. Those
    checks run before anything is created; a good certification is still created (above)."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        bob = asyncio.run(least_privileged(server, kubeconfig, "bob", nodes=False))
        common = ["--kubeconfig", str(bob), "--history", str(tmp_path / "h.db")]
        if category is not None:
            cert = tmp_path / "cert.yaml"
            cert.write_text(CERT_HEAD + category)
            argv = ["certification", "run", "--cert-file", str(cert), *common]
        else:
            argv = ["certification", "run", "--name", "bob-bad", *flags, *common]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2, err
        assert len(err.splitlines()) == 1 and expected in err and "Traceback" not in err, err
        assert asyncio.run(certification_names(kubeconfig)) == []


TAKES_EDIT = ("certifications takes nvcre-edit in namespace default, which setup init folds into the built-in admin role: a "
              "RoleBinding to admin or nvcre-edit there")


def test_a_view_user_is_told_which_role_deletes_certifications(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`certification delete` by a user bound to nvcre-view only gave the server's refusal alone, where `run` names the
    role that grants the write."""
    from tests.test_cli_list import _create

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_create(kubeconfig))
        carol = asyncio.run(least_privileged(server, kubeconfig, "carol", roles=("nvcre-view",), nodes=False))
        assert main(["certification", "delete", "soak", "--kubeconfig", str(carol), "--history", str(tmp_path / "h.db")]) == 2
        err = capsys.readouterr().err
        [line] = [line for line in err.splitlines() if "soak" in line]
        assert 'User "carol" cannot delete resource "certifications"' in line and "Traceback" not in err
        assert line.endswith(f"; deleting {TAKES_EDIT} (nothing deleted)"), line
        assert sorted(asyncio.run(certification_names(kubeconfig))) == ["burn-in", "soak"]


def _archived(history: Path) -> list[str]:
    """The names of the certifications `history` holds (none when the file was never made)."""
    import sqlite3

    if not history.exists():
        return []
    db = sqlite3.connect(history)
    try:
        return [name for (name,) in db.execute("SELECT name FROM certifications")]
    finally:
        db.close()


def test_a_view_user_who_may_not_delete_a_finished_certification_archives_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finished certification is archived before it is deleted (then it is gone): a user bound to nvcre-view only
    archived it into the local history, then the server refused the delete, leaving a record of a certification still
    on the cluster. The server is asked first (SelfSubjectAccessReview); refused, nothing is archived."""
    from tests.test_cli_delete import CATEGORY, SMALL_FLEET

    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps(SMALL_FLEET))
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--scenario", str(scenario), *CATEGORY,
                     "--name", "done", "--wait", "--history", str(tmp_path / "admin.db")]) == 0
        capsys.readouterr()
        carol = asyncio.run(least_privileged(server, kubeconfig, "carol", roles=("nvcre-view",), nodes=False))
        history = tmp_path / "carol.db"
        assert main(["certification", "delete", "done", "--kubeconfig", str(carol), "--history", str(history)]) == 2
        err = capsys.readouterr().err
        [line] = [line for line in err.splitlines() if "done" in line]
        assert line == ("certification 'done': this user may not delete it (RBAC, asked of the server: no delete on "
                        f"certifications in namespace default); deleting {TAKES_EDIT} (nothing deleted nor archived)"), line
        assert _archived(history) == []  # no record of a certification still on the cluster
        assert asyncio.run(certification_names(kubeconfig)) == ["done"]
        assert not [r for r in server.requests if r.user == "carol" and r.verb == "delete"]  # not even tried


async def test_a_view_users_console_names_the_role_that_submits_and_deletes_and_sends_neither(tmp_path: Path) -> None:
    """The console's submit and delete of a user bound to nvcre-view only notified the server's refusal alone; then it
    named the role, but still sent the create and the delete for the server to refuse. It asks the server first (a
    SelfSubjectAccessReview) and sends no write this user lacks."""
    from tests.test_cli_list import _create

    async with installed(tmp_path) as (server, kubeconfig):
        await _create(kubeconfig)
        carol = await least_privileged(server, kubeconfig, "carol", roles=("nvcre-view",), nodes=False)
        app = NvcreApp(opener=opener(args_for(carol, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(200, 50)) as pilot:
            await opened(app, pilot)
            server.clear_requests()
            body = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "carol-1"},
                    "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}}
            assert not await app.submit(body)
            assert not await app.delete_certification("soak", "default")
            def refusals(*titles: str) -> list[str]:
                return [n.message for n in app._notifications if n.title in titles]
            await until(pilot, lambda: len(refusals("not submitted", "not deleted")) >= 2)  # notifications are messages
            said = refusals("not submitted", "not deleted")
            assert len(said) == 2, "\n".join(n.message for n in app._notifications)
            asked = "certifications in namespace default (RBAC, asked of the server); "
            assert said[0] == f"this user may not create {asked}creating {TAKES_EDIT} (nothing created)", said
            assert said[1] == f"this user may not delete {asked}deleting {TAKES_EDIT} (nothing deleted)", said
            # x says it at once, not after a question whose Delete then fails
            app.clear_notifications()
            await pilot.press("x")
            await until(pilot, lambda: refusals("not deleted"))  # asked of the server in a worker: bounded, not a fixed pause
            assert not isinstance(app.screen, ConfirmModal)
            assert [n.message for n in app._notifications if n.title == "not deleted"] == [said[1]]
            # compose says it as the form opens, Submit off
            await pilot.press("c")
            await until(pilot, lambda: refusals("cannot submit") and app.screen.query("#submit"))
            assert [n.message for n in app._notifications if n.title == "cannot submit"] == [said[0]]
            assert app.screen.query_one("#submit", Button).disabled
        sent = [(r.verb, r.resource, r.status) for r in server.requests if r.user == "carol" and r.verb not in ("get", "list", "watch")]
        assert sent and all(resource == "selfsubjectaccessreviews" for _, resource, _ in sent), sent  # asked, never tried
        assert sorted(await _certs_async(kubeconfig)) == ["burn-in", "soak"]


async def _certs_async(kubeconfig: Path) -> list[str]:
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        return [c["metadata"]["name"] for c in (await admin.list(CERTIFICATION, "default")).items]
    finally:
        await admin.close()


@pytest.mark.parametrize(("argv", "said"), [
    (["certification", "list", "-A"], "reading certifications in every namespace takes nvcre-view cluster-wide (a "
                                      "ClusterRoleBinding to it, or to view); -n NS reads one namespace"),
    (["certification", "delete", "nightly", "-n", "team-b"], "reading certifications in namespace team-b takes nvcre-view there, "
                                                            "which setup init folds into the built-in view, edit and admin "
                                                            "roles: a RoleBinding to one of them"),
])
def test_a_read_of_another_namespace_names_the_role_that_grants_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 argv: list[str], said: str) -> None:
    """A user bound in one namespace who lists every namespace, or deletes in another, got the server's refusal alone."""
    from tests.test_cli_list import _create

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_create(kubeconfig))
        bob = asyncio.run(least_privileged(server, kubeconfig, "bob", nodes=False))
        assert main([*argv, "--kubeconfig", str(bob), "--history", str(tmp_path / "h.db")]) == 2
        err = capsys.readouterr().err
        [line] = [line for line in err.splitlines() if "forbidden" in line and "Nodes:" not in line]
        assert 'User "bob" cannot list resource "certifications"' in line and line.endswith(f"; {said}"), line
        assert "Traceback" not in err


def test_an_edit_users_controller_says_this_user_may_not_run_the_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`nvcre controller` with a team user's kubeconfig failed on the first read RBAC refused it (Nodes), asking whether
    setup init's RBAC was applied, which it was: the engine's rights are its ServiceAccount's, not this user's."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        bob = asyncio.run(least_privileged(server, kubeconfig, "bob", nodes=False))
        assert main(["controller", "--kubeconfig", str(bob), "--metrics-port", "0"]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and 'User "bob" cannot list resource "nodes"' in err, err
        assert err.rstrip().endswith("(this user may not run the engine (RBAC: no update on Lease nvcre-system/nvcre-engine): run "
                                     "`nvcre controller` as setup init's ServiceAccount nvcre-system/nvcre-engine (in the cluster), "
                                     "or with a kubeconfig holding its rights)"), err
        assert "setup status" not in err


def test_setup_status_of_an_ordinary_user_says_in_one_line_what_it_could_not_read(tmp_path: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`setup status` by a team's user (nvcre-edit + nvcre-view) exited 1 with a table of `unknown` rows, each naming
    the permission refused, and no word that this user may not inspect the install: read as "not installed". The rows
    stay; one line on stderr says what it could and could not read and who reads it all, and it exits 2 (1 is "not
    installed"); its JSON's `installed` is null. Its kubelets row, read from
    the Nodes it could not list, said "- no GPU nodes"; it is unknown with them."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        bob = asyncio.run(least_privileged(server, kubeconfig, "bob", nodes=False))
        # Exit 2, as a refused read is for every command: it exited 1, as for an install that is not there.
        assert main(["setup", "status", "--kubeconfig", str(bob)]) == 2
        out, err = capsys.readouterr()
        rows = {line.split("  ")[0].strip(): line for line in out.splitlines()[1:]}
        assert "cannot read" in rows["nvcre CRDs"] and 'cannot get resource "customresourcedefinitions"' in rows["nvcre CRDs"]
        assert rows["kubelets"].split()[1] == "unknown" and 'cannot list resource "nodes"' in rows["kubelets"]
        assert err.splitlines() == [
            "nvcre setup status: this user may not read 13 of 14 checks (their rows say unknown and name the permission refused; "
            "it reads engine lease); so whether nvcre is installed is not known (exit 2). setup status reads cluster-wide (CRDs, "
            "Namespaces, RBAC, Nodes, Services, Leases, Deployments): a cluster admin (as setup init needs) sees every check"]
        assert main(["setup", "status", "--kubeconfig", str(bob), "-o", "json"]) == 2
        out, err = capsys.readouterr()
        assert json.loads(out)["installed"] is None and err.startswith("nvcre setup status: this user may not read 13 of 14")
        assert main(["setup", "status", "--kubeconfig", str(kubeconfig)]) == 0  # an admin reads every check: nothing to say
        assert capsys.readouterr().err == ""
