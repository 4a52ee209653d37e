"""A Job always points at its WorkloadRun (`status.workloadRef`), also when the engine stopped between creating the
run and writing the Job: the next engine writes it (it was lost for good; tools reading NVCRE's status shape found a
finished Job naming no run)."""

from __future__ import annotations

from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB
from tests.engine.test_unblamed_failures import CERT


async def test_a_job_that_lost_its_workload_ref_gets_it_back() -> None:
    session = await SimSession.open(default_scenario(), None, history=None)
    try:
        assert session.engine is not None
        text = CERT.replace("NODES", "gpu-node-01, gpu-node-02").replace("OPTIONS", "{testScale: intra-node}")
        cert = certification_from_text("c", text, default_catalog()).to_wire()
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)

        async def created() -> bool:
            jobs = (await session.store.list(JOB, "default")).items
            return len(jobs) == 2 and all(j.get("status", {}).get("workloadRef") for j in jobs)

        assert await session.engine.run_until_settled(until=created, max_seconds=600)
        for job in (await session.store.list(JOB, "default")).items:  # as if the engine stopped before writing it
            await session.store.patch_status(JOB, job["metadata"]["name"], "default", {"workloadRef": None})
        await session.engine.run_until_settled(max_seconds=6 * 3600)
        jobs = (await session.store.list(JOB, "default")).items
    finally:
        await session.close()
    assert {j["status"]["workloadRef"]["name"] for j in jobs} == {f"{j['metadata']['name']}-run" for j in jobs}
    assert all(any(c["type"] == "Succeeded" and c["status"] == "True" for c in j["status"]["conditions"]) for j in jobs)
