"""The ssh key pair of a batch-fallback MPI run (what Kubeflow Trainer generates for a TrainJob)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path


async def ssh_key_pair() -> tuple[str, str]:
    """(private, public) OpenSSH ed25519 keys from ssh-keygen; WorkloadError when it cannot."""
    from nvcre_tui.engine.workloads import WorkloadError

    program = shutil.which("ssh-keygen")
    if program is None:
        raise WorkloadError("the batch MPI fallback needs ssh-keygen to make the run's ssh keys; install OpenSSH "
                            "or Kubeflow Trainer (which makes them itself)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "id"
        process = await asyncio.create_subprocess_exec(program, "-q", "-t", "ed25519", "-N", "", "-C", "nvcre", "-f", str(path),
                                                       stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, error = await process.communicate()
        if process.returncode != 0:
            raise WorkloadError(f"ssh-keygen failed: {error.decode(errors='replace').strip()}")
        return path.read_text(), path.with_suffix(".pub").read_text()
