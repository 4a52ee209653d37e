"""A control plane upgraded under a long-running engine is rendered for within VERSION_SECONDS: the runner read /version
once and rendered every later run for the version it started on (1.30: an MPI run on the batch fallback refused for
want of Job successPolicy, 1.31's, for as long as the engine ran; 1.28: no native sidecar for a fabric). On the
API-server emulator, upgraded between two looks; /version is asked once an interval, not once a run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes import VERSION_SECONDS, KubernetesRunner
from nvcre_tui.engine.session import SIM_START
from tests.kube.cluster import installed, store_on

MPI = WorkloadRunSpec.model_validate({"image": "nvcr.io/nvidia/hpc-benchmarks:25.04", "numNodes": 2, "gpusPerNode": 8,
                                      "target": {"nodeNames": ["gpu-node-01", "gpu-node-02"]}, "framework": {"mpi": {"binary": "all_reduce_perf"}}})


async def _upgraded(folder: Path) -> tuple[list[str | None], int]:
    """The batch fallback's refusal of an MPI run on 1.30, right after the upgrade to 1.31, and VERSION_SECONDS later;
    how many times the runner asked /version."""
    clock = ManualClock(SIM_START)
    async with installed(folder, clock=clock, bare=True) as (server, kubeconfig):
        server.version_info.update(minor="30", gitVersion="v1.30.4")
        store = await store_on(kubeconfig, clock, "nvcre-engine")
        runner = KubernetesRunner(store, clock, store, trainer=False)
        try:
            said = [await runner.fallback_refusal(MPI)]
            server.version_info.update(minor="31", gitVersion="v1.31.2")  # the control plane upgraded meanwhile
            clock.advance(1)
            said.append(await runner.fallback_refusal(MPI))
            clock.advance(VERSION_SECONDS)
            said.append(await runner.fallback_refusal(MPI))
        finally:
            await runner.close()
            await store.close()
        return said, sum(1 for r in server.requests if r.path == "/version")


def test_an_upgraded_control_plane_is_rendered_for_within_the_interval(tmp_path: Path) -> None:
    (before, just_after, later), asked = asyncio.run(_upgraded(tmp_path))
    assert before is not None and "this server is 1.30" in before, before
    assert just_after == before  # read once an interval, not once a run
    assert later is None, f"still rendered for 1.30 after the upgrade: {later}"
    assert asked == 2, asked
