"""An emulated API server with nvcre installed as `nvcre setup init` installs it (real CRD schemas, RBAC),
for engine tests over real HTTP. In a thread of its own when a test calls the CLI (which runs its own loop)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import FIELD_MANAGER, install_objects
from nvcre_tui.engine.store.kube import KubeStore, RetryPolicy
from nvcre_tui.engine.store.protocol import kind_of
from tests.kubeapi import ApiServer

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
