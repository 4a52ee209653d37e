"""An emulated API server with nvcre installed as `nvcre setup init` installs it (real CRD schemas, RBAC),
for engine tests over real HTTP. In a thread of its own when a test calls the CLI (which runs its own loop)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import yaml

from nvcre_tui.engine.clock import Clock, ManualClock, SystemClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import FIELD_MANAGER, INSTALL_NAMESPACE, install_objects
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, NODE
from nvcre_tui.engine.store.kube import KubeStore, RetryPolicy
from nvcre_tui.engine.store.protocol import kind_of
from tests.kubeapi import ApiServer
from tests.scenarios.harness import catalog

HISTORY = 100_000


async def install(server: ApiServer, folder: Path) -> Path:
    """Apply what `setup init` applies (server-side apply, field manager nvcre); the admin kubeconfig."""
    kubeconfig = server.write_kubeconfig(folder / "kubeconfig")
    store = KubeStore(await load_target(str(kubeconfig)), server.clock, user_agent="nvcre-setup")
    try:
        for obj in install_objects():
            await store.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER, force=True)
    finally:
        await store.close()
    return kubeconfig


@asynccontextmanager
async def installed(folder: Path, clock: Clock | None = None, *, bare: bool = False,
                    **options: Any) -> AsyncIterator[tuple[ApiServer, Path]]:
    """A started emulator with nvcre installed (`bare`: nothing installed), and its kubeconfig."""
    server = ApiServer(clock=clock, history_limit=HISTORY, **options)
    await server.start()
    try:
        yield server, (server.write_kubeconfig(folder / "kubeconfig") if bare else await install(server, folder))
    finally:
        await server.stop()


async def outdate_crds(kubeconfig: Path) -> None:
    """The CRDs as `setup init` of another nvcre version left them: the Workflow CRD's schema hash is another."""
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.store.protocol import CRD

    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        crd = await store.get(CRD, "workflows.nvcre.nvidia.com")
        crd["metadata"]["annotations"]["nvcre.nvidia.com/schema-hash"] = "0123456789abcdef"
        await store.update(CRD, crd)
    finally:
        await store.close()


async def store_on(kubeconfig: Path, clock: Clock, user_agent: str, **options: Any) -> KubeStore:
    """A KubeStore with quick, deterministic retries (a test never sleeps long)."""

    async def no_wait(seconds: float) -> None:
        await asyncio.sleep(0)

    options.setdefault("retry", RetryPolicy(sleep=no_wait, random=lambda: 0.5))
    return KubeStore(await load_target(str(kubeconfig)), clock, user_agent=user_agent, **options)


async def certification_names(kubeconfig: Path, namespace: str = "default") -> list[str]:
    """The names of the Certifications in `namespace`, read afresh (a test's look at what a command left)."""
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        return [c["metadata"]["name"] for c in (await store.list(CERTIFICATION, namespace)).items]
    finally:
        await store.close()


async def first_node(kubeconfig: Path) -> str:
    """The first Node's name, by name."""
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        return str(sorted(n["metadata"]["name"] for n in (await store.list(NODE)).items)[0])
    finally:
        await store.close()


@contextmanager
def installed_in_thread(folder: Path, *, bare: bool = False) -> Iterator[tuple[ApiServer, Path]]:
    """The installed (`bare`: empty) emulator on its own event loop in a thread, for tests that run the CLI (asyncio.run)."""
    loop = asyncio.new_event_loop()
    ready: dict[str, Any] = {}
    started = threading.Event()
    stop = asyncio.Event()

    async def serve() -> None:
        async with installed(folder, bare=bare) as (server, kubeconfig):
            ready.update(server=server, kubeconfig=kubeconfig)
            started.set()
            await stop.wait()

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    if not started.wait(30):
        raise RuntimeError("the emulator did not start")
    try:
        yield ready["server"], ready["kubeconfig"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()


async def until(check: Any, seconds: float = 10.0) -> Any:
    """Poll the async `check` until it gives something truthy (tiny real waits: a controller under test runs on real
    time in its own thread); an AssertionError after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        if result := await check():
            return result
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached in time")


async def take_lease(admin: KubeStore, namespace: str, holder: str) -> dict[str, Any]:
    """Another engine takes the engine Lease of `namespace` (retried: its holder renews it meanwhile)."""
    from nvcre_tui.engine.lease import EngineLease
    from nvcre_tui.engine.store import LEASE, Conflict

    async def take_over() -> dict[str, Any] | None:
        current = await admin.get(LEASE, EngineLease.NAME, namespace)
        current["spec"]["holderIdentity"] = holder
        try:
            return await admin.update(LEASE, current)
        except Conflict:
            return None

    taken: dict[str, Any] = await until(take_over)
    return taken


async def apply_install(admin: KubeStore) -> None:
    """What `nvcre setup init` applies (its CRDs, the engine's ServiceAccount and RBAC), applied by `admin`."""
    for obj in install_objects(INSTALL_NAMESPACE):
        await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER)


def case_certification(case: Path, namespace: str, text: str | None = None) -> dict[str, Any]:
    """The Certification of `case`'s cert.yaml (or of `text`) as `certification create` sends it, in `namespace`."""
    cert = certification_from_text("cert.yaml", (case / "cert.yaml").read_text() if text is None else text, catalog()).to_wire()
    cert["metadata"]["namespace"] = namespace
    cert.pop("status", None)
    return cert


async def simulated_engine(engine_store: KubeStore, sim_store: KubeStore, clock: ManualClock, case: Path,
                           runner: type[SimulatedRunner] = SimulatedRunner) -> tuple[Engine, SimulatedRunner]:
    """An engine writing through `engine_store` whose runs `runner` (SimulatedRunner or a subclass) plays on `case`'s
    simulated fleet, that fleet's Nodes made through `sim_store` first; the engine and its runner."""
    scenario = Scenario.model_validate(yaml.safe_load((case / "scenario.yaml").read_text()))
    fleet = SimulatedFleet(sim_store, clock, scenario)
    await fleet.ensure_nodes()
    played = runner(sim_store, clock, scenario, fleet)
    return Engine(engine_store, clock, catalog(), played), played


async def a_job_in_progress(admin: KubeStore, namespace: str) -> bool:
    """Whether an nvcre Job in `namespace` is InProgress (its run started)."""
    return any(cond.phase(job) == "InProgress" for job in (await admin.list(JOB, namespace)).items)


async def certification_over(admin: KubeStore, name: str, namespace: str) -> bool:
    """Whether Certification namespace/name has ended, whatever its result."""
    return cond.is_terminal(await admin.get(CERTIFICATION, name, namespace))


@asynccontextmanager
async def simulated_on_cluster(cluster: tuple[ApiServer, str, str, ManualClock], case: Path, *, hand: str = "kubectl-patch",
                               runner: type[SimulatedRunner] = SimulatedRunner
                               ) -> AsyncIterator[tuple[KubeStore, KubeStore, Engine, SimulatedRunner]]:
    """On the emulator of test_engine_rbac's `cluster` fixture: setup init's objects applied by the admin, and an engine as
    the engine's ServiceAccount whose runs `runner` plays on `case`'s simulated fleet (simulated_engine). A store as the
    admin, one as `hand` (a writer not nvcre, as managedFields name it), the engine and its runner; the stores closed after."""
    _, kubeconfig, engine_kubeconfig, clock = cluster
    stores = [KubeStore(await load_target(path), clock, user_agent=agent) for path, agent in
              ((kubeconfig, "test-admin"), (kubeconfig, hand), (kubeconfig, "nvcre-sim"), (engine_kubeconfig, "nvcre-engine"))]
    admin, hand_store, sim_store, engine_store = stores
    try:
        await apply_install(admin)
        engine, played = await simulated_engine(engine_store, sim_store, clock, case, runner)
        yield admin, hand_store, engine, played
    finally:
        for store in stores:
            await store.close()


@asynccontextmanager
async def store_with_cluster_fields(server: ApiServer, folder: Path, fields: Mapping[str, Any]) -> AsyncIterator[KubeStore]:
    """A store as `server`'s admin through a kubeconfig (in `folder`, also its HOME) whose cluster entry has `fields` set
    beside what the server writes, as a user edits one (disable-compression, tls-server-name); closed after."""
    kubeconfig = server.write_kubeconfig(folder / "kubeconfig")
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"][0]["cluster"].update(fields)
    kubeconfig.write_text(yaml.safe_dump(config))
    store = KubeStore(await load_target(str(kubeconfig), environ={"HOME": str(folder)}), SystemClock(), user_agent="nvcre-test")
    try:
        yield store
    finally:
        await store.close()
