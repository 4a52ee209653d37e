"""AWS GB300's RoCE NICs come through a DRA ResourceClaimTemplate the engine makes per run (catalog/_workloads/claims.yaml).
The engine writes it in the newest resource.k8s.io version the server serves (here v1beta2, as Kubernetes 1.33), as the
nvcre-engine ServiceAccount `setup init` grants (the emulator's RBAC judges it), owned by the run's Job so a garbage
collector removes it with it; a server serving none refuses the run at once, saying why, before anything is created."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import WORKLOAD_NOT_CREATED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import BATCH_JOB, CRD, JOB, ResourceKind
from tests.runner.harness import gpu_cluster, job_and_its_run, served, started_once

NODES = ["gpu-node-01", "gpu-node-02"]
SPEC = {"image": "public.ecr.aws/hpc-cloud/nccl-tests:latest", "numNodes": 2, "gpusPerNode": 4, "target": {"nodeNames": NODES},
        "framework": {"torch": {"script": "train.py"}}, "resourceClaims": ["roce-channel"]}
V1BETA2 = ResourceKind("resource.k8s.io", "v1beta2", "ResourceClaimTemplate", "resourceclaimtemplates")


def _dra_crd(version: str) -> dict[str, Any]:
    """resource.k8s.io's ResourceClaimTemplate served in one version: what discovery shows of a 1.33 server."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "resourceclaimtemplates.resource.k8s.io"},
            "spec": {"group": "resource.k8s.io", "scope": "Namespaced",
                     "names": {"plural": "resourceclaimtemplates", "singular": "resourceclaimtemplate", "kind": "ResourceClaimTemplate"},
                     "versions": [{"name": version, "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def _start(folder: Path, dra: str | None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """The run's status, its ResourceClaimTemplates and its batch Job (None: not made) once the engine's runner started it."""
    clock = ManualClock(SIM_START)
    async with gpu_cluster(folder, clock) as (server, admin, engine):
        if dra is not None:
            await admin.create(CRD, _dra_crd(dra))
            await served(admin, {f"resource.k8s.io/{dra}": ["resourceclaimtemplates"]})
        job, created = await job_and_its_run(admin, SPEC, NODES)
        status = await started_once(engine, clock, created)
        templates = (await admin.list(V1BETA2, "default")).items if dra == "v1beta2" else []
        jobs = (await admin.list(BATCH_JOB, "default")).items
        return status, templates, jobs[0] if jobs else None


def test_the_roce_claim_template_is_written_in_the_version_the_server_serves(tmp_path: Path) -> None:
    status, templates, job = asyncio.run(_start(tmp_path, "v1beta2"))
    assert status["phase"] == "Scheduling", status
    assert job is not None and len(templates) == 1
    template = templates[0]
    uid = job["metadata"]["ownerReferences"][0]["uid"]  # the nvcre Job's: the name carries it, as a ComputeDomain's does
    assert template["metadata"]["name"] == f"cert-job-roce-{uid.replace('-', '')[:8]}"
    assert template["metadata"]["ownerReferences"][0]["name"] == "cert-job"  # a garbage collector removes it with its Job
    assert template["spec"]["spec"]["devices"]["requests"] == [
        {"name": "roce", "exactly": {"deviceClassName": "roce.networking.k8s.aws", "allocationMode": "ExactCount", "count": 8}}]
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "roce-channel", "resourceClaimTemplateName": template["metadata"]["name"]}]


def test_a_server_without_dra_refuses_the_run_at_once_naming_it(tmp_path: Path) -> None:
    status, _, job = asyncio.run(_start(tmp_path, None))
    assert (status["phase"], status["reason"]) == ("Failed", WORKLOAD_NOT_CREATED), status
    assert "claim roce-channel takes a DRA ResourceClaimTemplate and the cluster serves none" in status["message"]
    assert job is None  # nothing half-created
