"""kubernetes-asyncio, imported through here and nowhere else.

Importing any of it imports kubernetes_asyncio.config.kube_config, which computes `Path.home() / ".kube/config"`
at import time (even with $KUBECONFIG set). With $HOME unset and the process's UID not in the password database
(a container run as an arbitrary UID, as OpenShift does) that raises RuntimeError "Could not determine home
directory.", and every nvcre command, a simulated run included, ended with an internal error before reading its
arguments. nvcre never reads that default (kube.config finds the kubeconfig itself, and says in one line what to
set when it needs a home), so the import is given a placeholder $HOME for its duration, and the environment is
left as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ApiClient", "Configuration", "ConfigException", "ExecCredentialLoader", "InClusterConfigLoader", "KubeConfigLoader",
           "held_terminal_hint", "stdin_is_terminal"]

PLACEHOLDER_HOME = "/nonexistent"  # the conventional home of a user without one; never read


def _has_home() -> bool:
    try:
        Path.home()
    except RuntimeError:
        return False
    return True


if _has_home():
    from kubernetes_asyncio.client import ApiClient, Configuration
    from kubernetes_asyncio.config import ConfigException
    from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader
else:
    _saved = os.environ.get("HOME")
    os.environ["HOME"] = PLACEHOLDER_HOME
    try:
        from kubernetes_asyncio.client import ApiClient, Configuration
        from kubernetes_asyncio.config import ConfigException
        from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader
        from kubernetes_asyncio.config.kube_config import KubeConfigLoader
    finally:
        if _saved is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = _saved


# ----- exec credential plugins: their output read up to a bound --------------------------------------------------------

import asyncio  # noqa: E402 - the plugin reader below only
import datetime  # noqa: E402
import json  # noqa: E402
import ssl  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

from kubernetes_asyncio.config import kube_config as _kube_config  # noqa: E402
from kubernetes_asyncio.config.dateutil import parse_rfc3339  # noqa: E402
from kubernetes_asyncio.config.exec_provider import ExecProvider as _ExecProvider  # noqa: E402

from ...kube.credential_fields import unsendable  # noqa: E402
from ...kube.exec_cluster import CLUSTER_INFO_KEY  # noqa: E402
from .certfiles import CertificateFiles  # noqa: E402
from .terminal import terminal_holder  # noqa: E402

MAX_EXEC_OUTPUT_BYTES = 2**20  # an ExecCredential is a token or a certificate and key: a few KiB


class _BoundedExecProvider(_ExecProvider):
    """The library's ExecProvider, reading at most MAX_EXEC_OUTPUT_BYTES of the plugin's stdout and stderr (at once, so a
    plugin filling stderr first cannot stall it). It read both whole: a plugin printing without end (`cat /dev/zero`)
    filled memory, 7 GB before the 60 s a plugin without a terminal is given. Where our stderr is a terminal the
    plugin writes to it, as kubectl lets it: it prompts there (kubelogin's device code, a browser to open, an MFA code),
    and read into a pipe the user never saw what they were waited for, a wait without end on a terminal."""

    def __init__(self, exec_config: Any) -> None:
        super().__init__(exec_config)
        hint = exec_config.safe_get("installHint")
        self.install_hint = hint if isinstance(hint, str) and hint.strip() else None
        self.interactive_mode = exec_config.safe_get("interactiveMode")
        self.cluster_info = exec_config.safe_get(CLUSTER_INFO_KEY)  # provideClusterInfo: kube.exec_cluster
        _check_plugin_config(self.api_version, self.interactive_mode)

    async def run(self, previous_response: str | None = None) -> Any:
        # kubectl's rule: interactive where stdin is a terminal, unless the kubeconfig says Never (the library told it
        # whether stdout is one: `report -o json > file` on a terminal told a plugin that could prompt that it could not).
        # Never while the console holds the terminal: a refresh mid-session prompted over the screen, and Textual read
        # the keys typed in answer.
        held = terminal_holder()
        interactive = held is None and self.interactive_mode != "Never" and stdin_is_terminal()
        if self.interactive_mode == "Always" and not interactive:
            raise ConfigException(f"exec: the plugin's interactiveMode is Always; {held_terminal_hint(held)}" if held else
                                  "exec: the plugin's interactiveMode is Always and standard input is not a terminal")
        info: dict[str, Any] = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": {"interactive": interactive}}
        if self.cluster_info is not None:
            info["spec"]["cluster"] = self.cluster_info
        if previous_response:
            info["spec"]["response"] = previous_response
        self.env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
        try:
            # stdin is the plugin's only where it is told it is interactive, as client-go gives it (else /dev/null): one
            # told otherwise that reads it anyway took what was piped to nvcre, or the keys typed at the terminal
            process = await asyncio.create_subprocess_exec(*self.args, env=self.env, stdin=None if interactive else asyncio.subprocess.DEVNULL,
                                                           stdout=asyncio.subprocess.PIPE,
                                                           stderr=None if held is None and _stderr_seen() else asyncio.subprocess.PIPE)
        except FileNotFoundError:
            if self.install_hint is None:
                raise
            # kubectl says the kubeconfig's installHint (gke-gcloud-auth-plugin's, kubelogin's): how to get the plugin
            raise ConfigException(f"exec: executable {self.args[0]} not found; {self.install_hint}") from None
        assert process.stdout is not None
        try:
            stdout, stderr = await asyncio.gather(_bounded(process.stdout, process),
                                                  _bounded(process.stderr, process) if process.stderr is not None else _nothing())
            if len(stdout) > MAX_EXEC_OUTPUT_BYTES or len(stderr) > MAX_EXEC_OUTPUT_BYTES:
                raise ConfigException(f"exec: the plugin printed more than {MAX_EXEC_OUTPUT_BYTES // 2**20} MiB on its "
                                      f"{'stdout' if len(stdout) > MAX_EXEC_OUTPUT_BYTES else 'stderr'}: no ExecCredential is")
            exit_code = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        if exit_code != 0:
            said = " ".join(stderr.decode(errors="replace").split())  # one line: a plugin's stderr is often several
            failed = f"process returned {exit_code}" + (f". {said}" if said else "")
            # the way out first where the console holds the terminal: its header shows the start of the line
            raise ConfigException(f"exec: {held_terminal_hint(held)} ({failed})" if held else f"exec: {failed}")
        try:
            data = json.loads(stdout)
        except ValueError as error:
            raise ConfigException(f"exec: failed to decode process output: {error}") from error
        if not isinstance(data, dict):
            raise ConfigException("exec: malformed response: not a JSON object")
        for key in ("apiVersion", "kind", "status"):
            if key not in data:
                raise ConfigException(f"exec: malformed response. missing key '{key}'")
        if data["apiVersion"] != self.api_version:
            raise ConfigException(f"exec: plugin api version {data['apiVersion']} does not match {self.api_version}")
        _check_status(data["status"])
        return data["status"]


EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")  # client-go's
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


def _check_plugin_config(api_version: Any, mode: Any) -> None:
    """ConfigException where client-go refuses the exec entry: an apiVersion it does not speak (v1alpha1, gone since
    Kubernetes 1.24), an interactiveMode it does not know (`always`: the library took any for IfAvailable), none with v1."""
    if api_version not in EXEC_API_VERSIONS:
        raise ConfigException(f"exec: apiVersion {api_version!r} is none kubectl takes ({' or '.join(EXEC_API_VERSIONS)})")
    if mode is not None and mode not in INTERACTIVE_MODES:
        raise ConfigException(f"exec: interactiveMode {mode!r} is none of {', '.join(INTERACTIVE_MODES)}")
    if mode is None and api_version == EXEC_API_VERSIONS[0]:
        raise ConfigException(f"exec: interactiveMode must be given with apiVersion {api_version} ({', '.join(INTERACTIVE_MODES)}), "
                              "as kubectl requires")


def _check_status(status: Any) -> None:
    """ConfigException unless an ExecCredential's status holds what client-go requires: a token, or a client certificate
    with its key. The library logged the rest and went on without credentials (a 401 then blamed "a wrong or expired
    token"), and sent a token holding a line break into the header (an internal error, exit 70)."""
    if not isinstance(status, dict):
        raise ConfigException("exec: malformed response: its status is not an object")
    token, certificate, key = (status.get(field) for field in ("token", "clientCertificateData", "clientKeyData"))
    if not (token or certificate or key):
        raise ConfigException("exec: the plugin returned no token and no client certificate and key")
    if bool(certificate) != bool(key):
        raise ConfigException(f"exec: the plugin returned a client {'certificate without its key' if certificate else 'key without its certificate'}")
    if token and (not isinstance(token, str) or unsendable(token)):
        raise ConfigException("exec: the plugin's token is no string of one line (a line break or another control character, "
                              "which no HTTP header carries)")


def held_terminal_hint(holder: str) -> str:
    """Why a plugin run while `holder` (the console) holds the terminal could not prompt, and what to do."""
    return (f"the plugin may not prompt while {holder} holds the terminal: log in from a shell (kubectl with the same "
            f"kubeconfig runs it where it can ask), and {holder} runs it again at its next request")


def stdin_is_terminal() -> bool:
    """Whether our stdin is a terminal a plugin could prompt on: what it is told (spec.interactive), and whether
    kube.config waits on it without a bound (it may be waiting for a browser login or MFA)."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, AttributeError):
        return False


def _stderr_seen() -> bool:
    """Whether what a plugin writes to our stderr (file descriptor 2, whatever sys.stderr is now) reaches a terminal, where
    the user reads its prompts: also when stdin is not one (`... < answers`), where the plugin is told it is not
    interactive and a device-code plugin prompts all the same. Elsewhere (CI, a pod) it is read, for the one line of a
    failure."""
    try:
        return os.isatty(2)
    except OSError:
        return False


async def _nothing() -> bytes:
    """The stderr of a plugin that writes to ours: none read."""
    return b""


async def _bounded(stream: asyncio.StreamReader, process: asyncio.subprocess.Process) -> bytes:
    """Up to one byte past the bound; past it the plugin is stopped (_stop), which ends its other stream too."""
    chunks, size = [], 0
    while size <= MAX_EXEC_OUTPUT_BYTES and (chunk := await stream.read(MAX_EXEC_OUTPUT_BYTES + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
    if size > MAX_EXEC_OUTPUT_BYTES:
        _stop(process)
    return b"".join(chunks)


def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the plugin and close our ends of its pipes. Killing it alone is not enough: a plugin that is a script runs its
    tools as children, which outlive it and hold the pipes, so reading them to their end (`cat /dev/zero | cat` in a
    script) went on for ever at full CPU. Closed, the other stream reads its end at once, a child's next write ends it
    (SIGPIPE), and no transport is left open past the event loop ("Event loop is closed" on stderr at exit)."""
    if process.returncode is None:
        process.kill()
    transport = getattr(process, "_transport", None)  # asyncio's own: no public call closes a child's pipes
    if transport is not None:
        transport.close()


# the loader makes its plugin runner from this module-level name
_kube_config.ExecProvider = _BoundedExecProvider  # type: ignore[misc]


def exec_now() -> datetime.datetime:
    """Now, for an exec plugin's expirationTimestamp (a test's clock replaces it)."""
    return datetime.datetime.now(datetime.UTC)


class ExecCredentialLoader(KubeConfigLoader):
    """The library's loader, an exec plugin's client certificate expiring as its token does (client-go's rules). The
    library kept a token's expirationTimestamp only: a certificate (Teleport's `tsh kube credentials`, valid for hours)
    was taken for valid for ever, so once it expired the engine and the console were refused for as long as they ran.
    Either credential's expirationTimestamp is kept in exec_plugin_expiry, where the library looks before running the
    plugin again; an answer without one drops the previous one (the library kept it, past: a run at every request)."""

    cert_file: str | None
    key_file: str | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.certificate_files = CertificateFiles(self._temp_file_path)

    async def load_from_exec_plugin(self) -> bool:
        # the library's rule: expired 5 minutes before its expirationTimestamp (a request on its way may take that long)
        if hasattr(self, "exec_plugin_expiry") and self.exec_plugin_expiry - _kube_config.EXPIRY_SKEW_PREVENTION_DELAY > exec_now():
            return True
        assert self._cluster is not None and self._user is not None
        status = await _BoundedExecProvider(self._user["exec"]).run()  # checked: a token, or a certificate and its key
        expires = status.get("expirationTimestamp")
        if expires is not None:
            try:
                self.exec_plugin_expiry = parse_rfc3339(expires)
            except (ValueError, TypeError):
                raise ConfigException(f"exec: the plugin's expirationTimestamp {expires!r:.40} is no RFC 3339 time") from None
        elif hasattr(self, "exec_plugin_expiry"):
            del self.exec_plugin_expiry
        if status.get("token"):
            self.token = f"Bearer {status['token']}"
        if not status.get("clientCertificateData"):
            return True
        # and a client certificate beside a token: presented with it, as client-go presents both (the library took the
        # token alone); the API server authenticates by either
        files = self.certificate_files
        certificate, key = status["clientCertificateData"], status["clientKeyData"]
        pair = files.write(certificate, key)
        try:  # here, once: the client loads it at each new connection pool, where a failure was an internal error
            ssl.create_default_context().load_cert_chain(pair[0], keyfile=pair[1])
        except (ssl.SSLError, OSError) as error:
            files.drop(pair)
            raise ConfigException(f"exec: the plugin's client certificate and key do not load ({' '.join(str(error).split())})") from None
        files.take(pair, certificate, key)
        self.cert_file, self.key_file = pair
        return True
