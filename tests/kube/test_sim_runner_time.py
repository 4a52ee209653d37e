"""`--sim-runner` on an API server: simulated time runs ahead of the cluster's clock (`run --wait` as fast as the
engine can, the console at the scenario's speed), so a process that goes on playing the fleet (a controller taking
over, a later `run`) starts where the fleet's runs were left: a run another process started is neither stalled
until the wall clock catches up nor finished back in time."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock, ScaledClock, SystemClock, format_time
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.sim.fleet import latest_played
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import WORKLOADRUN
from tests.kube.cluster import installed, store_on

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def _run(name: str, **status: str) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": name, "namespace": "default"},
            "spec": {"image": "nccl", "numNodes": 1, "framework": {"torch": {"script": "train.py"}}}, "status": {"phase": "Running", **status}}


def test_the_fleets_latest_moment_is_the_latest_its_runs_record() -> None:
    runs = [_run("a", startTime=format_time(NOW)), _run("b", pendingSince=format_time(NOW + timedelta(minutes=3))),
            _run("c", startTime="yesterday"), {"metadata": {"name": "d"}}, _run("e", completionTime=format_time(NOW + timedelta(minutes=1)))]
    assert latest_played(runs, until=NOW + timedelta(days=1)) == NOW + timedelta(minutes=3)
    assert latest_played(runs, until=NOW + timedelta(minutes=2)) == NOW + timedelta(minutes=1)  # past `until`: damage
    assert latest_played([], until=NOW) is None


@pytest.mark.parametrize("want_engine", [True, False], ids=["engine", "viewer"])
@pytest.mark.parametrize("clock_kind", ["manual", "scaled"])
async def test_a_session_on_the_fleet_goes_on_from_where_its_runs_were_left(tmp_path: Path, want_engine: bool, clock_kind: str) -> None:
    ahead = NOW + timedelta(minutes=45)
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        for run in (_run("left-running", startTime=format_time(ahead)), _run("damaged", startTime="9999-01-01T00:00:00Z")):
            created = await admin.create(WORKLOADRUN, {**run, "status": None})
            await admin.update_status(WORKLOADRUN, {**created, "status": run["status"]})
        await admin.close()
        clock = ManualClock(NOW) if clock_kind == "manual" else ScaledClock(1.0, start=NOW)
        session = await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), clock=clock, scenario=default_scenario(),
                                         want_engine=want_engine, history=None)
        try:
            # the run started 45 minutes ahead of the wall clock; the year 9999 is damage, not time
            assert ahead <= clock.now() < ahead + timedelta(minutes=5)
        finally:
            await session.close()


async def test_a_standby_controller_goes_on_from_runs_recorded_while_it_waited(tmp_path: Path) -> None:
    """Opened while another process held the Lease (`run --wait --sim-runner`, its time as fast as it can go), the
    controller's clock is where the fleet was then; the other plays three hours more and leaves: the controller's
    engine catches up when it takes the Lease (ControllerLoop.on_acquired), not only when its session opened."""
    from nvcre_tui.engine.controller import ControllerLoop
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.metrics import EngineMetrics

    async with installed(tmp_path) as (server, kubeconfig):
        clock = ScaledClock(1.0, start=NOW)
        session = await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), clock=clock, scenario=default_scenario(),
                                         want_engine=True, history=None, elect=False)
        try:
            ahead = NOW + timedelta(hours=3)
            admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
            created = await admin.create(WORKLOADRUN, {**_run("other-process"), "status": None})
            await admin.update_status(WORKLOADRUN, {**created, "status": _run("x", startTime=format_time(ahead))["status"]})
            await admin.close()
            assert clock.now() < ahead
            caught_up = asyncio.Event()

            class Engine:
                async def run(self) -> None:  # the loop runs the engine once the Lease is held and the clock caught up
                    assert clock.now() >= ahead
                    caught_up.set()

            lease = EngineLease(session.kube, SystemClock(), "nvcre-system", "controller-test", 15.0)
            loop = ControllerLoop(Engine(), session.kube, lease, EngineMetrics(), SystemClock(), on_acquired=session.go_on_from_the_fleet)
            assert await loop.run() == 0 and caught_up.is_set()
        finally:
            await session.close()


async def test_a_certification_waits_for_its_nodes_on_the_engines_clock(tmp_path: Path) -> None:
    """A --sim-runner clock runs ahead of the API server's creationTimestamp: measured from it, the five minutes a
    certification waits for its nodes were over at once (WorkflowValidationFailed); measured from its startTime, on
    the engine's clock, it waits."""
    from nvcre_tui.engine.controllers import conditions as cond
    from nvcre_tui.engine.store.protocol import CERTIFICATION
    from tests.console.harness import certification_body, intra_all_reduce

    async with installed(tmp_path) as (server, kubeconfig):
        clock = ManualClock(NOW + timedelta(hours=5))  # hours ahead of the server's clock
        session = await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), clock=clock, scenario=default_scenario(),
                                         want_engine=True, history=None)
        try:
            body = certification_body(intra_all_reduce("waits"))
            body["spec"]["target"] = {"nodeNames": ["no-such-node"]}
            admin = await store_on(kubeconfig, SystemClock(), "nvcre-test")
            await admin.create(CERTIFICATION, body)
            await admin.close()
            assert session.engine is not None
            await session.engine.run_until_settled(max_seconds=60)
            cert = session.cache.get(CERTIFICATION, "waits", "default")
            assert cert is not None
            assert not cond.is_terminal(cert), cert.get("status")
        finally:
            await session.close()
