"""A diagnostic that passed on fewer GPUs than its run was given did not test the others: its Job fails
NoDataCollected naming the GPUs it did test, and blames no node (the output convicts none); results that name
every GPU it was given pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB
from tests.engine.test_unblamed_failures import SilentRunner  # every run prints the lines given

Obj = dict[str, Any]
FOUR_GPUS = (Path(__file__).resolve().parents[1] / "parsers" / "fixtures" / "dcgm_3x_warn_pass.json").read_text().splitlines()
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: c, namespace: default}
spec:
  target: {nodeNames: [gpu-node-01]}
  categories: [{domain: diagnostics, variant: dcgm-level4, options: {gpusPerNode: GPUS}}]
"""


async def diagnose_with(gpus: int) -> Obj:
    session = await SimSession.open(default_scenario(), None, history=None)
    assert session.engine is not None
    engine = Engine(session.engine.store, session.clock, default_catalog(), SilentRunner(session.runner, FOUR_GPUS), cache=session.cache)
    cert = certification_from_text("c", CERT.replace("GPUS", str(gpus)), default_catalog()).to_wire()
    cert.pop("status", None)
    await session.store.create(CERTIFICATION, cert)
    await engine.run_until_settled(max_seconds=6 * 3600)
    [job] = (await session.store.list(JOB, "default")).items
    await session.close()
    return job


async def test_results_on_four_of_eight_gpus_fail_blaming_no_node() -> None:
    job = await diagnose_with(8)
    failed = cond.find(job["status"]["conditions"], "Failed")
    assert cond.phase(job) == "Failed" and failed is not None and failed["reason"] == "NoDataCollected"
    assert failed["message"] == ("the results name 4 GPUs (0, 1, 2, 3) of the 8 the run was given: the others were not tested; "
                                 "no node blamed")
    assert not job["status"].get("failedNodes")


async def test_results_on_every_gpu_given_pass() -> None:
    job = await diagnose_with(4)
    assert cond.phase(job) == "Succeeded", job["status"]


@pytest.mark.parametrize(("given", "failed"), [(None, False), (4, False), (3, False), (5, True), (16, True)])
def test_measure_counts_the_gpus_results_name(given: int | None, failed: bool) -> None:
    result = measure("dcgm", FOUR_GPUS, given)
    assert (result.failure is not None) == failed
    assert measure("nccl", ["no rows"], 8).failure is not None  # nccl output names no GPU: its own verdict only
