"""The console on an API server: a viewer while another engine holds the lease (its header says who), an
engine of its own with --sim-runner when nobody does, and one-line start-up errors (exit 2)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli.session import open_session
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.catalog import default_catalog
from nvcre_tui.engine.store.protocol import CERTIFICATION
from tests.console.harness import certification_body, intra_all_reduce
from tests.kube.cluster import installed, store_on


def args_for(kubeconfig: Path | str, **extra: Any) -> argparse.Namespace:
    base = {"sim": False, "scenario": None, "state": None, "sim_runner": False, "install_namespace": None,
            "kubeconfig": str(kubeconfig), "context": None, "namespace": None}
    return argparse.Namespace(**{**base, **extra})


def opener(args: argparse.Namespace, read_only: bool) -> Any:
    async def open_it() -> Any:
        return await open_session(args, default_catalog(), live=True, want_engine=not read_only, role="console")
    return open_it


async def test_a_console_is_a_viewer_while_another_engine_holds_the_lease(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        other = EngineLease(admin, SystemClock(), "nvcre-system", "controller-7f9c")
        assert await other.try_acquire()
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("seen-from-afar")))
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause(0.5)
            assert "cluster emulator" in app.sub_title and "engine held by controller-7f9c" in app.sub_title
            assert app.session is not None and app.session.engine is None
            assert "seen-from-afar" in {c["metadata"]["name"] for c in app.session.cache.list(CERTIFICATION)}
            assert app.workers._workers == [] or all(w.group != "engine" for w in app.workers)
        await admin.close()


async def test_a_console_with_the_sim_runner_runs_its_own_engine_when_nobody_holds_the_lease(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
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
