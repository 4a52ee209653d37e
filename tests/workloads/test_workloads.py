"""What the workload builders promise, property by property: pinning, ownership, gang scheduling,
ComputeDomain variants, the MPI launcher, the batch fallback's rendezvous; and the CLI."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.api.base import GangScheduler, TaintSelector, TargetSpec
from nvcre_tui.engine.api.fit import tolerates
from nvcre_tui.engine.api.resources import EnvVar, WorkloadRunSpec
from nvcre_tui.engine.planning.render import workflow_name
from nvcre_tui.engine.workloads import Placement, WorkloadError, owner_reference, placement_for, workload_manifests
from nvcre_tui.engine.workloads.placement import child_name
from tests.workloads.matrix import placement, run_spec
from tests.workloads.schema import pod_specs

KAI = GangScheduler(scheduler_name="kai-scheduler", queue="team-a")
ALL_REDUCE, TRAINING, LOOPBACK = "communication/nccl-all-reduce", "training/nemotron5-8b", "communication/nccl-loopback"


def by_kind(objects: list[dict]) -> dict[str, dict]:
    return {obj["kind"]: obj for obj in objects}


def replicated(runtime: dict) -> dict[str, dict]:
    return {job["name"]: job for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def test_pods_are_pinned_to_the_group_hostnames_one_gpu_pod_per_node() -> None:
    where = Placement(job="j", namespace="ns", nodes=("b", "a"), platform="onprem", architecture="h100", hostnames={"a": "host-a", "b": "host-b"})
    for trainer in (True, False):
        for obj in workload_manifests(run_spec(ALL_REDUCE, "onprem", "h100"), where, trainer=trainer):
            for pod in pod_specs(obj):
                term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
                assert term["matchExpressions"] == [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["host-a", "host-b"]}]
                gpus = "nvidia.com/gpu" in pod["containers"][0]["resources"]["limits"]
                assert ("podAntiAffinity" in pod["affinity"]) == gpus  # the MPI launcher may share a node


def test_every_object_is_owned_by_the_nvcre_job_and_pods_carry_its_label() -> None:
    job = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {"name": "j", "uid": "u-1"}}
    where = Placement(job="j", namespace="ns", nodes=("a", "b"), platform="aws", architecture="gb200", owner=owner_reference(job))
    for trainer in (True, False):
        for obj in workload_manifests(run_spec(TRAINING, "aws", "gb200"), where, trainer=trainer):
            assert obj["metadata"]["ownerReferences"] == [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "name": "j", "uid": "u-1",
                                                           "controller": True, "blockOwnerDeletion": True}]
            assert obj["metadata"]["namespace"] == "ns"
            for pod_template in _pod_templates(obj):
                assert pod_template["metadata"]["labels"]["nvcre.nvidia.com/job"] == "j"


def _pod_templates(obj: dict) -> list[dict]:
    if obj["kind"] == "TrainingRuntime":
        return [job["template"]["spec"]["template"] for job in obj["spec"]["template"]["spec"]["replicatedJobs"]]
    return [obj["spec"]["template"]] if obj["kind"] == "Job" else []


def test_offline_placement_has_no_owner_references() -> None:
    for obj in workload_manifests(run_spec(ALL_REDUCE, "aws", "h100"), placement(ALL_REDUCE, "aws", "h100")):
        assert "ownerReferences" not in obj["metadata"]


def test_gang_scheduler_name_on_every_pod_and_queue_label_in_three_places() -> None:
    for entry in (ALL_REDUCE, TRAINING):
        objects = by_kind(workload_manifests(run_spec(entry, "gcp", "h100"), placement(entry, "gcp", "h100", gang=KAI)))
        assert objects["TrainJob"]["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
        for job in replicated(objects["TrainingRuntime"]).values():
            assert job["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
            pod = job["template"]["spec"]["template"]
            assert pod["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
            assert pod["spec"]["schedulerName"] == "kai-scheduler"
        batch = by_kind(workload_manifests(run_spec(entry, "gcp", "h100"), placement(entry, "gcp", "h100", gang=KAI), trainer=False))
        assert batch["Job"]["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
        assert batch["Job"]["spec"]["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
        assert batch["Job"]["spec"]["template"]["spec"]["schedulerName"] == "kai-scheduler"


def test_without_a_gang_scheduler_no_scheduler_name_and_no_queue_label() -> None:
    text = json.dumps(workload_manifests(run_spec(ALL_REDUCE, "gcp", "h100"), placement(ALL_REDUCE, "gcp", "h100")))
    assert "schedulerName" not in text and "kai.scheduler/queue" not in text


def test_mpi_launcher_waits_on_dependson_alone_and_on_the_hostfile_under_a_gang_scheduler() -> None:
    plain = replicated(by_kind(workload_manifests(run_spec(ALL_REDUCE, "aws", "h100"), placement(ALL_REDUCE, "aws", "h100")))["TrainingRuntime"])
    assert plain["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    init = plain["launcher"]["template"]["spec"]["template"]["spec"]["initContainers"][0]
    assert init["name"] == "fix-ssh-permissions" and "/etc/mpi/hostfile" not in init["command"][-1]

    gang = replicated(by_kind(workload_manifests(run_spec(ALL_REDUCE, "aws", "h100"), placement(ALL_REDUCE, "aws", "h100", gang=KAI)))["TrainingRuntime"])
    assert "dependsOn" not in gang["launcher"]
    init = gang["launcher"]["template"]["spec"]["template"]["spec"]["initContainers"][0]
    assert "/etc/mpi/hostfile" in init["command"][-1] and "240" in init["command"][-1]
    assert {"name": "mpi-hostfile", "mountPath": "/etc/mpi", "readOnly": True} in init["volumeMounts"]


def test_mpi_runtime_shape() -> None:
    objects = by_kind(workload_manifests(run_spec(ALL_REDUCE, "onprem", "h100"), placement(ALL_REDUCE, "onprem", "h100")))
    runtime, train_job = objects["TrainingRuntime"], objects["TrainJob"]
    assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "mpi"
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 2, "mpi": {"mpiImplementation": "OpenMPI", "numProcPerNode": 8, "sshAuthMountPath": "/tmp/mpi-ssh-raw"}}
    jobs = replicated(runtime)
    assert jobs["launcher"]["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer"
    worker = jobs["node"]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert worker["readinessProbe"]["tcpSocket"] == {"port": 22} and "sshd -De" in worker["command"][-1]
    assert worker["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    command = train_job["spec"]["trainer"]["command"]
    assert command[:2] == ["/usr/local/mpi/bin/mpirun", "-N"] and command[command.index("--hostfile") + 1] == "/etc/mpi/hostfile"
    exported = [command[at + 1] for at, word in enumerate(command) if word == "-x"]
    assert exported[:3] == ["PATH", "LD_LIBRARY_PATH", "NCCL_DEBUG"]  # sshd gives ranks neither the image's ENV nor the launcher's
    assert "env" not in train_job["spec"]["trainer"]  # the Trainer refuses OMPI_MCA_* names there; env is on the containers


def test_torch_runs_torchrun_with_a_process_per_gpu() -> None:
    spec = WorkloadRunSpec.model_validate({"image": "img", "numNodes": 2, "gpusPerNode": 4, "framework": {"torch": {"module": "train", "args": ["--x"]}}})
    objects = by_kind(workload_manifests(spec, placement(TRAINING, "onprem", "h100")))
    assert objects["TrainJob"]["spec"]["trainer"] == {"image": "img", "numNodes": 2, "command": ["torchrun", "-m", "train", "--x"], "numProcPerNode": 4}
    assert objects["TrainingRuntime"]["spec"]["mlPolicy"] == {"numNodes": 2, "torch": {}}
    # A shell script is its own launcher (the catalog's train.sh calls torchrun itself).
    assert by_kind(workload_manifests(run_spec(TRAINING, "aws", "h100"), placement(TRAINING, "aws", "h100")))["TrainJob"]["spec"]["trainer"]["command"] == ["bash", "/config/train.sh"]


def test_shm_is_an_in_memory_empty_dir_mounted_at_dev_shm() -> None:
    for entry in (ALL_REDUCE, TRAINING, LOOPBACK):
        pod = pod_specs(by_kind(workload_manifests(run_spec(entry, "azure", "h100"), placement(entry, "azure", "h100")))["TrainingRuntime"])[0]
        assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
        assert {"name": "dshm", "mountPath": "/dev/shm"} in pod["containers"][0]["volumeMounts"]


@pytest.mark.parametrize(("entry", "claim"), [(ALL_REDUCE, "compute-domain-channel"), (TRAINING, "compute-domain")])
@pytest.mark.parametrize("arch", ["gb200", "gb300"])
def test_compute_domain_claims_on_nvl72_systems(entry: str, claim: str, arch: str) -> None:
    objects = by_kind(workload_manifests(run_spec(entry, "onprem", arch), placement(entry, "onprem", arch)))
    domain = objects["ComputeDomain"]
    template = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    assert domain["spec"]["numNodes"] == 2 and template.endswith("-channel")
    worker = pod_specs(objects["TrainingRuntime"])[0]
    assert worker["resourceClaims"] == [{"name": claim, "resourceClaimTemplateName": template}]
    assert worker["containers"][0]["resources"]["claims"] == [{"name": claim}]


def test_no_compute_domain_off_nvl72() -> None:
    assert "ComputeDomain" not in by_kind(workload_manifests(run_spec(ALL_REDUCE, "onprem", "b200"), placement(ALL_REDUCE, "onprem", "b200")))


def test_rdma_and_efa_requests_and_the_nic_opt_out() -> None:
    def limits(platform: str, arch: str) -> dict:
        return pod_specs(by_kind(workload_manifests(run_spec(ALL_REDUCE, platform, arch), placement(ALL_REDUCE, platform, arch)))["TrainingRuntime"])[0]["containers"][0]["resources"]["limits"]

    assert limits("aws", "h100") == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}
    assert limits("azure", "h100") == {"nvidia.com/gpu": "8", "nvidia.com/mlnxnics": "8"}
    assert limits("oci", "gb200") == {"nvidia.com/gpu": "4"}  # mlnxPerNode 0 on OCI GB200: no NIC request
    assert limits("aws", "gb200")["hugepages-2Mi"] == "10256Mi" and limits("aws", "gb200")["memory"] == "800Gi"


def test_tolerations_from_taint_selectors() -> None:
    taints = (TaintSelector(key="dedicated", value="gpu", effect="NoSchedule"), TaintSelector(key="maintenance"))
    pod = pod_specs(by_kind(workload_manifests(run_spec(TRAINING, "aws", "h100"), placement(TRAINING, "aws", "h100", taint_selectors=taints)))["TrainingRuntime"])[0]
    assert pod["tolerations"][2:] == [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, {"key": "maintenance", "operator": "Exists"}]


@pytest.mark.parametrize("entry", [ALL_REDUCE, LOOPBACK, "diagnostics/dcgm-level4", TRAINING, "training/nemotron5-56b"])
def test_the_gpu_pods_of_every_entry_tolerate_the_taints_of_the_nodes_chosen_for_them(entry: str) -> None:
    """The pods are pinned to the nodes the certification chose: a GPU node taint (nvidia.com/gpu=present:NoSchedule
    on GKE and many EKS pools) kept the training pods off every node, and each was blamed SchedulingBlocked."""
    for platform in ("aws", "gcp", "azure"):
        tolerations = _gpu_pod_template(entry, platform, "h100")["spec"]["tolerations"]
        for taint in ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                      {"key": "nvsentinel.dgxc.nvidia.com/nvcre-cert-failed", "value": "true", "effect": "NoSchedule"},
                      {"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}):
            assert tolerates(tolerations, taint), (platform, taint)


@pytest.mark.parametrize("entry", [ALL_REDUCE, LOOPBACK, "diagnostics/dcgm-level4", TRAINING, "training/nemotron5-56b"])
def test_the_gpu_pods_of_every_entry_tolerate_no_no_execute_taint_the_target_does_not_name(entry: str) -> None:
    """A NoExecute taint evicts what runs on the node (not-ready and unreachable from the node lifecycle controller, a
    maintenance or remediation taint): the catalog's tolerations do not go through one, a taintSelector does."""
    evicting = [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}, {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
                {"key": "example.com/repair", "value": "gpu", "effect": "NoExecute"}]
    for platform in ("aws", "gcp", "azure", "onprem"):
        tolerations = _gpu_pod_template(entry, platform, "h100")["spec"]["tolerations"]
        assert [taint for taint in evicting if tolerates(tolerations, taint)] == [], platform
    spec = run_spec(entry, "aws", "h100").model_copy(update={"target": TargetSpec(taint_selectors=[TaintSelector(key="example.com/repair")])})
    pods = pod_specs(by_kind(workload_manifests(spec, placement(entry, "aws", "h100")))["TrainingRuntime"])
    assert tolerates(pods[0]["tolerations"], evicting[2]) and not tolerates(pods[0]["tolerations"], evicting[0])


def test_batch_fallback_indexed_job_and_headless_service() -> None:
    objects = by_kind(workload_manifests(run_spec(TRAINING, "onprem", "h100"), placement(TRAINING, "onprem", "h100"), trainer=False))
    job, service = objects["Job"], objects["Service"]
    assert (job["spec"]["completionMode"], job["spec"]["completions"], job["spec"]["parallelism"]) == ("Indexed", 2, 2)
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    assert service["spec"]["selector"] == {"nvcre.nvidia.com/job": "cert-training-nemotron5-8b-job"}
    pod = job["spec"]["template"]["spec"]
    assert pod["subdomain"] == service["metadata"]["name"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["PET_MASTER_ADDR"]["value"] == f"{job['metadata']['name']}-0.{service['metadata']['name']}"
    assert env["PET_NNODES"]["value"] == "2" and env["PET_NPROC_PER_NODE"]["value"] == "8"
    assert env["PET_NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def test_batch_mpi_runs_mpirun_from_index_zero_over_every_index() -> None:
    objects = by_kind(workload_manifests(run_spec(ALL_REDUCE, "onprem", "h100"), placement(ALL_REDUCE, "onprem", "h100"), trainer=False))
    job = objects["Job"]
    name = job["metadata"]["name"]
    script = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    assert f'while [ "$i" -lt 2 ]; do echo "{name}-$i.{name} slots=8" >> /tmp/nvcre-hostfile' in script
    assert "--hostfile /tmp/nvcre-hostfile" in script
    assert script.index('"$JOB_COMPLETION_INDEX" != 0') < script.index("mpirun")
    assert job["spec"]["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    # The per-run key pair is a Secret (a ConfigMap is read by whoever may view the namespace), of the type the API
    # server checks holds a private key.
    keyed = workload_manifests(run_spec(ALL_REDUCE, "onprem", "h100"), placement(ALL_REDUCE, "onprem", "h100"), trainer=False, ssh_keys=("PRIV", "PUB"))
    assert not [o for o in keyed if o["kind"] == "ConfigMap" and "ssh" in o["metadata"]["name"]]
    [keys] = [o for o in keyed if o["kind"] == "Secret" and o["metadata"]["name"] == f"{name}-mpi-ssh-auth"]
    assert keys["type"] == "kubernetes.io/ssh-auth" and keys["stringData"] == {"ssh-privatekey": "PRIV", "ssh-publickey": "PUB"}
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    assert any(v.get("secret", {}).get("secretName") == f"{name}-mpi-ssh-auth" for v in volumes.values())


def test_only_openmpi_is_accepted() -> None:
    spec = WorkloadRunSpec.model_validate({"image": "img", "numNodes": 2, "framework": {"mpi": {"binary": "/bin/x", "mpiImplementation": "Intel"}}})
    with pytest.raises(WorkloadError, match="mpiImplementation: Intel is not supported"):
        workload_manifests(spec, placement(ALL_REDUCE, "onprem", "h100"))


def test_child_names_are_stable_short_labels() -> None:
    long = "a" * 80
    assert child_name(long, "-workload", 48) == child_name(long, "-workload", 48)
    assert len(child_name(long, "-workload", 48)) == 48 and child_name(long, "-workload", 48).endswith("-workload")
    assert child_name("7up", "-runtime") == "w7up-runtime"
    assert child_name(long + "b", "-x", 40) != child_name(long + "c", "-x", 40)


RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@pytest.mark.parametrize("trainer", [True, False])
def test_a_certification_name_with_dots_gives_children_label_names(trainer: bool) -> None:
    # TrainJob (its CRD's CEL rule), Service and the Indexed Job's pod hostnames must be RFC 1035 labels; a
    # Certification, Workflow or Job may be named `gpu.cert`.
    dotted = placement(ALL_REDUCE, "onprem", "h100")
    dotted = dataclasses.replace(dotted, job="gpu.cert-communication-nccl-all-reduce-job")
    spec = run_spec(ALL_REDUCE, "onprem", "h100")
    names = {obj["kind"]: obj["metadata"]["name"] for obj in workload_manifests(spec, dotted, trainer=trainer)}
    for kind in ("TrainJob", "Service", "Job"):
        if kind in names:
            assert RFC1035.match(names[kind]) and len(names[kind]) <= 48, (kind, names[kind])
    assert "TrainJob" in names if trainer else "Service" in names
    assert child_name("gpu.cert", "-workload") != child_name("gpu-cert", "-workload")
    assert child_name("gpu.cert-nccl-0", "-launcher").count("launcher") == 1  # the suffix once, after the hash
    assert workflow_name("a" * 53 + ".b", "communication", "nccl-all-reduce")[53] != "."


def test_placement_for_reads_the_job_and_its_nodes() -> None:
    job = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "ns", "uid": "u", "annotations": {"nvcre.nvidia.com/group-nodes": "n1,n2"}}}
    nodes = [{"metadata": {"name": n, "labels": {"nvidia.com/gpu.product": "NVIDIA-GB200", "kubernetes.io/hostname": f"h-{n}"}},
              "spec": {"providerID": "aws:///us-east-1a/i-1"}} for n in ("n1", "n2", "n3")]
    where = placement_for(job, nodes)
    assert (where.nodes, where.platform, where.architecture, where.namespace) == (("n1", "n2"), "aws", "gb200", "ns")
    assert where.hostname("n2") == "h-n2" and where.owner_references is not None and where.owner_references[0]["uid"] == "u"


def test_job_names_follow_one_rule() -> None:
    """The controller's names (render predicts them with the same engine.names.job_name): a single group's one Job,
    a group's iteration, a diagnose test by its own name."""
    from nvcre_tui.engine.controllers.workflow import _job_name

    for groups, iterations, diagnose, current, expected in [(1, 1, False, 1, "wf-job"), (3, 1, False, 1, "wf-group-0-iter-1"),
                                                            (1, 2, False, 2, "wf-group-0-iter-2"), (1, 1, True, 1, "wf-group-0"),
                                                            (1, 3, True, 3, "wf-group-0")]:
        wf = {"metadata": {"name": "wf"}, "spec": {"orchestration": {"iterations": iterations}}}
        orch: dict[str, Any] = {"totalGroups": groups, "currentIteration": current, "diagnose": {} if diagnose else None}
        assert _job_name(wf, orch, {"name": "group-0"}) == expected


CERT = "tests/cases/render/walkthrough-example/cert.yaml"


def test_render_workloads_yaml_and_json_agree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "render", CERT, "--workloads"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# ") and "&id" not in text  # reviewable: no YAML anchors
    as_yaml = [doc for doc in yaml.safe_load_all(text) if doc]
    assert main(["certification", "render", CERT, "--workloads", "-o", "json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert as_yaml == items
    assert {"TrainJob", "TrainingRuntime"} <= {item["kind"] for item in items}


def test_render_workloads_batch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "render", CERT, "--workloads", "--batch", "-o", "json"]) == 0
    kinds = {item["kind"] for item in json.loads(capsys.readouterr().out)["items"]}
    assert "Job" in kinds and "Service" in kinds and "TrainJob" not in kinds


def test_batch_without_workloads_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "render", CERT, "--batch"]) == 2
    assert capsys.readouterr().err == "--batch: only with --workloads\n"


def _gpu_pod_template(entry: str, platform: str, arch: str) -> dict:
    runtime = by_kind(workload_manifests(run_spec(entry, platform, arch), placement(entry, platform, arch)))["TrainingRuntime"]
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]


def test_oci_sriov_networks_follow_the_nics_the_pod_requests() -> None:
    annotations = _gpu_pod_template(ALL_REDUCE, "oci", "gb300")["metadata"]["annotations"]
    assert annotations == {"k8s.v1.cni.cncf.io/networks": ",".join(["network-operator/sriov-net"] * 4)}
    assert "annotations" not in _gpu_pod_template(ALL_REDUCE, "oci", "gb200")["metadata"]  # mlnxPerNode 0
    assert "annotations" not in _gpu_pod_template("diagnostics/dcgm-level4", "oci", "h100")["metadata"]  # DCGM takes no NICs


def test_gke_rdma_interfaces_with_the_rdma_networks_and_arm64_tolerations_on_gb200() -> None:
    template = _gpu_pod_template(ALL_REDUCE, "gcp", "gb200")
    assert template["metadata"]["annotations"]["networking.gke.io/default-interface"] == "eth0"
    assert json.loads(template["metadata"]["annotations"]["networking.gke.io/interfaces"])[1] == {"interfaceName": "rdma0", "network": "rdma-0"}
    assert template["spec"]["containers"][0]["resources"]["limits"]["networking.gke.io.networks/rdma-0"] == "1"
    # The training entry asks for no RDMA networks: no interfaces, but the arm64 / GPU taints are tolerated.
    training = _gpu_pod_template(TRAINING, "gcp", "gb200")
    assert "annotations" not in training["metadata"]
    assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in training["spec"]["tolerations"]
    # H100 (A3 Mega, the matrix's GKE nodes): GPUDirect-TCPXO's networks, those the nodes' allocatable lists, no RDMA ones
    h100 = json.loads(_gpu_pod_template(ALL_REDUCE, "gcp", "h100")["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [item["network"] for item in h100] == ["default", *(f"vpc{i}" for i in range(1, 9))]


def test_standalone_runs_get_the_base_nccl_env_under_their_own() -> None:
    from nvcre_tui.engine.workloads import standalone_spec

    user = WorkloadRunSpec.model_validate({"image": "img", "numNodes": 2, "framework": {"torch": {"script": "train.py"}},
                                           "env": [{"name": "NCCL_DEBUG", "value": "WARN"}]})
    h100 = standalone_spec(user, "onprem", "h100")
    env = {var.name: var.value for var in h100.env or []}
    assert env["NCCL_DEBUG"] == "WARN" and env["NCCL_SHM_DISABLE"] == "1" and env["NCCL_MNNVL_ENABLE"] == "0"
    assert (h100.gpus_per_node, h100.enable_mnnvl, h100.resource_claims) == (8, False, None)

    gb200 = standalone_spec(user, "aws", "gb200")
    env = {var.name: var.value for var in gb200.env or []}
    assert env["NCCL_MNNVL_ENABLE"] == "1" and env["NCCL_NET_PLUGIN"] == "none"
    assert (gb200.gpus_per_node, gb200.resource_claims, gb200.extended_resources) == (4, ["compute-domain"], {"vpc.amazonaws.com/efa": 4})
    assert "ComputeDomain" in by_kind(workload_manifests(gb200, placement(TRAINING, "aws", "gb200")))

    off = standalone_spec(user.model_copy(update={"enable_mnnvl": False, "gpus_per_node": 2}), "azure", "gb300")
    assert {var.name: var.value for var in off.env or []}["NCCL_MNNVL_ENABLE"] == "0" and off.gpus_per_node == 2
    assert off.extended_resources == {"nvidia.com/mlnxnics": "8"}


def test_catalog_runs_do_not_get_the_standalone_env() -> None:
    # The NVSwitch loopback needs shared memory on; only standalone_spec adds NCCL_SHM_DISABLE.
    spec = run_spec("communication/nccl-loopback-nvswitch", "onprem", "h100")
    pod = pod_specs(by_kind(workload_manifests(spec, placement("communication/nccl-loopback-nvswitch", "onprem", "h100")))["TrainingRuntime"])[0]
    assert "NCCL_SHM_DISABLE" not in {e["name"] for e in pod["containers"][0]["env"]}


def test_broken_workload_data_is_reported_with_its_file_and_field(tmp_path) -> None:
    from nvcre_tui.engine.errors import InputError
    from nvcre_tui.engine.workloads.data import pod_data, standalone_data

    (tmp_path / "_workloads").mkdir()
    (tmp_path / "_workloads" / "pods.yaml").write_text("overrides:\n  - when: {platform: {equals: oci}}\n    anotations: {}\n")
    with pytest.raises(InputError) as error:
        pod_data(tmp_path)
    assert len(error.value.messages) == 1 and error.value.messages[0].startswith(f"{tmp_path}/_workloads/pods.yaml: overrides[0].anotations")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path}/_workloads/standalone.yaml: no such file")):
        standalone_data(tmp_path)
    (tmp_path / "_workloads" / "standalone.yaml").write_text("env: {NCCL_MNNVL_ENABLE: '${mnnvl}', NCCL_IB_HCA: '${nics}'}\n")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path}/_workloads/standalone.yaml: unknown placeholder ${{nics}}; known: mlnxPerNode, mnnvl")):
        standalone_data(tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    ("overrides: []\noverrides: []\n", ":2:1: invalid YAML: duplicate key 'overrides' (first on line 1)"),
    ("a: &a [x, x]\nb: [*a, *a]\n", ":2:5: invalid YAML: aliases (*a) are not accepted; write the value out"),
])
def test_workload_data_is_read_by_the_strict_loader(text: str, message: str, tmp_path: Path) -> None:
    """The _workloads files were read by yaml.safe_load, unlike the rest of the catalog: a duplicated key was taken
    silently (the last one won) and aliases expanded (billion laughs)."""
    from nvcre_tui.engine.errors import InputError
    from nvcre_tui.engine.workloads.data import pod_data

    (tmp_path / "_workloads").mkdir()
    (tmp_path / "_workloads" / "pods.yaml").write_text(text)
    with pytest.raises(InputError) as error:
        pod_data(tmp_path)
    assert error.value.messages == [f"{tmp_path}/_workloads/pods.yaml{message}"]


@pytest.mark.parametrize("entry", [ALL_REDUCE, TRAINING, LOOPBACK])
@pytest.mark.parametrize("trainer", [True, False], ids=["trainer", "batch"])
def test_result_pod_selector_picks_exactly_the_launcher_or_index_zero(entry: str, trainer: bool) -> None:
    from nvcre_tui.engine.workloads import pods_selector, result_pod_selector

    spec, where = run_spec(entry, "onprem", "h100"), placement(entry, "onprem", "h100")
    templates = [t for obj in workload_manifests(spec, where, trainer=trainer) for t in _pod_templates(obj)]
    wanted = dict(pair.split("=") for pair in result_pod_selector(spec, where, trainer=trainer).split(","))
    index = wanted.pop("batch.kubernetes.io/job-completion-index", None)  # the Job controller adds it to each pod
    chosen = [t for t in templates if wanted.items() <= t["metadata"]["labels"].items()]
    assert len(chosen) == 1
    assert (index is None) == (trainer and entry == ALL_REDUCE)
    every = dict([pods_selector(where).split("=")])
    assert all(every.items() <= t["metadata"]["labels"].items() for t in templates)


def test_trainer_served_needs_both_kinds() -> None:
    from nvcre_tui.engine.workloads import trainer_served

    assert trainer_served(["trainjobs", "trainjobs/status", "trainingruntimes", "clustertrainingruntimes"])
    assert not trainer_served(["trainjobs"]) and not trainer_served([])


def test_render_workloads_carries_taint_selectors_and_the_gang_scheduler(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    case = "tests/cases/render/taint-selector"
    cert = yaml.safe_load(open(f"{case}/cert.yaml"))
    cert["spec"]["gangScheduler"] = {"schedulerName": "runai-scheduler", "queue": "team-b", "queueLabelKey": "runai/queue"}
    (tmp_path / "cert.yaml").write_text(yaml.safe_dump(cert))
    assert main(["certification", "render", str(tmp_path / "cert.yaml"), "--nodes", f"{case}/nodes.yaml", "--workloads", "-o", "json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    runtimes = [item for item in items if item["kind"] == "TrainingRuntime"]
    assert runtimes and all(item["metadata"]["labels"]["runai/queue"] == "team-b" for item in items if item["kind"] == "TrainJob")
    for runtime in runtimes:
        pod = pod_specs(runtime)[0]
        assert pod["schedulerName"] == "runai-scheduler"
        assert {"key": "dedicated", "operator": "Equal", "value": "burn-in", "effect": "NoSchedule"} in pod["tolerations"]


def test_taint_selectors_of_the_run_target_and_the_priority_class() -> None:
    spec = run_spec(TRAINING, "aws", "h100").model_copy(update={"target": TargetSpec(taint_selectors=[TaintSelector(key="gpu-only")])})
    pod = pod_specs(by_kind(workload_manifests(spec, placement(TRAINING, "aws", "h100", priority_class="burn-in")))["TrainingRuntime"])[0]
    assert pod["tolerations"] == [{"operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists", "effect": "PreferNoSchedule"},
                                  {"key": "gpu-only", "operator": "Exists"}] and pod["priorityClassName"] == "burn-in"


def test_objects_share_no_sub_objects() -> None:
    objects = workload_manifests(run_spec(ALL_REDUCE, "oci", "gb300"), placement(ALL_REDUCE, "oci", "gb300"))
    pods = pod_specs(by_kind(objects)["TrainingRuntime"])
    assert pods[0]["containers"][0]["env"] == pods[1]["containers"][0]["env"]
    assert pods[0]["containers"][0]["env"] is not pods[1]["containers"][0]["env"]


def test_an_mpi_command_longer_than_a_trainjob_takes_is_refused_naming_env() -> None:
    # mpirun forwards each variable with `-x NAME`; the Trainer CRD caps spec.trainer.command at 128 items.
    spec = run_spec(ALL_REDUCE, "onprem", "h100")
    many = spec.model_copy(update={"env": [*(spec.env or []), *[EnvVar(name=f"X{i}", value="1") for i in range(70)]]})
    with pytest.raises(WorkloadError, match=r"spec.env: the trainer command would have \d+ items .* more than the 128"):
        workload_manifests(many, placement(ALL_REDUCE, "onprem", "h100"))
    assert len(by_kind(workload_manifests(spec, placement(ALL_REDUCE, "onprem", "h100")))["TrainJob"]["spec"]["trainer"]["command"]) <= 128
    workload_manifests(many, placement(ALL_REDUCE, "onprem", "h100"), trainer=False)  # a batch Job has no such cap


@pytest.mark.parametrize("name", ["conf/train.sh", "..hidden", "..", "train sh", "k" * 254])
def test_an_inline_config_file_name_a_config_map_cannot_hold_is_refused_naming_it(name: str) -> None:
    # The files become the run's ConfigMap keys; the API server's IsConfigMapKey refuses these (422), so the run
    # must fail with a message naming the file rather than with the server's refusal of a create.
    spec = run_spec("training/nemotron5-8b", "onprem", "h100")
    assert spec.config
    bad = spec.model_copy(update={"config": {"inline": {"train.sh": "exit 0", name: "x"}}})
    for trainer in (True, False):
        with pytest.raises(WorkloadError, match=re.escape(f"spec.config: file name {name!r}")):
            workload_manifests(bad, placement("training/nemotron5-8b", "onprem", "h100"), trainer=trainer)
    good = spec.model_copy(update={"config": {"inline": {"train.sh": "exit 0", "model_v1.2-final.yaml": "x"}}})
    config_map = next(o for o in workload_manifests(good, placement("training/nemotron5-8b", "onprem", "h100")) if o["kind"] == "ConfigMap")
    assert sorted(config_map["data"]) == ["model_v1.2-final.yaml", "train.sh"]


@pytest.mark.parametrize(("source", "cloned"), [(None, "https://github.com/NVIDIA/Megatron-LM.git"),
                                                ("https://git.example.internal/mirrors/megatron-lm.git", "https://git.example.internal/mirrors/megatron-lm.git")])
def test_training_clones_megatron_from_source_repo_or_github(source: str | None, cloned: str) -> None:
    from nvcre_tui.engine.api.options import CategoryOptions
    from nvcre_tui.engine.planning.catalog_load import default_catalog
    from nvcre_tui.engine.planning.render import render_run_spec
    from nvcre_tui.engine.planning.resolve import resolve_options

    catalog = default_catalog()
    entry = catalog.entries["training/nemotron5-8b"]
    options = resolve_options(catalog, entry, CategoryOptions(source_repo=source), "onprem", "h100")
    spec, _ = render_run_spec(entry, options, "onprem", "h100", 2)
    [clone] = [init for init in spec.to_wire()["initContainers"] if init["name"] == "megatron-clone"]
    assert cloned in clone["command"] and "${sourceRepo}" not in json.dumps(clone)


def test_only_training_entries_read_the_training_options() -> None:
    from nvcre_tui.engine.planning.catalog_load import default_catalog

    catalog = default_catalog()
    assert catalog.readers("maxSteps") == ["training/nemotron5-56b", "training/nemotron5-8b"]
    assert catalog.readers("numIterations") == sorted(k for k in catalog.entries if k.startswith("communication/"))
    assert catalog.entries["diagnostics/dcgm-level4"].template_options == frozenset()
