"""Bounded reads of a file or stdin: never more than a limit, so /dev/zero, a huge file or a directory
gives one clear error at once, while pipes and process substitution (/dev/fd/N) keep working."""

from __future__ import annotations

import os
import select
import stat
import sys
from typing import BinaryIO

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs.limits import MIB

STDIN = "-"
STDIN_NAME = "<stdin>"
_CHUNK = 1 << 16
FIFO_WAIT_SECONDS = 10.0  # how long a named pipe may keep us waiting for its writer


class MissingInput(InputError):
    """The file does not exist (callers with a default, like the state file, catch this one)."""


def _size(limit: int) -> str:
    return f"{limit / MIB:g} MiB" if limit >= MIB else f"{limit} bytes"


def _too_large(name: str, limit: int) -> InputError:
    return InputError(f"{name}: larger than the {_size(limit)} limit for this input; not read")


def _strerror(error: OSError) -> str:
    return error.strerror or str(error)


def stdin_is_terminal() -> bool:
    """Whether standard input is a terminal: reading it for a file would wait, silently, for someone to type one."""
    stream = sys.stdin
    try:
        return stream is not None and not stream.closed and stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


TERMINAL_ADVICE = "standard input is a terminal, not a file: pipe the input in (nvcre ... < FILE) or name a file instead of -"


def _read_stdin(limit: int) -> bytes:
    stream = sys.stdin
    if stream is None or getattr(stream, "closed", False):
        raise InputError(f"{STDIN_NAME}: standard input is closed; pass a file instead of -")
    if stdin_is_terminal():
        raise InputError(f"{STDIN_NAME}: {TERMINAL_ADVICE}")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is None:  # already text (a test's StringIO)
            return str(stream.read(limit + 1)).encode("utf-8")
        return bytes(buffer.read(limit + 1))
    except OSError as error:
        raise InputError(f"{STDIN_NAME}: cannot read: {_strerror(error)}") from None
    except ValueError:  # "I/O operation on closed file"
        raise InputError(f"{STDIN_NAME}: standard input is closed; pass a file instead of -") from None


def _await_writer(descriptor: int, name: str) -> None:
    """Wait (bounded) until a named pipe has something to read: opened plainly, a pipe nobody writes to would
    block forever. A pipe from process substitution (/dev/fd/N) has its writer already and is read as stdin is."""
    ready = select.poll()
    ready.register(descriptor, select.POLLIN)
    if not ready.poll(round(FIFO_WAIT_SECONDS * 1000)):
        raise InputError(f"{name}: a named pipe that nothing wrote to within {FIFO_WAIT_SECONDS:g} s; not read")


def _named(descriptor: int) -> bool:
    """Whether an open pipe is a named one (a FIFO on a filesystem) rather than a shell's pipe (`<(command)`,
    /dev/stdin): Linux names the latter "pipe:[inode]". Elsewhere every pipe counts as named."""
    try:
        return not os.readlink(f"/proc/self/fd/{descriptor}").startswith("pipe:")
    except OSError:
        return True


def _open_descriptor(path: str, name: str, limit: int | None = None) -> int:
    """A blocking descriptor of `path`, ready to read: not a directory, not a regular file over `limit`, and a
    named pipe only once its writer has written (bounded). InputError otherwise."""
    try:
        # O_NONBLOCK: opening a named pipe with no writer would wait for one, forever (see _await_writer).
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise MissingInput(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, not a file") from None
    except OSError as error:
        raise InputError(f"{name}: cannot read: {_strerror(error)}") from None
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{name}: is a directory, not a file")
        if limit is not None and stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise _too_large(name, limit)
        if stat.S_ISFIFO(info.st_mode) and _named(descriptor):
            _await_writer(descriptor, name)
        os.set_blocking(descriptor, True)
    except OSError as error:
        os.close(descriptor)
        raise InputError(f"{name}: cannot read: {_strerror(error)}") from None
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_binary(path: str, name: str | None = None) -> BinaryIO:
    """`path` opened for a streamed read of any length (a tool's output), with the same refusals as read_bytes:
    a directory, and a named pipe nothing writes to (instead of waiting forever)."""
    return os.fdopen(_open_descriptor(path, name or path), "rb")


def _read_file(path: str, limit: int, name: str) -> bytes:
    descriptor = _open_descriptor(path, name, limit)
    try:
        chunks, total = [], 0
        while total <= limit:  # devices and pipes have no size: stop one byte past the limit
            chunk = os.read(descriptor, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, not a file") from None
    except OSError as error:
        raise InputError(f"{name}: cannot read: {_strerror(error)}") from None
    finally:
        os.close(descriptor)


def read_bytes(path: str, limit: int, name: str | None = None) -> tuple[str, bytes]:
    """(display name, content) of `path`, or of stdin for "-"; InputError past `limit` bytes.
    `name` is how messages call the file (default: the path)."""
    name = name or (STDIN_NAME if path == STDIN else path)
    data = _read_stdin(limit) if path == STDIN else _read_file(path, limit, name)
    if len(data) > limit:
        raise _too_large(name, limit)
    return name, data


def read_text(path: str, limit: int, name: str | None = None) -> tuple[str, str]:
    """As read_bytes, decoded as UTF-8 (a byte-order mark is dropped); InputError when it is not text."""
    name, data = read_bytes(path, limit, name)
    try:
        return name, data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{name}: not UTF-8 text (invalid byte at offset {error.start})") from None
