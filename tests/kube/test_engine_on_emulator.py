"""The engine over HTTP on the API-server emulator: injected faults (409 on status writes, 410 and dropped
watches, 500 / 503 with Retry-After on create, 429, slow answers) and crashes at 20 seeded points all end in
the same reports as the uninterrupted run on the embedded store, with no object created twice."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import SIMULATOR_AGENT
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers.iterations import finished_iterations
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.protocol import ResourceStore
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from tests.engine import test_restart as restart
from tests.kube.cluster import installed, store_on
from tests.kubeapi import Fault
from tests.scenarios.harness import NAMESPACE, catalog, report_from, snapshot

Obj = dict[str, Any]
POINTS = 20

FAULTS: dict[str, list[Fault]] = {
    "409 on status writes": [Fault(method="PATCH", path=r"/status$", status=409, times=6)],
    "410 on watch": [Fault(method="GET", query=r"watch=", status=410, times=4)],
    "dropped watch streams": [Fault(method="GET", query=r"watch=", drop_stream_after=2, times=6)],
    "500 with Retry-After on create": [Fault(method="POST", status=500, retry_after=1, times=4)],
    "503 on create after the write landed": [Fault(method="POST", status=503, retry_after=1, after_commit=True, times=4)],
    "429 on reads": [Fault(method="GET", query=r"^(?!.*watch)", status=429, retry_after=0.5, times=8)],
    # an authentication webhook timing out, an apiserver restarted before its token authenticator synced: the engine's
    # credentials refused once failed the certification as ReconcileError
    "401 on a status write": [Fault(method="PATCH", path=r"/status$", status=401, times=1)],
    "slow answers": [Fault(delay=0.02, times=60)],
}


def new_kube_engine(store: ResourceStore, clock: ManualClock) -> Engine:
    """A fresh engine process over `store`: its own cache, fleet and runner (the fleet writes through the cache)."""
    scenario = restart.scenario()
    cache = engine_cache(store)
    writer = WriteThroughStore(store, cache)
    fleet = SimulatedFleet(writer, clock, scenario)
    return Engine(writer, clock, catalog(), SimulatedRunner(writer, clock, scenario, fleet), cache=cache)


Outcome = tuple[list[Obj], restart.CrashingStore, int]


async def outcome_on_emulator(folder: Path, faults: list[Fault], crashes: list[restart.Fault], objects: dict[str, list[Obj]] | None = None) -> Outcome:
    """The reports at the end (and, into `objects` when given, every object the reports read)."""
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        simulator = await store_on(kubeconfig, clock, SIMULATOR_AGENT)  # who registers the fleet's Nodes on a cluster
        try:
            await SimulatedFleet(simulator, clock, restart.scenario()).ensure_nodes()
        finally:
            await simulator.close()
        names = []
        for text in restart.CERTS:
            cert = certification_from_text("cert.yaml", text, catalog()).to_wire()
            cert["metadata"]["namespace"] = NAMESPACE
            cert.pop("status", None)
            names.append((await admin.create(CERTIFICATION, cert))["metadata"]["name"])
        for fault in faults:
            server.faults.add(fault)
        engine_store = await store_on(kubeconfig, clock, "nvcre-engine")
        crashing = restart.CrashingStore(engine_store)
        crashing.faults = {fault.write: fault for fault in crashes}

        async def done() -> bool:
            from nvcre_tui.engine.controllers import conditions as cond

            return all([cond.is_terminal(await admin.get(CERTIFICATION, name, NAMESPACE)) for name in names])

        count = 0
        while True:
            try:
                finished = await new_kube_engine(crashing, clock).run_until_settled(until=done, max_seconds=2 * 24 * 3600)
                assert finished, "never finished"
                break
            except (restart.Crash, asyncio.CancelledError):
                count += 1
        server.faults.clear()
        found = await snapshot(admin)
        if objects is not None:
            objects.update(found)
        await engine_store.close()
        await admin.close()
    return [report_from(found, name) for name in names], crashing, count


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_injected_faults_change_nothing(name: str, tmp_path: Path) -> None:
    faults = FAULTS[name]
    reports, crashing, _ = asyncio.run(outcome_on_emulator(tmp_path, faults, []))
    assert all(fault.hits > 0 for fault in faults), f"the fault never fired: {faults}"
    restart.assert_same_outcome(reports, crashing)


def test_the_emulator_run_without_faults_equals_the_embedded_run(tmp_path: Path) -> None:
    objects: dict[str, list[Obj]] = {}
    reports, crashing, _ = asyncio.run(outcome_on_emulator(tmp_path, [], [], objects))
    restart.assert_same_outcome(reports, crashing)
    # the plan recorded at creation survived the CRD's pruning and is what the first iteration ran
    workflows = objects["Workflow"]
    assert workflows
    for wf in workflows:
        plan = {g["name"]: g["nodes"] for g in wf["spec"]["orchestration"]["plannedGroups"]}
        first = finished_iterations(wf)[0]["groups"]
        assert plan and plan == {g["name"]: g["nodes"] for g in first}, wf["metadata"]["name"]


@pytest.mark.parametrize("index", range(POINTS))
def test_an_engine_killed_and_restarted_on_the_emulator_reaches_the_same_report(index: int, tmp_path: Path) -> None:
    crashes = restart.planned(index)
    reports, crashing, count = asyncio.run(outcome_on_emulator(tmp_path, [], crashes))
    assert count == 1, f"the planned crash at write {crashes[0].write} never happened"
    restart.assert_same_outcome(reports, crashing)


def test_a_status_write_etcd_refuses_as_too_large_fails_that_workflow_with_the_reason(tmp_path: Path) -> None:
    """etcd's refusal comes back as a bare 500 and the same write would fail forever: the engine fails the Workflow
    with the server's words (its failure is a small patch, which fits) and every certification still finishes."""
    too_large = Fault(path=r"/workflows/[^/]+/status$", status=500, message="etcdserver: request is too large", times=1)
    objects: dict[str, list[Obj]] = {}
    reports, _, _ = asyncio.run(outcome_on_emulator(tmp_path, [too_large], [], objects))
    assert too_large.hits == 1 and len(reports) == len(restart.CERTS)
    failed = [(wf["metadata"]["name"], c) for wf in objects["Workflow"] for c in wf["status"].get("conditions") or []
              if c["type"] == "Failed" and c["status"] == "True" and c["reason"] == "ReconcileError"]
    # what failed and where, in words (it read `Invalid: Workflow default/x: etcdserver: ...`, a Python class name)
    assert len(failed) == 1 and failed[0][1]["message"] == (f"reconciling Workflow default/{failed[0][0]} failed: "
                                                            "etcdserver: request is too large"), failed
