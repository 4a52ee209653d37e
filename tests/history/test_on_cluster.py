"""History, staleness and NVSentinel through the KubeStore, on the API-server emulator over real HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.api.nodes import node_name
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.history.baseline import baseline_of
from nvcre_tui.engine.history.nvsentinel import sentinel_view
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import CERTIFICATION, CRD, JOB, NODE, VALIDATION_REQUEST
from tests.history.helpers import NAMESPACE, certify, fleet, loopback
from tests.history.sentinel import CRD as VR_CRD
from tests.history.sentinel import NODE_CHANGES, REQUEST
from tests.kube.cluster import installed, store_on

UPGRADE = [{"node": "gpu-node-03", "at": "2h", "driverVersion": "575.57.08"}]


async def open_on(kubeconfig: Path, clock: ManualClock, history: Path, **scenario: object) -> KubeSession:
    return await KubeSession.open(await load_target(str(kubeconfig)), default_catalog(), clock=clock,
                                  scenario=fleet(**scenario), history=history)


async def test_archive_staleness_and_nvsentinel_through_the_kube_store(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    history = tmp_path / "history.db"
    async with installed(tmp_path, clock=clock) as (server, kubeconfig):
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        await admin.create(CRD, VR_CRD)
        await asyncio.sleep(0.05)
        session = await open_on(kubeconfig, clock, history, nodeChanges=[*NODE_CHANGES, *UPGRADE], validationRequests=[REQUEST])
        try:
            assert session.engine is not None and session.history is not None
            await certify(session, "vr-weekly-nccl-loopback")
            await session.store.delete(CERTIFICATION, "vr-weekly-nccl-loopback", NAMESPACE)  # --cleanup: the archive keeps it
            assert [(c["name"], c["source"]) for c in session.history.certifications()] == \
                [("vr-weekly-nccl-loopback", f"cluster:{session.target.server}")]
            assert session.history.node("gpu-node-02")[0]["result"] == "failed"

            await session.engine.run_until_settled(max_seconds=3 * 3600)  # the fleet upgrades gpu-node-03's driver at 2h
            live = {node_name(n): baseline_of(n) for n in session.cache.list(NODE)}
            assert live["gpu-node-03"]["driver"] == "575.57.08"
            assert set(session.history.stale_nodes(live)) == {"gpu-node-03"}

            assert session.validation_requests is not None
            requests = session.validation_requests.list(VALIDATION_REQUEST)
            assert [r["metadata"]["name"] for r in requests] == ["vr-weekly"]
            nodes = {node_name(n): n for n in session.cache.list(NODE)}
            view = sentinel_view(nodes["gpu-node-02"], requests)
            assert view.state == "quarantined" and view.failures == ["nccl-loopback/ThresholdViolation"]
            assert view.requests[0].certifications == ["vr-weekly-nccl-loopback"] and view.requests[0].phase == "Failed"
        finally:
            await session.close()
        await admin.close()


async def test_a_cluster_without_the_validationrequest_crd_has_no_nvsentinel(tmp_path: Path) -> None:
    clock = ManualClock(SIM_START)
    async with installed(tmp_path, clock=clock) as (server, kubeconfig):
        session = await open_on(kubeconfig, clock, tmp_path / "history.db", validationRequests=[REQUEST])
        try:
            assert session.validation_requests is None
            await certify(session, "plain")
            assert session.history is not None
            assert [c["name"] for c in session.history.certifications()] == ["plain"]
        finally:
            await session.close()


@pytest.mark.parametrize("by_hand", [
    {"summary": {"result": "PASSED"}, "startTime": "2025-12-31T00:00:00Z"},  # the startTime stays the hand's: damaged
    {"summary": {"result": "PASSED"}},  # the engine's refusal takes the hand's field over: read as nvcre's own FAILED
])
async def test_a_certification_refused_mid_run_is_archived_refused_with_no_node_result(tmp_path: Path, by_hand: dict[str, object],
                                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A Certification whose status a hand wrote while it ran (refused: StatusWrittenByAnother) was taken for damaged by
    the archiver and never archived, tried again by every process (or, once the engine's writes took the hand's fields
    over, archived as any failure, with results). Now it is archived FAILED, marked refused with the engine's reason,
    and no node passed or blamed by it."""
    clock = ManualClock(SIM_START)
    async with installed(tmp_path, clock=clock) as (_server, kubeconfig):
        hand = await store_on(kubeconfig, clock, "kubectl-patch")
        session = await open_on(kubeconfig, clock, tmp_path / "history.db")
        try:
            assert session.engine is not None and session.history is not None and session.archiver is not None
            await session.store.create(CERTIFICATION, loopback("refused"))

            async def running() -> bool:
                return any(cond.phase(job) == "InProgress" for job in session.cache.list(JOB, NAMESPACE))

            assert await session.engine.run_until_settled(until=running, max_seconds=3600)
            await hand.patch_status(CERTIFICATION, "refused", NAMESPACE, by_hand)

            async def refused() -> bool:
                cert = session.cache.get(CERTIFICATION, "refused", NAMESPACE)
                return cert is not None and cond.is_terminal(cert)

            assert await session.engine.run_until_settled(until=refused, max_seconds=600)
            session.archiver.flush(force=True)
            [row] = session.history.certifications()
            assert (row["name"], row["result"], row["nodes"], row["failedNodes"]) == ("refused", "FAILED", 0, 0)
            assert row["refused"].startswith(f"Certification {NAMESPACE}/refused: {', '.join(f'status.{key}' for key in sorted(by_hand))} "
                                             "written by kubectl-patch, not by nvcre")
            assert row["completionTime"] is not None
            assert session.history.node("gpu-node-02") == [] and session.archiver.errors == []
        finally:
            await session.close()
        await hand.close()
    capsys.readouterr()
    assert main(["history", "certifications", "--history", str(tmp_path / "history.db")]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("refused ")]
    assert "FAILED (refused) (simulated)" in line
