"""Real `nvcre` processes on one simulator store: a `run --wait` and a console (under a pseudo-terminal)
killed with SIGKILL or hung up (SIGHUP) mid-run and started again reach the report of an uninterrupted run; two
processes at once both see everything, and exactly one engine (the Lease holder) reconciles.

What is asserted is deterministic: the report's digest (no timestamps; the simulator's results depend on
run names and the seed, not on timing), which processes held the Lease, and that the kill really fell mid-run.
The waits poll the store file every few milliseconds against a generous deadline; nothing sleeps blindly.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.controllers import conditions as cond
from tests.scenarios.harness import digest
from tests.hangup import default_hangup

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")
NVCRE = [sys.executable, "-m", "nvcre_tui"]
DEADLINE_SECONDS = 120.0
# Twice the default fleet (so a run --wait lasts long enough to be killed mid-way), both faults of it.
FLEET = """name: twice-default
seed: 7
speed: {speed}
nodes:
  - {{count: 64, cliques: 4}}
faults:
  - {{type: slow-gpu, node: gpu-node-07, gpu: 3, factor: 0.55}}
  - {{type: degraded-nic, node: gpu-node-12, factor: 0.4}}
"""
FAULTY = ["gpu-node-07", "gpu-node-12"]


def scenario_file(folder: Path, speed: float = 60.0) -> Path:
    path = folder / "fleet.yaml"
    path.write_text(FLEET.format(speed=speed))
    return path


_STARTED: list[subprocess.Popen[str]] = []  # run_wait's processes: none outlives its test (_no_process_left)


def run_wait(state: Path, scenario: Path, name: str = "burn-in") -> subprocess.Popen[str]:
    # PYTHONFAULTHANDLER: a process that does not exit in time is sent SIGABRT (finish), which prints its stacks first
    process = subprocess.Popen([*NVCRE, "certification", "run", "--sim", "--cert-file", BURN_IN, "--name", name, "--wait",
                                "--scenario", str(scenario), "--state", str(state)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, preexec_fn=default_hangup,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    _STARTED.append(process)
    return process


def finish(process: subprocess.Popen[str], what: str = "run --wait") -> tuple[str, str]:
    """Its stdout and stderr once it exited; a process still running after DEADLINE_SECONDS fails the test with what
    it printed and where each of its threads stood (a run that once hung after its report said nothing more)."""
    try:
        return process.communicate(timeout=DEADLINE_SECONDS)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        out, err = process.communicate(timeout=DEADLINE_SECONDS)
    pytest.fail(f"{what} (pid {process.pid}) had not exited after {DEADLINE_SECONDS:g} s; its stdout ended with:\n{out[-1500:]}\n"
                f"its stderr (its threads' stacks at the timeout last) ended with:\n{err[-8000:]}")


@pytest.fixture(autouse=True)
def _no_process_left() -> Iterator[None]:
    """A test that failed with a run_wait process still running kills it: left, it would load the machine for the rest
    of the suite (and hold its store's Lease)."""
    yield
    while _STARTED:
        process = _STARTED.pop()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE_SECONDS)


def report(state: Path, scenario: Path, name: str = "burn-in") -> dict[str, Any]:
    """`nvcre certification report NAME -o json` on the store, once every process on it has ended.

    The command runs in this process (the same `main` a process runs; a new interpreter would only add its
    start-up): what it reads is the store file the killed and restarted processes left."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["certification", "report", name, "-o", "json", "--sim", "--scenario", str(scenario), "--state", str(state)])
    assert code in (0, 1), err.getvalue()
    return json.loads(out.getvalue())


def objects(state: Path, plural: str) -> list[dict[str, Any]]:
    """Every stored object of a kind, read as another process would (read-only, never blocking a writer)."""
    if not state.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=5)) as db:
        try:
            rows = db.execute("SELECT body FROM objects WHERE kind LIKE ?", (f"%/{plural}",)).fetchall()
        except sqlite3.OperationalError:  # the tables are not created yet
            return []
    return [json.loads(row[0]) for row in rows]


def wait_for(what: str, check: Callable[[], bool], process: subprocess.Popen[Any] | None = None) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not check():
        if process is not None and process.poll() is not None:
            pytest.fail(f"the process ended (exit {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def mid_run(state: Path, name: str = "burn-in") -> bool:
    """Some of the certification's Jobs have finished, the certification has not."""
    certs = [c for c in objects(state, "certifications") if c["metadata"]["name"] == name]
    finished = [j for j in objects(state, "jobs") if j["metadata"]["name"].startswith(name) and cond.is_terminal(j)]
    return bool(certs) and not cond.is_terminal(certs[0]) and len(finished) >= 2


def terminal(state: Path, name: str = "burn-in") -> bool:
    return any(c["metadata"]["name"] == name and cond.is_terminal(c) for c in objects(state, "certifications"))


def lease_holder(state: Path) -> str:
    [lease] = objects(state, "leases")
    return str(lease["spec"]["holderIdentity"])


def kill(process: subprocess.Popen[Any], sig: signal.Signals, handled: bool = False) -> None:
    process.send_signal(sig)
    process.wait(timeout=DEADLINE_SECONDS)  # reaped: a zombie would still look alive to the next process
    # it died of the signal, with no chance to clean up; or (`handled`) it stopped as ctrl-c stops it, 128 + the signal
    assert process.returncode == (128 + sig if handled else -sig)


@pytest.fixture(scope="module")
def finished_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of burn-in run from start to end by one `run --wait` (on scenario_file's fleet, speed 60): never
    written after; tests that need a finished store copy it."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    scenario, state = scenario_file(folder), folder / "state.db"
    process = run_wait(state, scenario)
    out, err = finish(process)
    assert process.returncode == 1, err  # FAILED: both faulty nodes found
    return state


@pytest.fixture(scope="module")
def uninterrupted(finished_store: Path) -> dict[str, Any]:
    """The digest of burn-in run from start to end by one `run --wait`."""
    result = digest(report(finished_store, finished_store.parent / "fleet.yaml"))
    assert result["failedNodes"] == FAULTY
    return result


def copy_store(store: Path, folder: Path) -> Path:
    """A copy of a store file no process has open (its WAL too, were one left) in `folder`."""
    for suffix in ("", "-wal"):
        if Path(f"{store}{suffix}").exists():
            shutil.copyfile(f"{store}{suffix}", folder / f"{store.name}{suffix}")
    return folder / store.name


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP], ids=["SIGKILL", "SIGHUP"])
def test_run_wait_killed_mid_run_and_started_again_reaches_the_same_report(sig: signal.Signals, uninterrupted: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    scenario, state = scenario_file(tmp_path), tmp_path / "state.db"
    first = run_wait(state, scenario)
    wait_for("burn-in to be mid-run", lambda: mid_run(state), first)
    kill(first, sig, handled=sig == signal.SIGHUP)  # run --wait stops on a hang-up as on ctrl-c (its terminal went away)
    assert not terminal(state)  # the kill fell mid-run: there is something to continue
    again = run_wait(state, scenario)  # the same command again (its holder is dead: the Lease is taken at once)
    out, err = finish(again)
    assert again.returncode == 1 and "Traceback" not in err, err
    assert "already exists in namespace default with this spec: following it" in err
    assert "viewer" not in err  # a dead holder is not waited for
    assert "Result:         FAILED" in out
    assert digest(report(state, scenario)) == uninterrupted
    assert lease_holder(state) == ""  # released on the clean exit


def test_two_run_wait_on_one_store_both_finish_and_one_engine_reconciles(tmp_path: Path) -> None:
    scenario, state = scenario_file(tmp_path), tmp_path / "state.db"
    first = run_wait(state, scenario, "burn-in")
    wait_for("the first engine to hold the lease", lambda: bool(objects(state, "leases")) and lease_holder(state) != "", first)
    holder = lease_holder(state)
    assert holder.startswith(f"engine@") and f"/{first.pid}/" in holder
    second = run_wait(state, scenario, "second")
    results = [finish(first, "the first run --wait"), finish(second, "the second run --wait")]
    assert [p.returncode for p in (first, second)] == [1, 1], [err for _, err in results]
    (_, first_err), (_, second_err) = results
    # The second process was a viewer of the first's engine, named by its identity, until that one exited.
    assert f"viewer: engine held by {holder}" in second_err
    assert "viewer" not in first_err
    for name in ("burn-in", "second"):  # none lost: both certifications ran to their report
        assert report(state, scenario, name)["failedNodes"] == FAULTY
    transitions = objects(state, "leases")[0]["spec"]["leaseTransitions"]
    assert transitions <= 2  # the first took it, the second (at most) took it over: never two at once


# ----- the console under a pseudo-terminal ---------------------------------------------------------------


class Console:
    """`nvcre` on a pseudo-terminal of 120 x 40; its screen output is drained (and kept) by a thread."""

    def __init__(self, state: Path, scenario: Path, command: tuple[str, ...] = (), env: dict[str, str] | None = None) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {**(os.environ if env is None else env), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        self.process = subprocess.Popen([*NVCRE, *command, "--sim", "--scenario", str(scenario), "--state", str(state)],
                                        stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env, start_new_session=True,
                                        preexec_fn=default_hangup)
        os.close(slave)
        self.master = master
        self.screen = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self.master, 65536):
                self.screen += chunk

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=DEADLINE_SECONDS)
        with contextlib.suppress(OSError):
            os.close(self.master)


def start_console(state: Path, scenario: Path) -> Console:
    console = Console(state, scenario)
    wait_for("the console's engine to hold the lease",
             lambda: bool(objects(state, "leases")) and f"/{console.process.pid}/" in lease_holder(state), console.process)
    return console


def create(state: Path, scenario: Path) -> None:
    """`run` without --wait from another terminal: the certification is created; the console's engine runs it."""
    done = subprocess.run([*NVCRE, "certification", "run", "--sim", "--cert-file", BURN_IN, "--scenario", str(scenario),
                           "--state", str(state)], capture_output=True, text=True, timeout=DEADLINE_SECONDS, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "viewer: engine held by console@" in done.stderr  # the console's engine holds the store


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP], ids=["SIGKILL", "SIGHUP"])
def test_a_console_killed_mid_run_and_started_again_reaches_the_same_report(sig: signal.Signals, uninterrupted: dict[str, Any],
                                                                            tmp_path: Path) -> None:
    scenario, state = scenario_file(tmp_path, speed=800.0), tmp_path / "state.db"
    console = start_console(state, scenario)
    try:
        create(state, scenario)
        wait_for("burn-in to be mid-run", lambda: mid_run(state), console.process)
        console.process.send_signal(sig)
        console.process.wait(timeout=DEADLINE_SECONDS)
        assert not terminal(state)
    finally:
        console.close()
    again = start_console(state, scenario)  # takes the dead console's Lease at once and goes on
    try:
        wait_for("burn-in to finish", lambda: terminal(state), again.process)
    finally:
        again.close()
    assert digest(report(state, scenario)) == uninterrupted


def test_run_wait_beside_a_console_is_a_viewer_until_its_certification_finishes(uninterrupted: dict[str, Any],
                                                                                tmp_path: Path) -> None:
    scenario, state = scenario_file(tmp_path, speed=800.0), tmp_path / "state.db"
    console = start_console(state, scenario)
    try:
        holder = lease_holder(state)
        process = run_wait(state, scenario)
        out, err = finish(process)
        assert process.returncode == 1 and "Traceback" not in err, err
        assert f"viewer: engine held by {holder}" in err  # it says who reconciles, and waits for that engine
        assert "took it over" not in err and lease_holder(state) == holder  # the console's engine did all the work
        assert "[watch] Certification failed." in err and "Result:         FAILED" in out
    finally:
        console.close()
    assert digest(report(state, scenario)) == uninterrupted


@pytest.mark.parametrize("command", [("--read-only",), ("wall",)], ids=["read-only", "wall"])
def test_a_read_only_console_writes_no_file(command: tuple[str, ...], finished_store: Path, tmp_path: Path) -> None:
    """Design property 7: the store is opened read-only and the history only read, so an empty HOME stays empty."""
    # finished (a copy of the module's run): an archiving console would archive it into the empty HOME's history
    scenario, state = scenario_file(tmp_path), copy_store(finished_store, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("NVCRE_HISTORY", "NVCRE_STATE", "XDG_STATE_HOME")}
    before = state.stat().st_mtime_ns
    console = Console(state, scenario, command, env={**env, "HOME": str(home)})
    try:
        wait_for("the console to draw the certification", lambda: b"burn-in" in console.screen, console.process)
        os.write(console.master, b"q")  # quit: whatever the console would write, it has written by its exit
        assert console.process.wait(timeout=DEADLINE_SECONDS) == 0
    finally:
        console.close()
    assert sorted(str(path.relative_to(home)) for path in home.rglob("*")) == []
    assert state.stat().st_mtime_ns == before
