"""A terminal on stdin where a file is expected is refused at once (one line: pipe it in or name a file), never
waited on in silence: `certification render -`, `cluster info --nodes -` and `parse nccl -` waited for a file to be
typed. A password read from a terminal is not echoed; a refusal that needs no stdin (the simulator pulls no image)
comes before it is read. Standard input here is a pseudo-terminal (os.openpty), as in a shell."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvcre_tui.cli import registry

ROOT = Path(__file__).resolve().parents[1]
NVCRE = [sys.executable, "-m", "nvcre_tui"]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")
PIPE_IT = "standard input is a terminal"


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """(controller, terminal) ends of a pseudo-terminal."""
    controller, tty = os.openpty()
    try:
        yield controller, tty
    finally:
        os.close(controller)
        os.close(tty)


@pytest.mark.parametrize(("command", "said"), [
    (["certification", "render", "-"], f"-: {PIPE_IT}; pipe the certification in (nvcre ... < FILE) or name a file instead of -"),
    (["certification", "run", "--cert-file", "-"], f"--cert-file -: {PIPE_IT}; pipe the certification in"),
    (["cluster", "info", "--nodes", "-"], f"--nodes -: {PIPE_IT}; pipe the nodes in (nvcre ... < FILE) or name a file instead of -"),
    (["parse", "nccl", "-"], f"stdin: {PIPE_IT}, not a file: pipe the input in (nvcre ... < FILE) or name a file instead of -"),
    (["certification", "run", "--cert-file", BURN_IN, "--workload-registry", "r.example.com", "--workload-registry-username", "me",
      "--workload-registry-password", "-"], "--workload-registry: the simulator pulls no image; a pull secret is for a cluster's workloads"),
])
def test_a_terminal_on_stdin_is_refused_at_once(command: list[str], said: str, terminal: tuple[int, int], tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("KUBECONFIG", None)
    done = subprocess.run([*NVCRE, *command, *(["--state", str(tmp_path / "s.db")] if "run" in command else [])], stdin=terminal[1],
                          capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(said) and len(done.stderr.splitlines()) == 1, done.stderr
    assert not (tmp_path / "s.db").exists()


def test_a_password_typed_on_the_terminal_is_not_echoed(terminal: tuple[int, int], monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    controller, tty = terminal
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.FileIO(tty, "r", closefd=False)))

    def type_it() -> None:  # once the echo is off, as a person would, after the prompt
        deadline = time.monotonic() + 10
        while termios.tcgetattr(tty)[3] & termios.ECHO and time.monotonic() < deadline:
            time.sleep(0.01)
        os.write(controller, b"s3cret\n")

    typist = threading.Thread(target=type_it)
    typist.start()
    args = argparse.Namespace(workload_registry="r.example.com", workload_registry_username="me", workload_registry_password="-")
    login = registry.login_of(args)
    typist.join()
    assert login is not None and login.password == "s3cret"
    os.set_blocking(controller, False)
    try:
        shown = os.read(controller, 4096)
    except BlockingIOError:
        shown = b""
    assert b"s3cret" not in shown
    assert termios.tcgetattr(tty)[3] & termios.ECHO  # the echo is back on
    assert "workload registry password: " in capsys.readouterr().err
