"""What a certification asks of the scheduler (its gang scheduler, a category's priority class, its target's taint
selectors) reaches the pods of a real run: the WorkloadRun the engine's Job creates carries it, and the Kubernetes
runner's placement (runners/kubernetes/create.py) puts it in the pod templates it creates, as `render --workloads`
shows it. JobSet's webhook refuses a TrainJob whose pod names could outgrow a DNS label: the names leave it room."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.options import MAX_NODES
from nvcre_tui.engine.runners.kubernetes.create import placement
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store.protocol import JOB, NODE, WORKLOADRUN
from nvcre_tui.engine.workloads import workload_manifests, workload_name
from tests.scenarios.harness import NAMESPACE, catalog, certify_to_end
from tests.workloads.schema import pod_specs

TAINT = {"key": "dedicated", "value": "burn-in", "effect": "NoSchedule"}
SCENARIO = {"name": "tainted", "seed": 5, "nodes": [{"count": 2, "cliques": 1}],
            "nodeChanges": [{"node": name, "taints": [TAINT]} for name in ("gpu-node-01", "gpu-node-02")]}
CERT = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "intent"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}, "taintSelectors": [TAINT]},
                 "gangScheduler": {"schedulerName": "kai-scheduler", "queue": "burn-in"},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                 "options": {"testScale": "full-scale", "priorityClassName": "gpu-burn-in"}}]}}
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


async def _run(tmp_path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The certification run to its end on the simulator: the Jobs and each Job's pod templates, as the
    Kubernetes runner would create them from the Job's WorkloadRun."""
    (tmp_path / "scenario.yaml").write_text(json.dumps(SCENARIO))
    (tmp_path / "cert.yaml").write_text(json.dumps(CERT))
    session = await SimSession.open(load_scenario(tmp_path / "scenario.yaml"), None, catalog())
    try:
        _, finished = await certify_to_end(session, tmp_path / "cert.yaml")
        assert finished
        jobs = (await session.store.list(JOB, NAMESPACE)).items
        runs = (await session.store.list(WORKLOADRUN, NAMESPACE)).items
        nodes = [await session.store.get(NODE, n) for n in ("gpu-node-01", "gpu-node-02")]
    finally:
        await session.close()
    pods = []
    for run in runs:
        spec = WorkloadRunSpec.model_validate(run["spec"])
        job = next(j for j in jobs if j["metadata"]["uid"] == run["metadata"]["ownerReferences"][0]["uid"])
        for trainer in (True, False):
            pods += pod_specs({o["kind"]: o for o in workload_manifests(spec, placement(job, nodes, spec), trainer=trainer)}
                              ["TrainingRuntime" if trainer else "Job"])
    return jobs, pods


def test_gang_scheduler_priority_class_and_tolerations_reach_the_pods_of_a_real_run(tmp_path: Path) -> None:
    jobs, pods = asyncio.run(_run(tmp_path))
    assert jobs and pods
    for pod in pods:
        assert pod["schedulerName"] == "kai-scheduler"
        assert pod["priorityClassName"] == "gpu-burn-in"
        assert {"key": "dedicated", "operator": "Equal", "value": "burn-in", "effect": "NoSchedule"} in pod["tolerations"]


@pytest.mark.parametrize("certification", ["c", "gpu-cluster-certification-of-the-week.rack-a"])
@pytest.mark.parametrize("category", ["communication-nccl-all-reduce", "training-nemotron5-56b"])
def test_jobset_accepts_every_pod_name_the_trainjob_may_make(certification: str, category: str) -> None:
    # JobSet's validating webhook: <jobset>-<replicatedJob>-<jobIndex>-<podIndex>-<5 random> must be a DNS label.
    job = f"{certification}-{category}-group-1234-iter-1000"
    name = workload_name(job)
    for replicated, pods in (("launcher", 1), ("node", MAX_NODES)):
        longest = f"{name}-{replicated}-0-{pods - 1}-abcde"
        assert DNS_LABEL.match(longest), f"{longest} ({len(longest)} characters)"
