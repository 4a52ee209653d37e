"""The ssh key pair of a batch-fallback MPI run (what Kubeflow Trainer generates for a TrainJob)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

KEYGEN_TIMEOUT = 30.0  # seconds: ssh-keygen takes milliseconds; a hung one must not hang the run


async def ssh_key_pair() -> tuple[str, str]:
    """(private, public) OpenSSH ed25519 keys from ssh-keygen; WorkloadError when it cannot."""
    from nvcre_tui.engine.workloads import WorkloadError

    program = shutil.which("ssh-keygen")
    if program is None:
        raise WorkloadError("the batch MPI fallback needs ssh-keygen to make the run's ssh keys; install OpenSSH "
                            "or Kubeflow Trainer (which makes them itself)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "id"
        # A thread, not an asyncio subprocess: its transport, closed on the loop after the process ends, outlived
        # short-lived loops (asyncio.run) and was collected later with "Event loop is closed".
        command = [program, "-q", "-t", "ed25519", "-N", "", "-C", "nvcre", "-f", str(path)]
        try:
            done = await asyncio.to_thread(subprocess.run, command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.PIPE, timeout=KEYGEN_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise WorkloadError(f"ssh-keygen failed: {error}") from None
        if done.returncode != 0:
            raise WorkloadError(f"ssh-keygen failed: {done.stderr.decode(errors='replace').strip()}")
        return path.read_text(), path.with_suffix(".pub").read_text()
