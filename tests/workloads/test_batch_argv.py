"""The batch fallback's MPI script stays the same size whatever the group's size. Linux refuses to exec a program with
an argument longer than MAX_ARG_STRLEN (32 pages: 128 KiB): the container runtime fails the container at start with
"argument list too long". The script of every index is one `sh -c` argument, and it named every pod twice (the ssh wait
and mpirun --host, about 190 bytes a node), so a full-scale group of some 700 nodes on a cluster without the Trainer
started no pod at all. The pods now write the hostfile themselves, from the Job's name and size."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.platform import PLATFORMS
from nvcre_tui.engine.workloads import workload_manifests
from nvcre_tui.engine.workloads.batch import rendezvous_hosts, write_hostfile
from tests.workloads.matrix import placement, run_spec
from tests.workloads.schema import pod_specs

MAX_ARG_STRLEN = 32 * 4096  # linux/binfmts.h: the longest single argument (and environment string) execve takes
NODES = tuple(f"ip-10-0-{i // 256}-{i % 256}.us-west-2.compute.internal" for i in range(2048))
MPI_ENTRIES = sorted(key for key, entry in default_catalog().entries.items() if entry.framework == "mpi")


def _longest_argument(obj: dict) -> int:
    return max((len(arg.encode()) for pod in pod_specs(obj) for container in [*pod.get("initContainers", []), *pod["containers"]]
                for arg in [*container.get("command", []), *container.get("args", [])]), default=0)


def test_no_container_argument_grows_with_the_group() -> None:
    too_long = []
    for entry in MPI_ENTRIES:
        for platform in PLATFORMS:
            where = dataclasses.replace(placement(entry, platform, "h100"), nodes=NODES, node_objects={})
            spec = run_spec(entry, platform, "h100").model_copy(update={"num_nodes": len(NODES)})
            for trainer in (True, False):
                longest = max(_longest_argument(obj) for obj in workload_manifests(spec, where, trainer=trainer))
                if longest > MAX_ARG_STRLEN // 16:  # a few KiB: what a two-node group's script takes
                    too_long.append(f"{entry} {platform} {'trainer' if trainer else 'batch'}: {longest} bytes")
    assert too_long == []


def test_the_hostfile_names_every_index_of_the_job_with_its_slots(tmp_path: Path) -> None:
    where = placement("communication/nccl-all-reduce", "onprem", "h100")
    path = tmp_path / "hostfile"
    subprocess.run(["sh", "-c", write_hostfile(str(path), where, 3, 8)], check=True)
    assert path.read_text().splitlines() == [f"{host} slots=8" for host in rendezvous_hosts(where, 3)]


def test_index_zero_waits_for_and_runs_mpirun_over_the_hostfile_it_wrote() -> None:
    spec = run_spec("communication/nccl-all-reduce", "onprem", "h100")
    [job] = [obj for obj in workload_manifests(spec, placement("communication/nccl-all-reduce", "onprem", "h100"), trainer=False)
             if obj["kind"] == "Job"]
    script = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    written, waited, launched = (script.index(part) for part in ("slots=8\" >>", "awk '{print $1}' /tmp/nvcre-hostfile", "--hostfile /tmp/nvcre-hostfile"))
    assert script.index('"$JOB_COMPLETION_INDEX" != 0') < written < waited < launched < script.index("all_reduce_perf")
    assert "--host " not in script
