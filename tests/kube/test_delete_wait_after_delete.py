"""On an API server alone (no garbage collector), `certification delete NAME` without --wait leaves the certification's
Workflows, Jobs and runs, and says "--wait runs one now and waits until they are gone". `certification delete NAME
--wait` then said "certification 'NAME' not found ...; nothing deleted" and exited 2, the leftovers still there, nothing
nvcre offered removing them. It now collects what the deleted certification of that name left (running the engine, as
any --wait does), says so, and exits 0; without --wait, the not-found line names what remains and that --wait collects it.

Run on the emulator, and on a real kube-apiserver + etcd when KUBEBUILDER_ASSETS names them (skipped without)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import JOB, WORKFLOW, WORKLOADRUN
from tests.kube.bare import SERVERS, Bare, bare_server, trainer_without_jobset
from tests.kube.cluster import store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster


@pytest.fixture(params=SERVERS)
def bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    yield from bare_server(request, tmp_path)


async def _left(kubeconfig: Path) -> list[str]:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        found = []
        for kind in (WORKFLOW, JOB, WORKLOADRUN):
            found += [f"{kind.kind}/{obj['metadata']['name']}" for obj in (await store.list(kind, "default")).items]
        return sorted(found)
    finally:
        await store.close()


def test_delete_wait_collects_what_a_delete_without_wait_left(bare: Bare, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = bare.kubeconfig
    asyncio.run(trainer_without_jobset(kubeconfig))  # the run fails at once (WorkloadNotCreated): a quick finished run
    flags = ["--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", *flags, "--category", "communication/nccl-all-reduce", "--name", "c1", "--wait"]) == 1
    assert main(["certification", "delete", "c1", *flags]) == 0
    assert "--wait runs one now" in capsys.readouterr().err
    left = asyncio.run(_left(kubeconfig))
    assert len(left) == 3, left  # no garbage collector: its Workflow, Job and run stay

    assert main(["certification", "delete", "c1", *flags]) == 2
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.strip()]
    assert len(said) == 1 and "not found" in said[0] and "nothing deleted" in said[0], err
    assert "left 1 Workflow, with its Jobs and runs" in said[0] and "--wait collects them" in said[0], err

    assert main(["certification", "delete", "c1", "--wait", "--timeout", "30s", *flags]) == 0
    err = capsys.readouterr().err
    assert "not found" not in err, err
    assert ("certification c1 is already deleted from namespace default; it left 1 Workflow, with its Jobs and runs: waiting until "
            "they are gone") in err, err
    assert asyncio.run(_left(kubeconfig)) == []
