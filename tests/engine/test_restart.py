"""Kill the engine at random moments, start a new one on the same store and clock: same report, no child twice.

Two certifications run side by side on disjoint node pools, three categories in all: a diagnose that
isolates a slow GPU over several rounds; a loopback during which a node is cordoned; an all-reduce with two
iterations, the first hit by an XID mid-run (the second fails early: the GPU is gone). A store wrapper counts every write of the
engine and the simulator; at the chosen write it raises, before or after the write reached the store (a
request lost, or a response lost), as a dying process would. A NEW engine with a new runner and fleet then
runs the same store and clock to the end.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import yaml

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION, MemoryStore
from nvcre_tui.engine.store.protocol import ResourceKind, ResourceStore
from tests.scenarios.harness import NAMESPACE, catalog, digest, report_from, snapshot

Obj = dict[str, Any]
SEED = 20260101
POINTS = 20

SCENARIO = """
name: restart
seed: 61
nodes:
  - {count: 4, cliques: 2, namePrefix: a-node-, labels: {pool: a}}
  - {count: 2, namePrefix: b-node-, labels: {pool: b}}
faults:
  - {type: slow-gpu, node: a-node-02, gpu: 3, factor: 0.5}
  - {type: cordon, node: b-node-02, at: 30s}
  - {type: xid, node: b-node-01, gpu: 4, at: 4m}
"""
CERT_A = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: pool-a}
spec:
  target: {nodeSelector: {pool: a}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: diagnose, thresholds: {busBandwidthGBps: "value >= 300"}}
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack, onFailure: diagnose, thresholds: {busBandwidthGBps: "value >= 300"}}
"""
CERT_B = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: pool-b}
spec:
  target: {nodeSelector: {pool: b}}
  categories:
    - domain: communication
      variant: nccl-loopback
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: full-scale, repeatCount: 2}
"""
CERTS = (CERT_A, CERT_B)


class Crash(BaseException):
    """The engine process dies here (a BaseException, so no `except Exception` in the engine can swallow it)."""


@dataclass
class Fault:
    """Where to die: the write number, whether the write lands first, and what is raised."""

    write: int
    after: bool
    error: type[BaseException]


class CrashingStore:
    """A ResourceStore that counts write requests (refused ones too), dies at the planned ones, and counts
    successful creates per object."""

    def __init__(self, inner: ResourceStore) -> None:
        self.inner = inner
        self.writes = 0
        self.faults: dict[int, Fault] = {}
        self.creates: Counter[tuple[str, str | None, str]] = Counter()
        self.die_before_verdict_event = False  # die between a Certification's Failed status and its Warning event
        self._verdict_written = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # reads, watch, resource_version, close

    async def _write(self, call: Callable[[], Awaitable[Obj]]) -> Obj:
        self.writes += 1
        fault = self.faults.pop(self.writes, None)
        if fault is not None and not fault.after:
            raise fault.error()
        try:
            return await call()
        finally:
            if fault is not None:  # dies after sending the request, whatever the answer (AlreadyExists too)
                raise fault.error()

    async def create(self, kind: ResourceKind, obj: Obj) -> Obj:
        async def call() -> Obj:
            created = await self.inner.create(kind, obj)
            meta = created["metadata"]
            self.creates[(kind.kind, meta.get("namespace"), meta["name"])] += 1
            return created
        return await self._write(call)

    async def update(self, kind: ResourceKind, obj: Obj) -> Obj:
        return await self._write(lambda: self.inner.update(kind, obj))

    async def update_status(self, kind: ResourceKind, obj: Obj) -> Obj:
        return await self._write(lambda: self.inner.update_status(kind, obj))

    async def patch_status(self, kind: ResourceKind, name: str, namespace: str | None, patch: Any, resource_version: str | None = None) -> Obj:
        updated = await self._write(lambda: self.inner.patch_status(kind, name, namespace, patch, resource_version))
        if self.die_before_verdict_event and kind == CERTIFICATION and cond.phase(updated) == "Failed":
            self._verdict_written = True
        return updated

    async def delete(self, kind: ResourceKind, name: str, namespace: str | None = None, uid: str | None = None) -> None:
        async def call() -> Obj:
            await self.inner.delete(kind, name, namespace, uid)
            return {}
        await self._write(call)

    async def record_event(self, involved: Obj, type: str, reason: str, message: str) -> Obj:
        if self._verdict_written:
            self.die_before_verdict_event = self._verdict_written = False
            raise Crash()
        return await self._write(lambda: self.inner.record_event(involved, type, reason, message))


def scenario() -> Scenario:
    return Scenario.model_validate(yaml.safe_load(SCENARIO))


def new_engine(store: ResourceStore, clock: ManualClock) -> Engine:
    """A fresh engine process: its own fleet, runner and caches; only the store and the clock carry over."""
    scn = scenario()
    fleet = SimulatedFleet(store, clock, scn)
    return Engine(store, clock, catalog(), SimulatedRunner(store, clock, scn, fleet))


async def world() -> tuple[MemoryStore, ManualClock, CrashingStore, list[str]]:
    """The fleet's Nodes and both certifications in a new store (the user's writes, not counted)."""
    clock = ManualClock(SIM_START)
    store = MemoryStore(clock)
    await SimulatedFleet(store, clock, scenario()).ensure_nodes()
    names = []
    for text in CERTS:
        cert = certification_from_text("cert.yaml", text, catalog()).to_wire()
        cert["metadata"]["namespace"] = NAMESPACE
        cert.pop("status", None)
        names.append((await store.create(CERTIFICATION, cert))["metadata"]["name"])
    return store, clock, CrashingStore(store), names


async def run_to_end(store: MemoryStore, clock: ManualClock, crashing: CrashingStore, names: list[str]) -> int:
    """Run engines until every certification is terminal, a new engine after each crash; returns the crashes."""

    async def done() -> bool:
        return all([cond.is_terminal(await store.get(CERTIFICATION, name, NAMESPACE)) for name in names])

    crashes = 0
    while True:
        try:
            assert await new_engine(crashing, clock).run_until_settled(until=done, max_seconds=2 * 24 * 3600), "never finished"
            return crashes
        except (Crash, asyncio.CancelledError):
            crashes += 1


async def outcome(faults: list[Fault]) -> tuple[list[Obj], CrashingStore, int]:
    store, clock, crashing, names = await world()
    crashing.faults = {fault.write: fault for fault in faults}
    crashes = await run_to_end(store, clock, crashing, names)
    objects = await snapshot(store)
    return [report_from(objects, name) for name in names], crashing, crashes


@cache
def uninterrupted() -> tuple[list[Obj], CrashingStore]:
    """The run without a crash: its reports and its (never crashing) store wrapper."""
    reports, crashing, _ = asyncio.run(outcome([]))
    return reports, crashing


def reference() -> tuple[list[Obj], int]:
    """The uninterrupted run's reports and how many writes it makes."""
    reports, crashing = uninterrupted()
    return reports, crashing.writes


def planned(index: int, count: int = 1) -> list[Fault]:
    """`count` seeded crash points for run `index`, anywhere in the uninterrupted run's writes."""
    rng = random.Random(f"{SEED}:{index}")
    writes = sorted(rng.sample(range(1, reference()[1] + 1), count))
    # After a crash the new engine repeats some writes, so later points still fall inside the run.
    return [Fault(w + i, rng.random() < 0.5, rng.choice((Crash, asyncio.CancelledError))) for i, w in enumerate(writes)]


def assert_same_outcome(reports: list[Obj], crashing: CrashingStore) -> None:
    expected, _ = reference()
    assert [digest(r) for r in reports] == [digest(r) for r in expected]
    assert reports == expected  # timestamps too: a restart neither loses nor adds simulated time
    twice = {key: n for key, n in crashing.creates.items() if n > 1}
    assert not twice, f"created more than once: {twice}"


def test_the_reference_run_exercises_every_fault() -> None:
    reports, writes = reference()
    assert writes > 100
    assert [r["result"] for r in reports] == ["FAILED", "FAILED"]
    failed = {n["name"]: sorted({f["reason"] for f in n["failures"]}) for r in reports for n in r["failedNodeDetails"]}
    assert failed == {"a-node-02": ["ThresholdViolation"], "b-node-01": ["WorkloadFailed"], "b-node-02": ["HardwareFailureDetected"]}
    on_failure = reports[0]["categories"][1]  # intra-rack with onFailure: diagnose, narrowed in its own Workflow
    assert on_failure["testScale"] == "intra-rack" and on_failure["diagnose"]["faultyNodes"] == ["a-node-02"]
    pool_b = reports[1]["categories"][1]
    assert [i["status"] for i in pool_b["iterations"]] == ["Failed", "Failed"] and pool_b["excludedNodes"][0]["name"] == "b-node-02"


@pytest.mark.parametrize("index", range(POINTS))
def test_an_engine_killed_once_and_restarted_reaches_the_same_report(index: int) -> None:
    faults = planned(index)
    reports, crashing, crashes = asyncio.run(outcome(faults))
    assert crashes == 1, f"the planned crash at write {faults[0].write} never happened"
    assert_same_outcome(reports, crashing)


def test_an_engine_killed_again_and_again_reaches_the_same_report() -> None:
    faults = planned(POINTS, count=6)
    reports, crashing, crashes = asyncio.run(outcome(faults))
    # A restarted engine may write a little more or less than the first, so the last point can fall past the end.
    assert crashes == len(faults) - len(crashing.faults) >= 5
    assert_same_outcome(reports, crashing)


def test_the_wrapper_really_counts_creates() -> None:
    _, crashing = uninterrupted()
    kinds = Counter(kind for kind, _, _ in crashing.creates)
    assert kinds["Workflow"] == 4 and kinds["ConfigMap"] == 8 and kinds["Job"] >= 6 and kinds["WorkloadRun"] == kinds["Job"]
    assert max(crashing.creates.values()) == 1


def test_a_verdict_event_survives_a_crash_right_after_the_verdict() -> None:
    async def scenario_run() -> dict[str, list[Obj]]:
        store, clock, crashing, names = await world()
        crashing.die_before_verdict_event = True
        assert await run_to_end(store, clock, crashing, names) == 1
        return await snapshot(store)

    objects = asyncio.run(scenario_run())
    events = {(e["involvedObject"]["uid"], e["type"], e["reason"]) for e in objects["Event"]}
    for cert in objects["Certification"]:
        failed = cond.find(cert["status"]["conditions"], "Failed")
        assert failed and failed["status"] == "True"
        assert (cert["metadata"]["uid"], "Warning", failed["reason"]) in events, f"no Warning event for {cert['metadata']['name']}"
