"""Waiting on the CRDs: Established and served after init, gone after reset."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nvcre_tui.engine.clock import Clock

# The engine.kube modules load the Kubernetes client (about half a second): imported inside the commands
# that reach a cluster, so `nvcre --help` and `nvcre setup crds` stay fast.
if TYPE_CHECKING:
    from nvcre_tui.engine.kube.status import CrdState
    from nvcre_tui.engine.store.kube import KubeStore


async def wait_crds(store: KubeStore, clock: Clock, names: list[str], done: Callable[[CrdState], bool],
                    timeout: float, poll: float = 0.5) -> list[str]:
    """Poll the named CRDs until `done` holds for each; the names still waiting at the timeout."""
    from nvcre_tui.engine.kube.status import crd_state
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CRD

    deadline = clock.monotonic() + timeout
    waiting = list(names)
    while True:
        still = []
        for name in waiting:
            try:
                crd = await store.get(CRD, name)
            except NotFound:
                crd = None
            if not done(crd_state(name, crd)):
                still.append(name)
        waiting = still
        if not waiting or clock.monotonic() >= deadline:
            return waiting
        await clock.sleep(poll)


async def wait_served(store: KubeStore, clock: Clock, crds: list[dict[str, Any]], timeout: float,
                      poll: float = 0.2) -> list[str]:
    """Poll discovery until each CRD's kind is served (listed under its group/version); the names still waiting."""
    deadline = clock.monotonic() + timeout
    while True:
        waiting = []
        for crd in crds:
            spec = crd["spec"]
            version = next(v["name"] for v in spec["versions"] if v.get("storage"))
            served = await store.served_resources(f"{spec['group']}/{version}") or []
            if not any(resource.get("name") == spec["names"]["plural"] for resource in served):
                waiting.append(crd["metadata"]["name"])
        if not waiting or clock.monotonic() >= deadline:
            return waiting
        await clock.sleep(poll)
