"""A Job's group-nodes annotation names the nodes its failure blames, and metadata is anyone's to edit (`kubectl
annotate --overwrite`), where the run's spec (the nodes it was made on) is not. An annotation edited mid-run blamed the
nodes it named, not those that ran: two of four cleared of a threshold all four missed together. Now a Job whose
annotation no longer names its run's nodes fails GroupNodesEdited, naming the annotation, the Job and both lists: its
result is not taken and no node is blamed."""

from __future__ import annotations

import yaml

from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES, GROUP_NODES_EDITED, RESULT_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.engine import Engine
from nvcre_tui.engine.kube.install import FIELD_MANAGER, INSTALL_NAMESPACE, install_objects
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.sim.fleet import SimulatedFleet
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store import CERTIFICATION, JOB, kind_of
from tests.scenarios.harness import CASES, catalog

from .test_engine_rbac import cluster, store  # noqa: F401 - cluster is a fixture

CASE = CASES / "all-pass-full-scale"
NAMESPACE = "default"
# One full-scale group of the four nodes, judged by a threshold no fleet meets: all four blamed together
CERT = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: unmet}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: full-scale, thresholds: {busBandwidthGBps: "value >= 100000"}}
"""


async def test_a_group_nodes_annotation_edited_mid_run_blames_nobody(cluster) -> None:  # noqa: F811
    server, kubeconfig, engine_kubeconfig, clock = cluster
    admin = await store(kubeconfig, clock, "test-admin")
    sim_store = await store(kubeconfig, clock, "nvcre-sim")
    engine_store = await store(engine_kubeconfig, clock, "nvcre-engine")
    try:
        for obj in install_objects(INSTALL_NAMESPACE):
            await admin.apply(kind_of(obj), obj, field_manager=FIELD_MANAGER)
        scenario = Scenario.model_validate(yaml.safe_load((CASE / "scenario.yaml").read_text()))
        fleet = SimulatedFleet(sim_store, clock, scenario)
        await fleet.ensure_nodes()
        engine = Engine(engine_store, clock, catalog(), SimulatedRunner(sim_store, clock, scenario, fleet))
        cert = certification_from_text("cert.yaml", CERT, catalog()).to_wire()
        cert["metadata"]["namespace"] = NAMESPACE
        cert.pop("status", None)
        await admin.create(CERTIFICATION, cert)

        async def running() -> bool:
            return any(cond.phase(job) == "InProgress" for job in (await admin.list(JOB, NAMESPACE)).items)

        assert await engine.run_until_settled(until=running, max_seconds=600)
        [job] = (await admin.list(JOB, NAMESPACE)).items
        assert job["metadata"]["annotations"][ANNOTATION_GROUP_NODES] == "gpu-node-01,gpu-node-02,gpu-node-03,gpu-node-04"
        job["metadata"]["annotations"][ANNOTATION_GROUP_NODES] = "gpu-node-01,gpu-node-02"  # kubectl annotate --overwrite
        await admin.update(JOB, job)

        async def finished() -> bool:
            return cond.is_terminal(await admin.get(CERTIFICATION, "unmet", NAMESPACE))

        assert await engine.run_until_settled(until=finished, max_seconds=6 * 3600)
        await engine.stop()
        done = await admin.get(CERTIFICATION, "unmet", NAMESPACE)
        assert done["status"]["summary"]["result"] == RESULT_FAILED and done["status"]["summary"]["failedNodes"] == 0
        ended = await admin.get(JOB, job["metadata"]["name"], NAMESPACE)
        failed = cond.find(ended["status"]["conditions"], "Failed") or {}
        assert failed.get("reason") == GROUP_NODES_EDITED and not ended["status"].get("failedNodes")
        assert failed.get("message") == (
            f"metadata.annotations[{ANNOTATION_GROUP_NODES}] of Job {job['metadata']['name']} was edited: it names gpu-node-01, "
            f"gpu-node-02, its run {job['metadata']['name']}-run runs on gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04; "
            "its result is not taken, no node blamed")
    finally:
        for s in (admin, sim_store, engine_store):
            await s.close()
