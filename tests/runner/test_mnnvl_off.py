"""A GB200/GB300 run with `enableMNNVL: false` takes no ComputeDomain channel: NCCL_MNNVL_ENABLE=0 goes over the network
between nodes and uses no IMEX channel. The catalog gives those architectures the channel claim whatever the option, and
the run used to make a ComputeDomain and claim its channel anyway; on a cluster without NVIDIA's DRA driver it failed at
once telling the user to install the driver "or set enableMNNVL: false", which they had. Over the emulator (which serves
no ComputeDomain), as the nvcre-engine ServiceAccount `setup init` grants."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.api.vocabulary import WORKLOAD_NOT_CREATED
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import BATCH_JOB, CRD
from tests.runner.harness import denied, gpu_cluster, job_and_its_run, served, started_once
from tests.runner.test_claim_templates import V1BETA2, _dra_crd

NODES = ["gpu-node-01", "gpu-node-02"]


def _spec(claims: list[str], mnnvl: bool) -> dict[str, Any]:
    return {"image": "nvcr.io/nvidia/pytorch:25.08-py3", "numNodes": 2, "gpusPerNode": 4, "target": {"nodeNames": NODES},
            "framework": {"torch": {"script": "train.py"}}, "resourceClaims": claims, "enableMNNVL": mnnvl,
            "env": [{"name": "NCCL_MNNVL_ENABLE", "value": str(int(mnnvl))}]}


async def _start(folder: Path, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, list[str], list[str]]:
    """The run's status, its batch Job (None: not made), the names of its ResourceClaimTemplates and the engine's requests
    the RBAC of `setup init` refuses, once
    the engine's runner started it on a server serving resource.k8s.io/v1beta2 (Kubernetes 1.33) and no ComputeDomain."""
    clock = ManualClock(SIM_START)
    async with gpu_cluster(folder, clock) as (server, admin, engine):
        await admin.create(CRD, _dra_crd("v1beta2"))
        await served(admin, {"resource.k8s.io/v1beta2": ["resourceclaimtemplates"]})
        _, created = await job_and_its_run(admin, spec, NODES)
        status = await started_once(engine, clock, created)
        jobs = (await admin.list(BATCH_JOB, "default")).items
        templates = [t["metadata"]["name"] for t in (await admin.list(V1BETA2, "default")).items]
        assert not [r for r in server.requests if r.resource == "computedomains" and r.verb == "create"]
        return status, jobs[0] if jobs else None, templates, denied(server.requests)


@pytest.mark.parametrize(("claims", "kept"), [(["compute-domain"], []), (["compute-domain", "roce-channel"], ["roce-channel"])],
                         ids=["gb200", "aws-gb300"])
def test_a_run_with_mnnvl_off_claims_no_compute_domain_channel_and_runs_without_the_dra_driver(
        claims: list[str], kept: list[str], tmp_path: Path) -> None:
    status, job, templates, refused = asyncio.run(_start(tmp_path, _spec(claims, mnnvl=False)))
    assert status["phase"] == "Scheduling", status
    assert job is not None and refused == []
    pod = job["spec"]["template"]["spec"]
    assert [claim["name"] for claim in pod.get("resourceClaims") or []] == kept  # AWS GB300's RoCE NICs stay claimed
    assert [claim["resourceClaimTemplateName"] for claim in pod.get("resourceClaims") or []] == templates
    assert [claim["name"] for claim in pod["containers"][0]["resources"].get("claims") or []] == kept


def test_a_run_with_mnnvl_on_still_needs_its_compute_domain(tmp_path: Path) -> None:
    status, job, _, _ = asyncio.run(_start(tmp_path, _spec(["compute-domain"], mnnvl=True)))
    assert (status["phase"], status["reason"]) == ("Failed", WORKLOAD_NOT_CREATED), status
    assert "ComputeDomain (resource.nvidia.com/v1beta1)" in status["message"] and job is None

