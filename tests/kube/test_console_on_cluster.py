"""The console on an API server: a viewer while another engine holds the lease (its header says who), an
engine of its own with --sim-runner when nobody does, and one-line start-up errors (exit 2)."""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli.kubeflags import load_kube_target
from nvcre_tui.cli.session import open_session
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.connecting import ConnectingScreen
from tests.console.harness import certification_body, intra_all_reduce
from tests.kube.cluster import installed, store_on
from tests.kube.users import as_installed_before


def args_for(kubeconfig: Path | str, **extra: Any) -> argparse.Namespace:
    base = {"sim": False, "scenario": None, "state": None, "sim_runner": False, "install_namespace": None,
            "kubeconfig": str(kubeconfig), "context": None, "namespace": None}
    return argparse.Namespace(**{**base, **extra})


def opener(args: argparse.Namespace, read_only: bool) -> Any:
    async def open_it() -> Any:
        return await open_session(args, default_catalog(), live=True, want_engine=not read_only, role="console")
    return open_it


async def opened(app: NvcreApp, pilot: Pilot[None], seconds: float = 15.0) -> None:
    """Until the opener's session is open and the first console screen replaced the connecting one, or the app exits
    (it opens behind that screen, so that q works while a cluster does not answer)."""
    for _ in range(int(seconds / 0.05)):
        if app.return_code is not None or (app.session is not None and not isinstance(app.screen, ConnectingScreen)):
            await pilot.pause(0.1)  # the first screen mounted and its bindings live (a key pressed sooner may be lost)
            return
        await pilot.pause(0.05)
    raise AssertionError(f"the console did not open within {seconds}s")


async def test_a_console_is_a_viewer_while_another_engine_holds_the_lease(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c")
        assert await other.try_acquire()
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("seen-from-afar")))
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.5)
            assert "cluster emulator" in app.sub_title and "engine held by controller-7f9c" in app.sub_title
            assert app.session is not None and app.session.engine is None
            assert "seen-from-afar" in {c["metadata"]["name"] for c in app.session.cache.list(CERTIFICATION)}
            assert app.workers._workers == [] or all(w.group != "engine" for w in app.workers)
        await admin.close()


async def test_a_viewer_console_does_not_submit_what_the_engine_holding_the_lease_would_fail(tmp_path: Path) -> None:
    """A console with --sim-runner beside an engine that runs real pods: what it composes would have its runs failed
    (no kubelet serves the fleet's Nodes). Refused before anything is created, as `certification run` refuses it."""
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c", duration=3600, runner="pods")
        assert await other.try_acquire()
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and app.session.engine is None
            assert not await app.submit(certification_body(intra_all_reduce("would-be-failed")))
            await pilot.pause()
            assert any("runs real pods: it would fail the simulated fleet's runs" in str(n.message) for n in app._notifications)
            assert (await admin.list(CERTIFICATION, "default")).items == []
        await admin.close()


async def test_a_submit_the_server_committed_but_whose_answer_was_lost_is_submitted(tmp_path: Path) -> None:
    """The create answered 503 after the write (its answer lost), the client's retry met the certification it had made:
    the console said "not submitted: ... already exists", and a user composing it again under another name ran it twice."""
    from tests.kubeapi import Fault

    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c", duration=3600, runner="pods")
        assert await other.try_acquire()  # a viewer: no engine of its own to start
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            lost = server.faults.add(Fault(method="POST", path=r"/certifications$", status=503, after_commit=True, times=1))
            assert await app.submit(certification_body(intra_all_reduce("answer-lost")))
            await pilot.pause()
            assert lost.hits == 1 and [str(n.message) for n in app._notifications][-1] == "certification answer-lost submitted"
            assert [c["metadata"]["name"] for c in (await admin.list(CERTIFICATION, "default")).items] == ["answer-lost"]
        await admin.close()


async def test_a_console_with_the_sim_runner_runs_its_own_engine_when_nobody_holds_the_lease(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert app.session is not None and app.session.engine is not None
            assert "SIM RUNNER" in app.sub_title
            holder = await EngineLease(admin, SystemClock(), "nvcre-system", "probe").holder()
            assert holder is not None and holder.live and holder.identity.startswith("console")
            assert await app.submit(certification_body(intra_all_reduce("from-the-console")))
            for _ in range(100):  # the scenario runs at its speed on a live clock: a few seconds of wall time
                cert = await admin.get(CERTIFICATION, "from-the-console", "default")
                if cond.is_terminal(cert):
                    break
                await pilot.pause(0.2)
            assert cond.phase(cert) == "Failed"  # gpu-node-07 misses 400 GB/s alone
        holder = await EngineLease(admin, SystemClock(), "nvcre-system", "probe").holder()
        assert holder is None or not holder.live  # released on exit
        await admin.close()


async def test_read_only_console_on_a_cluster_never_runs_an_engine(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        server.clear_requests()  # what `setup init` did is not the console's
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=True), read_only=True, live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert app.session is not None and app.session.engine is None and "READ-ONLY" in app.sub_title
        assert server.requests, "the console made no request at all"
        writes = [(r.user_agent, r.verb, r.resource) for r in server.requests if r.verb not in ("get", "list", "watch")]
        assert writes == []  # not the engine's, not the simulated fleet's: a read-only console writes nothing


async def test_a_console_on_a_cluster_without_our_crds_exits_with_one_line(tmp_path: Path) -> None:
    from tests.kubeapi import ApiServer

    server = ApiServer()
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=False), live=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.2)
        assert app.return_code == 2
        assert app.startup_error is not None and "nvcre setup init" in app.startup_error and "\n" not in app.startup_error
    finally:
        await server.stop()


async def test_the_simulated_fleet_keeps_its_epoch_in_the_install_namespace(tmp_path: Path) -> None:
    # `setup init -n gpu-cert --sim-runner`: nvcre-system may not exist there, so nothing of nvcre's goes in it.
    from nvcre_tui.engine.kube import load_target
    from nvcre_tui.engine.kube.session import KubeSession
    from nvcre_tui.engine.sim.fleet import FLEET_CONFIGMAP
    from nvcre_tui.engine.sim.scenario import default_scenario
    from nvcre_tui.engine.store import CONFIGMAP, NAMESPACE, NotFound

    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-cert"}})
        session = await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), scenario=default_scenario(),
                                         install_namespace="gpu-cert", history=None)
        try:
            config = await admin.get(CONFIGMAP, FLEET_CONFIGMAP, "gpu-cert")
            assert config["data"]["scenario"] == default_scenario().name
            with pytest.raises(NotFound):
                await admin.get(CONFIGMAP, FLEET_CONFIGMAP, "nvcre-system")
        finally:
            await session.close()
            await admin.close()


async def test_a_console_that_loses_the_lease_stops_reconciling_says_so_and_takes_it_back_once_free(tmp_path: Path) -> None:
    """Another engine takes the Lease (an admin hands it over): the console's engine stops writing at once, its header
    says it views, and it runs the engine again once the Lease is free."""
    import asyncio

    from nvcre_tui.engine.lease import format_micro_time
    from nvcre_tui.engine.store.protocol import LEASE

    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert app.session is not None and app.session.engine is not None
            lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
            spec = {**lease["spec"], "holderIdentity": "controller-7f9c", "leaseDurationSeconds": 3600,
                    "renewTime": format_micro_time(SystemClock().now())}
            await admin.update(LEASE, {**lease, "spec": spec})
            for _ in range(100):  # the console renews every 5 s and finds it lost
                if app.session.engine is None and all(w.group != "engine" for w in app.workers):
                    break
                await pilot.pause(0.1)
            assert app.session.engine is None and all(w.group != "engine" for w in app.workers)
            assert "viewer: " in app.sub_title and ("lost the engine lease" in app.sub_title or "held by controller-7f9c" in app.sub_title)
            server.clear_requests()
            await admin.create(CERTIFICATION, certification_body(intra_all_reduce("after-the-loss")))
            await asyncio.sleep(1.0)
            await pilot.pause()
            engine_writes = [r for r in server.requests if r.verb not in ("get", "list", "watch") and r.user_agent.startswith("nvcre-engine")]
            assert engine_writes == [], engine_writes  # nobody here reconciles the new certification
            await app.take_over()
            assert app.session.engine is None and "engine held by controller-7f9c" in app.sub_title  # still held
            lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
            await admin.update(LEASE, {**lease, "spec": {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}})
            await app.take_over()
            assert app.session.engine is not None and "viewer" not in app.sub_title
            assert any(w.group == "engine" for w in app.workers)
        await admin.close()


async def _viewer_in_default(server: Any, kubeconfig: Path, tmp_path: Path, nodes: bool = True) -> Path:
    """alice: reads nvcre objects in `default` only (a RoleBinding to `nvcre-view`, the ClusterRole `setup init` aggregates
    into the built-in view), and Nodes when `nodes`."""
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE_BINDING

    read = ["get", "list", "watch"]
    subjects = [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]

    def role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}

    def ref(name: str) -> dict[str, str]:
        return {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}

    admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    await admin.create(ROLE_BINDING, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                      "metadata": {"name": "alice-nvcre", "namespace": "default"}, "roleRef": ref("nvcre-view"), "subjects": subjects})
    if nodes:
        await admin.create(CLUSTER_ROLE, role("node-view", [{"apiGroups": [""], "resources": ["nodes"], "verbs": read}]))
        await admin.create(CLUSTER_ROLE_BINDING, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                                                  "metadata": {"name": "alice-nodes"}, "roleRef": ref("node-view"), "subjects": subjects})
    await admin.create(CERTIFICATION, certification_body(intra_all_reduce("team-a-burn-in")))
    await admin.close()
    return Path(server.write_kubeconfig(tmp_path / "alice", token=server.add_token("alice-token", "alice")))


async def test_a_viewer_who_may_read_one_namespace_sees_it_and_one_who_may_not_gets_one_line(tmp_path: Path) -> None:
    """RBAC that lets a user read certifications in one namespace (a common multi-tenant grant) is enough for the
    read-only console; without it the console says so in one line (exit 2), not a traceback."""
    async with installed(tmp_path) as (server, kubeconfig):
        alice = await _viewer_in_default(server, kubeconfig, tmp_path)
        app = NvcreApp(opener=opener(args_for(alice), read_only=True), live=True, read_only=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert app.session is not None and app.startup_error is None
            assert "team-a-burn-in" in {c["metadata"]["name"] for c in app.session.cache.list(CERTIFICATION)}
            assert "viewer: no engine holds the lease" in app.sub_title  # setup init lets every user read the Lease
        await as_installed_before(kubeconfig)  # an older install lets nobody: the header says it cannot tell
        app = NvcreApp(opener=opener(args_for(alice), read_only=True), live=True, read_only=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert "cannot read the engine Lease nvcre-system/nvcre-engine (forbidden)" in app.sub_title
        elsewhere = NvcreApp(opener=opener(args_for(alice, namespace="team-b"), read_only=True), live=True, read_only=True)
        async with elsewhere.run_test(size=(160, 50)) as pilot:
            await opened(elsewhere, pilot)
            await pilot.pause(0.3)
        assert elsewhere.return_code == 2 and elsewhere.startup_error is not None
        assert elsewhere.startup_error.startswith("nvcre: cannot open the console on this cluster: ")
        assert "forbidden" in elsewhere.startup_error and "\n" not in elsewhere.startup_error


async def test_a_viewer_who_may_read_pods_in_one_namespace_watches_them_there(tmp_path: Path) -> None:
    """A viewer reads its runs' logs through the pod watch: listed in its namespace, which a namespaced grant allows
    (cluster-wide, a real API server answers 403 and every log and size curve is lost)."""
    from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
    from nvcre_tui.engine.store.protocol import ROLE, ROLE_BINDING

    async with installed(tmp_path) as (server, kubeconfig):
        alice = await _viewer_in_default(server, kubeconfig, tmp_path)
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        await admin.create(ROLE, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "pods", "namespace": "default"},
                                  "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}]})
        await admin.create(ROLE_BINDING, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                          "metadata": {"name": "alice-pods", "namespace": "default"},
                                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
                                          "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]})
        await admin.close()
        session = await open_session(args_for(alice), default_catalog(), live=True, want_engine=False, role="console")
        try:
            assert isinstance(session, KubeSession) and isinstance(session.runner, KubernetesRunner)
            server.clear_requests()
            await session.runner.pods.start()
        finally:
            await session.close()
        pods = server.requests_where(resource="pods")
        # a watch gets its status recorded when its stream ends: 0 while the session closed it (none refused)
        assert pods and all(r.namespace == "default" and (r.status == 200 or (r.verb, r.status) == ("watch", 0)) for r in pods), [
            (r.verb, r.namespace, r.status) for r in pods]


def test_a_cli_read_the_api_server_refuses_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from nvcre_tui.cli import main
    from tests.kube.cluster import installed_in_thread

    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        alice = asyncio.run(_viewer_in_default(server, kubeconfig, tmp_path))
        history = ["--history", str(tmp_path / "h.db")]
        assert main(["certification", "report", "team-a-burn-in", "--kubeconfig", str(alice), *history]) == 3  # running, readable
        capsys.readouterr()
        assert main(["certification", "report", "team-a-burn-in", "-n", "team-b", "--kubeconfig", str(alice), *history]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and err.startswith("nvcre: ") and "is forbidden" in err and "Forbidden:" not in err and "alice" in err, err


async def test_the_header_says_when_the_api_server_refuses_the_watches_not_that_it_gives_no_answer(tmp_path: Path) -> None:
    """`setup reset` under a running engine took its CRDs and RBAC: every watch then got 404 or 403, and the engine's log
    and the header said "no answer" from a server that answered every request. A refusal is said as one."""
    from tests.kubeapi import Fault

    async with installed(tmp_path) as (server, kubeconfig):
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), live=True, read_only=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            server.faults.add(Fault(method="GET", path=r"/certifications$", status=403, message="certifications is forbidden: injected"))
            await server.restart(down_for=0.0)  # ends the open watches: the next ones meet the refusal
            for _ in range(100):
                await pilot.pause(0.1)
                if "the store refuses the watches since" in app.sub_title:
                    break
            assert "the store refuses the watches since" in app.sub_title and "showing the last known state" in app.sub_title, app.sub_title
            assert "no answer from the store" not in app.sub_title
            assert app.session is not None and "forbidden" in app.session.cache.last_error
            # Then a server that stops answering at all is said to give no answer, not to refuse.
            server.faults.clear()
            restart = asyncio.create_task(server.restart(down_for=2.0))
            for _ in range(60):
                await pilot.pause(0.1)
                if "no answer from the store since" in app.sub_title:
                    break
            assert "no answer from the store since" in app.sub_title and "refuses" not in app.sub_title, app.sub_title
            await restart
            for _ in range(150):
                await pilot.pause(0.1)
                if "⚠" not in app.sub_title:
                    break
            assert "⚠" not in app.sub_title, app.sub_title  # answering again, and no longer refusing: live


async def test_the_header_says_when_the_api_server_stops_answering_and_when_it_is_back(tmp_path: Path) -> None:
    """During an outage the console shows the last known state and says so; the badge goes once a list answers."""
    async with installed(tmp_path) as (server, kubeconfig):
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), live=True, read_only=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.3)
            assert "no answer from the store" not in app.sub_title
            # 2 s: the cache relists 0.2, 0.7, 1.7, 3.7 and 8.7 s after a watch breaks (cache.RETRY_SECONDS), so it is
            # back at 3.7 s; a 4 s outage was found over at 8.7 s
            restart = asyncio.create_task(server.restart(down_for=2.0))
            for _ in range(60):
                await pilot.pause(0.1)
                if "no answer from the store since" in app.sub_title:
                    break
            assert "showing the last known state" in app.sub_title
            await restart
            for _ in range(150):
                await pilot.pause(0.1)
                if "no answer from the store" not in app.sub_title:
                    break
            assert "no answer from the store" not in app.sub_title


async def test_a_running_certifications_runtime_moves_on_while_nothing_changes(tmp_path: Path) -> None:
    """A long run on a quiet cluster changes no object for minutes: the dashboard's Runtime and Age still move on."""
    from textual.widgets import DataTable

    from nvcre_tui.engine.clock import format_time

    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("long-run")))
        await admin.patch_status(CERTIFICATION, "long-run", "default", {"startTime": format_time(SystemClock().now())})
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), live=True, read_only=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.5)
            table = app.screen.query_one("#certs", DataTable)
            before = [str(cell) for cell in table.get_row_at(0)]
            await pilot.pause(2.5)
            after = [str(cell) for cell in table.get_row_at(0)]
            assert before[0] == after[0] == "long-run"
            assert before[4] != after[4], (before, after)  # Runtime
        await admin.close()


async def test_a_read_only_console_says_who_holds_the_lease_now_not_who_held_it_at_start(tmp_path: Path, monkeypatch: Any) -> None:
    """It never takes the Lease over, so it never read it again: a holder killed with -9 stayed `renewed 2s ago`."""
    monkeypatch.setattr("nvcre_tui.app.CLUSTER_TAKE_OVER_SECONDS", 0.2)
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c")
        assert await other.try_acquire()
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), read_only=True, live=True)
        async with app.run_test(size=(200, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(0.5)
            assert "engine held by controller-7f9c" in app.sub_title
            await other.release()
            await pilot.pause(0.8)
            assert "no engine holds the lease" in app.sub_title and "controller-7f9c" not in app.sub_title
            assert app.sub_title.index("🔒 READ-ONLY") < app.sub_title.index("👁 viewer")  # a narrow header cuts the end
        await admin.close()


async def test_the_walls_title_says_at_once_who_holds_the_lease_and_when_the_server_stops_answering_and_is_back(
        tmp_path: Path, monkeypatch: Any) -> None:
    """The wall has no header: its title line carries the badges, and followed them only when it next redrew, on a quiet
    cluster IDLE_TICK_SECONDS (5 s) later (1 s while one runs): an engine that died, an API server gone and back, said late."""
    from textual.widgets import Static

    monkeypatch.setattr("nvcre_tui.app.CLUSTER_TAKE_OVER_SECONDS", 0.2)
    for tick in ("TICK_SECONDS", "IDLE_TICK_SECONDS"):  # no redraw but for a change (a finished certification's is 5 s)
        monkeypatch.setattr(f"nvcre_tui.app.{tick}", 3600.0)
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c")
        assert await other.try_acquire()
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("quiet")))
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), live=True, wall=True)
        async with app.run_test(size=(200, 50)) as pilot:
            await opened(app, pilot)

            def title() -> str:
                return str(app.screen.query_one("#title", Static).render())

            await until(pilot, lambda: "engine held by controller-7f9c" in title(), 5.0)
            await other.release()
            await until(pilot, lambda: "no engine holds the lease" in title(), 5.0)
            assert title().startswith("⚠ no engine: nothing advances RUNNING ones   quiet"), title()  # its engine is gone
            restart = asyncio.create_task(server.restart(down_for=2.0))
            await until(pilot, lambda: "⚠ no answer from the store since" in title(), 10.0)
            await restart
            await until(pilot, lambda: "⚠ no answer" not in title() and "quiet" in title(), 15.0)
        await admin.close()


# ----- an API server with nothing else running: Jobs wait for pods nobody makes; quitting; a server that never answers -----

SMALL_FLEET = {"name": "four", "seed": 1, "nodes": [{"count": 4, "nameDigits": 2, "cliques": 1}]}
NO_JOB_CONTROLLER = "no pods yet: no Job controller has synced its batch Job yet"
# the time left (1m00s under 0.5s in), then the whole bound: the minute an unsynced batch Job is given, not the 5m00s
# scheduling grace (the runner fails it then)
FAILS_AFTER = re.compile(r"; it fails in (\d{1,2}s|1m00s), after 1m00s of this$")


@asynccontextmanager
async def gpu_nodes_without_controllers(tmp_path: Path) -> AsyncIterator[tuple[Any, Path]]:
    """`installed`, with four GPU Nodes registered and a certification on them whose runs nothing will ever start (no
    Trainer, Job controller, scheduler or kubelet: batch Jobs whose pods nobody makes)."""
    from nvcre_tui.engine.sim.scenario import Scenario
    from tests.runner.harness import register_gpu_nodes

    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        await register_gpu_nodes(admin, SystemClock(), Scenario.model_validate(SMALL_FLEET))
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("stuck")))
        await admin.close()
        yield server, kubeconfig


async def until(pilot: Pilot[None], check: Any, seconds: float = 20.0) -> None:
    for _ in range(int(seconds / 0.1)):
        if check():
            return
        await pilot.pause(0.1)
    raise AssertionError(f"not within {seconds}s")


async def test_on_an_api_server_alone_the_dashboard_says_why_the_pods_do_not_run_and_quitting_its_engine_asks_first(tmp_path: Path) -> None:
    """The walkthrough: this console holds the engine Lease, its runs wait for pods nobody makes. The dashboard says why
    (the Job's reason), not only "running"; q asks before stopping the engine of a running certification."""
    from textual.widgets import DataTable, Static

    from nvcre_tui.app import QuitQuestion

    async with gpu_nodes_without_controllers(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")  # another namespace's: this engine's too
        await admin.create(CERTIFICATION, {**certification_body(intra_all_reduce("elsewhere")), "metadata": {"name": "elsewhere", "namespace": "kube-public"}})
        await admin.close()
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and app.session.engine is not None  # nobody else holds the Lease
            waiting = app.screen.query_one("#waiting", Static)
            await until(pilot, lambda: NO_JOB_CONTROLLER in str(waiting.render()))
            assert FAILS_AFTER.search(str(waiting.render())), str(waiting.render())
            assert str(waiting.render()).startswith("· communication/nccl-all-reduce: waiting ")
            assert str(app.screen.query_one("#certs", DataTable).get_row_at(0)[-1]) == "· nccl-all-reduce"
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitQuestion) and app.return_code is None
            assert str(app.screen.query_one("#question").render()) == (
                "2 certifications are running and this console is their engine: quitting stops them advancing until another "
                "nvcre engine runs (`nvcre controller`). Quit?")
            await pilot.press("n")  # stay (the default answer)
            await pilot.pause()
            assert not isinstance(app.screen, QuitQuestion) and app.return_code is None
            await pilot.press("q")
            await pilot.pause()
            await pilot.press("y")
            await pilot.pause()
            assert app.return_code == 0


async def test_quitting_a_viewer_or_an_engine_with_nothing_running_asks_nothing(tmp_path: Path) -> None:
    """Only this console's engine of running certifications is worth a question: a viewer's quitting stops nothing."""
    async with gpu_nodes_without_controllers(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c")
        assert await other.try_acquire()
        viewer = NvcreApp(opener=opener(args_for(kubeconfig), read_only=False), live=True)
        async with viewer.run_test(size=(160, 50)) as pilot:
            await opened(viewer, pilot)
            assert viewer.session is not None and viewer.session.engine is None
            await pilot.press("q")
            await pilot.pause()
            assert viewer.return_code == 0
        await other.release()
        await admin.delete(CERTIFICATION, "stuck", "default")
        await admin.close()
        idle = NvcreApp(opener=opener(args_for(kubeconfig), read_only=False), live=True)
        async with idle.run_test(size=(160, 50)) as pilot:
            await opened(idle, pilot)
            assert idle.session is not None and idle.session.engine is not None and idle.running_here() == []
            await pilot.press("q")
            await pilot.pause()
            assert idle.return_code == 0


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_a_server_that_never_answers_shows_where_it_connects_and_q_or_ctrl_c_quits(tmp_path: Path, key: str) -> None:
    """It accepts connections and never answers: the console was a blank screen for ~22 s (the transport's two tries)
    and held every key. Now it says where it connects, and quits at once."""
    import time

    from tests.kubeapi import Fault

    async with installed(tmp_path) as (server, kubeconfig):
        server.faults.add(Fault(delay=120.0))  # every request
        target = await load_kube_target(args_for(kubeconfig))
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=False), live=True, connecting=f"{target.server} ({target.source})")
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause(0.5)
            assert isinstance(app.screen, ConnectingScreen) and app.session is None
            shown = str(app.screen.query_one("#connecting").render())
            assert shown.startswith(f"connecting to {server.url} (kubeconfig {kubeconfig})…") and "q or ctrl+c quits" in shown
            assert app.sub_title == f"connecting to {server.url} (kubeconfig {kubeconfig})"  # not the simulator's name
            asked = time.monotonic()
            await pilot.press(key)
            await pilot.pause()
            assert app.return_code == 0
        assert time.monotonic() - asked < 5.0  # the opener was stopped, not waited for
        assert app.session is None and app.startup_error is None


async def test_a_console_whose_crds_another_nvcre_restamps_stops_its_engine_until_setup_init_of_its_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`setup init` of another nvcre re-stamped the CRDs under the console's engine, which checked them only at its start
    and went on writing with its old schema. Now it stops, its header says why with both versions, a notification says
    it once, and it does not take the Lease back though the Lease is free, until `setup init` of its own version gives
    the CRDs its schema again: then it says so once and runs the engine, as one that opened on another's CRDs does
    (it stayed a viewer for good, and had to be restarted)."""
    from nvcre_tui.engine.kube import schemaguard
    from nvcre_tui.engine.kube.session import SCHEMA_RESTORED
    from nvcre_tui.engine.store.protocol import LEASE
    from tests.kube.test_schema_versions import NEWER, _stamp
    from tests.kube.test_setup import nvcre

    monkeypatch.setattr(schemaguard, "SCHEMA_CHECK_SECONDS", 0.1)
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(400, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and app.session.engine is not None
            await _stamp(admin, generation=NEWER, version="9.9.0")
            for _ in range(100):
                if app.session.engine is None and all(w.group != "engine" for w in app.workers):
                    break
                await pilot.pause(0.1)
            await pilot.pause(0.2)
            assert app.session.engine is None and all(w.group != "engine" for w in app.workers)
            said = "engine stopped: the nvcre CRDs changed while it ran: "
            assert f"viewer: {said}" in app.sub_title and "installed by nvcre 9.9.0" in app.sub_title, app.sub_title
            [note] = [str(n.message) for n in app._notifications if said in str(n.message)]
            assert note.startswith(f"This console no longer runs the engine ({said}") and "it goes on as a viewer" in note
            assert "takes the lease again" not in note
            for _ in range(100):  # given back once its last key is written
                if not (await admin.get(LEASE, "nvcre-engine", "nvcre-system"))["spec"].get("holderIdentity"):
                    break
                await pilot.pause(0.1)
            assert not (await admin.get(LEASE, "nvcre-engine", "nvcre-system"))["spec"].get("holderIdentity")
            await app.take_over()
            assert app.session.engine is None and said in app.sub_title
            assert (await nvcre(capsys, "setup", "init", "--force", "--kubeconfig", str(kubeconfig)))[0] == 0
            for _ in range(100):
                await app.take_over()
                if app.session.engine is not None:
                    break
                await pilot.pause(0.1)
            assert app.session.engine is not None and any(w.group == "engine" for w in app.workers)
            assert said not in app.sub_title and "viewer" not in app.sub_title, app.sub_title
            assert app.session.engine_stopped is None and app.session.notices.count(SCHEMA_RESTORED) == 1
            lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
            assert lease["spec"]["holderIdentity"].startswith("console@"), lease["spec"]
        await admin.close()


async def test_a_console_that_opened_on_outdated_crds_takes_the_engine_once_setup_init_brings_them_current(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """It opened as a viewer because an older nvcre's init had stamped the CRDs, and stayed one after `setup init` of this
    version brought them to its schema: it had to be restarted. It looks again as a running engine does, says once that
    it may run the engine now, takes the free Lease and runs it (the fleet's Nodes registered then, not before)."""
    from nvcre_tui.engine.kube import schemaguard
    from nvcre_tui.engine.kube.session import SCHEMA_RESTORED
    from nvcre_tui.engine.store.protocol import LEASE, NODE
    from tests.kube.test_schema_versions import _stamp
    from tests.kube.test_setup import nvcre

    monkeypatch.setattr(schemaguard, "SCHEMA_CHECK_SECONDS", 0.1)
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        await _stamp(admin, generation="0", version="0.0.9")  # what an older nvcre's init left
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(400, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and app.session.engine is None
            assert "installed by nvcre 0.0.9" in app.sub_title and "viewer: " in app.sub_title, app.sub_title
            await pilot.pause(0.5)
            await app.take_over()
            assert app.session.engine is None and (await admin.list(NODE)).items == []  # not on the older schema
            assert (await nvcre(capsys, "setup", "init", "--kubeconfig", str(kubeconfig)))[0] == 0
            for _ in range(100):
                await app.take_over()
                if app.session.engine is not None:
                    break
                await pilot.pause(0.1)
            assert app.session.engine is not None and any(w.group == "engine" for w in app.workers)
            lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
            assert lease["spec"]["holderIdentity"].startswith("console@"), lease["spec"]
            assert "installed by nvcre 0.0.9" not in app.sub_title, app.sub_title
            assert app.session.notices.count(SCHEMA_RESTORED) == 1
            # the app shows the session's notices as it next refreshes: under load, later than 0.3 s
            await until(pilot, lambda: SCHEMA_RESTORED in [str(n.message) for n in app._notifications], 10.0)
            await pilot.pause(0.3)
            assert [str(n.message) for n in app._notifications].count(SCHEMA_RESTORED) == 1
            assert (await admin.list(NODE)).items  # the fleet's Nodes, once it runs the engine
        await admin.close()


async def test_with_the_sim_runner_the_dashboards_age_is_the_api_servers_time(tmp_path: Path) -> None:
    """The console plays the fleet at the scenario's speed, its clock running ahead of the cluster's: the dashboard's
    Age counted from the API server's creationTimestamp to that clock, minutes for a certification seconds old (as
    `list --sim-runner` read 16h34m). Age is the server's time since it stored it."""
    from textual.widgets import DataTable

    async with installed(tmp_path) as (_, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("aged")))
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            await pilot.pause(2.0)  # minutes of the fleet's time at its speed
            await app.refresh_snapshot()
            await pilot.pause()
            age = str(app.screen.query_one("#certs", DataTable).get_row("aged")[6])  # after Runtime and Left
            assert re.fullmatch(r"\d+s", age) and int(age[:-1]) < 30, age
        await admin.close()
