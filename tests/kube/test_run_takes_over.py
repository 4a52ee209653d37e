"""`run --wait` that finds another engine holding the Lease follows as a viewer; when that engine stops renewing (its
process was killed), this one takes the Lease over and finishes the run, and a live holder never makes it wait past
--timeout (real time: a viewer's clock moves only with an engine)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.lease import format_micro_time
from nvcre_tui.engine.store.protocol import LEASE
from tests.kube.cluster import installed_in_thread, store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster

ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "examples" / "burn-in.yaml"


async def _squat(kubeconfig: Path, seconds: int) -> None:
    """The Lease as a killed engine left it: held, renewed just now, for `seconds`."""
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        now = format_micro_time(SystemClock().now())
        await store.create(LEASE, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                   "metadata": {"name": "nvcre-engine", "namespace": "nvcre-system"},
                                   "spec": {"holderIdentity": "engine@gone/4242", "leaseDurationSeconds": seconds,
                                            "acquireTime": now, "renewTime": now, "leaseTransitions": 0}})
    finally:
        await store.close()


def _run(kubeconfig: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(CERT), "--wait",
            "--results-file", str(tmp_path / "r.json"), "--history", str(tmp_path / "h.db"), *extra]


def test_a_run_whose_lease_holder_died_takes_the_lease_over_and_finishes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_squat(kubeconfig, 2))
        assert main(_run(kubeconfig, tmp_path)) == 1  # burn-in finds the default fleet's two faulty nodes
        out, err = capsys.readouterr()
        said = out + err
        assert "viewer: engine held by engine@gone/4242" in said
        assert "took it over and runs the engine" in said
        assert json.loads((tmp_path / "r.json").read_text())["failedNodes"] == ["gpu-node-07", "gpu-node-12"]


def test_a_viewer_run_gives_up_after_its_timeout_in_real_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_squat(kubeconfig, 3600))
        began = time.monotonic()
        assert main(_run(kubeconfig, tmp_path, "--timeout", "2s")) == 3
        assert time.monotonic() - began < 30
        out, err = capsys.readouterr()
        # nothing ran it (the Lease's holder is a squatter): the report says it waits to start, not that it runs
        assert "Timed out after 2s" in out + err and "Result:         WAITING to start" in out
