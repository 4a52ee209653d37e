"""The kubeconfig fields that name a file or hold base64 data, checked before the client library reads them: it
said `[Errno 2] No such file or directory: '/nonexist'`, `File does not exists: /nonexist` or `Invalid
base64-encoded string: ...`, naming neither the field nor the entry. Each problem is one line naming both
(users[me].user.tokenFile: /nonexist: no such file).

A named pipe or a device is read as kubectl reads it (a credential helper writing a FIFO, `client-key: <(vault ...)`),
but here, once and bounded (PIPE_SECONDS, MAX_CREDENTIAL_FILE_BYTES), its contents put in the field's data twin: the
library would read it whole (/dev/zero filled memory) and a second time (the helper gone: a wait for ever)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
import select
import stat
import time
from pathlib import Path
from typing import Any, Protocol

from ..errors import InputError
from ..inputs.limits import MAX_CREDENTIAL_FILE_BYTES, MIB

# section -> the fields of its entries' body that name a file, and those that hold a file's contents in base64
FILE_FIELDS = {"clusters": ("certificate-authority",), "users": ("tokenFile", "client-certificate", "client-key")}
DATA_FIELDS = {"clusters": ("certificate-authority-data",), "users": ("client-certificate-data", "client-key-data")}
PIPE_SECONDS = 10.0  # a credential helper writing a named pipe has written and closed it by then


def check_credential_fields(body: dict[str, Any], section: str, name: str, where: str) -> dict[str, tuple[str, str]]:
    """InputError naming the first field of entry `name` of `section` ("clusters", "users") whose file cannot be read
    or whose data is not base64. `body` is the entry's cluster or user mapping; file paths are absolute by now. A named
    pipe's or a device's contents replace its field in `body` (by its `-data` twin, base64; `token` for tokenFile):
    returned are the fields so filled, each with the field and file the kubeconfig named (for messages about their
    contents; a tokenFile is read again as it changes: token_file_reader)."""
    field_of = f"{where}: {section}[{name}].{section[:-1]}"
    filled: dict[str, tuple[str, str]] = {}
    for field in FILE_FIELDS[section]:
        value = body.get(field)
        twin = "token" if field == "tokenFile" else f"{field}-data"
        # the client (as client-go) reads a field's `-data` twin when it is set and never opens the file
        if isinstance(value, str) and value and not body.get(twin):
            problem, contents = _file_problem(Path(value))
            if problem is None and contents is None and field == "tokenFile":
                problem, contents = _read_regular(Path(value))
            if problem:
                raise InputError(f"{field_of}.{field}: {value}: {problem}")
            if contents is not None:
                del body[field]
                body[twin] = _token(contents, f"{field_of}.{field}: {value}") if field == "tokenFile" else base64.standard_b64encode(contents).decode()
                filled[twin] = (field, value)
    token = body.get("token") if section == "users" else None
    if isinstance(token, str) and unsendable(token):
        raise InputError(f"{field_of}.token: holds a line break or another control character, which no HTTP header carries")
    for field in DATA_FIELDS[section]:
        value = body.get(field)
        if isinstance(value, str) and value:
            try:
                base64.standard_b64decode(value)  # as the client decodes it (characters outside base64 skipped)
            except (binascii.Error, ValueError):
                raise InputError(f"{field_of}.{field}: not base64 data (it holds the file's contents, base64-encoded; "
                                 f"{field.removesuffix('-data')} names a file instead)") from None
    if section == "users":
        _check_pair(body, field_of)
    return filled


def _check_pair(body: dict[str, Any], field_of: str) -> None:
    """A client certificate needs its key and a key its certificate, as kubectl requires ("client-key-data or client-key
    must be specified for u to use the clientCert authentication method"): a certificate alone was `[SSL] PEM lib`, a key
    alone silently ignored (the requests anonymous)."""
    certificate = body.get("client-certificate-data") or body.get("client-certificate")
    key = body.get("client-key-data") or body.get("client-key")
    if bool(certificate) != bool(key):
        given, missing = ("client-certificate", "client-key") if certificate else ("client-key", "client-certificate")
        raise InputError(f"{field_of}: {given} without {missing} (or {missing}-data): a client certificate authenticates with both, "
                         "as kubectl requires")


def _token(contents: bytes, field: str) -> str:
    """A tokenFile's token as client-go reads it: whitespace trimmed (`kubectl create token sa > file` ends it with a line
    break, which the client sent in the header: "Forbidden control character", an internal error), none refused."""
    token = contents.decode("utf-8", "replace").strip()
    if not token:
        raise InputError(f"{field}: empty: it holds no token")
    if unsendable(token):
        raise InputError(f"{field}: holds more than one line, or a control character: a token is one line")
    return token


class TokenReader(Protocol):
    def __call__(self, at_once: bool = False) -> str | None:
        """A token read since the token in hand, or None; `at_once`: read now, whenever it was last read (its token
        refused, as client-go reads it again after a 401)."""


def token_file_reader(path: str, every: float) -> TokenReader:
    """A call giving the token in regular file `path` when at least `every` seconds have passed since it was last read,
    else None (and None when it cannot be read now, or holds no token: the token in hand stays, as client-go keeps its
    cached one). kubectl reads a tokenFile again each minute: a token a sidecar or an agent rotates there (Vault agent,
    a projected ServiceAccount token) lasts as long as the engine runs."""
    last = time.monotonic()

    def fresh(at_once: bool = False) -> str | None:
        nonlocal last
        if time.monotonic() - last < every and not at_once:
            return None
        last = time.monotonic()
        problem, contents = _file_problem(Path(path))
        if problem is None and contents is None:
            problem, contents = _read_regular(Path(path))
        if problem is not None or contents is None:
            return None
        try:
            return _token(contents, path)
        except InputError:
            return None

    return fresh


def pipe_token_reader(path: str, every: float) -> TokenReader:
    """token_file_reader's for a tokenFile that is a named pipe, which client-go reads again each minute too (a helper
    writing the token each time the pipe is opened). Read in the background on the running event loop, never waited
    for: a call gives the token a read finished since the last call gave (else None), and starts the next read when
    `every` seconds passed since the last one started (at once: when none is under way). A pipe its one-shot writer (`<(...)`) left gives nothing within
    PIPE_SECONDS: that read ends, the token in hand stays; client-go's read waited for a writer for ever."""
    last = time.monotonic()
    reading: asyncio.Task[bytes | None] | None = None

    def fresh(at_once: bool = False) -> str | None:
        nonlocal last, reading
        token = None
        if reading is not None and reading.done():
            contents = None if reading.cancelled() else reading.result()
            reading = None
            try:
                token = _token(contents, path) if contents is not None else None
            except InputError:  # empty, several lines: the token in hand stays
                token = None
        if reading is None and (at_once or time.monotonic() - last >= every):
            last = time.monotonic()
            reading = asyncio.get_running_loop().create_task(_read_pipe(Path(path)))
        return token

    return fresh


async def _read_pipe(path: Path) -> bytes | None:
    """A named pipe's contents, as _read_special reads them (its writer waited for up to PIPE_SECONDS, at most
    MAX_CREDENTIAL_FILE_BYTES), without holding the event loop meanwhile; None when it gave none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[bytes | None] = loop.create_future()
    chunks: list[bytes] = []

    def readable() -> None:  # Linux reports a pipe readable once a writer wrote to it or closed it, as poll does
        if ended.done():
            return
        try:
            chunk = os.read(fd, MAX_CREDENTIAL_FILE_BYTES + 1)
        except BlockingIOError:
            return
        except OSError:
            ended.set_result(None)
            return
        chunks.append(chunk)
        if not chunk or sum(map(len, chunks)) > MAX_CREDENTIAL_FILE_BYTES:
            ended.set_result(b"".join(chunks) if not chunk else None)

    loop.add_reader(fd, readable)
    try:
        return await asyncio.wait_for(ended, PIPE_SECONDS)
    except TimeoutError:
        return None
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def unsendable(token: str) -> bool:
    """Whether `token` holds a character no HTTP header carries (a line break, another control character)."""
    return any(ord(char) < 32 or ord(char) == 127 for char in token)


def _read_regular(path: Path) -> tuple[str | None, bytes | None]:
    """A regular file's contents (its size checked by _file_problem)."""
    try:
        with path.open("rb") as handle:
            return None, handle.read(MAX_CREDENTIAL_FILE_BYTES + 1)
    except OSError as error:
        return f"cannot be read ({error.strerror or error})", None


def _file_problem(path: Path) -> tuple[str | None, bytes | None]:
    """(why `path` cannot be read, None) or (None, the contents of a named pipe or device, read here; None for a
    regular file, which the client reads)."""
    try:
        if not path.exists():
            return "no such file", None
        if path.is_dir():
            return "is a directory, not a file", None
        info = path.stat()
    except OSError as error:
        return f"cannot be read ({error.strerror or error})", None
    if stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        return _read_special(path, "a named pipe" if stat.S_ISFIFO(info.st_mode) else "a device")
    if not stat.S_ISREG(info.st_mode):
        return "a socket, not a file; name the file that holds it", None
    if info.st_size > MAX_CREDENTIAL_FILE_BYTES:
        return f"{info.st_size / MIB:.1f} MiB, larger than the {MAX_CREDENTIAL_FILE_BYTES // MIB} MiB of any token, certificate or key", None
    return (None, None) if os.access(path, os.R_OK) else ("cannot be read (permission denied)", None)


def _read_special(path: Path, kind: str) -> tuple[str | None, bytes | None]:
    """A named pipe or a device read to its end within PIPE_SECONDS and MAX_CREDENTIAL_FILE_BYTES. Opened without
    blocking (a pipe's open waits for a writer) and polled: Linux reports a pipe readable only once a writer wrote to
    it or closed it, so a helper that opens it after nvcre does is waited for, not taken for an empty pipe."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        return f"cannot be read ({error.strerror or error})", None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + PIPE_SECONDS
        chunks: list[bytes] = []
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                return (f"{kind} nothing wrote to and closed within {PIPE_SECONDS:g} s (its writer is the credential helper: is it "
                        "running?)"), None
            try:
                chunk = os.read(fd, MAX_CREDENTIAL_FILE_BYTES + 1 - size)
            except BlockingIOError:
                continue
            except OSError as error:
                return f"cannot be read ({error.strerror or error})", None
            if not chunk:
                return None, b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_CREDENTIAL_FILE_BYTES:
                return (f"{kind} giving more than the {MAX_CREDENTIAL_FILE_BYTES // MIB} MiB of any token, certificate or key "
                        "(/dev/zero?); name the file that holds it"), None
    finally:
        os.close(fd)
