"""`run --workload-registry HOST --workload-registry-username U --workload-registry-password P` (NVCRE's flags): a
pull secret for the workloads' images in a private registry.

The command (with the user's credentials; the engine never reads a Secret) creates a `kubernetes.io/dockerconfigjson`
Secret beside the Certification, owned by it (a garbage collector removes it with it), and names it in the
certification's imagePullSecrets, globally and in every category that lists its own. Its name carries a random part,
so a run never meets an earlier run's. Deleting the certification through nvcre (`certification delete`, `--cleanup`,
the console) deletes it too (engine/history/deletion.py), as an API server with no garbage collector would keep it.
"""

from __future__ import annotations

import argparse
import base64
import getpass
import json
import secrets
import string
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nvcre_tui.cli.stdin import check_stdin_once
from nvcre_tui.engine.api.base import LocalObjectReference
from nvcre_tui.engine.api.resources import API_VERSION, Certification
from nvcre_tui.engine.api.vocabulary import LABEL_CERTIFICATION, PULL_SECRET_INFIX
from nvcre_tui.engine.errors import InputError

FLAGS = {"--workload-registry": "registry", "--workload-registry-username": "username", "--workload-registry-password": "password"}
SECRET_TYPE = "kubernetes.io/dockerconfigjson"


@dataclass(frozen=True)
class Login:
    """Where the workloads' images are, and who may pull them."""

    registry: str
    username: str
    password: str


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The three flags: all or none."""
    parser.add_argument("--workload-registry", metavar="HOST", help="a private registry of the workloads' images (with the two below: "
                                                                    "a pull secret owned by the certification)")
    parser.add_argument("--workload-registry-username", metavar="USER", help="its user name")
    parser.add_argument("--workload-registry-password", metavar="PASSWORD", help="its password or token ('-': one line from stdin, "
                                                                                 "kept out of the shell's history)")


def login_of(args: argparse.Namespace, before_reading: Callable[[], None] = lambda: None) -> Login | None:
    """The login the flags give (None: no flag); InputError when some are missing or empty, or when another input
    is read from standard input too (run calls this first, before anything reads it). `before_reading`: the caller's
    refusals that need no password (the simulator pulls no image), made before a password is read from stdin."""
    check_stdin_once(args)
    given = {flag: getattr(args, dest) for flag, dest in (("--workload-registry", "workload_registry"),
                                                          ("--workload-registry-username", "workload_registry_username"),
                                                          ("--workload-registry-password", "workload_registry_password"))}
    if not any(value is not None for value in given.values()):
        return None
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise InputError(f"{', '.join(missing)}: the workload registry needs all three of {', '.join(FLAGS)}")
    registry, username = str(given["--workload-registry"]), str(given["--workload-registry-username"])
    _check_line("--workload-registry", registry)
    _check_line("--workload-registry-username", username)
    if ":" in username:
        raise InputError("--workload-registry-username: must not hold ':' (it separates the user from the password)")
    before_reading()
    password = str(given["--workload-registry-password"])
    if password == "-":
        password = _read_password()
    _check_line("--workload-registry-password", password)
    return Login(registry, username, password)


def _check_line(flag: str, value: str) -> None:
    if not value.strip() or any(ch in value for ch in "\r\n\x00"):
        raise InputError(f"{flag}: must be one non-empty line")
    if not value.isascii():  # bytes that are no UTF-8 (in argv, or on stdin) come as lone surrogates: the secret's
        try:                 # encoding failed after the certification was created, an internal error leaving it behind
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{flag}: not UTF-8 text") from None


def _read_password() -> str:
    if sys.stdin is None or sys.stdin.closed:
        raise InputError("--workload-registry-password -: standard input is closed; pass the password on it")
    if sys.stdin.isatty():  # typed: not echoed (as `docker login --password-stdin` piped, or a prompt)
        try:
            line = getpass.getpass("workload registry password: ", stream=sys.stderr)
        except EOFError:  # ctrl-d at the prompt
            raise InputError("--workload-registry-password -: no password typed (end of input)") from None
    else:
        try:
            line = sys.stdin.readline(4097)
        except UnicodeDecodeError:  # a locale whose stdin decodes strictly
            raise InputError("--workload-registry-password -: not UTF-8 text") from None
    if len(line) > 4096:
        raise InputError("--workload-registry-password -: longer than 4096 characters")
    return line.rstrip("\n")


def secret_name(cert_name: str) -> str:
    """`<certification>-registry-<5 random>`: never an earlier run's (a server with no garbage collector keeps those)."""
    token = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(5))
    return f"{cert_name}{PULL_SECRET_INFIX}{token}"


def reference(cert: Certification, name: str) -> None:
    """Name the secret in the certification's imagePullSecrets: where the global ones are written (inline in spec,
    else spec.options), and in every category that replaces them with its own (they are replaced whole)."""
    ref = LocalObjectReference(name=name)
    spec = cert.spec
    if spec.image_pull_secrets is not None:
        spec.image_pull_secrets.append(ref)
    elif spec.options is not None and spec.options.image_pull_secrets is not None:
        spec.options.image_pull_secrets.append(ref)
    elif spec.options is not None:
        spec.options.image_pull_secrets = [ref]
    else:
        spec.image_pull_secrets = [ref]
    for category in spec.categories:
        if category.options is not None and category.options.image_pull_secrets is not None:
            category.options.image_pull_secrets.append(ref)


def secret_body(name: str, namespace: str, cert_name: str, cert_uid: str, login: Login) -> dict[str, Any]:
    """The pull secret, owned by the certification (not its controller: the engine never manages it)."""
    auth = base64.b64encode(f"{login.username}:{login.password}".encode()).decode()
    config = {"auths": {login.registry: {"username": login.username, "password": login.password, "auth": auth}}}
    return {"apiVersion": "v1", "kind": "Secret", "type": SECRET_TYPE,
            "metadata": {"name": name, "namespace": namespace, "labels": {LABEL_CERTIFICATION: cert_name},
                         "ownerReferences": [{"apiVersion": API_VERSION, "kind": Certification.KIND,
                                              "name": cert_name, "uid": cert_uid}]},
            "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()}}
