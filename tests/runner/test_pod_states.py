"""Pod states -> the run's phase (runners/kubernetes/pods.py), one rule per test, and the output's blame
(engine/judging/blame.py)."""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.judging.blame import Blame, host_at_fault, node_at_fault
from nvcre_tui.engine.runners.kubernetes.pods import judge, not_ready_nodes, pod_hosts

Obj = dict[str, Any]
NODES = ["n1", "n2"]


def pod(index: int, phase: str = "Running", *, node: str | None = "auto", containers: list[Obj] | None = None,
        conditions: list[Obj] | None = None, reason: str | None = None, role: str = "node") -> Obj:
    status: Obj = {"phase": phase, "containerStatuses": containers if containers is not None else
                   [{"name": "node", "image": "img:1", "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}}}]}
    if conditions:
        status["conditions"] = conditions
    if reason:
        status["reason"] = reason
    return {"metadata": {"name": f"w-{index}", "labels": {"nvcre.nvidia.com/role": role, "batch.kubernetes.io/job-completion-index": str(index)}},
            "spec": {"nodeName": NODES[index] if node == "auto" else node, "hostname": f"w-{index}"}, "status": status}


def terminated(code: int, reason: str, message: str = "", finished: str = "2026-01-01T00:10:00Z") -> list[Obj]:
    return [{"name": "node", "image": "img:1", "state": {"terminated": {"exitCode": code, "reason": reason, "message": message,
                                                                          "finishedAt": finished}}}]


def verdict(pods: list[Obj], *, was_running: bool = True, not_ready: dict | None = None):
    return judge(pods, NODES, 2, launcher=False, was_running=was_running, not_ready=not_ready or {})


def test_running_once_every_pod_runs() -> None:
    found = verdict([pod(0), pod(1)], was_running=False)
    assert (found.phase, found.start_time) == ("Running", "2026-01-01T00:00:05Z")
    assert verdict([pod(0), pod(1, "Pending", node=None, containers=[])], was_running=False).phase == "Scheduling"


def test_unschedulable_stays_scheduling_naming_the_nodes_without_a_pod_and_quoting_the_scheduler() -> None:
    """The member whose Node could not take its pod is blocked; one whose Node could waits for GPUs other pods hold
    (another certification's run): it was blamed SchedulingBlocked, though nothing of it had failed."""
    blocked = pod(1, "Pending", node=None, containers=[], conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes are available: Insufficient nvidia.com/gpu"}])
    placed = pod(0)
    for each in (placed, blocked):
        each["spec"]["containers"] = [{"name": "node", "resources": {"requests": {"nvidia.com/gpu": "8"}}}]
    short = judge([placed, blocked], NODES, 2, launcher=False, was_running=False, not_ready={},
                  nodes={"n1": _gpu_node("n1"), "n2": _gpu_node("n2", gpus="4")})
    assert (short.phase, short.blocked, short.reason) == ("Scheduling", ("n2",), "Unschedulable")
    assert "Insufficient nvidia.com/gpu" in short.message and "n2: 4 nvidia.com/gpu allocatable, 8 requested" in short.message
    busy = judge([placed, blocked], NODES, 2, launcher=False, was_running=False, not_ready={},
                 nodes={"n1": _gpu_node("n1"), "n2": _gpu_node("n2")})
    assert (busy.phase, busy.blocked, busy.reason) == ("Scheduling", (), "Unschedulable")
    assert busy.message.endswith("(by their Node objects the members left could take their pods: GPUs may be held by other pods)")


def test_pods_not_started_say_where_and_why_and_convict_no_node() -> None:
    creating = [{"name": "node", "image": "img:1", "state": {"waiting": {"reason": "ContainerCreating", "message": "pulling img:1"}}}]
    found = verdict([pod(0), pod(1, "Pending", containers=creating)], was_running=False)
    assert (found.phase, found.blocked, found.reason) == ("Scheduling", (), "Starting")  # maybe a large image pulling
    assert found.message == "1/2 pod(s) running; not started on n2 (ContainerCreating: pulling img:1)"
    found = verdict([pod(0, "Pending", containers=creating), pod(1, "Pending", containers=creating)], was_running=False)
    assert found.message == "0/2 pod(s) running; not started on n1, n2 (ContainerCreating: pulling img:1)"
    assert found.reason == "Starting"
    half = verdict([pod(0, "Pending", containers=creating), pod(1, "Pending", node=None, containers=[])], was_running=False)
    assert half.reason == ""  # not every pod placed: still the scheduler's business, under the stall grace
    unplaced = verdict([pod(0, "Pending", node=None, containers=[]), pod(1, "Pending", node=None, containers=[])], was_running=False)
    assert (unplaced.blocked, unplaced.message) == ((), "2/2 pod(s) made, none placed (w-0, w-1), and no scheduler has said why")
    # An MPI run's node pods made and unplaced, its launcher not made yet (it comes once they are Ready): not "4/5 not
    # placed", which read as one placed (a walkthrough found it).
    mpi = judge([pod(0, "Pending", node=None, containers=[]), pod(1, "Pending", node=None, containers=[])], NODES, 3,
                launcher=True, was_running=False, not_ready={}, trainer=True)
    assert mpi.message == ("2/3 pod(s) made, none placed (w-0, w-1), and no scheduler has said why; the launcher is made once every node "
                           "pod is Ready"), mpi.message
    assert "Kubeflow Trainer and JobSet" in verdict([], was_running=False).message
    batch = judge([], NODES, 2, launcher=False, was_running=False, not_ready={}, trainer=False)
    assert batch.message == "no pods yet (0/2): waiting for the Job controller (kube-controller-manager) to create them"


def test_mpi_node_pods_placed_before_their_launcher_are_starting_not_stalled() -> None:
    """Under the Trainer, JobSet makes the MPI launcher only once every node pod is Ready (its dependsOn): node pods
    pulling a large image, or Running while sshd starts, are the pods' own start (timeoutPerJob), not a stalled
    placement (the 300 s grace failed such runs WorkloadNotStarted)."""
    creating = [{"name": "node", "image": "img:1", "state": {"waiting": {"reason": "ContainerCreating"}}}]
    pulling = judge([pod(0, "Pending", containers=creating), pod(1, "Pending", containers=creating)], NODES, 3,
                    launcher=True, was_running=False, not_ready={}, trainer=True)
    assert (pulling.phase, pulling.reason) == ("Scheduling", "Starting")
    assert pulling.message.endswith("the launcher is made once every node pod is Ready")
    ready = judge([pod(0), pod(1)], NODES, 3, launcher=True, was_running=False, not_ready={}, trainer=True)
    assert (ready.phase, ready.reason, ready.message) == ("Scheduling", "Starting", "2/3 pod(s) running; the launcher is made once every node pod is Ready")
    one = judge([pod(0)], NODES, 3, launcher=True, was_running=False, not_ready={}, trainer=True)
    assert one.reason == ""  # n2 has no pod yet: placement, under the stall grace
    launched = judge([pod(0), pod(1), pod(2, "Pending", node="n1", containers=creating, role="launcher")], NODES, 3,
                     launcher=True, was_running=False, not_ready={}, trainer=True)
    assert launched.reason == "Starting" and "launcher is made" not in launched.message


def test_an_image_pull_failure_fails_at_once_naming_the_image() -> None:
    waiting = [{"name": "node", "image": "nvcr.io/bad:tag", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off"}}}]
    found = verdict([pod(0, "Pending", containers=waiting), pod(1)], was_running=False)
    assert (found.phase, found.reason) == ("Failed", "ImagePullFailed") and "nvcr.io/bad:tag" in found.message
    assert found.failed_node is None  # a missing image convicts no node


def test_a_command_the_image_lacks_fails_the_run_without_blaming_a_node() -> None:
    """containerd's StartError (RunContainerError while the kubelet retries) for a command not in the image: the
    same image fails on every node. A start error of another kind (the NVIDIA hook on a broken node) stays a failure."""
    missing = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: '
               'unable to start container process: exec: "/usr/local/mpi/bin/mpirun": stat /usr/local/mpi/bin/mpirun: no such '
               'file or directory: unknown')
    ended = [{"name": "node", "image": "img:1", "state": {"terminated": {"exitCode": 128, "reason": "StartError", "message": missing}}}]
    found = verdict([pod(0, "Failed", containers=ended), pod(1)])
    assert (found.phase, found.reason, found.failed_node, found.exit_code) == ("Failed", "CommandNotFound", None, 128)
    assert "/usr/local/mpi/bin/mpirun" in found.message and "img:1" in found.message
    retrying = [{"name": "node", "image": "img:1", "state": {"waiting": {"reason": "RunContainerError", "message": missing}}}]
    assert verdict([pod(0, "Pending", containers=retrying), pod(1)], was_running=False).reason == "CommandNotFound"
    in_path = 'OCI runtime create failed: runc create failed: exec: "all_reduce_perf": executable file not found in $PATH: unknown'
    ended = [{"name": "node", "image": "img:1", "state": {"terminated": {"exitCode": 128, "reason": "StartError", "message": in_path}}}]
    assert verdict([pod(0, "Failed", containers=ended), pod(1)]).reason == "CommandNotFound"


# The NVIDIA container toolkit failing on one node says "no such file or directory" too: its GPU stack, not the image.
HOOK_FAILURES = [
    ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
     "container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: "
     "Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot "
     "open shared object file: no such file or directory: unknown"),
    "OCI runtime create failed: error running hook #0: fork/exec /usr/bin/nvidia-container-runtime-hook: no such file or directory: unknown",
    "OCI runtime create failed: nvidia-container-cli: mount error: stat failed: /dev/nvidia3: no such file or directory: unknown",
    "OCI runtime create failed: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
]


def test_the_gpu_stack_failing_on_a_node_convicts_that_node_not_the_image() -> None:
    for message in HOOK_FAILURES:
        ended = [{"name": "node", "image": "img:1", "state": {"terminated": {"exitCode": 128, "reason": "StartError", "message": message}}}]
        found = verdict([pod(0, "Failed", containers=ended), pod(1)])
        assert (found.reason, found.failed_node) == ("StartError", "n1"), message


def test_oom_is_attributed_to_its_node_over_the_victims_exit() -> None:
    found = verdict([pod(0, "Failed", containers=terminated(1, "Error", finished="2026-01-01T00:09:00Z")),
                     pod(1, "Failed", containers=terminated(137, "OOMKilled"))])
    assert (found.phase, found.reason, found.failed_node, found.exit_code) == ("Failed", "OOMKilled", "n2", 137)


def test_a_plain_exit_keeps_code_and_termination_message_and_convicts_nobody() -> None:
    found = verdict([pod(0, "Failed", containers=terminated(3, "Error", "NCCL error: unhandled system error")), pod(1)])
    assert (found.reason, found.exit_code, found.failed_node) == ("Error", 3, None)
    assert "unhandled system error" in found.message and found.evidence == ("NCCL error: unhandled system error",)


def test_evicted_and_node_lost() -> None:
    evicted = verdict([pod(0), pod(1, "Failed", containers=[], reason="Evicted")])
    assert (evicted.reason, evicted.failed_node) == ("Evicted", "n2")
    lost = verdict([pod(0), pod(1)], not_ready=not_ready_nodes([{"metadata": {"name": "n1"}, "status": {"conditions": [
        {"type": "Ready", "status": "Unknown"}]}}, {"metadata": {"name": "n2"}}], NODES))
    assert (lost.reason, lost.failed_node) == ("NodeLost", "n1")
    vanished = verdict([pod(0)])
    assert (vanished.phase, vanished.reason, vanished.failed_node) == ("Failed", "NodeLost", "n2")


def test_succeeded_when_the_result_pod_succeeded() -> None:
    found = verdict([pod(0, "Succeeded", containers=terminated(0, "Completed")), pod(1, "Succeeded", containers=terminated(0, "Completed"))])
    assert (found.phase, found.exit_code, found.completion_time) == ("Succeeded", 0, "2026-01-01T00:10:00Z")


def test_the_output_names_the_host_then_it_is_mapped_to_its_node() -> None:
    lines = ["2026-01-01T00:00:01.000000000Z #  Rank  0 Group  0 Pid   4101 on   w-0 device  0 [0000:18:00] NVIDIA H100",
             "2026-01-01T00:00:01.000000000Z #  Rank  8 Group  0 Pid   4102 on   w-1 device  0 [0000:18:00] NVIDIA H100",
             "2026-01-01T00:09:00.000000000Z w-1:4102:4109 [0] NCCL WARN NET/IB : Got completion from peer with status=12"]
    hosts = pod_hosts([pod(0), pod(1)], {})
    assert host_at_fault(lines) == Blame("w-1", "w-1 GPU 0: NCCL WARN NET/IB : Got completion from peer with status=12")
    assert node_at_fault(lines, NODES, hosts) == Blame("n2", "w-1 GPU 0: NCCL WARN NET/IB : Got completion from peer with status=12")
    assert node_at_fault(lines, NODES) is None  # an unknown host convicts nobody
    mpirun = lines[:2] + ["  Process name: [[4242,1],8]", "  Exit code:    1"]
    # the rank, through the nccl-tests rank table
    assert node_at_fault(mpirun, NODES, hosts) == Blame("n2", "mpirun: the first process to exit non-zero was rank 8 on w-1 (Process name: [[4242,1],8])")
    torchrun = ["[1,0]<stderr>:Root Cause (first observed failure):", "[1,0]<stderr>:  host      : n1", "  rank      : 0"]
    assert node_at_fault(torchrun, NODES) == Blame("n1", "torchrun's root cause (first observed failure) on host n1")
    tests = ["n2: Test NCCL failure common.cu:1153 'remote process exited or there was a network error'"]
    assert node_at_fault(tests, NODES) == Blame("n2", tests[0])


def test_a_warning_every_host_printed_singles_none_of_them_out() -> None:
    setting = [f"{host}:41{i}:41{i} [0] NCCL WARN Invalid value NVL for NCCL_P2P_LEVEL, using default" for i, host in enumerate(["n2", "n1"])]
    assert host_at_fault(setting) is None
    lost = "n1:4101:4109 [0] NCCL WARN NET/IB : Got completion from peer with status=12"
    found = host_at_fault([*setting, lost])  # the first warning only one host printed
    assert found is not None and found.name == "n1"


def test_no_pods_yet_says_who_makes_them() -> None:
    found = verdict([], was_running=False)
    assert found.phase == "Scheduling" and "waiting for the workload's controller" in found.message


def test_workers_killed_after_the_result_succeeded_do_not_fail_the_run() -> None:
    result = pod(0, "Succeeded", containers=terminated(0, "Completed", finished="2026-01-01T00:10:00Z"))
    killed = pod(1, "Failed", containers=terminated(143, "Error", finished="2026-01-01T00:10:02Z"))
    assert verdict([result, killed]).phase == "Succeeded"
    earlier = pod(1, "Failed", containers=terminated(1, "Error", finished="2026-01-01T00:09:00Z"))
    assert verdict([result, earlier]).phase == "Failed"


def _gpu_node(name: str, gpus: str = "8", taints: list[Obj] | None = None) -> Obj:
    return {"metadata": {"name": name}, "spec": {"taints": taints or []},
            "status": {"allocatable": {"nvidia.com/gpu": gpus, "cpu": "96", "memory": "1Ti"}}}


def _waiting_for_the_gang(index: int) -> Obj:
    """A pod a gang scheduler holds back: not placed, Unschedulable, asking for 8 GPUs."""
    found = pod(index, "Pending", node=None, containers=[], conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "gang of 2 cannot be placed"}])
    found["spec"]["containers"] = [{"name": "node", "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8", "cpu": "64"}}}]
    return found


def test_with_no_pod_placed_only_a_member_whose_node_could_not_take_its_pod_is_blocked() -> None:
    """A gang scheduler places all or none: one node whose device plugin reports no GPUs held back the whole group,
    and every member was blamed SchedulingBlocked. Only that node is; with none such, nobody is."""
    pods = [_waiting_for_the_gang(0), _waiting_for_the_gang(1)]
    nodes = {"n1": _gpu_node("n1"), "n2": _gpu_node("n2", gpus="0")}
    found = judge(pods, NODES, 2, launcher=False, was_running=False, not_ready={}, nodes=nodes)
    assert (found.phase, found.reason, found.blocked) == ("Scheduling", "Unschedulable", ("n2",))
    assert "n2: 0 nvidia.com/gpu allocatable, 8 requested" in found.message
    healthy = judge(pods, NODES, 2, launcher=False, was_running=False, not_ready={}, nodes={"n1": _gpu_node("n1"), "n2": _gpu_node("n2")})
    assert (healthy.phase, healthy.reason, healthy.blocked) == ("Scheduling", "Unschedulable", ())  # busy, or asked too much: nobody
    tainted = {"n1": _gpu_node("n1"), "n2": _gpu_node("n2", taints=[{"key": "maintenance", "value": "true", "effect": "NoSchedule"}])}
    found = judge(pods, NODES, 2, launcher=False, was_running=False, not_ready={}, nodes=tainted)
    assert found.blocked == ("n2",) and "taint maintenance=true:NoSchedule not tolerated" in found.message


def test_with_no_pod_placed_a_member_not_ready_is_blocked() -> None:
    """Every catalog entry tolerates all taints, so a NotReady node's taints say nothing: its Ready condition does."""
    pods = [_waiting_for_the_gang(0), _waiting_for_the_gang(1)]
    found = judge(pods, NODES, 2, launcher=False, was_running=False, not_ready={"n2": "Unknown"},
                  nodes={"n1": _gpu_node("n1"), "n2": _gpu_node("n2")})
    assert found.blocked == ("n2",) and "n2: not Ready (Unknown)" in found.message


def test_torchruns_root_cause_is_quoted_with_that_hosts_own_warning() -> None:
    """The root cause names the host; its NCCL warning says what failed there (a warning of another host does not)."""
    lines = ["n2:4102:4109 [3] NCCL WARN Cuda failure 214 'uncorrectable ECC error encountered'",
             "n1:4101:4108 [0] NCCL WARN NET/IB : Got completion from peer with status=12",
             "Root Cause (first observed failure):", "  host      : n2"]
    assert node_at_fault(lines, NODES) == Blame("n2", "n2 GPU 3: NCCL WARN Cuda failure 214 'uncorrectable ECC error encountered'")
    assert node_at_fault(lines[1:], NODES) == Blame("n2", "torchrun's root cause (first observed failure) on host n2")


def test_torchruns_root_cause_fqdn_is_mapped_through_the_pods_hostnames() -> None:
    """torchrun prints socket.getfqdn(): in a pod of a subdomain (JobSet, the batch Job) that is the pod's hostname with
    the Service's domain, which no node is named; its first label is the pod's hostname the runner maps."""
    fqdn = "job-abc-node-0-1.job-abc.default.svc.cluster.local"
    lines = ["Root Cause (first observed failure):", f"  host      : {fqdn}"]
    assert node_at_fault(lines, NODES, hosts={"job-abc-node-0-1": "n2"}) == Blame("n2", f"torchrun's root cause (first observed failure) on host {fqdn}")
    assert node_at_fault(lines, NODES, hosts={"job-abc-node-0-7": "n2"}) is None  # another pod's name convicts nobody


def _disrupted(index: int, reason: str, **kwargs: Any) -> Obj:
    """A pod Kubernetes is deleting for a reason not its node's health (its DisruptionTarget condition says which)."""
    deleted = pod(index, conditions=[{"type": "DisruptionTarget", "status": "True", "reason": reason,
                                      "message": "Taint manager: deleting due to NoExecute taint"}], **kwargs)
    deleted["metadata"]["deletionTimestamp"] = "2026-01-01T00:05:00Z"
    return deleted


def test_a_pod_a_noexecute_taint_deletes_mid_run_fails_the_run_blaming_no_node() -> None:
    """The catalog's pods tolerate no NoExecute taint: one put on a Ready node mid-run (a repair, a remediation) has the
    taint manager delete the run's pod there. That is no evidence against the node: it was blamed NodeLost, as if lost."""
    for reason in ("DeletionByTaintManager", "EvictionByEvictionAPI", "PreemptionByScheduler"):
        found = verdict([pod(0), _disrupted(1, reason)])
        assert (found.phase, found.failed_node) == ("Failed", None), (reason, found)
        assert found.reason == "PodDisrupted" and "w-1 on n2" in found.message and reason in found.message, found
    gone = verdict([pod(0)])  # a pod gone with no word of why: its node is still the one lost, as before
    assert (gone.reason, gone.failed_node) == ("NodeLost", "n2")
    lost = verdict([pod(0), _disrupted(1, "DeletionByTaintManager")], not_ready={"n2": "Unknown"})  # unreachable: node lost first
    assert (lost.reason, lost.failed_node) == ("NodeLost", "n2")


def _with_sidecar(found: Obj, state: Obj, last: Obj | None = None, restart: str | None = "Always") -> Obj:
    """`found` with an init container `daemon` (a native sidecar when restart is Always) in `state`."""
    found["spec"]["initContainers"] = [{"name": "daemon", **({"restartPolicy": restart} if restart else {})}]
    found["status"]["initContainerStatuses"] = [{"name": "daemon", "image": "rxdm:1", "state": state, **({"lastState": last} if last else {})}]
    return found


def test_a_native_sidecar_stopped_as_its_pod_completes_or_restarted_fails_nothing() -> None:
    """A native sidecar (GKE's TCPXO/TCPX receive daemon) is stopped when its pod's containers are done, SIGKILLed after
    the grace when its shell (PID 1) ignores SIGTERM: exit 137, which kubelet leaves out of the pod's phase. A worker
    done before the result pod is no failure of the run, nor a daemon restarted while the GPU container runs on."""
    killed = {"terminated": {"exitCode": 137, "reason": "Error", "finishedAt": "2026-01-01T00:09:30Z"}}
    plain = pod(1, "Succeeded", containers=terminated(0, "Completed", finished="2026-01-01T00:09:00Z"))
    done = _with_sidecar(pod(1, "Succeeded", containers=terminated(0, "Completed", finished="2026-01-01T00:09:00Z")), killed)
    found = verdict([pod(0), done])
    assert found.phase != "Failed" and found == verdict([pod(0), plain])  # as the same pods without the daemon
    restarted = _with_sidecar(pod(1), {"running": {"startedAt": "2026-01-01T00:00:09Z"}},
                              last={"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": "2026-01-01T00:00:08Z"}})
    assert verdict([pod(0), restarted]).phase == "Running"
    # an init container that must finish first (a clone) still fails the run when it fails
    clone = _with_sidecar(pod(1, "Failed", containers=[]), {"terminated": {"exitCode": 128, "reason": "Error",
                                                                           "finishedAt": "2026-01-01T00:00:08Z"}}, restart=None)
    assert verdict([pod(0), clone]).phase == "Failed"
