"""A Job's group-nodes annotation names the nodes its failure blames, and metadata is anyone's to edit (`kubectl
annotate --overwrite`), where the run's spec (the nodes it was made on) is not. An annotation edited mid-run blamed the
nodes it named, not those that ran: two of four cleared of a threshold all four missed together. Now a Job whose
annotation no longer names its run's nodes fails GroupNodesEdited, naming the annotation, the Job and both lists: its
result is not taken and no node is blamed."""

from __future__ import annotations

import functools

from nvcre_tui.engine.api.vocabulary import ANNOTATION_GROUP_NODES, GROUP_NODES_EDITED, RESULT_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.store import CERTIFICATION, JOB
from tests.kube.cluster import a_job_in_progress, case_certification, certification_over, simulated_on_cluster
from tests.scenarios.harness import CASES

from .test_engine_rbac import cluster  # noqa: F401 - cluster is a fixture

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
    async with simulated_on_cluster(cluster, CASE) as (admin, _, engine, _):
        await admin.create(CERTIFICATION, case_certification(CASE, NAMESPACE, CERT))
        assert await engine.run_until_settled(until=functools.partial(a_job_in_progress, admin, NAMESPACE), max_seconds=600)
        [job] = (await admin.list(JOB, NAMESPACE)).items
        assert job["metadata"]["annotations"][ANNOTATION_GROUP_NODES] == "gpu-node-01,gpu-node-02,gpu-node-03,gpu-node-04"
        job["metadata"]["annotations"][ANNOTATION_GROUP_NODES] = "gpu-node-01,gpu-node-02"  # kubectl annotate --overwrite
        await admin.update(JOB, job)

        assert await engine.run_until_settled(until=functools.partial(certification_over, admin, "unmet", NAMESPACE), max_seconds=6 * 3600)
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
