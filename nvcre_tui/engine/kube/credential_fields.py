"""The kubeconfig fields that name a file or hold base64 data, checked before the client library reads them: it
said `[Errno 2] No such file or directory: '/nonexist'`, `File does not exists: /nonexist` or `Invalid
base64-encoded string: ...`, naming neither the field nor the entry. Each problem is one line naming both
(users[me].user.tokenFile: /nonexist: no such file)."""

from __future__ import annotations

import base64
import binascii
import os
import stat
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..inputs.limits import MAX_CREDENTIAL_FILE_BYTES, MIB

# section -> the fields of its entries' body that name a file, and those that hold a file's contents in base64
FILE_FIELDS = {"clusters": ("certificate-authority",), "users": ("tokenFile", "client-certificate", "client-key")}
DATA_FIELDS = {"clusters": ("certificate-authority-data",), "users": ("client-certificate-data", "client-key-data")}


def check_credential_fields(body: dict[str, Any], section: str, name: str, where: str) -> None:
    """InputError naming the first field of entry `name` of `section` ("clusters", "users") whose file cannot be read
    or whose data is not base64. `body` is the entry's cluster or user mapping; file paths are absolute by now."""
    field_of = f"{where}: {section}[{name}].{section[:-1]}"
    for field in FILE_FIELDS[section]:
        value = body.get(field)
        # the client (as client-go) reads a field's `-data` twin when it is set and never opens the file
        if isinstance(value, str) and value and not body.get(f"{field}-data"):
            problem = _file_problem(Path(value))
            if problem:
                raise InputError(f"{field_of}.{field}: {value}: {problem}")
    for field in DATA_FIELDS[section]:
        value = body.get(field)
        if isinstance(value, str) and value:
            try:
                base64.standard_b64decode(value)  # as the client decodes it (characters outside base64 skipped)
            except (binascii.Error, ValueError):
                raise InputError(f"{field_of}.{field}: not base64 data (it holds the file's contents, base64-encoded; "
                                 f"{field.removesuffix('-data')} names a file instead)") from None


def _file_problem(path: Path) -> str | None:
    try:
        if not path.exists():
            return "no such file"
        if path.is_dir():
            return "is a directory, not a file"
        info = path.stat()
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    # The library reads the file whole: /dev/zero as a tokenFile filled memory (gigabytes), a named pipe waited forever
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a device, a named pipe or a socket); name the file that holds it"
    if info.st_size > MAX_CREDENTIAL_FILE_BYTES:
        return f"{info.st_size / MIB:.1f} MiB, larger than the {MAX_CREDENTIAL_FILE_BYTES // MIB} MiB of any token, certificate or key"
    return None if os.access(path, os.R_OK) else "cannot be read (permission denied)"
