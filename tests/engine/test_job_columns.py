"""What `kubectl get jobs.nvcre.nvidia.com` shows of a group: its own node count, not the category's nodesPerJob."""

from __future__ import annotations

from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB

CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: c, namespace: default}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack}
"""


async def test_each_job_carries_its_groups_node_count() -> None:
    session = await SimSession.open(default_scenario(), None, history=None)
    try:
        assert session.engine is not None
        cert = certification_from_text("c", CERT, default_catalog()).to_wire()
        cert.pop("status", None)
        await session.store.create(CERTIFICATION, cert)
        await session.engine.run_until_settled(max_seconds=6 * 3600)
        jobs = (await session.store.list(JOB, "default")).items
    finally:
        await session.close()
    sizes = sorted((len(group_nodes(job)), job["spec"]["workload"]["workloadRun"]["numNodes"]) for job in jobs)
    assert len(sizes) >= 2 and all(count == shown for count, shown in sizes)  # the template said the whole target
