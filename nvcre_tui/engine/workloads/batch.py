"""The fallback when the Kubeflow Trainer CRDs are absent: a batch/v1 Indexed Job (one completion per
node, one pod per node) and a headless Service for rendezvous; index 0 is the rendezvous point.

- torch: every index runs torchrun with the PET_* variables the Trainer would set, the master being
  `<name>-0.<service>` and the node rank the completion index;
- mpi: every index serves sshd; index 0 also writes a hostfile of every index, waits for the others and runs mpirun
  over all of them.
  The Job's successPolicy ends it when index 0 succeeds (the workers' sshd never exit on their own).
  The ssh keys come from a Secret the runner fills (`ssh_keys`: the engine creates it and may never read it);
- exec: every index runs the command.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.api.vocabulary import ANNOTATION_NOTE, KEY_COMPLETION_INDEX, LABEL_JOB
from nvcre_tui.engine.workloads import commands
from nvcre_tui.engine.workloads.container import env_list, worker_container
from nvcre_tui.engine.workloads.placement import Placement, kept_name, workload_name
from nvcre_tui.engine.workloads.pod import metadata, pod_spec, pod_template, workload_labels

Obj = dict[str, Any]
TORCH_PORT = 29400
SSH_SECRET_VOLUME = "mpi-ssh-auth"
HOSTFILE = "/tmp/nvcre-hostfile"  # index 0's Open MPI hostfile (write_hostfile)
BATCH_API_VERSION = "batch/v1"  # the store's BATCH_JOB (workloads may not import the store)


def service_name(placement: Placement) -> str:
    """The headless Service (the pods' DNS subdomain); the same name as the Job."""
    return workload_name(placement.job)


def ssh_keys_name(placement: Placement) -> str:
    """The Secret with the run's ssh key pair: `<name>-mpi-ssh-auth-<uid8>`. The pair is made for this one run and
    only lets its own pods ssh to each other (what the Trainer's generated Secret does for a TrainJob); a Secret,
    not a ConfigMap, because a ConfigMap is read by whoever may view the namespace. The engine may create Secrets
    and never read one: its name carries the owning Job's uid, so a clash on create is this Job's own earlier try."""
    return kept_name(placement, "-mpi-ssh-auth", workload_name(placement.job))


def rendezvous_host(placement: Placement, index: int | str) -> str:
    """The stable DNS name of the Job's pod of completion index `index` (or a shell word that expands to one):
    `<name>-<index>.<service>`, its hostname under the headless Service."""
    return f"{workload_name(placement.job)}-{index}.{service_name(placement)}"


def rendezvous_hosts(placement: Placement, count: int) -> list[str]:
    """Stable DNS names of the Job's pods, by completion index."""
    return [rendezvous_host(placement, index) for index in range(count)]


def write_hostfile(path: str, placement: Placement, count: int, slots: int) -> str:
    """Shell that writes the Open MPI hostfile of the Job's `count` pods (rendezvous_hosts, `slots` ranks each) to `path`.
    Written in the pod, not listed in its script: Linux execs no argument over 128 KiB (MAX_ARG_STRLEN), and the whole
    script is one `sh -c` argument, which a list of a large group's hosts would pass (about 700 nodes)."""
    host = rendezvous_host(placement, "$i")
    return f': > {path}; i=0; while [ "$i" -lt {count} ]; do echo "{host} slots={slots}" >> {path}; i=$((i+1)); done'


def headless_service(placement: Placement, framework: str) -> Obj:
    """A headless Service over the run's pods, publishing them before they are ready (rendezvous)."""
    port = {"name": "ssh", "port": 22} if framework == "mpi" else {"name": "torch", "port": TORCH_PORT}
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata(service_name(placement), placement),
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": {LABEL_JOB: placement.job_label},
                     "ports": [port]}}


def ssh_keys(placement: Placement, private_key: str = "", public_key: str = "") -> Obj:
    """The run's ssh key pair as a Secret of type kubernetes.io/ssh-auth (keys as the Trainer names them); empty
    when rendered offline."""
    meta = metadata(ssh_keys_name(placement), placement)
    if not private_key:
        meta["annotations"] = {ANNOTATION_NOTE: "the runner generates the key pair when it creates the run"}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "kubernetes.io/ssh-auth",
            "stringData": {"ssh-privatekey": private_key, "ssh-publickey": public_key}}


def _torch_env(spec: WorkloadRunSpec, placement: Placement) -> list[Obj]:
    nodes = spec.num_nodes
    procs = (spec.gpus_per_node or 1) if spec.framework.kind == "torch" else 1
    return [
        {"name": "PET_NNODES", "value": str(nodes)},
        {"name": "PET_NPROC_PER_NODE", "value": str(procs)},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{KEY_COMPLETION_INDEX}']"}}},
        {"name": "PET_MASTER_ADDR", "value": rendezvous_hosts(placement, 1)[0]},
        {"name": "PET_MASTER_PORT", "value": str(TORCH_PORT)},
    ]


def _mpi_command(spec: WorkloadRunSpec, placement: Placement) -> list[str]:
    """Every index serves sshd; index 0 writes the hostfile of every index, waits for their sshd, and runs mpirun."""
    launch = commands.quoted(commands.mpirun_command(spec, hostfile=HOSTFILE))
    return commands.shell(
        commands.SSHD_SETUP,
        'if [ "$JOB_COMPLETION_INDEX" != 0 ]; then exec /usr/sbin/sshd -De; fi',
        "/usr/sbin/sshd", write_hostfile(HOSTFILE, placement, spec.num_nodes, spec.gpus_per_node or 1),
        commands.wait_for_hosts(commands.hosts_of(HOSTFILE)), f"exec {launch}",
    )


def indexed_job(spec: WorkloadRunSpec, placement: Placement) -> Obj:
    """The Indexed Job: completions = parallelism = nodes, pods pinned one per group node."""
    framework = spec.framework.kind
    if framework == "mpi":
        command, env = _mpi_command(spec, placement), env_list(spec)
    elif framework == "torch":
        command, env = commands.torch_command(spec), env_list(spec, _torch_env(spec, placement))
    else:
        command, env = commands.exec_command(spec), env_list(spec)
    container = worker_container(spec, command, env)
    extra_volumes = None
    if framework == "mpi":
        container["volumeMounts"].append({"name": SSH_SECRET_VOLUME, "mountPath": commands.SSH_RAW, "readOnly": True})
        items = [{"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o600}, {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
                 {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644}]
        extra_volumes = [{"name": SSH_SECRET_VOLUME, "secret": {"secretName": ssh_keys_name(placement), "defaultMode": 0o400, "items": items}}]
    pod = pod_spec(spec, placement, [container], role="node", restart_policy="Never",
                   init_containers=[dict(item) for item in spec.init_containers or []] or None, extra_volumes=extra_volumes)
    pod["subdomain"] = service_name(placement)
    job_spec: Obj = {"completionMode": "Indexed", "completions": spec.num_nodes, "parallelism": spec.num_nodes, "backoffLimit": 0,
                     "template": pod_template(spec, placement, "node", pod)}
    if framework == "mpi":
        job_spec["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    return {"apiVersion": BATCH_API_VERSION, "kind": "Job", "metadata": metadata(workload_name(placement.job), placement, workload_labels(spec, placement)),
            "spec": job_spec}
