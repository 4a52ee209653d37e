"""The command lines a run's containers execute: torchrun, mpirun, the sshd worker chain, the launcher's
ssh setup and its wait-for-workers step. Shell text is assembled with shlex so arguments stay whole."""

from __future__ import annotations

import shlex

from nvcre_tui.engine.api.resources import MpiFramework, WorkloadRunSpec
from nvcre_tui.engine.workloads.container import WorkloadError

SSH_RAW = "/tmp/mpi-ssh-raw"  # where the key Secret is mounted (Trainer: mlPolicy.mpi.sshAuthMountPath)
SSH_HOME = "/root/.ssh"
HOSTFILE = "/etc/mpi/hostfile"  # the Trainer's hostfile ConfigMap (volume mpi-hostfile at /etc/mpi)
WAIT_TRIES, WAIT_SECONDS = 240, 5  # about 20 minutes for the last worker's sshd

# Install sshd only when the image lacks it, take the keys from the read-only Secret mount, serve.
SSHD_SETUP = (
    "set -e; "
    "if [ ! -x /usr/sbin/sshd ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null; fi; "
    f"mkdir -p {SSH_HOME} /run/sshd; cp {SSH_RAW}/* {SSH_HOME}/; chmod 700 {SSH_HOME}; chmod 600 {SSH_HOME}/*; "
    "if command -v ssh-keygen >/dev/null; then ssh-keygen -A; fi"  # host keys an image may not ship (only missing ones are made)
)
SSHD_WORKER = f"{SSHD_SETUP}; exec /usr/sbin/sshd -De"
COPY_KEYS = f"set -e; mkdir -p {SSH_HOME}; cp {SSH_RAW}/* {SSH_HOME}/; chmod 700 {SSH_HOME}; chmod 600 {SSH_HOME}/*"


def wait_for_hosts(hosts: str) -> str:
    """Shell that ssh-probes every host in `hosts` (a shell word list) except this pod, then gives up after
    WAIT_TRIES x WAIT_SECONDS: a gang scheduler starts all pods at once, so the launcher waits instead of
    a dependsOn gate."""
    return (
        f"for host in {hosts}; do "
        'case "$host" in "$(hostname)"|"$(hostname)".*) continue;; esac; '
        "tries=0; "
        'until ssh -o StrictHostKeyChecking=no -o BatchMode=yes -o ConnectTimeout=5 "$host" true 2>/dev/null; do '
        "tries=$((tries+1)); "
        f'if [ "$tries" -ge {WAIT_TRIES} ]; then echo "worker $host not reachable over ssh after {WAIT_TRIES} tries" >&2; exit 1; fi; '
        f"sleep {WAIT_SECONDS}; done; done"
    )


def hosts_of(hostfile: str) -> str:
    """The host names of an Open MPI hostfile, as a shell word list."""
    return f"$(awk '{{print $1}}' {hostfile})"


WAIT_FOR_HOSTFILE = wait_for_hosts(hosts_of(HOSTFILE))


def torch_command(spec: WorkloadRunSpec) -> list[str]:
    """torchrun <script> / torchrun -m <module>; a shell script (.sh) is its own launcher (it calls torchrun
    with the PET_* variables itself), so it runs under bash."""
    torch = spec.framework.torch
    assert torch is not None
    args = list(torch.args or [])
    if torch.module:
        return ["torchrun", "-m", torch.module, *args]
    assert torch.script is not None
    if torch.script.endswith(".sh"):
        return ["bash", torch.script, *args]
    return ["torchrun", torch.script, *args]


def exec_command(spec: WorkloadRunSpec) -> list[str]:
    """The exec framework's command and args, as given."""
    run = spec.framework.exec
    assert run is not None
    return [*run.command, *(run.args or [])]


def mpi_framework(spec: WorkloadRunSpec) -> MpiFramework:
    """The mpi framework; only OpenMPI (what the Trainer's MPI runtime and `-x` exports speak)."""
    mpi = spec.framework.mpi
    assert mpi is not None
    if mpi.mpi_implementation != "OpenMPI":
        raise WorkloadError(f"spec.framework.mpi.mpiImplementation: {mpi.mpi_implementation} is not supported; use OpenMPI")
    return mpi


# Ranks started through sshd get neither the launcher's environment nor the image's ENV: these come along always
# (the image's tools and libraries, e.g. the EFA NCCL plugin that AWS images put only on LD_LIBRARY_PATH).
EXPORTED = ("PATH", "LD_LIBRARY_PATH")


def mpirun_command(spec: WorkloadRunSpec, *, hostfile: str) -> list[str]:
    """mpirun with the run's mpiArgs, `--hostfile` (the Trainer's: Open MPI 5 ignores the OMPI_MCA_ variable the
    Trainer sets for it; or the one the batch fallback's index 0 writes), and `-x NAME` for PATH, LD_LIBRARY_PATH and
    every env var. Never the hosts themselves: a large group's would pass the longest argument Linux execs."""
    mpi = mpi_framework(spec)
    command = [mpi.mpirun_path, *(mpi.mpi_args or []), "--hostfile", hostfile]
    names = [*EXPORTED, *(var.name for var in spec.env or [] if var.name not in EXPORTED)]
    for name in names:
        command += ["-x", name]
    return [*command, mpi.binary, *(mpi.args or [])]


def shell(*steps: str) -> list[str]:
    """`sh -c` running the steps in order."""
    return ["sh", "-c", "; ".join(steps)]


def quoted(command: list[str]) -> str:
    """A command as one shell-quoted line."""
    return shlex.join(command)
