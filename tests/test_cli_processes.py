"""The real `nvcre` process at its edges: a reader that stops reading, a closed stdin, ctrl-c during
`run --wait`. A handful of subprocesses: what a shell does to a process cannot be faked in-process."""

from __future__ import annotations

import contextlib
import os
import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.hangup import default_interrupt

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")
NVCRE = [sys.executable, "-m", "nvcre_tui"]


def test_a_broken_pipe_after_output_is_a_quiet_exit_0() -> None:
    # 110 KB of CRDs: more than a pipe holds, so the write after `head` exits fails with EPIPE.
    shell = f"{' '.join(NVCRE)} setup crds | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.startswith("apiVersion:") and done.stderr == ""


def test_a_table_reader_that_stops_is_exit_0_too() -> None:
    # Rich handles a broken pipe itself with exit 1: `parse` would mean FAILED, `list-categories` an error.
    for command in ("certification list-categories", "parse nccl tests/parsers/fixtures/nccl_e1_modern.txt"):
        shell = f"{' '.join(NVCRE)} {command} | (exec 0<&-; sleep 0.5); exit ${{PIPESTATUS[0]}}"
        done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert (done.returncode, done.stderr) == (0, ""), command


def test_a_reader_that_stops_leaves_a_verdicts_exit_code() -> None:
    """`parse ... | head` of a failing result: exit 1 still (it was 0: under `set -o pipefail`, a FAILED read as a pass)."""
    shell = f"{' '.join(NVCRE)} parse nccl tests/parsers/fixtures/nccl_all_gather_wrong.txt | (exec 0<&-; sleep 0.5); exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert (done.returncode, done.stderr) == (1, "")


@pytest.mark.parametrize("command", ["setup crds", "--help", "--version", "certification run --help"])
@pytest.mark.parametrize("redirect", [">/dev/full", ">&-"])
def test_an_output_that_cannot_be_written_is_one_line(redirect: str, command: str) -> None:
    # /dev/full: the disk is full (told in one line, exit 74, not FAILED's 1); a closed stdout: as `cat >&-` does, an
    # error (print() would skip a stdout of None without a word). argparse drops a failed write of its help: ours
    # fails as any other output.
    done = subprocess.run(["bash", "-c", f"{' '.join(NVCRE)} {command} {redirect}"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    reason = "No space left on device" if redirect == ">/dev/full" else "standard output is closed"
    assert (done.returncode, done.stderr) == (74, f"nvcre: cannot write the output: {reason}\n")


@pytest.mark.parametrize("command", ["setup crds", "certification render examples/burn-in.yaml"])
def test_output_cut_short_by_the_file_size_limit_is_an_error(tmp_path: Path, command: str) -> None:
    # A write the kernel takes only in part, as on a disk that fills up: Python's stdout returned the short count and
    # TextIOWrapper dropped the rest (a YAML file cut at 12 KiB, exit 0). `ulimit -f` gives the same short write.
    out = tmp_path / "out.yaml"
    done = subprocess.run(["bash", "-c", f"ulimit -f 12; {' '.join(NVCRE)} {command} > {out}"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert (done.returncode, done.stderr) == (74, "nvcre: cannot write the output: File too large\n")
    assert out.stat().st_size == 12 * 1024


def test_a_closed_stdout_fails_the_report_and_spares_the_store(tmp_path: Path) -> None:
    # The run goes on to its end; only the report it prints fails. Descriptor 1 stays held: the store opened after
    # it must not land there and take the output's bytes.
    results, state = tmp_path / "results.json", tmp_path / "state.db"
    shell = (f"{' '.join(NVCRE)} certification run --cert-file {BURN_IN} --state {state} --history {tmp_path / 'h.db'} "
             f"--wait --results-file {results} >&-")
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (74, "nvcre: cannot write the output: standard output is closed")
    assert results.read_text().startswith("{")
    with contextlib.closing(sqlite3.connect(state)) as database:
        assert database.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_closed_stdin_is_one_line() -> None:
    done = subprocess.run(["bash", "-c", f"{' '.join(NVCRE)} certification render - <&-"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr == "<stdin>: standard input is closed; pass a file instead of -\n"


def _start_run(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    scenario = tmp_path / "mid.yaml"
    scenario.write_text("name: mid\nnodes:\n  - {count: 64, cliques: 4}\n")  # a run of many engine steps
    process = subprocess.Popen([*NVCRE, "certification", "run", "--cert-file", BURN_IN, "--scenario", str(scenario), "--wait",
                                "--state", str(tmp_path / "state.db"), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT, preexec_fn=default_interrupt)
    assert process.stderr is not None
    for line in process.stderr:
        if "Watching certification progress" in line:
            return process
    process.kill()
    pytest.fail("the run never started following")


def test_ctrl_c_during_run_wait_stops_saves_and_says_the_run_goes_on(tmp_path: Path) -> None:
    process = _start_run(tmp_path)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "Traceback" not in err
    assert "Interrupted; the certification goes on and the simulator state is saved in" in err
    assert f"report later:  nvcre certification report burn-in --scenario {tmp_path / 'mid.yaml'} --state {tmp_path / 'state.db'}" in err
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db")) as db:  # committed: a report can follow it
        assert db.execute("SELECT count(*) FROM objects WHERE kind LIKE '%/certifications' AND name = 'burn-in'").fetchone() == (1,)


def test_ctrl_c_twice_exits_at_once_without_a_traceback(tmp_path: Path) -> None:
    process = _start_run(tmp_path)
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "Traceback" not in err
    # The second press lands while following (nothing saved) or, rarely, after the first already stopped it.
    assert "nvcre: interrupted; nothing more was saved" in err or "Interrupted; the certification goes on" in err
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.importing"))


def test_a_reader_of_stderr_that_goes_away_changes_nothing_else(tmp_path: Path) -> None:
    """`run --wait ... 2>&1 | head -1`: Rich's stderr console exited 1 (FAILED) at the first progress line after the
    reader left, dropping the wait and the results file; the certification stayed PENDING. Progress is not the outcome:
    the run follows to its end and writes its results (the report's stdout is gone too: its exit code, PASSED's 0)."""
    (tmp_path / "small.yaml").write_text("name: small\nnodes:\n  - {count: 4}\n")
    results = tmp_path / "results.json"
    run = (f"{' '.join(NVCRE)} certification run --sim --scenario {tmp_path / 'small.yaml'} --cert-file {BURN_IN} --state "
           f"{tmp_path / 'state.db'} --history {tmp_path / 'history.db'} --wait --results-file {results}")
    done = subprocess.run(["bash", "-c", f"{run} 2>&1 | head -1; exit ${{PIPESTATUS[0]}}"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith("Certification burn-in created"), (done.returncode, done.stdout)
    assert json.loads(results.read_text())["result"] == "PASSED"
    # stderr alone gone (stdout read to the end): the report is printed whole and the exit code is the certification's
    done = subprocess.run(["bash", "-c", f"{run.replace('burn-in.yaml', 'burn-in.yaml --name again')} 2>&1 >{tmp_path / 'out.txt'} | head -0"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert "Result:         PASSED" in (tmp_path / "out.txt").read_text()


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGTERM, 143, "Terminated (SIGTERM)"), (signal.SIGHUP, 129, "Hung up (SIGHUP)")])
def test_sigterm_and_sighup_during_run_wait_cleanup_delete_the_certification(tmp_path: Path, signum: int, code: int, said: str) -> None:
    """--cleanup deletes the certification "on every exit": a `kill` (rc 143) or a closed terminal (129) left it
    RUNNING without a word; they stop as the first ctrl-c does, with their own exit code."""
    process = _start_run(tmp_path, "--cleanup")
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == code and "Traceback" not in err
    assert f"{said}; --cleanup deletes the certification now." in err
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db")) as db:
        assert db.execute("SELECT count(*) FROM objects WHERE kind LIKE '%/certifications' AND name = 'burn-in'").fetchone() == (0,)


def test_nohup_keeps_run_wait_going_through_a_hang_up(tmp_path: Path) -> None:
    """`nohup nvcre certification run --wait --cleanup` must outlive its terminal: the SIGHUP handler was installed over
    nohup's SIG_IGN, so closing the ssh session stopped the run (129) and --cleanup deleted the certification."""
    from nvcre_tui.cli.interrupt import stop_on_interrupt

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_on_interrupt() as stop:
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
            assert not stop.requested
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_reader_that_stops_before_a_bad_input_line_gets_no_traceback(tmp_path: Path) -> None:
    """`report kept broken -o json | head -3`: kept's report printed, then broken's one line and exit 2. The pipe closed
    meanwhile, and the interpreter's final flush printed `Exception ignored ... BrokenPipeError` with a traceback."""
    state, history = tmp_path / "state.db", tmp_path / "history.db"
    # kept finished: its report (26 KB of JSON) outgrows the output buffer and meets the closed pipe as it is printed.
    # An unfinished one (2 KB) met it only at the final flush, after broken's line; under load it finished now and then,
    # and broken went unsaid with exit 0.
    codes = [subprocess.run([*NVCRE, "certification", "run", "--sim", "--cert-file", BURN_IN, "--name", name, "--state", str(state),
                             "--history", str(history), *wait], capture_output=True, timeout=120, cwd=ROOT).returncode
             for name, wait in (("kept", ["--wait"]), ("broken", []))]
    assert codes == [1, 0]  # burn-in finds gpu-node-07's slow GPU: FAILED
    report = f"{' '.join(NVCRE)} certification report kept broken -o json --state {state} --history {history}"
    # kept alone: its report met the closed pipe, and the exit is still FAILED's 1 (it was 0, a pass under pipefail)
    alone = subprocess.run(["bash", "-c", f"{report.replace(' broken', '')} | (exec 0<&-; sleep 0.5); exit ${{PIPESTATUS[0]}}"],
                           capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert (alone.returncode, alone.stderr) == (1, "")
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        assert db.execute("UPDATE objects SET body = '{not json' WHERE kind LIKE '%/certifications' AND name = 'broken'").rowcount == 1
    done = subprocess.run(["bash", "-c", f"{report} | (exec 0<&-; sleep 0.5); exit ${{PIPESTATUS[0]}}"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"certification 'broken': Certification default/broken: damaged row in {state}: body is not JSON "
                                        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"], done.stderr
