"""An output file that is a named pipe: written when a process reads it, refused at once (one line, exit 2) when
none does, and never a command that blocks forever in open() after its work is done."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.outfiles import check_writable, replace_file, write_atomically

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def pipe(tmp_path: Path) -> Path:
    path = tmp_path / "results.fifo"
    os.mkfifo(path)
    return path


def test_a_pipe_nobody_reads_is_refused_before_the_work(pipe: Path) -> None:
    with pytest.raises(InputError) as error:
        check_writable(pipe, "--results-file", stream=True)
    assert error.value.messages == [f"--results-file: {pipe}: cannot write: a named pipe that no process reads; start its reader first"]


def test_writing_a_pipe_nobody_reads_fails_instead_of_waiting(pipe: Path) -> None:
    """Without a check first (the log screen's save): ENXIO at once, not an open() that waits for a reader."""
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            replace_file(pipe, "text\n")
            outcome.append(None)
        except OSError as error:
            outcome.append(error)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(10)
    if writer.is_alive():  # blocked in open(): a reader lets it go, so the test process can end
        reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(10)
        os.close(reader)
        pytest.fail("writing a named pipe nobody reads blocked")
    assert isinstance(outcome[0], OSError) and outcome[0].errno == errno.ENXIO
    with pytest.raises(InputError, match="cannot write: a named pipe that no process reads"):
        write_atomically(pipe, "text\n")


def test_a_pipe_a_process_reads_gets_the_output_and_no_early_end(pipe: Path) -> None:
    """The check keeps the pipe open: a reader already waiting (`cat pipe`) must not see an end of file before the
    output comes, as it would if the check opened the pipe and closed it again."""
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        check_writable(pipe, "--results-file", stream=True)
        with pytest.raises(BlockingIOError):  # a writer holds it: no data yet, and no end of file
            os.read(reader, 100)
        replace_file(pipe, '{"result": "PASSED"}\n')
        assert os.read(reader, 100) == b'{"result": "PASSED"}\n'
        assert os.read(reader, 100) == b""  # written and closed: the reader's end of file
    finally:
        os.close(reader)


def test_a_store_path_that_is_a_pipe_is_left_to_the_store_to_refuse(pipe: Path) -> None:
    """Not a stream: the store's own check says a pipe is no store file, in its words (and nothing is held open)."""
    check_writable(pipe, "--state")


def test_run_with_a_results_pipe_nobody_reads_ends_in_one_line(pipe: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    environment = {key: value for key, value in os.environ.items() if key not in ("KUBECONFIG", "NVCRE_STATE", "NVCRE_HISTORY")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "nvcre_tui", "certification", "run", "--sim", "--cert-file", str(ROOT / "examples" / "burn-in.yaml"),
             "--state", str(tmp_path / "s.db"), "--wait", "--results-file", str(pipe)],
            cwd=ROOT, env={**environment, "HOME": str(home)}, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("run blocked on a results pipe nobody reads")
    assert done.returncode == 2, done.stderr
    # refused when the report is written (or, with the check up front, before the run: then named --results-file)
    assert done.stderr.splitlines()[-1].endswith(f"{pipe}: cannot write: a named pipe that no process reads; start its reader first")
