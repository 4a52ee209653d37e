"""The certification's namespace deleted mid-run on an API server without a namespace controller (nothing empties it,
so it stays Terminating): the workload's controllers are refused every pod they create there (403, cause
NamespaceTerminating), and the run waited its whole timeoutPerJob saying only "4/5 pod(s) running". A create in the
certification's own namespace refused because that namespace is being terminated stops the run at once, naming it:
the Job fails, no node blamed, and its nodes are released."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nvcre_tui.engine.api.vocabulary import NAMESPACE_TERMINATING, RECONCILE_ERROR
from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.certification import is_held
from nvcre_tui.engine.engine import Engine, engine_cache
from nvcre_tui.engine.runners.kubernetes import KubernetesRunner
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.store.protocol import CRD, JOB, NAMESPACE, POD, WORKFLOW, WORKLOADRUN
from nvcre_tui.engine.store.writethrough import WriteThroughStore
from nvcre_tui.engine.planning.manifest import load_certification
from nvcre_tui.engine.report.model import build_report
from tests.kube.cluster import installed, store_on
from tests.kubeapi.kubelet import TestKubelet
from tests.kubeapi.trainer_crds import jobset_crd, real_trainer_crd
from tests.runner.harness import JOBSET_API, TRAINER_API, KubeletDriven, register_gpu_nodes, served
from tests.scenarios.harness import CASES, catalog

CASE = "threshold-pass-two-metrics"  # one group of 4 nodes: an MPI TrainJob of 4 node pods and a launcher
TEAM = "team"
HOLDER = "holder"  # the same certification in namespace default, on the same nodes (`held`)


async def _run(folder: Path, edit: Callable[[dict[str, Any]], None] = lambda cert: None, pods: int = 4, held: bool = False,
               at_job: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]], float, list[Any]]:
    """Certify CASE in namespace TEAM and delete TEAM once `pods` of its pods are made; `held`: once its category
    waits for the same certification in namespace default (HOLDER), made first and left running; `at_job`: as the
    server admits its first Job, before that Job's run is made."""
    clock = ManualClock(SIM_START)
    scenario = load_scenario(CASES / CASE / "scenario.yaml")
    async with installed(folder, clock=clock) as (server, kubeconfig):  # no garbage collector, no namespace controller
        admin = await store_on(kubeconfig, clock, "nvcre-test")
        engine_store = await store_on(kubeconfig, clock, "nvcre-engine")
        runner: KubernetesRunner | None = None
        try:
            for plural in ("trainjobs", "trainingruntimes"):
                await admin.apply(CRD, real_trainer_crd(plural), field_manager="kubeflow-trainer", force=True)
            await admin.apply(CRD, jobset_crd(), field_manager="jobset", force=True)
            await served(engine_store, {TRAINER_API: ("trainjobs", "trainingruntimes"), JOBSET_API: ("jobsets",)})
            await register_gpu_nodes(admin, clock, scenario)
            await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TEAM}})
            cert = load_certification(str(CASES / CASE / "cert.yaml"), catalog()).to_wire()
            cert["metadata"]["namespace"] = TEAM
            cert["spec"]["categories"][0]["options"]["timeoutPerJob"] = "1h"
            cert.pop("status", None)
            if held:
                await admin.create(CERTIFICATION, {**cert, "metadata": {"name": HOLDER, "namespace": "default"}})
            edit(cert)
            name = cert["metadata"]["name"]
            if not held:
                await admin.create(CERTIFICATION, cert)
            deleted: list[float] = []
            if at_job:
                namespaces = server.registry.find("", "v1", "namespaces")
                assert namespaces is not None

                def terminate(job: dict[str, Any]) -> None:
                    if not deleted:
                        server.registry.delete(namespaces, None, TEAM, {})
                        deleted.append((clock.now() - SIM_START).total_seconds())
                server.registry.mutators[("nvcre.nvidia.com", "jobs")] = terminate
            cache = engine_cache(engine_store)
            writer = WriteThroughStore(engine_store, cache)
            runner = KubernetesRunner(writer, clock, engine_store)
            engine = Engine(writer, clock, catalog(), KubeletDriven(runner, TestKubelet(admin, server, clock, scenario)), cache=cache)
            runner.connect(engine.queue.add, cache)

            async def due() -> bool:
                if held:  # its only category waits for HOLDER's Workflow on the same nodes
                    return any(is_held(s) for s in (await admin.get(CERTIFICATION, name, TEAM)).get("status", {}).get("categoryStatuses") or [])
                return len((await admin.list(POD, TEAM)).items) >= pods  # 4: the node pods made, not the launcher

            async def finished() -> bool:
                if held and not (await admin.list(CERTIFICATION, TEAM)).items:  # made once HOLDER's Workflow runs
                    await admin.create(CERTIFICATION, cert)
                    return False
                if not deleted and await due():
                    await admin.delete(NAMESPACE, TEAM)
                    deleted.append((clock.now() - SIM_START).total_seconds())
                return cond.is_terminal(await admin.get(CERTIFICATION, name, TEAM))

            await engine.run_until_settled(until=finished, max_seconds=3 * 3600)
            await engine.stop()
            assert deleted, "the namespace was never deleted"
            assert (await admin.get(NAMESPACE, TEAM))["metadata"].get("deletionTimestamp")  # still Terminating
            jobs = (await admin.list(JOB, TEAM)).items
            workflows = (await admin.list(WORKFLOW, TEAM)).items
            runs = (await admin.list(WORKLOADRUN, TEAM)).items
            holder = (await admin.list(CERTIFICATION, "default")).items
            return ({"cert": await admin.get(CERTIFICATION, name, TEAM), "jobs": jobs, "workflows": workflows, "runs": runs,
                     "trainjobs": (await admin.list(TRAINJOB, TEAM)).items, "holder": holder},
                    (await admin.list(POD, TEAM)).items, deleted[0], server.requests)
        finally:
            if runner is not None:
                await runner.close()
            await engine_store.close()
            await admin.close()


def test_a_run_whose_namespace_is_terminating_stops_at_once_naming_it(tmp_path: Path) -> None:
    found, pods, deleted_at, requests = asyncio.run(_run(tmp_path))
    [job], [workflow], [run] = found["jobs"], found["workflows"], found["runs"]
    assert cond.is_terminal(found["cert"]), found["cert"]["status"]
    ended = (parse_time(job["status"]["completionTime"]) - SIM_START).total_seconds()
    assert ended - deleted_at < 5 * 60, f"the run waited {ended - deleted_at:.0f}s after its namespace began terminating"
    assert run["status"]["phase"] == "Failed" and run["status"]["reason"] == NAMESPACE_TERMINATING, run["status"]
    assert f"namespace {TEAM} is being terminated" in run["status"]["message"], run["status"]["message"]
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["status"] == "True" and f"namespace {TEAM}" in failed["message"] and "no node blamed" in failed["message"], failed
    assert not job["status"].get("failedNodes")  # no node's fault
    # Its only category ends with its namespace's reason, and so the Certification (it ended WorkflowFailed, "One or
    # more certification categories failed", and only the Workflow named the namespace): `report` and `list` say why
    [category] = found["cert"]["status"]["categoryStatuses"]
    assert category["reason"] == NAMESPACE_TERMINATING and f"namespace {TEAM} is being terminated" in category["message"], category
    assert category["message"].endswith("; its result ConfigMaps were not written"), category  # they cannot be made there
    _ended_naming_the_namespace(found, deleted_at)
    ended = next(c for c in found["cert"]["status"]["conditions"] if c["type"] == "Failed")
    assert "communication/nccl-all-reduce" in ended["message"], ended
    report = build_report(found["cert"], [workflow], [job])  # without them
    assert report["result"] == "FAILED" and report["failedNodes"] == [], report
    assert found["trainjobs"] == []  # its workload deleted (a delete is admitted there): its nodes' GPUs freed
    # asked as the engine may ask it: a dry-run create of its own run, never a read of Namespaces
    assert not [r for r in requests if r.user_agent.startswith("nvcre-engine") and r.resource == "namespaces"]


def _ended_naming_the_namespace(found: dict[str, Any], deleted_at: float) -> None:
    """The Certification ended promptly (`deleted_at` on: when the namespace began terminating, or when the run it let
    go on ended), failed with its namespace's reason and naming it, no node blamed."""
    cert = found["cert"]
    assert cond.is_terminal(cert), cert["status"]
    failed = next(c for c in cert["status"]["conditions"] if c["type"] == "Failed")
    assert failed["status"] == "True" and failed["reason"] == NAMESPACE_TERMINATING, failed
    assert f"namespace {TEAM} is being terminated" in failed["message"] and "no node blamed" in failed["message"], failed
    ended = (parse_time(cert["status"]["completionTime"]) - SIM_START).total_seconds()
    assert ended - deleted_at < 5 * 60, f"the certification ended {ended - deleted_at:.0f}s after its namespace began terminating"
    assert cert["status"]["summary"]["failedNodes"] == 0, cert["status"]["summary"]
    for obj in [cert, *found["workflows"], *found["jobs"]]:
        assert RECONCILE_ERROR not in str(obj.get("status")), (obj["kind"], obj["status"])


def test_a_later_category_refused_its_workflow_ends_the_certification_naming_the_namespace(tmp_path: Path) -> None:
    def two_categories(cert: dict[str, Any]) -> None:
        second = {**cert["spec"]["categories"][0], "variant": "nccl-all-gather"}
        cert["spec"]["categories"].append(second)

    found, _, deleted_at, _ = asyncio.run(_run(tmp_path, two_categories))
    _ended_naming_the_namespace(found, deleted_at)
    assert len(found["workflows"]) == 1  # the second category's was refused
    first, second = found["cert"]["status"]["categoryStatuses"]
    assert first["status"] == "Failed" and second["status"] == "Failed", (first, second)
    assert second["reason"] == NAMESPACE_TERMINATING and f"namespace {TEAM} is being terminated" in second["message"], second
    assert "no node blamed" in second["message"] and not second.get("workflowRef"), second
    failed = next(c for c in found["cert"]["status"]["conditions"] if c["type"] == "Failed")
    assert "communication/nccl-all-gather" in failed["message"], failed


def test_a_repeat_iteration_refused_its_job_ends_the_workflow_naming_the_namespace(tmp_path: Path) -> None:
    def repeated(cert: dict[str, Any]) -> None:
        cert["spec"]["categories"][0]["options"]["repeatCount"] = 2

    # deleted once every pod of iteration 1 is made (the launcher too): that run goes on and passes, iteration 2's Job is refused
    found, _, _, _ = asyncio.run(_run(tmp_path, repeated, pods=5))
    [workflow], [job] = found["workflows"], found["jobs"]  # iteration 2's Job refused
    assert cond.phase(job) == "Succeeded", job["status"]  # iteration 1 ran on: its pods were all made
    _ended_naming_the_namespace(found, (parse_time(job["status"]["completionTime"]) - SIM_START).total_seconds())
    ended = next(c for c in workflow["status"]["conditions"] if c["type"] == "Failed")
    assert ended["reason"] == NAMESPACE_TERMINATING and f"namespace {TEAM} is being terminated" in ended["message"], ended
    assert "stopped in iteration 2" in ended["message"], ended
    [first, second] = workflow["status"]["orchestration"]["iterationHistory"]
    [group] = second["groups"]
    assert group["phase"] == "Failed" and group["reason"] == NAMESPACE_TERMINATING and "no node blamed" in group["message"], group
    [category] = found["cert"]["status"]["categoryStatuses"]
    assert category["reason"] == NAMESPACE_TERMINATING, category
    report = build_report(found["cert"], [workflow], [job])
    assert report["result"] == "FAILED" and report["failedNodes"] == [], report


def test_a_run_stopped_by_its_namespace_ends_the_workflow_without_another_iteration(tmp_path: Path) -> None:
    """Iteration 1's run stopped because its namespace is being terminated: the Workflow ends there, naming it (it
    went on to iteration 2 only to have that Job refused, and a run's WorkloadNotCreated hid why)."""
    def repeated(cert: dict[str, Any]) -> None:
        cert["spec"]["categories"][0]["options"]["repeatCount"] = 2

    found, _, deleted_at, _ = asyncio.run(_run(tmp_path, repeated))
    _ended_naming_the_namespace(found, deleted_at)
    [workflow], [job] = found["workflows"], found["jobs"]
    ended = next(c for c in workflow["status"]["conditions"] if c["type"] == "Failed")
    assert ended["reason"] == NAMESPACE_TERMINATING and "stopped in iteration 1" in ended["message"], ended
    [first] = workflow["status"]["orchestration"]["iterationHistory"]
    [group] = first["groups"]
    assert group["reason"] == NAMESPACE_TERMINATING and f"namespace {TEAM} is being terminated" in group["message"], group


def test_a_category_held_by_another_certification_ends_when_its_namespace_is_terminating(tmp_path: Path) -> None:
    """A category waiting for another certification's Workflow on its nodes tries no create, so it never met the
    namespace's 403 and waited for ever; the namespace is asked as the runner asks it (once an interval a namespace),
    and the category and its Certification end naming it while the other certification runs on."""
    from nvcre_tui.engine.runners.kubernetes import NAMESPACE_PROBE_SECONDS

    found, _, deleted_at, requests = asyncio.run(_run(tmp_path, held=True))
    _ended_naming_the_namespace(found, deleted_at)
    assert found["workflows"] == [] and found["jobs"] == []  # it never started
    [category] = found["cert"]["status"]["categoryStatuses"]
    assert category["status"] == "Failed" and category["reason"] == NAMESPACE_TERMINATING, category
    assert f"namespace {TEAM} is being terminated" in category["message"] and "no node blamed" in category["message"], category
    ended = (parse_time(found["cert"]["status"]["completionTime"]) - SIM_START).total_seconds()
    assert ended - deleted_at <= NAMESPACE_PROBE_SECONDS + 5, f"it ended {ended - deleted_at:.0f}s after its namespace began terminating"
    [holder] = found["holder"]
    assert not cond.is_terminal(holder), holder["status"]  # the other certification's run is none of this
    # asked by a dry-run create, never a read of Namespaces, and no more than once an interval
    engine = [r for r in requests if r.user_agent.startswith("nvcre-engine")]
    assert not [r for r in engine if r.resource == "namespaces"]
    probes = [r for r in engine if r.verb == "create" and r.query.get("dryRun") == "All"]
    assert 1 <= len(probes) <= (ended - deleted_at) // NAMESPACE_PROBE_SECONDS + 2, probes


def test_a_job_whose_run_its_namespace_refuses_ends_naming_the_namespace(tmp_path: Path) -> None:
    """The namespace began terminating between the Job's creation and its run's: the run is refused (403
    NamespaceTerminating), which the engine took for its own error and failed the Job ReconcileError, and the
    Certification WorkflowFailed. The Job ends with the namespace's reason, no node blamed, and so does the rest."""
    found, _, deleted_at, _ = asyncio.run(_run(tmp_path, at_job=True))
    _ended_naming_the_namespace(found, deleted_at)
    [workflow], [job] = found["workflows"], found["jobs"]
    assert found["runs"] == [], found["runs"]  # never made
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["status"] == "True" and failed["reason"] == NAMESPACE_TERMINATING, failed
    assert f"namespace {TEAM} is being terminated" in failed["message"] and "no node blamed" in failed["message"], failed
    ended = next(c for c in workflow["status"]["conditions"] if c["type"] == "Failed")
    assert ended["reason"] == NAMESPACE_TERMINATING, ended


def test_a_namespace_is_asked_once_an_interval_whatever_its_waiting_runs(tmp_path: Path) -> None:
    """Runs short of pods ask whether their namespace is being terminated (a dry-run create): once each every 30 s was a
    steady stream of writes while thousands of runs wait to start or a queue holds them; one namespace is asked once
    every NAMESPACE_PROBE_SECONDS, and its answer holds for each of its runs meanwhile."""
    from nvcre_tui.engine.runners.kubernetes import NAMESPACE_PROBE_SECONDS

    async def run() -> tuple[int, int, bool]:
        clock = ManualClock(SIM_START)
        async with installed(tmp_path, clock=clock) as (server, kubeconfig):
            admin = await store_on(kubeconfig, clock, "nvcre-test")
            engine_store = await store_on(kubeconfig, clock, "nvcre-engine")
            await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TEAM}})
            runner = KubernetesRunner(engine_store, clock, engine_store)
            runs = [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
                     "metadata": {"name": f"run-{index}", "namespace": TEAM, "uid": f"uid-{index}"}, "spec": {}} for index in range(5)]
            server.clear_requests()
            answers = [await runner._namespace_closing(r) for r in runs]
            first = len(server.requests_where(verb="create", resource="workloadruns"))
            clock.advance(NAMESPACE_PROBE_SECONDS)
            await admin.delete(NAMESPACE, TEAM)  # Terminating: no namespace controller empties it
            closing = [await runner._namespace_closing(r) for r in runs]
            await engine_store.close()
            await admin.close()
            return first, len(server.requests_where(verb="create", resource="workloadruns")), answers == [None] * 5 and all(closing)

    first, total, answered = asyncio.run(run())
    assert (first, total, answered) == (1, 2, True)


def test_a_workload_refused_by_its_namespace_fails_the_run_with_its_reason(tmp_path: Path) -> None:
    """The namespace began terminating between the run's creation and its workload's: the TrainJob or batch Job is
    refused (403 NamespaceTerminating), and the run fails with that reason, not WorkloadNotCreated, so its Job,
    Workflow and Certification end naming the namespace."""
    async def run() -> dict[str, Any]:
        clock = ManualClock(SIM_START)
        async with installed(tmp_path, clock=clock) as (server, kubeconfig):
            admin = await store_on(kubeconfig, clock, "nvcre-test")
            try:
                await register_gpu_nodes(admin, clock, load_scenario(CASES / CASE / "scenario.yaml"))
                await admin.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TEAM}})
                nodes = ["gpu-node-01", "gpu-node-02"]
                spec = {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "numNodes": 2, "gpusPerNode": 8,
                        "target": {"nodeNames": nodes}, "framework": {"torch": {"script": "train.py"}}}
                job = await admin.create(JOB, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
                                               "metadata": {"name": "cert-job", "namespace": TEAM,
                                                            "annotations": {"nvcre.nvidia.com/group-nodes": ",".join(nodes)}},
                                               "spec": {"workload": {"workloadRun": spec}}})
                owner = {"apiVersion": job["apiVersion"], "kind": "Job", "name": "cert-job", "uid": job["metadata"]["uid"], "controller": True}
                created = await admin.create(WORKLOADRUN, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "spec": spec,
                                                           "metadata": {"name": "cert-job-run", "namespace": TEAM, "ownerReferences": [owner]}})
                await admin.delete(NAMESPACE, TEAM)  # Terminating: no namespace controller empties it
                runner = KubernetesRunner(admin, clock, admin, trainer=False)
                try:
                    await runner.reconcile_run(created)
                finally:
                    await runner.close()
                return await admin.get(WORKLOADRUN, "cert-job-run", TEAM)
            finally:
                await admin.close()

    status = asyncio.run(run())["status"]
    assert status["phase"] == "Failed" and status["reason"] == NAMESPACE_TERMINATING, status
    assert f"namespace {TEAM} because it is being terminated" in status["message"], status


def test_a_workflow_that_passed_as_its_namespace_closed_counts_only_measured_nodes_passed(tmp_path: Path) -> None:
    """Every pod made before the namespace began terminating: the run goes on and passes, and only the Workflow's
    result ConfigMaps are refused. It ends Succeeded saying so, with no ConfigMap refs; the report, the node states and
    the history archive count its nodes passed from their measurements alone (no measurement is never a pass), not
    from the ConfigMaps it could not write."""
    from nvcre_tui.engine.api.bodies import group_nodes
    from nvcre_tui.engine.history.record import build_record
    from nvcre_tui.engine.report import nodestates
    from nvcre_tui.engine.report.readmodel import CertificationView

    found, _, _, _ = asyncio.run(_run(tmp_path, pods=5))
    [workflow], [job] = found["workflows"], found["jobs"]
    assert cond.phase(workflow) == "Succeeded", workflow["status"]
    done = next(c for c in workflow["status"]["conditions"] if c["type"] == "Succeeded")
    assert done["message"].endswith(f"; its result ConfigMaps were not written: namespace {TEAM} is being terminated"), done
    assert "succeededNodesRef" not in workflow["status"] and "failedNodesRef" not in workflow["status"], workflow["status"]
    [record] = workflow["status"]["orchestration"]["iterationHistory"]
    [group] = record["groups"]
    assert group["phase"] == "Succeeded" and group["measurements"]["busBandwidthGBps"] >= 300, group  # what passes them
    members = group_nodes(job)
    assert len(members) == 4, members
    report = build_report(found["cert"], [workflow], [job])
    assert report["result"] == "PASSED" and report["failedNodes"] == [], report
    [category] = report["categories"]
    assert [row["busBW"] for row in category["groupBandwidth"]] == [group["measurements"]["busBandwidthGBps"]], category
    view = CertificationView.of(found["cert"], [workflow], [job])
    states = nodestates.compute(view.categories, [{"metadata": {"name": name}} for name in members])
    assert {name: state for name, (state, _) in states.items()} == dict.fromkeys(members, "passed"), states
    archived = build_record(found["cert"], [workflow], {workflow["metadata"]["name"]: [job]}, [{"metadata": {"name": n}} for n in members])
    assert sorted(r.node for r in archived.results) == sorted(members), archived.results
    for result in archived.results:
        assert result.state == "passed" and result.bus_bw == group["measurements"]["busBandwidthGBps"], result
