"""The headless engine loop: reconciles only while holding the Lease, stops the moment it is lost."""

from __future__ import annotations

import asyncio

import pytest

from prometheus_client.parser import text_string_to_metric_families

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controller import LOST_LEASE_EXIT, ControllerLoop
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.metrics import EngineMetrics
from nvcre_tui.engine.store import CERTIFICATION, LEASE, MemoryStore
from nvcre_tui.engine.store.errors import Unavailable

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
    engine, metrics = StubEngine(), EngineMetrics()
    logs: list[str] = []
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


async def test_a_standby_stopped_says_so() -> None:
    """A standby replica stopped with SIGTERM exited 0 without a line: its pod's log ended on "waiting"."""
    clock = ManualClock()
    store = MemoryStore(clock)
    assert await EngineLease(store, clock, NS, "old-engine").try_acquire()
    engine, metrics = StubEngine(), EngineMetrics()
    logs: list[str] = []
    task = asyncio.create_task(loop_for(store, clock, "standby", engine, metrics, logs).run())
    await settle()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert engine.starts == 0
    assert logs == ["waiting for the engine lease: held by old-engine",
                    "stopped while waiting for the engine lease (held by old-engine)"]
    assert (await store.get(LEASE, EngineLease.NAME, NS))["spec"]["holderIdentity"] == "old-engine"  # not ours to free


async def test_an_engine_that_cannot_start_under_the_lease_gives_it_back() -> None:
    """What runs once the Lease is held (the fleet's Nodes registered, the simulated fleet's certifications checked)
    may refuse: the controller exited holding the Lease, and each replica in turn held it a full duration for nothing."""
    from nvcre_tui.engine.errors import InputError

    clock = ManualClock()
    store = MemoryStore(clock)
    engine, metrics = StubEngine(), EngineMetrics()

    async def refuse() -> None:
        raise InputError("the simulated fleet runs default/played")

    loop = loop_for(store, clock, "ctl-1", engine, metrics, [])
    loop.on_acquired = refuse
    with pytest.raises(InputError):
        await loop.run()
    assert engine.starts == 0 and sample(metrics, "nvcre_engine_lease_held") == 0
    assert (await store.get(LEASE, EngineLease.NAME, NS))["spec"]["holderIdentity"] == ""  # released for the next engine


async def test_losing_the_lease_stops_the_engine_at_once() -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    engine, metrics = StubEngine(), EngineMetrics()
    logs: list[str] = []
    task = asyncio.create_task(loop_for(store, clock, "a", engine, metrics, logs).run())
    await settle()
    assert engine.running
    lease = await store.get(LEASE, EngineLease.NAME, NS)
    lease["spec"]["holderIdentity"] = "b"  # another engine took it (a long stall of ours)
    await store.update(LEASE, lease)
    clock.advance(5)
    await settle()
    assert task.done() and task.result() == LOST_LEASE_EXIT
    assert not engine.running and logs[-1] == "lost the engine lease (b holds it now): stopping the engine"
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
        ("controller", "--sim-runner", "--metrics-port", "70000"): "--metrics-port",
        ("controller", "--sim-runner", "--lease-duration", "0"): "--lease-duration",
        ("controller", "--scenario", "s.yaml"): "--scenario",
        ("controller", "--sim-runner", "--install-namespace", "Bad_NS"): "--install-namespace",
        ("controller", "--sim-runner", "--lease-namespace", "Bad_NS"): "--install-namespace",  # its former name, an alias
    }
    for argv, named in cases.items():
        args = parser.parse_args(list(argv))
        with pytest.raises(InputError) as error:
            args.func(args)
        assert len(error.value.messages) == 1 and named in error.value.messages[0], argv


def test_a_metrics_port_in_use_is_one_line_before_the_cluster_is_asked(tmp_path, capsys) -> None:
    """Bound first: a port in use is bad input (exit 2) at once, not an internal error after connecting."""
    import socket

    from nvcre_tui.cli import main

    kubeconfig = tmp_path / "kubeconfig"  # a server nobody answers on: it must not be asked
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                          "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "contexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {token: t}}]\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["controller", "--kubeconfig", str(kubeconfig), "--metrics-addr", "127.0.0.1", "--metrics-port", str(port)]) == 2
    assert capsys.readouterr().err == f"--metrics-addr 127.0.0.1 --metrics-port {port}: cannot serve /metrics: Address already in use\n"


# ----- `nvcre controller` over HTTP against the emulator -------------------------------------------------

TINY_FLEET = "name: tiny\nseed: 1\nnodes: [{count: 2, cliques: 1}]\n"




async def test_controller_command_holds_the_lease_serves_metrics_and_exits_when_it_loses_it(tmp_path) -> None:
    import argparse
    import socket
    import urllib.request

    from nvcre_tui.cli import controller
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.kube.config import load_target
    from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_objects
    from nvcre_tui.engine.store import NODE, NotFound, kind_of
    from nvcre_tui.engine.store.kube import KubeStore
    from tests.kube.cluster import take_lease, until
    from tests.kubeapi import ApiServer

    server = ApiServer()
    await server.start()
    kubeconfig = str(server.write_kubeconfig(tmp_path / "kubeconfig"))
    (tmp_path / "tiny.yaml").write_text(TINY_FLEET)
    with socket.socket() as probe:  # a free port for /metrics
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    admin = KubeStore(await load_target(kubeconfig), SystemClock(), user_agent="test-admin")
    parser = argparse.ArgumentParser(prog="nvcre")
    controller.register(parser.add_subparsers())
    args = parser.parse_args(["controller", "--kubeconfig", kubeconfig, "--sim-runner", "--scenario",
                              str(tmp_path / "tiny.yaml"), "--identity", "ctl-1", "--lease-duration", "3",
                              "--metrics-port", str(port), "--metrics-addr", "127.0.0.1"])
    try:
        for obj in install_objects():
            await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER)
        # Another engine holds the Lease (for 3 s, never renewed): standing by, the controller writes nothing (it
        # registered the fleet's Nodes, every standby replica again, each a 409 after the first).
        await EngineLease(admin, SystemClock(), NS, "engine@elsewhere/1", duration=3).try_acquire()
        running = asyncio.create_task(asyncio.to_thread(args.func, args))
        await asyncio.sleep(1.5)
        standby = len((await admin.list(NODE)).items), len(server.requests_where(verb="create", resource="nodes"))

        async def held():
            try:
                lease = await admin.get(LEASE, EngineLease.NAME, NS)
            except NotFound:
                return None
            return lease if lease["spec"].get("holderIdentity") == "ctl-1" else None

        lease = await until(held)
        assert lease["metadata"]["annotations"]["nvcre.nvidia.com/engine-runner"] == "simulated-fleet"  # what it runs with

        async def registered() -> bool:
            return len((await admin.list(NODE)).items) == 2

        await until(registered)  # the simulated fleet registered its Nodes once it held the Lease

        def scrape() -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                return response.read().decode()

        assert "nvcre_engine_lease_held 1.0" in await asyncio.to_thread(scrape)
        engine_agents = {r.user_agent.split("/")[0] for r in server.requests if r.resource == "leases"}
        assert engine_agents >= {"nvcre-engine"}

        await take_lease(admin, NS, "someone-else")
        assert await asyncio.wait_for(running, 10) == 1
        assert (await admin.get(LEASE, EngineLease.NAME, NS))["spec"]["holderIdentity"] == "someone-else"
        assert standby == (0, 0)  # asserted once the controller has stopped: a failure here must not leave it running
    finally:
        await admin.close()
        await server.stop()


async def test_controller_as_the_engine_service_account_cannot_play_the_simulator(tmp_path, capsys) -> None:
    """In-cluster, the controller runs as nvcre-engine, which may not write Nodes: --sim-runner says so."""
    import argparse

    from nvcre_tui.cli import controller
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.kube.config import load_target
    from nvcre_tui.engine.kube.install import ENGINE_NAME, FIELD_MANAGER, install_objects
    from nvcre_tui.engine.store import kind_of
    from nvcre_tui.engine.store.kube import KubeStore
    from tests.kubeapi import ApiServer

    server = ApiServer()
    await server.start()
    admin = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "admin"))), SystemClock(),
                      user_agent="test-admin")
    try:
        for obj in install_objects():
            await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER)
        token = server.service_account_token(NS, ENGINE_NAME)
        (tmp_path / "tiny.yaml").write_text(TINY_FLEET)
        parser = argparse.ArgumentParser(prog="nvcre")
        controller.register(parser.add_subparsers())
        args = parser.parse_args(["controller", "--kubeconfig", str(server.write_kubeconfig(tmp_path / "kc", token=token)),
                                  "--sim-runner", "--scenario", str(tmp_path / "tiny.yaml"), "--metrics-port", "0"])
        assert await asyncio.to_thread(args.func, args) == 2  # cannot start: as any command the cluster refuses
        err = capsys.readouterr().err
        assert "Node gpu-node-01" in err and "nvcre setup init --sim-runner" in err and "Traceback" not in err
        assert [r.resource for r in server.requests if r.status == 403] == ["nodes"]
    finally:
        await admin.close()
        await server.stop()


class AwayStore(MemoryStore):
    """A MemoryStore whose lists fail while `away` (the API server restarting), with a KubeStore's retry count."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock)
        self.away = False
        self.stats = type("Stats", (), {"retries": 0, "requests": {}})()

    async def list(self, *args, **kwargs):
        if self.away:
            from nvcre_tui.engine.store.errors import Unavailable

            raise Unavailable("no answer from https://10.0.0.1:6443 (connection refused)")
        return await super().list(*args, **kwargs)


async def test_the_log_says_when_the_api_server_is_away_back_retried_and_when_the_lease_is_released() -> None:
    """Through two API-server restarts `nvcre controller` logged nothing (40 requests retried), and it released the
    Lease on SIGTERM without a line."""
    clock = ManualClock()
    store = AwayStore(clock)
    engine, metrics = StubEngine(), EngineMetrics()
    logs: list[str] = []
    task = asyncio.create_task(loop_for(store, clock, "a", engine, metrics, logs).run())
    await settle()
    store.away = True
    clock.advance(15)
    await settle()
    clock.advance(15)
    await settle()  # said once, not every refresh
    store.away, store.stats.retries = False, 7
    clock.advance(15)
    await settle()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert logs == ["holding the engine lease as a",
                    "API server: no answer from https://10.0.0.1:6443 (connection refused) (the engine retries; metrics wait)",
                    "API server answers again",
                    "API server: 7 requests retried in the last 15s (transient errors: 429, 5xx, timeouts, dropped connections)",
                    "stopped; released the engine lease for the next engine"]


class OutageStore(MemoryStore):
    """A store whose reads fail while `away` (a dropped connection), counting its lists."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock)
        self.away, self.lists = False, 0

    async def get(self, kind, name, namespace=None):
        if self.away:
            raise Unavailable("cannot connect to https://127.0.0.1:6443: connection refused (gave up after 6 tries in 4s)")
        return await super().get(kind, name, namespace)

    async def list(self, *args, **kwargs):
        self.lists += 1
        return await super().list(*args, **kwargs)


async def test_a_standby_keeps_queueing_while_the_api_server_is_away() -> None:
    """A short outage ended the standby (its holder() read was outside the retry) while the holder lived on."""
    clock = ManualClock()
    store = OutageStore(clock)
    assert await EngineLease(store, clock, NS, "old-engine").try_acquire()
    engine, metrics = StubEngine(), EngineMetrics()
    logs: list[str] = []
    task = asyncio.create_task(loop_for(store, clock, "new-engine", engine, metrics, logs).run())
    await settle()
    store.away = True
    for _ in range(3):
        clock.advance(2)
        await settle()
    assert not task.done() and any("engine lease: cannot connect" in line for line in logs)
    store.away = False
    for _ in range(8):  # the old holder never renews: its 15 s pass
        clock.advance(2)
        await settle()
    assert engine.running
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


class StubCache:
    def __init__(self, objects: dict) -> None:
        self.objects = objects
        self.unreachable_since: float | None = None
        self.last_error = ""
        self.refusing = False

    def list(self, kind, namespace=None):
        return self.objects.get(kind.kind, [])


async def test_metrics_read_the_engines_cache_not_a_list_of_every_job() -> None:
    clock = ManualClock()
    store = OutageStore(clock)
    cache = StubCache({"Certification": [{"status": {"summary": {"result": "FAILED"}}}], "Job": [{"status": {}}] * 3})
    engine, metrics = StubEngine(), EngineMetrics()
    loop = ControllerLoop(engine, store, EngineLease(store, clock, NS, "a", duration=15), metrics, clock, cache=cache)  # type: ignore[arg-type]
    task = asyncio.create_task(loop.run())
    await settle()
    clock.advance(15)
    await settle()
    assert sample(metrics, "nvcre_certifications", result="FAILED") == 1 and sample(metrics, "nvcre_jobs", phase="Pending") == 3
    assert store.lists == 0
    logs: list[str] = []
    loop.log = logs.append
    cache.unreachable_since, cache.last_error = 1_700_000_000.0, "connection refused"  # its watch gets no answer
    for _ in range(2):
        clock.advance(15)
        await settle()
    assert len(logs) == 1 and logs[0].startswith("API server: no answer since ") and "connection refused" in logs[0]
    cache.unreachable_since = None
    clock.advance(15)
    await settle()
    cache.unreachable_since, cache.refusing, cache.last_error = 1_700_000_000.0, True, "Forbidden: jobs is forbidden"  # it answers: no
    clock.advance(15)
    await settle()
    assert logs[-1].startswith("API server: watches refused since ") and "Forbidden" in logs[-1], logs
    cache.refusing = False
    cache.unreachable_since = None
    clock.advance(15)
    await settle()
    assert logs[-1] == "API server answers again"
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
