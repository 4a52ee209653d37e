"""The process's standard output as the commands write it: every byte written or an error, never a silent loss.

Python's own stdout loses output without a word in two cases. A disk that fills part-way through a large write
makes its BufferedWriter return a short count, which TextIOWrapper ignores (a YAML or HTML report cut at 8 KiB,
exit 0). And a stdout closed at start (`>&-`) is None, which print() skips. Here the first raises ENOSPC and the
second EBADF, which `main` reports as "cannot write the output" with its own exit code.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import TextIO


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
