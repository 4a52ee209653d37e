"""`setup reset` on an API server without kube-controller-manager, of an install namespace a certification ran in: the
Events nvcre wrote there about it held the namespace Terminating for good, so `setup init` was refused ever after.

Run on the emulator, and on a real kube-apiserver + etcd when KUBEBUILDER_ASSETS names them (skipped without)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.errors import NotFound
from nvcre_tui.engine.store.protocol import EVENT, NAMESPACE
from tests.kube.bare import SERVERS, Bare, bare_server
from tests.kube.cluster import store_on

NS = "nvcre-system"


@pytest.fixture(params=SERVERS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    yield from bare_server(request, tmp_path)


async def _events_and_namespace(kubeconfig: Path) -> tuple[list[str], str | None]:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        try:
            phase = (await store.get(NAMESPACE, NS)).get("status", {}).get("phase")
        except NotFound:
            return [], None
        return sorted(e["metadata"]["name"] for e in (await store.list(EVENT, NS)).items), phase
    finally:
        await store.close()


def test_reset_removes_an_install_namespace_a_certification_ran_in(cluster: Bare, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = cluster.kubeconfig
    assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "-n", NS, "--category", "communication/nccl-all-reduce",
                 "--name", "here", "--wait", "--timeout", "3s"]) == 3
    events, _ = asyncio.run(_events_and_namespace(kubeconfig))
    assert events  # what the engine said of the certification and its Workflow
    capsys.readouterr()
    code = main(["setup", "reset", "--kubeconfig", str(kubeconfig), "--yes", "--force", "--timeout", "10"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    assert f"deleted {len(events)} Events nvcre wrote in namespace {NS} about the objects reset removed" in out.splitlines()
    assert f"namespace/{NS} finalized: it held nothing, and this API server has no namespace controller to do it" in out
    assert asyncio.run(_events_and_namespace(kubeconfig)) == ([], None)
    assert main(["setup", "init", "--kubeconfig", str(kubeconfig)]) == 0
