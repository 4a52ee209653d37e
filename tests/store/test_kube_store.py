"""KubeStore: the shared store contract over real HTTP, on the API-server emulator and (when
KUBEBUILDER_ASSETS names etcd and kube-apiserver) on a real control plane; the kube-apiserver variants
are reported as skipped, naming KUBEBUILDER_ASSETS, when it is not set.

KubeStore-only behaviour (pagination, bookmarks, faults, retries) is in test_kube_store_faults.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import ResourceStore
from nvcre_tui.engine.store.kube import KubeStore
from tests import envtest

from .contract import StoreContract
from .kube_cluster import Cluster, emulated, real

HISTORY_LIMIT = 8


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def history_limit() -> int:
    return HISTORY_LIMIT


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[envtest.ControlPlane]:
    """One real etcd + kube-apiserver for the whole session (starting one takes seconds)."""
    assets = envtest.assets_dir()
    if assets is None:
        pytest.skip(envtest.SKIP_REASON)
    with envtest.ControlPlane(assets, tmp_path_factory.mktemp("envtest")) as plane:
        yield plane


@pytest.fixture(params=["emulator", "kube-apiserver"])
async def cluster(request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path) -> AsyncIterator[Cluster]:
    if request.param == "emulator":
        async with emulated(clock, tmp_path, HISTORY_LIMIT) as found:
            yield found
    else:
        plane = request.getfixturevalue("control_plane")
        async with real(plane, clock, tmp_path) as found:
            yield found


@pytest.fixture
async def store(cluster: Cluster) -> KubeStore:
    return await cluster.open_store()


class TestKubeStoreContract(StoreContract):
    """Every contract test, against KubeStore; what a bare API server cannot give skips by name."""

    @pytest.fixture
    def capabilities(self, cluster: Cluster) -> frozenset[str]:
        return cluster.capabilities

    @pytest.fixture
    def make_namespace(self, cluster: Cluster) -> Callable[[str], Awaitable[None]]:
        return cluster.make_namespace


def test_kube_store_satisfies_the_protocol(clock: ManualClock) -> None:
    from kubernetes_asyncio.client import Configuration

    from nvcre_tui.engine.kube import KubeTarget

    target = KubeTarget(Configuration(host="http://127.0.0.1:1"), "default", "x", "http://127.0.0.1:1", "test")
    assert isinstance(KubeStore(target, clock), ResourceStore)
