"""A finished run gives its DRA objects back at once: a GB200 run's ComputeDomain (its nodes' IMEX daemons run while it
exists) and AWS GB300's per-run RoCE ResourceClaimTemplate were deleted only with the certification, so a finished
certification kept the IMEX daemons of every node it tested. Whatever the run's end (passed, failed, stopped at its
timeoutPerJob), the engine deletes them as the run ends, as the nvcre-engine ServiceAccount `setup init` grants (the
emulator's RBAC judges every request), on the API-server emulator with the test kubelet playing the pods."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nvcre_tui.engine.runners.kubernetes.create import COMPUTE_DOMAIN
from tests.kubeapi.kubelet import PodFault
from tests.runner.harness import emulator_report

CASE = "gb200-intra-rack-mnnvl"  # two multi-node groups, one per NVL domain, each with a ComputeDomain (MNNVL)
DOMAINS = f"{COMPUTE_DOMAIN.group}/{COMPUTE_DOMAIN.plural}"


def _compute_domain_crd() -> dict[str, Any]:
    """NVIDIA's DRA driver for GPUs' ComputeDomain, served (its schema keeps whatever it is given)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{COMPUTE_DOMAIN.plural}.{COMPUTE_DOMAIN.group}"},
            "spec": {"group": COMPUTE_DOMAIN.group, "scope": "Namespaced",
                     "names": {"plural": COMPUTE_DOMAIN.plural, "singular": "computedomain", "kind": COMPUTE_DOMAIN.kind},
                     "versions": [{"name": COMPUTE_DOMAIN.version, "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _made_and_released(objects: dict[str, Any]) -> tuple[list[str], list[str]]:
    made = [r for r in objects["created"] if r == DOMAINS]
    released = sorted(d.rsplit("/", 1)[1] for d in objects["deleted"] if d.startswith(f"{DOMAINS}/"))
    return made, released


def test_a_passed_runs_compute_domain_is_deleted_as_it_ends_not_with_the_certification(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, crds=[_compute_domain_crd()]))
    assert report["result"] == "PASSED", report
    made, released = _made_and_released(objects)
    assert made and len(released) == 2, objects["deleted"]  # one per group
    assert objects[DOMAINS] == [], f"a finished certification still holds ComputeDomains {objects[DOMAINS]}"
    assert objects["denied"] == []
    assert objects["trainjobs"], "a passed run keeps its TrainJob (its pods, for their logs)"


def test_a_failed_runs_compute_domain_is_deleted_with_its_workload(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, crds=[_compute_domain_crd()],
                                                  faults=(PodFault("oom", "gpu-node-01", at=30),)))
    assert report["result"] == "FAILED" and "gpu-node-01" in report["failedNodes"], report["failedNodes"]
    assert objects[DOMAINS] == [], f"a finished certification still holds ComputeDomains {objects[DOMAINS]}"
    assert objects["denied"] == []


def test_a_run_stopped_at_its_timeout_gives_its_compute_domain_back(tmp_path: Path) -> None:
    """Held suspended by a queue until the Job's timeoutPerJob: the engine stops the run (runner.stop)."""
    def suspend(obj: dict) -> None:
        obj["spec"]["suspend"] = True  # what Kueue's webhook does to a TrainJob with a queue-name label

    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, crds=[_compute_domain_crd()],
                                                  mutators={("trainer.kubeflow.org", "trainjobs"): suspend}))
    assert report["result"] == "FAILED" and report["failedNodes"] == [], report
    made, released = _made_and_released(objects)
    assert made and len(released) == 2, objects["deleted"]
    assert objects[DOMAINS] == [] and objects["denied"] == []


async def _run_that_fails(folder: Path) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, Any], list[str]]:
    """A run claiming both a ComputeDomain channel and AWS GB300's RoCE NICs, started by the runner on an API server with
    no Job controller, looked at again past its minute (it fails: WorkloadNotStarted), then stopped by the engine as its
    Job ends (again: idempotent): its DRA objects once started and at the end, the run's status, and the engine's
    requests `setup init` does not grant. A ComputeDomain of the same name another owner holds stays."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
    from nvcre_tui.engine.session import SIM_START
    from nvcre_tui.engine.store.protocol import CRD, WORKLOADRUN
    from tests.runner.harness import denied, gpu_cluster, job_and_its_run, served
    from tests.runner.test_release_dra import SPEC, TEMPLATE, _crd

    clock = ManualClock(SIM_START)
    async with gpu_cluster(folder, clock) as (server, admin, engine):
        await admin.create(CRD, _crd("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate"))
        await admin.create(CRD, _compute_domain_crd())
        await served(admin, {"resource.k8s.io/v1": ["resourceclaimtemplates"], COMPUTE_DOMAIN.api_version: ["computedomains"]})
        _, created = await job_and_its_run(admin, SPEC, ["gpu-node-01", "gpu-node-02"])
        await admin.create(COMPUTE_DOMAIN, {"apiVersion": COMPUTE_DOMAIN.api_version, "kind": "ComputeDomain",
                                            "metadata": {"name": "cert-job-compute-domain", "namespace": "default"}, "spec": {}})

        async def there() -> dict[str, list[str]]:
            kinds = {"ComputeDomain": COMPUTE_DOMAIN, "ResourceClaimTemplate": TEMPLATE}
            return {name: sorted(o["metadata"]["name"] for o in (await admin.list(kind, "default")).items) for name, kind in kinds.items()}

        runner = KubernetesRunner(engine, clock, engine, trainer=False)
        try:
            await runner.reconcile_run(created)
            before = await there()
            clock.advance(61)  # no Job controller synced its batch Job: it fails now
            await runner.reconcile_run(await admin.get(WORKLOADRUN, "cert-job-run", "default"))
            run = await admin.get(WORKLOADRUN, "cert-job-run", "default")
            await runner.stop(run)  # the Job ends: the engine stops its run, finished already
        finally:
            await runner.close()
        return before, await there(), run["status"], denied(server.requests)


def test_a_failed_runs_roce_claim_template_and_compute_domain_go_as_it_ends_once(tmp_path: Path) -> None:
    before, after, status, refused = asyncio.run(_run_that_fails(tmp_path))
    assert len(before["ComputeDomain"]) == 2 and len(before["ResourceClaimTemplate"]) == 1, before  # the run's were made
    assert (status["phase"], status["reason"]) == ("Failed", "WorkloadNotStarted"), status
    assert after == {"ComputeDomain": ["cert-job-compute-domain"], "ResourceClaimTemplate": []}, after  # the namesake stays
    assert refused == []


def test_a_run_whose_trainjob_a_webhook_denies_leaves_no_compute_domain_made_before_it(tmp_path: Path) -> None:
    """The ComputeDomain is made before the TrainJob; a webhook denies the TrainJob and the run fails WorkloadNotCreated:
    nothing half-created stays for the certification's lifetime."""
    from tests.kubeapi.faults import Fault

    denied = Fault(method="POST", path=r"/trainjobs$", status=403, reason="Forbidden",
                   message='admission webhook "validate.example.com" denied the request: TrainJobs need the label team')
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, crds=[_compute_domain_crd()], server_faults=(denied,)))
    assert report["result"] == "FAILED" and report["failedNodes"] == [], report
    made, released = _made_and_released(objects)
    assert made and len(released) == 2, objects["deleted"]
    assert objects[DOMAINS] == [] and objects["denied"] == []


def test_a_run_whose_trainjob_a_webhook_denies_leaves_no_training_runtime_made_before_it(tmp_path: Path) -> None:
    """The run's TrainingRuntime (its pod templates pin the group's nodes) is made before its TrainJob; a webhook denies
    the TrainJob and the run fails WorkloadNotCreated. Its TrainingRuntime stayed until the certification was deleted,
    beside the ComputeDomain the engine already deleted: now neither stays (the engine may delete both)."""
    from tests.kubeapi.faults import Fault

    denied = Fault(method="POST", path=r"/trainjobs$", status=403, reason="Forbidden",
                   message='admission webhook "validate.example.com" denied the request: TrainJobs need the label team')
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, crds=[_compute_domain_crd()], server_faults=(denied,)))
    assert report["result"] == "FAILED" and report["failedNodes"] == [], report
    assert "trainer.kubeflow.org/trainingruntimes" in objects["created"], objects["created"]
    runtimes = [d for d in objects["deleted"] if d.startswith("trainer.kubeflow.org/trainingruntimes/")]
    assert len(runtimes) == 2, objects["deleted"]  # one per group
    assert objects["denied"] == []
