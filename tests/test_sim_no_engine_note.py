"""`report` and `list` on the simulator once no process runs its engine (a `run` without --wait has exited): the store
stays as the last engine left it (RUNNING, `WAITING for certification burn-in`, a stalled run that "fails now") and
nothing said so, where on a cluster `report` says nothing advances it. The store's own Lease decides, as for `logs
--follow`: no holder, or one on this machine whose process is gone, and one stderr line names the store and what runs an
engine there; a live holder (the console elsewhere) advances them, and nothing is said."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.local_lease import LEASE_NAMESPACE, LEASE_SECONDS, LocalLease
from nvcre_tui.engine.store.sqlite import SqliteStore

BURN_IN = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
WHAT_RUNS_ONE = "(the console `nvcre`, or `nvcre certification run --wait` of {})"


def _note(subject: str, state: Path, pronoun: str = "it") -> str:
    return (f"nvcre: {subject}, but no nvcre process runs the engine on the simulator's store {state}: "
            f"nothing advances {pronoun} until one runs {WHAT_RUNS_ONE.format(pronoun)}")


@pytest.fixture
def left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Two certifications run without --wait, the second queued behind the first: the store's session arguments."""
    state = ["--sim", "--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", *state, "--cert-file", BURN_IN]) == 0
    assert main(["certification", "run", *state, "--cert-file", BURN_IN, "--name", "second"]) == 0
    capsys.readouterr()
    return state


def _hold(state: Path, identity: str) -> None:
    async def hold() -> None:
        store = SqliteStore(state, SystemClock())
        try:
            assert await LocalLease(store, SystemClock(), LEASE_NAMESPACE, identity, LEASE_SECONDS).try_acquire()
        finally:
            await store.close()

    asyncio.run(hold())


def test_report_and_list_say_that_no_process_advances_what_they_show(left: list[str], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "sim.db"
    assert main(["certification", "report", "burn-in", *left]) == 3  # exit unchanged: still running
    out, err = capsys.readouterr()
    assert "Result:         RUNNING" in out
    assert err.splitlines() == [_note("burn-in is RUNNING", state)]
    assert main(["certification", "report", "burn-in", "second", *left, "-o", "json"]) == 3
    out, err = capsys.readouterr()
    assert [r["name"] for r in json.loads(out)] == ["burn-in", "second"]  # stdout stays JSON
    assert err.splitlines() == [_note("burn-in is RUNNING, second is WAITING for certification burn-in", state, "them")]
    assert main(["certification", "list", *left]) == 0
    out, err = capsys.readouterr()
    assert [line.split()[:2] for line in out.splitlines()[1:]] == [["second", "WAITING"], ["burn-in", "RUNNING"]]  # newest first
    assert err.splitlines() == [_note("second is WAITING for certification burn-in, burn-in is RUNNING", state, "them")]  # as listed
    assert main(["certification", "list", *left, "-A", "-o", "json"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        _note("default/second is WAITING for certification burn-in, default/burn-in is RUNNING", state, "them")]


def test_a_holder_whose_process_is_gone_advances_nothing_and_a_live_one_does(left: list[str], tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    state, host = tmp_path / "sim.db", socket.gethostname()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    _hold(state, f"console@{host}/{gone.stdout.strip()}/abc")  # killed within the Lease's duration
    assert main(["certification", "report", "burn-in", *left]) == 3
    assert capsys.readouterr().err.splitlines() == [_note("burn-in is RUNNING", state)]
    _hold(state, f"console@{host}/1/def")  # a process that exists: the console runs its engine
    assert main(["certification", "report", "burn-in", *left]) == 3
    assert capsys.readouterr().err == ""
    assert main(["certification", "list", *left]) == 0
    assert capsys.readouterr().err == ""


def test_a_finished_certification_says_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = ["--sim", "--state", str(tmp_path / "sim.db"), "--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", *state, "--category", "communication/nccl-all-reduce", "--name", "done", "--wait"]) == 0
    capsys.readouterr()
    assert main(["certification", "report", "done", *state]) == 0
    assert main(["certification", "list", *state]) == 0
    assert capsys.readouterr().err == ""
