"""An API server with etcd and nothing else (no scheduler, kube-controller-manager or kubelet), nvcre installed and
GPU Nodes registered: the emulator (garbage collector off), or a real kube-apiserver + etcd when KUBEBUILDER_ASSETS
names them (skipped without, never passed). For tests of what a user sees there through the real CLI."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.protocol import CRD
from tests import envtest
from tests.kube.cluster import installed_in_thread, store_on
from tests.kubeapi.trainer_crds import real_trainer_crd

SERVERS = ["emulator", "kube-apiserver"]
FLEET = {"name": "two", "seed": 4, "nodes": [{"count": 2, "cliques": 1}]}


@dataclass(frozen=True)
class Bare:
    """The kubeconfig of an admin, and a DELETE of a path with a propagation policy (kubectl's --cascade), its answer."""

    kubeconfig: Path
    delete: Callable[[str, str], dict[str, Any]]


def bare_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    """The body of a fixture parametrized over SERVERS: nvcre installed (init's objects on the emulator, `nvcre setup
    init` on the real server) and two GPU Nodes."""
    if request.param == "emulator":
        with installed_in_thread(tmp_path) as (server, kubeconfig):
            def delete(path: str, policy: str) -> dict[str, Any]:
                asked = urllib.request.Request(server.url + path, data=json.dumps({"propagationPolicy": policy}).encode(),
                                               method="DELETE", headers={"Authorization": f"Bearer {server.token}",
                                                                         "Content-Type": "application/json"})
                with urllib.request.urlopen(asked, timeout=10) as answer:
                    return dict(json.loads(answer.read()))

            asyncio.run(gpu_nodes(kubeconfig))
            yield Bare(kubeconfig, delete)
        return
    assets = envtest.assets_dir()
    if assets is None:
        pytest.skip(envtest.SKIP_REASON)
    with envtest.ControlPlane(assets, tmp_path) as plane:
        kubeconfig = plane.write_kubeconfig(tmp_path / "kubeconfig")
        assert main(["setup", "init", "--kubeconfig", str(kubeconfig)]) == 0
        asyncio.run(gpu_nodes(kubeconfig))
        yield Bare(kubeconfig, lambda path, policy: plane.request("DELETE", path, {"propagationPolicy": policy}))


async def gpu_nodes(kubeconfig: Path) -> None:
    """Two GPU Nodes as a bare server holds them (registered, no kubelet renewing them)."""
    from tests.runner.harness import register_gpu_nodes

    store = await store_on(kubeconfig, SystemClock(), "kubectl")
    try:
        await register_gpu_nodes(store, SystemClock(), Scenario.model_validate(FLEET))
    finally:
        await store.close()


async def trainer_without_jobset(kubeconfig: Path, seconds: float = 30.0) -> None:
    """Kubeflow Trainer's real CRDs applied (JobSet's not, as its manifests without their JobSet part), returned once
    both are Established (a real server serves a kind a moment after its create)."""
    store = await store_on(kubeconfig, SystemClock(), "kubectl")
    try:
        names = [(await store.create(CRD, real_trainer_crd(plural)))["metadata"]["name"] for plural in ("trainjobs", "trainingruntimes")]
        for _ in range(int(seconds / 0.1)):
            try:
                crds = [await store.get(CRD, name) for name in names]
            except NotFound:
                crds = []
            if crds and all(any(c.get("type") == "Established" and c.get("status") == "True"
                                for c in (crd.get("status") or {}).get("conditions") or []) for crd in crds):
                return
            await asyncio.sleep(0.1)  # bounded: a server that never establishes them fails the test below
        raise AssertionError("the Trainer's CRDs were not Established")
    finally:
        await store.close()
