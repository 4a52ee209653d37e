"""API servers for KubeStore tests: the emulator (tests/kubeapi) on every run, a real kube-apiserver + etcd
(tests/envtest.py) when KUBEBUILDER_ASSETS names them. Both get the same CRDs and namespaces.

The CRDs here are ours by group, version and plural, with open schemas (x-kubernetes-preserve-unknown-fields)
and a status subresource: the contract's objects are minimal (`spec: {size: 1}`) and the store is generic,
so the real, strict schemas (tests/test_crds.py checks those) would only prune the contract's fields away.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store import CERTIFICATION, CONFIGMAP, CRD, EVENT, JOB, NAMESPACE, NODE, POD, WORKFLOW, WORKLOADRUN, AlreadyExists, ResourceKind
from nvcre_tui.engine.store.kube import KubeStore, RetryPolicy

from .fixtures import ALL_CAPABILITIES, CONTROLLED_CLOCK, GARBAGE_COLLECTOR, SMALL_HISTORY

OUR_KINDS = (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN)
CONTRACT_NAMESPACES = ("team-1", "team-2", "other")
# Every collection a contract test writes to, emptied between tests on a shared real server.
WIPED = (*OUR_KINDS, POD, CONFIGMAP, EVENT, NODE)
OPEN_OBJECT = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def open_crd(kind: ResourceKind) -> dict[str, Any]:
    """A CRD serving `kind` with an open schema and a status subresource."""
    return {
        "apiVersion": CRD.api_version, "kind": CRD.kind,
        "metadata": {"name": f"{kind.plural}.{kind.group}"},
        "spec": {
            "group": kind.group, "scope": "Namespaced" if kind.namespaced else "Cluster",
            "names": {"kind": kind.kind, "plural": kind.plural, "singular": kind.kind.lower(),
                      "listKind": f"{kind.kind}List"},
            "versions": [{"name": kind.version, "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                              "spec": OPEN_OBJECT, "status": OPEN_OBJECT}}}}],
        },
    }


class RecordingSleep:
    """A RetryPolicy.sleep that records each wait and returns at once (tests never sleep for real)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def quick_retry(sleep: Callable[[float], Awaitable[None]], **overrides: Any) -> RetryPolicy:
    """The default policy with a recording sleep and fixed jitter (deterministic)."""
    return RetryPolicy(sleep=sleep, random=lambda: 0.5, **overrides)


@dataclass
class Cluster:
    """One API server under test, and how to open stores on it."""

    name: str
    kubeconfig: Path
    clock: Clock
    capabilities: frozenset[str]
    server: Any = None          # the emulator's ApiServer (fault injection, request log); None for a real one
    sleep: RecordingSleep = field(default_factory=RecordingSleep)
    _stores: list[KubeStore] = field(default_factory=list)

    async def open_store(self, **options: Any) -> KubeStore:
        options.setdefault("retry", quick_retry(self.sleep))
        store = KubeStore(await load_target(str(self.kubeconfig)), self.clock, **options)
        self._stores.append(store)
        return store

    async def make_namespace(self, namespace: str) -> None:
        store = self._stores[0] if self._stores else await self.open_store()
        try:
            await store.create(NAMESPACE, {"metadata": {"name": namespace}})
        except AlreadyExists:
            pass

    async def close(self) -> None:
        for store in self._stores:
            await store.close()


async def prepare(cluster: Cluster) -> None:
    """Our CRDs (established) and the contract's namespaces."""
    store = await cluster.open_store()
    for kind in OUR_KINDS:
        try:
            await store.create(CRD, open_crd(kind))
        except AlreadyExists:
            pass
    for namespace in CONTRACT_NAMESPACES:
        await cluster.make_namespace(namespace)


@asynccontextmanager
async def emulated(clock: Clock, folder: Path, history_limit: int, **server_options: Any) -> AsyncIterator[Cluster]:
    """A fresh emulator with every capability (test clock, GC, small history), prepared for the contract."""
    from tests.kubeapi import ApiServer

    server = ApiServer(clock=clock, history_limit=history_limit, garbage_collector=True, **server_options)
    await server.start()
    cluster = Cluster("emulator", server.write_kubeconfig(folder / "kubeconfig", namespace="default"), clock,
                      ALL_CAPABILITIES, server)
    try:
        await prepare(cluster)
        server.clear_requests()
        yield cluster
    finally:
        await cluster.close()
        await server.stop()


# A bare kube-apiserver: timestamps are its own, no garbage collector, etcd keeps a long history.
REAL_CAPABILITIES = ALL_CAPABILITIES - {CONTROLLED_CLOCK, GARBAGE_COLLECTOR, SMALL_HISTORY}


@asynccontextmanager
async def real(plane: Any, clock: Clock, folder: Path) -> AsyncIterator[Cluster]:
    """A store on the shared control plane, emptied of the contract's objects afterwards."""
    cluster = Cluster("kube-apiserver", plane.write_kubeconfig(folder / "kubeconfig"), clock, REAL_CAPABILITIES)
    try:
        await prepare(cluster)
        for kind in OUR_KINDS:
            plane.wait_crd(f"{kind.plural}.{kind.group}", _established)
            _wait_served(plane, _collection(kind))
        yield cluster
    finally:
        await cluster.close()
        for kind in WIPED:
            plane.wipe(_collection(kind))


def _wait_served(plane: Any, collection: str, seconds: float = 10.0) -> None:
    # A kind is served a moment after its CRD is Established; nothing to watch for that, so poll (bounded).
    from tests.envtest import ApiError

    deadline = time.monotonic() + seconds
    while True:
        try:
            plane.request("GET", collection)
            return
        except ApiError as error:
            if error.code != 404 or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def _established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def _collection(kind: ResourceKind) -> str:
    base = f"/api/{kind.version}" if not kind.group else f"/apis/{kind.group}/{kind.version}"
    return f"{base}/{kind.plural}"
