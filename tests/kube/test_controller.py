"""The headless engine loop: reconciles only while holding the Lease, stops the moment it is lost."""

from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controller import LOST_LEASE_EXIT, ControllerLoop
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.metrics import EngineMetrics
from nvcre_tui.engine.store import CERTIFICATION, LEASE, MemoryStore

NS = "nvcre-system"


class StubEngine:
    """Counts how often it was started and whether it is running now."""

    def __init__(self) -> None:
        self.starts, self.running = 0, False

    async def run(self) -> None:
        self.starts += 1
        self.running = True
        try:
            await asyncio.Event().wait()
        finally:
            self.running = False


async def settle() -> None:
    for _ in range(30):
        await asyncio.sleep(0)


def sample(metrics: EngineMetrics, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(metrics.render().decode()):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return s.value
    raise AssertionError(f"no sample {name}{labels}")


def loop_for(store, clock, identity: str, engine: StubEngine, metrics: EngineMetrics, logs: list[str]) -> ControllerLoop:
    lease = EngineLease(store, clock, NS, identity, duration=15)
    return ControllerLoop(engine, store, lease, metrics, clock, retry_period=2, metrics_period=15, log=logs.append)


async def test_waits_for_a_live_holder_then_takes_over_after_expiry() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    assert await EngineLease(store, clock, NS, "old-engine").try_acquire()
    engine, metrics, logs = StubEngine(), EngineMetrics(), []
    task = asyncio.create_task(loop_for(store, clock, "new-engine", engine, metrics, logs).run())
    for _ in range(7):  # 14 s: the old holder's 15 s have not passed
        await settle()
        clock.advance(2)
    await settle()
    assert engine.starts == 0 and logs == ["waiting for the engine lease: held by old-engine"]
    assert sample(metrics, "nvcre_engine_lease_held") == 0
    clock.advance(2)
    await settle()
    assert engine.running and sample(metrics, "nvcre_engine_lease_held") == 1
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert not engine.running
    assert (await store.get(LEASE, EngineLease.NAME, NS))["spec"]["holderIdentity"] == ""  # released


async def test_losing_the_lease_stops_the_engine_at_once() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    engine, metrics, logs = StubEngine(), EngineMetrics(), []
    task = asyncio.create_task(loop_for(store, clock, "a", engine, metrics, logs).run())
    await settle()
    assert engine.running
    lease = await store.get(LEASE, EngineLease.NAME, NS)
    lease["spec"]["holderIdentity"] = "b"  # another engine took it (a long stall of ours)
    await store.update(LEASE, lease)
    clock.advance(5)
    await settle()
    assert task.done() and task.result() == LOST_LEASE_EXIT
    assert not engine.running and logs[-1] == "lost the engine lease: stopping the engine"
    assert (await store.get(LEASE, EngineLease.NAME, NS))["spec"]["holderIdentity"] == "b"  # not released: not ours


async def test_metrics_follow_the_store() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    for name in ("a", "b"):
        await store.create(CERTIFICATION, {"metadata": {"name": name, "namespace": "default"}, "spec": {}})
    await store.patch_status(CERTIFICATION, "a", "default", {"summary": {"result": "PASSED"}})
    engine, metrics = StubEngine(), EngineMetrics()
    task = asyncio.create_task(loop_for(store, clock, "a", engine, metrics, []).run())
    await settle()
    assert sample(metrics, "nvcre_certifications", result="PASSED") == 1
    assert sample(metrics, "nvcre_certifications", result="RUNNING") == 1
    await store.patch_status(CERTIFICATION, "b", "default", {"summary": {"result": "FAILED"}})
    clock.advance(15)
    await settle()
    assert sample(metrics, "nvcre_certifications", result="FAILED") == 1
    assert sample(metrics, "nvcre_certifications", result="RUNNING") == 0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def test_bad_flags_are_one_line(capsys) -> None:
    import argparse

    import pytest

    from nvcre_tui.cli import controller
    from nvcre_tui.engine.errors import InputError

    parser = argparse.ArgumentParser(prog="nvcre")
    controller.register(parser.add_subparsers())
    cases = {
        ("controller",): "--sim-runner",
        ("controller", "--sim-runner", "--metrics-port", "70000"): "--metrics-port",
        ("controller", "--sim-runner", "--lease-duration", "0"): "--lease-duration",
        ("controller", "--scenario", "s.yaml"): "--scenario",
        ("controller", "--sim-runner", "--lease-namespace", "Bad_NS"): "--lease-namespace",
    }
    for argv, named in cases.items():
        args = parser.parse_args(list(argv))
        with pytest.raises(InputError) as error:
            args.func(args)
        assert len(error.value.messages) == 1 and named in error.value.messages[0], argv
