"""A batch-fallback MPI run's ssh key pair is made by the engine itself, not by ssh-keygen: the engine's image (the
repository's Dockerfile, python:3.11-slim) has none, and ssh-keygen exits "No user exists for uid 65532" for the user it
runs as (no passwd entry). Every batch MPI run of the in-cluster engine failed WorkloadNotCreated ("needs ssh-keygen").
Over the emulator as the nvcre-engine ServiceAccount, with no ssh-keygen on PATH; the key is checked by OpenSSH's own
ssh-keygen where the test machine has one."""

from __future__ import annotations

import asyncio
import base64
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes.keys import openssh_keys, public_key
from nvcre_tui.engine.session import SIM_START
from nvcre_tui.engine.store.protocol import SECRET
from tests.runner.harness import denied, gpu_cluster, job_and_its_run, started_once

NODES = ["gpu-node-01", "gpu-node-02"]
SPEC = {"image": "nvcr.io/nvidia/pytorch:26.01-py3", "numNodes": 2, "gpusPerNode": 8, "target": {"nodeNames": NODES},
        "framework": {"mpi": {"mpiImplementation": "OpenMPI", "binary": "/usr/local/bin/all_reduce_perf_mpi"}}}


async def _start(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The run's status, the Secrets made in default and the engine's requests `setup init`'s RBAC refuses."""
    clock = ManualClock(SIM_START)
    async with gpu_cluster(folder, clock) as (server, admin, engine):
        _, created = await job_and_its_run(admin, SPEC, NODES)
        status = await started_once(engine, clock, created)
        return status, (await admin.list(SECRET, "default")).items, denied(server.requests)


def _text(secret: dict[str, Any], key: str) -> str:
    if key in (secret.get("stringData") or {}):
        return str(secret["stringData"][key])
    return base64.b64decode(secret["data"][key]).decode()


def test_a_batch_mpi_run_gets_its_key_pair_where_no_ssh_keygen_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # as the engine's image: no ssh-keygen
    status, secrets, refused = asyncio.run(_start(tmp_path))
    assert status["phase"] == "Scheduling", status
    [keys] = [s for s in secrets if s["metadata"]["name"].startswith("cert-job-workload-mpi-ssh-auth-")]
    assert keys["type"] == "kubernetes.io/ssh-auth" and refused == []
    private, public = _text(keys, "ssh-privatekey"), _text(keys, "ssh-publickey")
    assert private.startswith("-----BEGIN OPENSSH PRIVATE KEY-----\n") and public.startswith("ssh-ed25519 ")


def test_the_public_key_is_ed25519s_of_the_seed() -> None:
    """RFC 8032 section 7.1, test 1."""
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    assert public_key(seed).hex() == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen to read the key")
def test_openssh_reads_the_private_key_and_signs_with_it_what_its_public_key_verifies(tmp_path: Path) -> None:
    private, public = asyncio.run(_pair())
    key = tmp_path / "id_rsa"  # the name the pods mount it under
    key.write_text(private)
    key.chmod(0o600)
    derived = subprocess.run(["ssh-keygen", "-y", "-f", str(key)], capture_output=True, text=True, check=True).stdout
    assert derived.split()[:2] == public.split()[:2]
    data = tmp_path / "data"
    data.write_text("nvcre\n")
    subprocess.run(["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", "file", str(data)], capture_output=True, check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text(f"nvcre {public}")
    with data.open() as stdin:
        subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", "nvcre", "-n", "file", "-s", f"{data}.sig"],
                       stdin=stdin, capture_output=True, check=True)


async def _pair() -> tuple[str, str]:
    from nvcre_tui.engine.runners.kubernetes.keys import ssh_key_pair

    return await ssh_key_pair()


def test_two_runs_get_two_keys() -> None:
    assert openssh_keys(b"\1" * 32)[1] != openssh_keys(b"\2" * 32)[1]
    assert asyncio.run(_pair()) != asyncio.run(_pair())
