"""Faults only a cluster has, on a 4-node full-scale all-reduce (one group): an image that cannot be
pulled fails at once naming the image; OOMKilled, a node lost (NotReady) and a pod deleted mid-run are
blamed on their node alone, from pod and Node status (the output names nobody: it just stops)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock, parse_time
from nvcre_tui.engine.runners.kubernetes import POLL_SECONDS
from nvcre_tui.engine.runners.kubernetes.create import TRAINJOB
from nvcre_tui.engine.session import SIM_START
from tests.kubeapi import kubelet as kubelet_module
from tests.kubeapi.faults import Fault
from tests.kubeapi.kubelet import PodFault
from tests import envtest
from tests.kube.cluster import installed_in_thread
from tests.runner.harness import bare_server_report, emulator_report

CASE = "threshold-pass-two-metrics"  # passes on the simulator


def _job(objects: dict) -> dict:
    jobs = objects["Job"]
    assert len(jobs) == 1
    return jobs[0]


def test_an_image_that_cannot_be_pulled_fails_at_once_naming_the_image_and_blames_no_node(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, faults=(PodFault("image-pull", "gpu-node-02"),)))
    assert report["result"] == "FAILED"
    job = _job(objects)
    run = objects["WorkloadRun"][0]["status"]
    assert run["reason"] == "ImagePullFailed" and "cannot be pulled" in run["message"]
    assert report["failedNodes"] == [] and not job["status"].get("failedNodes")  # an image is no node's fault
    image = objects["WorkloadRun"][0]["spec"]["image"]
    assert image in run["message"]
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert waited < 120, f"an image pull failure must not wait for a timeout ({waited}s)"


def test_an_oom_killed_rank_is_blamed_on_its_node(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, faults=(PodFault("oom", "gpu-node-03", at=60),)))
    assert report["failedNodes"] == ["gpu-node-03"]
    failed = _job(objects)["status"]["failedNodes"]
    assert [f["name"] for f in failed] == ["gpu-node-03"] and "OOMKilled" in failed[0]["message"]
    assert objects["WorkloadRun"][0]["status"]["exitCode"] == 137


def test_a_node_lost_mid_run_is_blamed(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, faults=(PodFault("node-lost", "gpu-node-04", at=60),)))
    assert report["failedNodes"] == ["gpu-node-04"]


def test_a_pod_deleted_mid_run_is_blamed_on_its_node(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, faults=(PodFault("pod-deleted", "gpu-node-01", at=60),)))
    assert report["failedNodes"] == ["gpu-node-01"]
    failed = _job(objects)["status"]["failedNodes"]
    assert "gone mid-run" in failed[0]["message"]


def test_a_pod_a_noexecute_taint_evicts_mid_run_fails_the_group_blaming_no_node(tmp_path: Path) -> None:
    """The taint manager deletes the run's pod on a node given a NoExecute taint mid-run (a repair): the catalog's pods
    tolerate none. No evidence against that node: it was blamed NodeLost ('gone mid-run') as a node lost is."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, faults=(PodFault("taint-evicted", "gpu-node-01", at=60),)))
    job = _job(objects)
    assert report["result"] == "FAILED"
    assert report["failedNodes"] == [] and not job["status"].get("failedNodes"), job["status"].get("failedNodes")
    run = objects["WorkloadRun"][0]["status"]
    assert run["reason"] == "PodDisrupted" and "DeletionByTaintManager" in run["message"], run


def test_the_healthy_case_passes_on_the_emulator(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True))
    assert report["result"] == "PASSED"
    # Pods of a succeeded run stay for their logs.
    assert objects["pods"] and all(p["status"]["phase"] == "Succeeded" for p in objects["pods"])
    assert not objects["deleted"]
    assert "workloadFallback" not in report and "simulated" not in report  # TrainJobs on real pods: nothing to say in the header
    assert not any(c["type"] == "BatchFallback" for c in objects["Certification"][0]["status"]["conditions"])


def test_pods_are_watched_not_listed_per_look(tmp_path: Path) -> None:
    """The runner lists pods once (its cache's first list) and then follows one watch: pod state changes
    arrive as events that wake the run, however many times the run is looked at."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False))
    assert report["result"] == "PASSED"
    reads = objects["pod_reads"]
    assert reads.count("list") == 1, reads
    assert reads.count("watch") >= 1, reads
    assert "get" not in reads, reads
    assert objects["woken"] >= 4, "pod events must wake the run (Pending -> Running -> Succeeded of 4 pods)"



def test_the_report_header_says_the_batch_fallback_ran(tmp_path: Path) -> None:
    from xml.etree import ElementTree

    from nvcre_tui.engine.report.html import render_html
    from nvcre_tui.engine.report.junit import render_junit
    from nvcre_tui.engine.report.text import render_text

    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False))
    assert report["result"] == "PASSED"
    assert "Kubeflow Trainer" in report["workloadFallback"] and "batch/v1" in report["workloadFallback"]
    job = _job(objects)
    assert any(c["type"] == "BatchFallback" and c["status"] == "True" for c in job["status"]["conditions"])
    cert = objects["Certification"][0]
    assert any(c["type"] == "BatchFallback" and c["status"] == "True" for c in cert["status"]["conditions"])
    header = render_text(report).split("\n\n")[0]
    assert "Workloads:      batch/v1 fallback (no Kubeflow Trainer)" in header
    suite = ElementTree.fromstring(render_junit([report])).find("testsuite")
    assert suite is not None and suite[0].tag == "properties" and suite[0][0].get("name") == "workloadFallback"
    assert "batch/v1 fallback" in render_html(report)


def test_the_failure_log_names_the_real_pod_whose_log_it_is(tmp_path: Path) -> None:
    """failureLog.podName is the pod the tail was read from: the MPI launcher of the TrainJob (its log carries
    every rank's output), named as the cluster named it, and the run's logRef says the same."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, faults=(PodFault("oom", "gpu-node-03", at=60),)))
    assert report["failedNodes"] == ["gpu-node-03"]
    log = _job(objects)["status"]["failureLog"]
    trainjob = next(d.rsplit("/", 1)[1] for d in objects["deleted"] if d.startswith("trainer.kubeflow.org/trainjobs/"))
    assert log["podName"] == f"{trainjob}-launcher-0-0"
    assert objects["WorkloadRun"][0]["status"]["logRef"] == log["podName"]
    assert log["tail"], "the launcher's log up to the OOM is the tail"


def test_the_batch_fallback_failure_log_names_the_index_zero_pod(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, faults=(PodFault("node-lost", "gpu-node-04", at=60),)))
    assert report["failedNodes"] == ["gpu-node-04"]
    log = _job(objects)["status"]["failureLog"]
    job = next(d.rsplit("/", 1)[1] for d in objects["deleted"] if d.startswith("batch/jobs/"))
    assert log["podName"] == f"{job}-0"


def test_the_batch_fallback_on_a_server_too_old_for_it_fails_naming_what_it_needs(tmp_path: Path) -> None:
    # Kubernetes 1.30 drops Job successPolicy without a word: the MPI workers would never finish and the run would
    # hold its GPUs until timeoutPerJob. The run fails at once instead, saying why; nothing is created.
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, minor="30"))
    assert report["result"] == "FAILED"
    run = objects["WorkloadRun"][0]["status"]
    assert run["reason"] == "WorkloadNotCreated"
    assert report["failedNodes"] == []  # the server is too old: no node is blamed
    assert "batch fallback needs batch/v1 Job successPolicy, from Kubernetes 1.31 on; this server is 1.30" in run["message"]
    assert [c for c in objects["created"] if c.startswith(("batch/", "/services"))] == []
    (tmp_path / "new").mkdir()
    report, _ = asyncio.run(emulator_report(tmp_path / "new", CASE, trainer=False, minor="31+"))
    assert report["result"] == "PASSED"  # 31+ (as managed clusters spell it) is new enough


def test_a_workload_the_server_refuses_fails_its_run_naming_the_refusal_and_blames_no_node(tmp_path: Path) -> None:
    # A 422 on the TrainJob (e.g. a pod template field full validation refuses) is permanent: the run fails as
    # WorkloadNotCreated with the server's words, not a ReconcileError, and its nodes did nothing wrong.
    refusal = Fault(method="POST", path=r"/trainjobs$", status=422, reason="Invalid",
                    message='TrainJob.trainer.kubeflow.org "x" is invalid: spec.podTemplateOverrides[0]: Invalid value')
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, server_faults=(refusal,)))
    assert report["result"] == "FAILED" and report["failedNodes"] == []
    run = objects["WorkloadRun"][0]["status"]
    assert run["reason"] == "WorkloadNotCreated" and "spec.podTemplateOverrides[0]: Invalid value" in run["message"]
    assert "exitCode" not in run  # no pod was made, so no container exited: `exit 1` would read like a crash


@pytest.fixture(params=["emulator", "kube-apiserver"])
def bare_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """The kubeconfig of an API server with nothing beside it, keeping real time: the emulator (in a thread), or a
    real kube-apiserver + etcd when KUBEBUILDER_ASSETS names them (skipped, naming it, without)."""
    if request.param == "emulator":
        with installed_in_thread(tmp_path, bare=True) as (_, kubeconfig):
            yield kubeconfig
        return
    assets = envtest.assets_dir()
    if assets is None:
        pytest.skip(envtest.SKIP_REASON)
    with envtest.ControlPlane(assets, tmp_path) as plane:
        yield plane.write_kubeconfig(tmp_path / "kubeconfig")


def test_the_trainers_crds_without_jobsets_fail_each_run_at_once_naming_jobset(bare_server: Path) -> None:
    """The Trainer's CRDs served and JobSet's not (an API server with the Trainer's CRDs applied alone): the Trainer
    makes a JobSet of each TrainJob, so no pod is ever made. Each run used to wait the 300 s scheduling grace, category
    after category; it now fails at once, creating nothing, blaming nobody, and saying what to install."""
    report, objects = asyncio.run(bare_server_report(bare_server, CASE, jobset=False))
    assert report["result"] == "FAILED" and report["failedNodes"] == []
    assert objects["trainjobs"] == [] and objects["pods"] == []
    [job] = objects["Job"]
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "WorkloadNotCreated"
    assert "JobSet (jobset.x-k8s.io/v1alpha2) is not" in failed["message"] and "install JobSet" in failed["message"]
    assert parse_time(job["status"]["completionTime"]) == SIM_START  # at once (the engine's clock), not after the grace


def test_on_an_api_server_alone_runs_fail_as_not_started_and_blame_no_node(bare_server: Path) -> None:
    # kube-apiserver and etcd with nothing else (no Trainer, JobSet or Job controller, no scheduler, no kubelet): no
    # pod is ever made. The engine (as `setup init` grants it) sees no JobSet made of its TrainJob a minute on, and the
    # Job fails then saying why; the nodes did nothing wrong.
    report, objects = asyncio.run(bare_server_report(bare_server, CASE))
    assert report["result"] == "FAILED" and report["failedNodes"] == []
    assert objects["pods"] == []
    [job] = objects["Job"]
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "WorkloadNotStarted", failed
    assert "no Kubeflow Trainer controller has reconciled it in 1m00s (no JobSet made)" in failed["message"], failed["message"]
    assert "the Trainer controller does not run on this cluster" in failed["message"]
    assert failed["message"].endswith("; no node blamed"), failed["message"]
    [run] = objects["WorkloadRun"]
    # failed by its runner, not stopped by the engine at the grace; no pod ran: no 137 (an OOM kill's code)
    assert run["status"]["reason"] == "WorkloadNotStarted" and "exitCode" not in run["status"], run["status"]


def test_on_an_api_server_alone_the_trainjob_made_is_taken_back_with_its_run(tmp_path: Path) -> None:
    """What the run did on the server alone (the emulator's request log): it made a TrainJob, and deleted it."""
    _, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, controllers=False))
    assert "trainer.kubeflow.org/trainjobs" in objects["created"]
    assert [d for d in objects["deleted"] if d.startswith("trainer.kubeflow.org/trainjobs/")] and objects["trainjobs"] == []


# What the Trainer's TrainJob webhook answers (controller-runtime `Denied`: 403) while its cache lacks the runtime.
RUNTIME_NOT_CACHED = ('admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimeRef: Invalid '
                      'value: {"name":"x","apiGroup":"trainer.kubeflow.org","kind":"TrainingRuntime"}: TrainingRuntime.trainer.'
                      'kubeflow.org "x" not found: specified trainingRuntime must be created before the TrainJob is created')


def test_a_trainjob_refused_while_the_webhook_has_not_seen_its_runtime_is_created_again(tmp_path: Path) -> None:
    """The webhook reads TrainingRuntimes from its controller's cache: one created a moment before may be missing
    there, and the TrainJob is refused; a healthy cluster must not fail a category on that race."""
    refused = Fault(method="POST", path=r"/trainjobs$", status=403, reason="Forbidden", message=RUNTIME_NOT_CACHED, times=2)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, server_faults=(refused,)))
    assert refused.hits == 2 and report["result"] == "PASSED"


def test_a_trainjob_a_webhook_denies_fails_its_run_not_created_naming_the_webhook_and_blaming_nobody(tmp_path: Path) -> None:
    denied = ('admission webhook "validate.example.com" denied the request: TrainJobs need the label team')
    for index, message in enumerate((denied, RUNTIME_NOT_CACHED)):  # the runtime never seen: given up after a while
        (tmp_path / str(index)).mkdir()
        report, objects = asyncio.run(emulator_report(tmp_path / str(index), CASE, trainer=True, server_faults=(
            Fault(method="POST", path=r"/trainjobs$", status=403, reason="Forbidden", message=message),)))
        run = objects["WorkloadRun"][0]["status"]
        assert (report["result"], run["reason"]) == ("FAILED", "WorkloadNotCreated") and message in run["message"]
        assert report["failedNodes"] == [] and not _job(objects)["status"].get("failedNodes")


# What a real API server answers every TrainJob create while the Trainer's webhook configuration is applied and its
# server does not run (the Trainer's manifests on an API server alone, or its controller down): failurePolicy Fail.
WEBHOOK_UNREACHABLE = ('Internal error occurred: failed calling webhook "validate.trainjob.trainer.kubeflow.org": failed to call '
                       'webhook: Post "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:443/validate-trainer-'
                       'kubeflow-org-v1alpha1-trainjob?timeout=10s": no endpoints available for service '
                       '"kubeflow-trainer-controller-manager"')


def test_a_workload_never_created_for_a_transient_error_fails_its_job_at_timeout_per_job_and_frees_its_nodes(tmp_path: Path) -> None:
    """Every TrainJob create answered 500: retried with backoff as a transient error, the run stayed Pending with
    nothing said, its Job InProgress and its Workflow holding the group's nodes for ever (the certification never
    finished in three simulated days). The run now says why it waits, and its Job fails at its timeoutPerJob naming
    the nodes and the server's answer, blaming nobody."""
    unreachable = Fault(method="POST", path=r"/trainjobs$", status=500, reason="InternalError", message=WEBHOOK_UNREACHABLE)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, server_faults=(unreachable,)))
    job = _job(objects)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (report["result"], failed["reason"], report["failedNodes"]) == ("FAILED", "WorkloadNotStarted", [])
    assert failed["message"].startswith("not started after 1h00m (timeoutPerJob 1h) on gpu-node-01, gpu-node-02, gpu-node-03, "
                                        "gpu-node-04: its workload could not be created: TrainJob default/"), failed["message"]
    assert failed["message"].endswith(f"{WEBHOOK_UNREACHABLE}; no node blamed"), failed["message"]  # not the store's count of tries:
    # it differs every time, and each new reason writes the run and its Job
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert 3600 <= waited < 3700, waited
    [run] = objects["WorkloadRun"]
    assert (run["status"]["phase"], run["status"]["reason"]) == ("Failed", "Stopped")
    assert not job["status"].get("failedNodes") and unreachable.hits > 10


@dataclass
class TimedFault(Fault):
    """A fault that matches only while `clock` reads before `until` (or from `since` on)."""

    clock: ManualClock = field(default_factory=lambda: ManualClock(SIM_START))
    since: float = 0.0  # seconds after SIM_START
    until: float = float("inf")

    def matches(self, method: str, path: str, query: str, user_agent: str) -> bool:
        now = (self.clock.now() - SIM_START).total_seconds()
        return self.since <= now < self.until and super().matches(method, path, query, user_agent)


def test_a_workload_refused_invalid_at_its_last_try_fails_its_job_naming_the_answer(tmp_path: Path) -> None:
    """Every TrainJob create answered 500 until the run's timeoutPerJob; its Job then tries once more (job.py's
    _still_not_created), and the server answers that try 422 (a webhook that validates now, a CRD changed meanwhile):
    the run fails WorkloadNotCreated naming the answer, and its Job fails with it, no node blamed, its nodes freed."""
    clock = ManualClock(SIM_START)
    invalid = ('TrainJob.trainer.kubeflow.org "x" is invalid: spec.trainer.numNodes: Invalid value: 4: must be at most 2')
    bound = 3600.0  # the case's timeoutPerJob: the Job's last try comes once its run waited this long
    faults = (TimedFault(method="POST", path=r"/trainjobs$", status=500, reason="InternalError", message=WEBHOOK_UNREACHABLE,
                         clock=clock, until=bound),
              TimedFault(method="POST", path=r"/trainjobs$", status=422, reason="Invalid", message=invalid, clock=clock, since=bound))
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, server_faults=faults, clock=clock))
    job = _job(objects)
    [run] = objects["WorkloadRun"]
    assert faults[1].hits == 1, faults[1].hits  # the last try alone met it
    assert (run["status"]["phase"], run["status"]["reason"]) == ("Failed", "WorkloadNotCreated"), run["status"]
    assert invalid in run["status"]["message"], run["status"]
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (report["result"], failed["reason"], report["failedNodes"]) == ("FAILED", "WorkloadNotCreated", []), failed
    assert invalid in failed["message"] and failed["message"].endswith("; no node blamed"), failed["message"]
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert bound <= waited < bound + 100, waited
    assert objects["trainjobs"] == [] and not job["status"].get("failedNodes")


def _suspend(obj: dict) -> None:
    obj["spec"]["suspend"] = True  # what Kueue's webhook does to a TrainJob with a queue-name label


async def _kueue_admits(kubelet: kubelet_module.TestKubelet, moments: dict[str, Any], after: float = 600.0) -> bool:
    """What Kueue does once its queue has room, `after` seconds from the kubelet's first step (moments["start"]): sets
    spec.suspend false on the suspended TrainJobs; whether it admitted one at this step."""
    now = kubelet.clock.now()
    moments.setdefault("start", now)
    admitted = False
    if (now - moments["start"]).total_seconds() >= after:
        for job in (await kubelet.store.list(TRAINJOB)).items:
            if job["spec"].get("suspend"):
                job["spec"]["suspend"] = False
                await kubelet.store.update(TRAINJOB, job)
                admitted = True
    return admitted


def test_a_trainjob_a_queue_suspends_waits_as_queued_under_timeout_per_job_not_the_placement_grace(tmp_path: Path) -> None:
    """Kueue holds a TrainJob suspended until its queue has room (no pods meanwhile): that is no stalled placement
    (300 s), but a wait timeoutPerJob bounds; the Job says it is queued, and no node is blamed when it gives up."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, mutators={("trainer.kubeflow.org", "trainjobs"): _suspend}))
    job = _job(objects)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (report["result"], failed["reason"]) == ("FAILED", "WorkloadNotStarted") and report["failedNodes"] == []
    assert "(timeoutPerJob 1h)" in failed["message"] and "is suspended (spec.suspend)" in failed["message"]
    assert not any(pod["metadata"]["labels"].get("nvcre.nvidia.com/job") for pod in objects["pods"])
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert waited >= 3600, f"a queued run gave up after {waited}s, before its timeoutPerJob"


def test_a_trainjob_the_trainer_fails_before_making_pods_fails_its_run_with_the_trainers_reason(tmp_path: Path) -> None:
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, faults=(PodFault("trainjob-refused", ""),)))
    run = objects["WorkloadRun"][0]["status"]
    assert (report["result"], run["reason"]) == ("FAILED", "WorkloadNotCreated") and report["failedNodes"] == []
    assert "failed before making pods: TrainingRuntimeNotSupported: Specified runtime is not supported" in run["message"]
    waited = (parse_time(run["completionTime"]) - parse_time(objects["WorkloadRun"][0]["metadata"]["creationTimestamp"])).total_seconds()
    assert waited < 300, f"the Trainer's failure waited for the placement grace ({waited}s)"


def test_a_trainjob_admitted_after_the_placement_grace_runs_and_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kueue holds the TrainJob 10 minutes, then admits it, and the scheduler binds its pods 20 s after JobSet made them:
    the placement grace counts from the admission (it counted from the creation: WorkloadNotStarted at once)."""
    played = kubelet_module.TestKubelet.step, kubelet_module.TestKubelet._advance
    moments: dict[str, Any] = {}

    async def step(self: kubelet_module.TestKubelet) -> float:
        if await _kueue_admits(self, moments):
            moments["bound"] = self.clock.now() + timedelta(seconds=20)
        return min(await played[0](self), 30.0)

    async def advance(self: kubelet_module.TestKubelet, run: Any, pod: Any, node: str, role: str, elapsed: float, nodes: int) -> float | None:
        now = self.clock.now()
        if "bound" in moments and now < moments["bound"]:  # made, not yet placed
            return (moments["bound"] - now).total_seconds()
        return await played[1](self, run, pod, node, role, elapsed, nodes)

    monkeypatch.setattr(kubelet_module.TestKubelet, "step", step)
    monkeypatch.setattr(kubelet_module.TestKubelet, "_advance", advance)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, mutators={("trainer.kubeflow.org", "trainjobs"): _suspend}))
    assert "bound" in moments and report["result"] == "PASSED", _job(objects)["status"]["conditions"]


def test_on_an_api_server_alone_a_batch_job_no_job_controller_syncs_fails_within_a_minute_saying_so(tmp_path: Path) -> None:
    """The batch fallback on an API server alone: the Job controller (kube-controller-manager) writes a Job's
    status.startTime as it first syncs it, within seconds; nothing ever did here, and no pod was made, yet the run
    waited the whole 300 s scheduling grace, category after category, saying only "waiting for the Job controller". It
    fails once the Job has gone a minute unsynced, naming why, blaming no node."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, controllers=False))
    assert report["result"] == "FAILED" and report["failedNodes"] == []
    job = _job(objects)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "WorkloadNotStarted", failed
    assert "no Job controller has synced it" in failed["message"] and failed["message"].endswith("; no node blamed"), failed["message"]
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert waited <= 90, f"no Job controller: failed after {waited}s, the whole scheduling grace"


def test_a_batch_job_no_job_controller_synced_yet_is_bounded_by_that_minute_not_the_scheduling_grace() -> None:
    """While no Job controller has synced its batch Job the run waits a minute, not 300 s: the Job's message said "it
    fails after 5m00s" (and run --wait "in 4m30s") of a run the runner fails at one minute."""
    from nvcre_tui.engine.api.vocabulary import JOB_NOT_SYNCED, NO_JOB_CONTROLLER_SECONDS
    from nvcre_tui.engine.controllers.job import pending_bound, pending_message

    assert pending_bound({"schedulingStallGraceSeconds": 300}, {"phase": "Scheduling", "reason": JOB_NOT_SYNCED}) == (NO_JOB_CONTROLLER_SECONDS, False)
    assert pending_bound({"schedulingStallGraceSeconds": 300}, {"phase": "Scheduling"}) == (300.0, False)
    assert pending_message("no pods yet", NO_JOB_CONTROLLER_SECONDS).endswith("it fails after 1m00s of this")


def test_on_an_api_server_alone_a_trainjob_no_trainer_controller_reconciles_fails_within_a_minute_saying_so(tmp_path: Path) -> None:
    """The Trainer's and JobSet's CRDs served, no controller of theirs running: the Trainer makes a TrainJob's JobSet
    on its first reconcile, within seconds; none was ever made here, yet the run waited the whole 300 s scheduling
    grace, category after category, "waiting for Kubeflow Trainer's controller and JobSet's". It fails once the
    TrainJob has gone a minute with no JobSet and no status, naming why, blaming no node; meanwhile its run says so,
    and the Job's wait counts down that minute."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, controllers=False))
    assert report["result"] == "FAILED" and report["failedNodes"] == []
    assert "trainer.kubeflow.org/trainjobs" in objects["created"] and objects["denied"] == []
    job = _job(objects)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "WorkloadNotStarted", failed
    assert "TrainJob " in failed["message"] and "no Kubeflow Trainer controller has reconciled it in 1m" in failed["message"], failed["message"]
    assert "(no JobSet made)" in failed["message"] and failed["message"].endswith("; no node blamed"), failed["message"]
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert waited <= 90, f"no Trainer controller: failed after {waited}s, the whole scheduling grace"
    from nvcre_tui.engine.api.vocabulary import NO_JOB_CONTROLLER_SECONDS, TRAINJOB_NOT_RECONCILED
    from nvcre_tui.engine.controllers.job import pending_bound

    assert pending_bound({"schedulingStallGraceSeconds": 300}, {"phase": "Scheduling", "reason": TRAINJOB_NOT_RECONCILED}) == (NO_JOB_CONTROLLER_SECONDS, False)
def test_a_batch_job_a_queue_admits_after_a_minute_is_given_its_job_controllers_minute_from_the_admission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kueue holds the batch Job 10 minutes, then admits it, and the Job controller syncs it (status.startTime, its pods)
    70 s later (late enough that the runner's resync looks in between: on a real cluster any look of the runner in the
    moment between the admission and the sync). The runner read the minute without a Job controller from the run's
    pendingSince as it stood while queued (its creation): at its first look after the admission, no startTime yet and
    10 minutes 'unsynced', it failed the run WorkloadNotStarted 'no Job controller has synced it in 10m' on a cluster
    that runs one. The minute counts from the admission, as the placement grace does."""
    from nvcre_tui.engine.runners.kubernetes.create import BATCH_JOB

    played = kubelet_module.TestKubelet.step, kubelet_module.TestKubelet._sync, kubelet_module.TestKubelet._load
    moments: dict[str, Any] = {}

    async def step(self: kubelet_module.TestKubelet) -> float:
        now = self.clock.now()
        moments.setdefault("start", now)
        if (now - moments["start"]).total_seconds() >= 600:  # Kueue admits: spec.suspend false
            for job in (await self.store.list(BATCH_JOB)).items:
                if job["spec"].get("suspend"):
                    job["spec"]["suspend"] = False
                    await self.store.update(BATCH_JOB, job)
                    moments["synced"] = now + timedelta(seconds=70)
        return min(await played[0](self), 1.0)

    async def sync(self: kubelet_module.TestKubelet, job: Any) -> None:
        if "synced" in moments and self.clock.now() >= moments["synced"]:  # the Job controller, 70 s after the admission
            await played[1](self, job)

    async def load(self: kubelet_module.TestKubelet, kind: Any, workload: Any) -> Any:
        if kind is BATCH_JOB and not (workload.get("status") or {}).get("startTime"):
            return None  # its pods come with the Job controller's sync
        return await played[2](self, kind, workload)

    monkeypatch.setattr(kubelet_module.TestKubelet, "step", step)
    monkeypatch.setattr(kubelet_module.TestKubelet, "_sync", sync)
    monkeypatch.setattr(kubelet_module.TestKubelet, "_load", load)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=False, mutators={("batch", "jobs"): _suspend}))
    assert "synced" in moments and report["result"] == "PASSED", _job(objects)["status"]["conditions"]


def test_a_trainjobs_jobset_no_jobset_controller_reconciles_fails_within_a_minute_naming_the_jobset(tmp_path: Path) -> None:
    """The Trainer runs and makes the TrainJob's JobSet; JobSet's CRD is installed and its controller is not: the JobSet
    never gets a status, no Job of it is made, no pod. The run waited the whole 300 s scheduling grace, category after
    category. It fails once that JobSet has gone a minute unreconciled, naming the JobSet and the missing controller,
    blaming no node, with the RBAC `setup init` grants; meanwhile the Job's wait counts down that minute."""
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, jobset_controller=False))
    assert report["result"] == "FAILED" and report["failedNodes"] == []
    assert not any(pod["metadata"]["labels"].get("nvcre.nvidia.com/job") for pod in objects["pods"])
    assert objects["denied"] == []
    job = _job(objects)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "WorkloadNotStarted", failed
    [name] = [d.rsplit("/", 1)[1] for d in objects["deleted"] if d.startswith("trainer.kubeflow.org/trainjobs/")]  # freed
    assert f"JobSet {name} (of TrainJob {name}) made no Jobs and no JobSet controller has reconciled it in 1m" in failed["message"], failed["message"]
    assert "JobSet's controller does not run on this cluster" in failed["message"], failed["message"]
    assert failed["message"].endswith("; no node blamed"), failed["message"]
    waited = (parse_time(job["status"]["completionTime"]) - parse_time(job["metadata"]["creationTimestamp"])).total_seconds()
    assert waited <= 90, f"no JobSet controller: failed after {waited}s, the whole scheduling grace"
    from nvcre_tui.engine.api.vocabulary import JOBSET_NOT_RECONCILED, NO_JOB_CONTROLLER_SECONDS
    from nvcre_tui.engine.controllers.job import pending_bound

    assert pending_bound({"schedulingStallGraceSeconds": 300}, {"phase": "Scheduling", "reason": JOBSET_NOT_RECONCILED}) == (NO_JOB_CONTROLLER_SECONDS, False)


def test_a_trainjob_a_queue_admits_late_gives_its_jobset_controller_the_minute_from_the_admission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kueue holds the TrainJob 10 minutes, then admits it; the Trainer makes its JobSet and no JobSet controller runs.
    The minute counts from the admission (not the creation, which would fail it at once), and it fails then."""
    played = kubelet_module.TestKubelet.step
    moments: dict[str, Any] = {}

    async def step(self: kubelet_module.TestKubelet) -> float:
        if await _kueue_admits(self, moments):
            moments["admitted"] = self.clock.now()
        return min(await played(self), 30.0)

    monkeypatch.setattr(kubelet_module.TestKubelet, "step", step)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, jobset_controller=False,
                                                  mutators={("trainer.kubeflow.org", "trainjobs"): _suspend}))
    job = _job(objects)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (report["result"], failed["reason"], report["failedNodes"]) == ("FAILED", "WorkloadNotStarted", []), failed
    assert "no JobSet controller has reconciled it in 1m" in failed["message"], failed["message"]
    # from the look that finds it admitted (the runner's resync of a queued run: at most POLL_SECONDS later)
    after = (parse_time(job["status"]["completionTime"]) - moments["admitted"]).total_seconds()
    assert 60 <= after <= 60 + POLL_SECONDS + 30, f"failed {after}s after its admission"


def test_a_trainjobs_jobset_made_late_by_a_busy_trainer_gets_its_jobset_controller_a_whole_minute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A healthy but busy cluster: the Trainer makes the TrainJob's JobSet 50 s after the TrainJob, and JobSet's
    controller takes it up 20 s after that. JobSet's minute counts from when the JobSet is seen made, not from the
    TrainJob's creation (which left JobSet's controller 10 s and failed the run: no JobSet controller), and it passes."""
    original = kubelet_module.TestKubelet._jobset_of
    played = kubelet_module.TestKubelet.step
    made: dict[str, Any] = {}

    async def jobset_of(self: kubelet_module.TestKubelet, trainjob: dict[str, Any]) -> None:
        meta, now = trainjob["metadata"], self.clock.now()
        if (now - parse_time(meta["creationTimestamp"])).total_seconds() < 50:  # the Trainer behind: no JobSet yet
            self.jobset_controller = False
            return
        since = made.setdefault(meta["uid"], now)
        self.jobset_controller = (now - since).total_seconds() >= 20  # JobSet's controller behind
        if self.jobset_controller:
            self._jobsets.discard(meta["uid"])  # its first reconcile writes the JobSet's status now
        await original(self, trainjob)

    async def step(self: kubelet_module.TestKubelet) -> float:
        return min(await played(self), 5.0)

    monkeypatch.setattr(kubelet_module.TestKubelet, "_jobset_of", jobset_of)
    monkeypatch.setattr(kubelet_module.TestKubelet, "step", step)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True))
    assert made, "the Trainer made no JobSet"
    assert report["result"] == "PASSED", _job(objects)["status"]["conditions"]


def test_jobset_controllers_minute_begins_when_the_jobset_was_made_within_the_runs_wait_and_now() -> None:
    """JobSet's controller's minute begins when the Trainer made the JobSet, but never before the run began to wait
    (a fast Trainer's JobSet made as the run's status was written: no fresh minute past the run's own) nor after now (an
    API server whose clock runs ahead would put the run's pendingSince in the future); a run just admitted by its
    queue starts it now (None)."""
    from nvcre_tui.engine.runners.kubernetes import jobset_wait_began

    now = parse_time("2026-01-01T00:02:00Z")
    jobset = {"metadata": {"creationTimestamp": "2026-01-01T00:00:50Z"}}
    assert jobset_wait_began({"pendingSince": "2026-01-01T00:00:00Z"}, jobset, now) == "2026-01-01T00:00:50Z"
    assert jobset_wait_began({"pendingSince": "2026-01-01T00:01:00Z"}, jobset, now) == "2026-01-01T00:01:00Z"
    ahead = {"metadata": {"creationTimestamp": "2026-01-01T00:07:00Z"}}
    assert jobset_wait_began({"pendingSince": "2026-01-01T00:00:00Z"}, ahead, now) == "2026-01-01T00:02:00Z"
    assert jobset_wait_began({"pendingSince": "2026-01-01T00:00:00Z", "reason": "Queued"}, jobset, now) is None


def test_a_result_log_the_server_fails_then_cuts_mid_read_is_read_again_and_the_run_passes(tmp_path: Path) -> None:
    """The result pod's log answered 503 once, then cut mid-log once (a proxy timing out, a kube-apiserver restarting):
    the passing run was judged from the empty log ("no nccl-tests result rows found") or, cut, failed ReconcileError
    with aiohttp's own error. The engine now reads it again with backoff, and the verdict is the healthy one."""
    faults = (Fault(method="GET", path=r"/pods/[^/]+/log$", status=503, times=1),
              Fault(method="GET", path=r"/pods/[^/]+/log$", cut_body_after=300, times=1))
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, server_faults=faults))
    assert (report["result"], report["failedNodes"]) == ("PASSED", []), _job(objects)["status"]["conditions"]
    assert [fault.hits for fault in faults] == [1, 1]


def test_a_workload_create_whose_credentials_are_refused_once_is_created_again_and_the_run_passes(tmp_path: Path) -> None:
    """The TrainJob's create answered 401 once (an authentication webhook timing out, a restarted apiserver's token
    authenticator not yet synced): Unauthorized is a Forbidden, and the run failed WorkloadNotCreated (its Job failed,
    the certification FAILED) for credentials the server took again a moment later. It is created again."""
    refused = Fault(method="POST", path=r"/trainjobs$", status=401, times=1)
    report, objects = asyncio.run(emulator_report(tmp_path, CASE, trainer=True, server_faults=(refused,)))
    assert (report["result"], report["failedNodes"]) == ("PASSED", []), _job(objects)["status"]["conditions"]
    assert refused.hits == 1
