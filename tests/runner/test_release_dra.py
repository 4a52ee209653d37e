"""On an API server without a garbage collector, a deleted certification's runs leave no DRA objects behind: the
engine's release of a Job (engine/controllers/collect.py calls it) deletes the ComputeDomain and the RoCE
ResourceClaimTemplate it made for the Job's run, as the nvcre-engine ServiceAccount `setup init` grants (the
emulator's RBAC judges it), and never a namesake another owner holds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.kubernetes.create import COMPUTE_DOMAIN
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import BATCH_JOB, CRD, JOB, WORKLOADRUN, ResourceKind
from tests.runner.harness import denied, gpu_cluster, job_and_its_run, served

NODES = ["gpu-node-01", "gpu-node-02"]
SPEC = {"image": "public.ecr.aws/hpc-cloud/nccl-tests:latest", "numNodes": 2, "gpusPerNode": 4, "target": {"nodeNames": NODES},
        "framework": {"torch": {"script": "train.py"}}, "resourceClaims": ["compute-domain-channel", "roce-channel"]}
TEMPLATE = ResourceKind("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates")


def _crd(group: str, version: str, plural: str, kind: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": version, "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def _run_then_release(folder: Path) -> tuple[dict[str, list[str]], dict[str, list[str]], list[str]]:
    """What of the run's DRA objects (and a namesake ComputeDomain of another owner) there was once the runner started
    it, what is left after the engine released its deleted Job, and the engine's requests `setup init` does not grant."""
    clock = ManualClock(SIM_START)
    async with gpu_cluster(folder, clock) as (server, admin, engine):
        await admin.create(CRD, _crd("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate"))
        await admin.create(CRD, _crd(COMPUTE_DOMAIN.group, COMPUTE_DOMAIN.version, "computedomains", "ComputeDomain"))
        await served(admin, {"resource.k8s.io/v1": ["resourceclaimtemplates"], COMPUTE_DOMAIN.api_version: ["computedomains"]})
        job, created = await job_and_its_run(admin, SPEC, NODES)
        # an earlier Job of the same name's ComputeDomain (another uid): not this Job's to delete
        await admin.create(COMPUTE_DOMAIN, {"apiVersion": COMPUTE_DOMAIN.api_version, "kind": "ComputeDomain",
                                            "metadata": {"name": "cert-job-compute-domain", "namespace": "default"}, "spec": {}})

        async def there() -> dict[str, list[str]]:
            kinds = {"ComputeDomain": COMPUTE_DOMAIN, "ResourceClaimTemplate": TEMPLATE, "batch/Job": BATCH_JOB}
            return {name: sorted(o["metadata"]["name"] for o in (await admin.list(kind, "default")).items) for name, kind in kinds.items()}

        runner = KubernetesRunner(engine, clock, engine, trainer=False)
        try:
            await runner.reconcile_run(created)
            before = await there()
            await admin.delete(JOB, "cert-job", "default")  # its certification deleted: nothing collects its children here
            await runner.release(job)
        finally:
            await runner.close()
        return before, await there(), denied(server.requests)


def test_a_released_job_leaves_no_compute_domain_nor_claim_template_of_its_run(tmp_path: Path) -> None:
    before, after, refused = asyncio.run(_run_then_release(tmp_path))
    assert len(before["ComputeDomain"]) == 2 and len(before["ResourceClaimTemplate"]) == 1, before  # the run's were made
    assert before["batch/Job"] == ["cert-job-workload"], before
    assert after == {"ComputeDomain": ["cert-job-compute-domain"], "ResourceClaimTemplate": [], "batch/Job": []}
    assert refused == []  # inside the RBAC `setup init` grants
