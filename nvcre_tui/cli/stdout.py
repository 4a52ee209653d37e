"""The process's standard output as the commands write it: every byte written or an error, never a silent loss;
and its standard error, whose reader going away changes nothing else.

Python's own stdout loses output without a word in two cases. A disk that fills part-way through a large write
makes its BufferedWriter return a short count, which TextIOWrapper ignores (a YAML or HTML report cut at 8 KiB,
exit 0). And a stdout closed at start (`>&-`) is None, which print() skips. Here the first raises ENOSPC and the
second EBADF, which `main` reports as "cannot write the output" with its own exit code.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO, cast


class WholeWrites(io.RawIOBase):
    """A file descriptor written whole: os.write again after a short write, so a full disk raises."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: object) -> int:  # bytes-like, as RawIOBase takes
        view = memoryview(data).cast("B")  # type: ignore[arg-type]
        size = len(view)
        while view:
            view = view[os.write(self._fd, view) :]
        return size


class ClosedOutput(io.TextIOBase):
    """Standard output that was closed at start: a command that prints fails with EBADF; one that prints nothing
    (a controller logging to stderr) runs."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise OSError(errno.EBADF, "standard output is closed")


def take_stdout() -> None:
    """Replace sys.stdout (the process's own only: a test's capture stays) with one that writes whole or fails."""
    if sys.stdout is None:
        # Hold descriptor 1 open on /dev/null so no file opened later (the SQLite store) lands there.
        os.open(os.devnull, os.O_WRONLY)
        sys.stdout = ClosedOutput()
        return
    current: TextIO = sys.stdout
    if current is not sys.__stdout__:
        return
    try:
        fd = current.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    current.flush()
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(WholeWrites(fd)), encoding=current.encoding, errors=current.errors,
                                  line_buffering=current.line_buffering)


class Diagnostics(io.TextIOBase):
    """Standard error as the commands write to it: progress and notes, whose reader going away (`2>&1 | head -1`, a
    closed terminal) must change nothing else. Rich's console exits 1 (FAILED) on a broken stderr pipe, which dropped
    `run --wait` and its results file; here the first failed write sends the rest to /dev/null, and the command goes
    on to its own outcome."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self.lost = False  # a write failed: what followed went nowhere

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return not self.lost and self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self._stream.write(text)
                if "\n" in text:
                    self._stream.flush()
            except (OSError, ValueError):
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._lose()

    def _lose(self) -> None:
        self.lost = True
        try:  # the interpreter's own last flush and any other writer of descriptor 2 stay quiet too
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError):
            pass


def take_stderr() -> None:
    """Replace sys.stderr (the process's own only: a test's capture stays) with Diagnostics."""
    if sys.stderr is None or sys.stderr is not sys.__stderr__:
        return
    sys.stderr = Diagnostics(cast(TextIO, sys.stderr))


def quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass


_verdict_printed = False  # verdict_output was entered: a broken pipe at the final flush keeps the exit code too


@contextlib.contextmanager
def verdict_output() -> Iterator[None]:
    """Around the printing of a command's outcome (a report, a parse): a reader gone meanwhile (`| head`) ends the
    printing, not the command, whose exit code stays its verdict's. Exit 0 for a FAILED certification whose report
    met a closed pipe read as a pass under `set -o pipefail`."""
    global _verdict_printed
    _verdict_printed = True
    try:
        yield
    except BrokenPipeError:
        quiet_stdout()


def verdict_printed() -> bool:
    """Whether this process printed a verdict (verdict_output): its exit code outlives a reader gone at the last flush;
    any other command's is 0 then, as when the pipe broke mid-output."""
    return _verdict_printed
