"""WorkloadRun -> a Kubeflow Trainer v2 TrainJob plus the TrainingRuntime it references
(`trainer.kubeflow.org/v1alpha1`).

Each run gets its own TrainingRuntime (`<job>-runtime`), so the pod templates carry this group's node
pinning, env and resources directly and the TrainJob stays small (runtimeRef + trainer). Fields are the
ones Trainer v2.1 and later both accept: numProcPerNode goes on the TrainJob's trainer for torch (v2.2
dropped it from mlPolicy.torch), on mlPolicy.mpi for MPI; env goes on the runtime's containers (the
Trainer rejects OMPI_MCA_* names it reserves in trainer.env).

Shapes (reference C):
- torch and exec: one replicatedJob `node` (the trainer step), torchrun / the command on the TrainJob;
- mpi: sshd workers `node` plus a `launcher` running mpirun over the Trainer's hostfile; under a gang
  scheduler the launcher's dependsOn gate is replaced by a wait-for-workers step.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import TRAINER_API_VERSION, TRAINER_GROUP
from nvcre_tui.engine.workloads import commands
from nvcre_tui.engine.workloads.container import WorkloadError, env_list, worker_container
from nvcre_tui.engine.workloads.placement import Placement, child_name, workload_name
from nvcre_tui.engine.workloads.pod import metadata, pod_spec, pod_template, queue_label, workload_labels

Obj = dict[str, Any]
TRAINER_COMMAND_ITEMS = 128  # spec.trainer.command maxItems in the Trainer CRD (v2.2 on)
LABEL_FRAMEWORK = "trainer.kubeflow.org/framework"
LABEL_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
SSH_AUTH_VOLUME = "mpi-ssh-auth"  # added to the pods by the Trainer; our init container mounts it too
HOSTFILE_VOLUME = "mpi-hostfile"
SSH_KEYS_VOLUME = "ssh-keys"


def runtime_name(placement: Placement) -> str:
    """The run's TrainingRuntime: `<job>-runtime`."""
    return child_name(placement.job, "-runtime")


def _replicated_job(spec: WorkloadRunSpec, name: str, pod: Obj, placement: Placement, role: str, *, trainer_step: bool) -> Obj:
    job_labels = {**({LABEL_ANCESTOR: "trainer"} if trainer_step else {}), "app": placement.job_label, **queue_label(placement)}
    return {"name": name, "template": {
        "metadata": {"labels": job_labels},
        "spec": {"backoffLimit": 0, "template": pod_template(spec, placement, role, pod)},
    }}


def _user_init(spec: WorkloadRunSpec) -> list[Obj]:
    return [dict(item) for item in spec.init_containers or []]


def training_runtime(spec: WorkloadRunSpec, placement: Placement) -> Obj:
    """The TrainingRuntime of the run (torch shape for torch and exec, MPI shape for mpi)."""
    framework = spec.framework.kind
    nodes = spec.num_nodes
    if framework == "mpi":
        policy: Obj = {"numNodes": nodes, "mpi": {"mpiImplementation": "OpenMPI", "numProcPerNode": spec.gpus_per_node or 1,
                                                  "sshAuthMountPath": commands.SSH_RAW}}
        template = _mpi_jobset(spec, placement)
    else:
        policy = {"numNodes": nodes, "torch": {}}
        container = worker_container(spec, None, env_list(spec))
        pod = pod_spec(spec, placement, [container], role="node", restart_policy="Never", init_containers=_user_init(spec) or None)
        template = {"replicatedJobs": [_replicated_job(spec, "node", pod, placement, "node", trainer_step=True)]}
    labels = {**workload_labels(spec, placement), LABEL_FRAMEWORK: "mpi" if framework == "mpi" else "torch"}
    return {"apiVersion": TRAINER_API_VERSION, "kind": "TrainingRuntime", "metadata": metadata(runtime_name(placement), placement, labels),
            "spec": {"mlPolicy": policy, "template": {"spec": template}}}


def _mpi_jobset(spec: WorkloadRunSpec, placement: Placement) -> Obj:
    env = env_list(spec)
    worker = worker_container(spec, commands.shell(commands.SSHD_WORKER), env)
    worker["readinessProbe"] = {"tcpSocket": {"port": 22}, "initialDelaySeconds": 5, "periodSeconds": 5}
    worker["volumeMounts"].append({"name": SSH_AUTH_VOLUME, "mountPath": commands.SSH_RAW, "readOnly": True})
    worker_pod = pod_spec(spec, placement, [worker], role="node", restart_policy="OnFailure", init_containers=_user_init(spec) or None)

    gang = placement.gang is not None
    steps = [commands.COPY_KEYS, *([commands.WAIT_FOR_HOSTFILE] if gang else [])]
    mounts = [{"name": SSH_AUTH_VOLUME, "mountPath": commands.SSH_RAW, "readOnly": True},
              {"name": SSH_KEYS_VOLUME, "mountPath": commands.SSH_HOME}]
    if gang:
        mounts.append({"name": HOSTFILE_VOLUME, "mountPath": "/etc/mpi", "readOnly": True})
    init = {"name": "fix-ssh-permissions", "image": spec.image, "command": commands.shell(*steps), "volumeMounts": mounts}
    launcher = {"name": "node", "image": spec.image, "env": env,
                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "2", "memory": "1Gi"}},
                "volumeMounts": [{"name": SSH_KEYS_VOLUME, "mountPath": commands.SSH_HOME}]}
    launcher_pod = pod_spec(spec, placement, [launcher], role="launcher", restart_policy="Never", init_containers=[init],
                            extra_volumes=[{"name": SSH_KEYS_VOLUME, "emptyDir": {}}])
    launcher_job = _replicated_job(spec, "launcher", launcher_pod, placement, "launcher", trainer_step=True)
    if not gang:  # a gang scheduler needs every pod created at once; the init step waits instead
        launcher_job["dependsOn"] = [{"name": "node", "status": "Ready"}]
    return {"network": {"publishNotReadyAddresses": True},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
            "replicatedJobs": [_replicated_job(spec, "node", worker_pod, placement, "node", trainer_step=False), launcher_job]}


def train_job(spec: WorkloadRunSpec, placement: Placement) -> Obj:
    """The TrainJob: its runtime, node count, and the command of the trainer step."""
    framework = spec.framework.kind
    trainer: Obj = {"image": spec.image, "numNodes": spec.num_nodes}
    if framework == "torch":
        trainer.update(command=commands.torch_command(spec), numProcPerNode=spec.gpus_per_node or 1)
    elif framework == "exec":
        trainer.update(command=commands.exec_command(spec), numProcPerNode=1)
    else:
        trainer["command"] = commands.mpirun_command(spec, hostfile=commands.HOSTFILE)
    if len(trainer["command"]) > TRAINER_COMMAND_ITEMS:
        raise WorkloadError(f"spec.env: the trainer command would have {len(trainer['command'])} items (mpirun takes -x NAME per "
                            f"variable), more than the {TRAINER_COMMAND_ITEMS} a TrainJob accepts; pass fewer env variables")
    return {"apiVersion": TRAINER_API_VERSION, "kind": "TrainJob",
            "metadata": metadata(workload_name(placement.job), placement, workload_labels(spec, placement)),
            "spec": {"runtimeRef": {"name": runtime_name(placement), "apiGroup": TRAINER_GROUP, "kind": "TrainingRuntime"},
                     "trainer": trainer}}
