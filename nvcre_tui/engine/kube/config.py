"""Which cluster to talk to: kubeconfig (kubectl's rules) or the in-cluster service account.

Order, as kubectl: `--kubeconfig`, else `$KUBECONFIG` (a colon-separated list, merged: the first file
to define a cluster, context, user or current-context wins), else `~/.kube/config`, else the pod's
service account (`KUBERNETES_SERVICE_HOST` + /var/run/secrets/kubernetes.io/serviceaccount).
kubernetes-asyncio does the authentication (tokens, client certificates, exec plugins, TLS); we merge
and check the files ourselves so every problem is one line naming the file and the context.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import stat
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import ComposerError

from ..errors import InputError
from ..inputs import read_bytes
from ..inputs.limits import MAX_KUBECONFIG_BYTES
from ..inputs.yaml_safe import DepthLimitedLoader
from .credential_fields import TokenReader, check_credential_fields, pipe_token_reader, token_file_reader
from .exec_cluster import checked_exec, with_cluster_info
from ..store.errors import said
from ..store.kube.terminal import terminal_holder
from ...paths import NoHomeFolder, home, typed_path

if TYPE_CHECKING:  # the client itself is imported when a cluster is loaded: a simulated run or --help never pays for it
    from ..store.kube.certfiles import CertificateFiles
    from ..store.kube.client import Configuration, ExecCredentialLoader, KubeConfigLoader

__all__ = ["KubeTarget", "load_target", "cluster_configured", "SERVICE_ACCOUNT_DIR", "DEFAULT_KUBECONFIG"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_KUBECONFIG = "~/.kube/config"
DEFAULT_NAMESPACE = "default"
TOKEN_FILE_SECONDS = 60.0  # a tokenFile is read again this often (client-go's cached file token source: a minute)
EXEC_PLUGIN_SECONDS = 60.0  # without a terminal, an exec credential plugin (aws, gcloud, kubelogin) silent this long is hung
# Said where the client library, or Python's ssl, refused what it was given with an error of no words (its class name
# was said instead): what failed, in words.
UNSAID = "the Kubernetes client library refused it, no reason given"
UNSAID_TLS = "Python's ssl module refused them, no reason given"
_SECTIONS = ("clusters", "contexts", "users")
# kubeconfig fields holding file paths, which kubectl resolves relative to the file that names them.
_PATH_FIELDS = {"clusters": ("certificate-authority",), "users": ("client-certificate", "client-key", "tokenFile")}


@dataclass(frozen=True)
class KubeTarget:
    """A resolved cluster: a client Configuration plus what to tell the user about it."""

    configuration: Configuration
    namespace: str        # -n, else the context's namespace, else the service account's, else "default"
    context: str | None   # None in-cluster
    server: str           # API server URL, as shown (no credentials)
    source: str           # "kubeconfig /path" or "in-cluster service account"
    # `kubeconfig /path, user u` when that user holds no credentials at all (a 401 then says so), else None
    without_credentials: str | None = None
    compression: bool = True  # answers may come gzip-compressed; the cluster's disable-compression: true says not
    # An exec plugin's credential refused (401): given the Authorization sent and the client certificate file the
    # connection presented, runs the plugin again (whatever its expirationTimestamp said) unless another request already
    # did; whether a credential other than the refused one is now in hand (client-go's refresh on a 401, once per failing
    # credential). A tokenFile's reads the file again. None for other users.
    renew_credentials: Callable[[str, str | None], Awaitable[bool]] | None = field(default=None, compare=False, repr=False)
    # An exec plugin's client certificate: runs the plugin again once its expirationTimestamp is past, before a request
    # goes out (a certificate is presented at the TLS handshake, not in a header the client's per-request token hook
    # fills); the configuration then names the new one, which the transport's next connections present. None for others.
    refresh_certificate: Callable[[], Awaitable[None]] | None = field(default=None, compare=False, repr=False)
    # The files an exec plugin's client certificates are written to, each pair removed once superseded and presented
    # by no connection pool of any store on this target. None for other users.
    certificate_files: CertificateFiles | None = field(default=None, compare=False, repr=False)


def shown_server(url: str) -> str:
    """The server URL as messages and history name it: without a `user:password@` a kubeconfig may carry in it."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # not a URL (said elsewhere): still nothing before an @ is shown
        return url.rsplit("@", 1)[-1]
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _kubeconfig_paths(kubeconfig: str | None, environ: Mapping[str, str],
                      service_account_dir: Path = SERVICE_ACCOUNT_DIR) -> tuple[list[Path], str] | None:
    """The files to merge and how to name them in messages; None when no kubeconfig applies."""
    if kubeconfig:
        try:
            path = typed_path(kubeconfig)
        except NoHomeFolder as error:
            raise InputError(f"--kubeconfig {error}") from None
        if not _readable(path):  # a pipe (--kubeconfig <(...)) is read like a file
            raise InputError(f"--kubeconfig {kubeconfig}: {'is a directory, not a file' if path.is_dir() else 'file not found'}")
        return [path], str(path)
    listed = environ.get("KUBECONFIG", "")
    if listed:
        # kubectl skips entries that do not exist; all missing is an error (the user asked for them).
        try:
            paths = [typed_path(p) for p in listed.split(os.pathsep) if p]
        except NoHomeFolder as error:
            raise InputError(f"$KUBECONFIG: {error}") from None
        # kubectl refuses a folder among them ("read ...: is a directory"): skipped, the contexts in the files the user
        # meant it to name were missing with no word why
        folders = [str(p) for p in paths if p.is_dir()]
        if folders:
            raise InputError(f"$KUBECONFIG {listed}: {', '.join(folders)} {'is a directory' if len(folders) == 1 else 'are directories'}, "
                             "not a file")
        existing = [p for p in paths if _readable(p)]
        if not existing and _in_cluster(environ) and (service_account_dir / "token").is_file():
            return None  # in a pod, kubectl takes the pod's service account for a config without any file
        if not existing:
            raise InputError(f"$KUBECONFIG {listed}: none of these files exists")
        return existing, os.pathsep.join(str(p) for p in existing)
    default = _default_kubeconfig(environ)
    if default is not None and default.is_file():
        return [default], str(default)
    return None


def _default_kubeconfig(environ: Mapping[str, str]) -> Path | None:
    """~/.kube/config under $HOME, else (unset or empty: not the filesystem root) the password database's home; None
    when there is no home."""
    if environ.get("HOME"):
        return Path(DEFAULT_KUBECONFIG.replace("~", environ["HOME"], 1))
    try:
        return Path(DEFAULT_KUBECONFIG.replace("~", str(home()), 1))
    except InputError:
        return None


def _readable(path: Path) -> bool:
    return path.exists() and not path.is_dir()


def _read(path: Path) -> dict[str, Any]:
    # Bounded (/dev/zero, a huge file) and depth-limited (deeper would exhaust the parser's recursion); aliases
    # and repeated keys are taken, as kubectl takes them.
    _, data = read_bytes(str(path), MAX_KUBECONFIG_BYTES, f"kubeconfig {path}")
    try:
        loaded = yaml.load(data.decode("utf-8"), Loader=DepthLimitedLoader)  # a SafeLoader
    except UnicodeDecodeError as error:
        raise InputError(f"kubeconfig {path}: not UTF-8 text (byte {error.start}); a kubeconfig is YAML") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        why = " ".join(filter(None, (error.context, error.problem))) if isinstance(error, ComposerError) else ""  # e.g. nested too deep
        why = f": {why}" if why else ""
        raise InputError(f"kubeconfig {path}: not valid YAML{where}{why}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise InputError(f"kubeconfig {path}: expected a mapping (apiVersion, clusters, contexts, users), "
                         f"got {type(loaded).__name__}")
    return loaded


def _absolute_paths(section: str, entry: dict[str, Any], base: Path) -> dict[str, Any]:
    body_key = section[:-1]  # clusters -> cluster
    body = entry.get(body_key)
    if not isinstance(body, dict):
        return entry
    fixed = dict(body)
    for key in _PATH_FIELDS.get(section, ()):
        value = fixed.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            try:
                fixed[key] = str((base / typed_path(value)).resolve())
            except NoHomeFolder:  # kept as written, as os.path.expanduser kept it: a path beside the kubeconfig
                fixed[key] = str((base / value).resolve())
    plugin = fixed.get("exec") if section == "users" else None
    command = plugin.get("command") if isinstance(plugin, dict) else None
    # kubectl runs an exec plugin's command that names a folder (./bin/get-token) from beside the kubeconfig, one without
    # from $PATH; the library ran it from the working folder ("No such file or directory" outside the kubeconfig's).
    # Joined, not resolved: a program may tell by the name it is run under what to do.
    if isinstance(plugin, dict) and isinstance(command, str) and os.sep in command and not os.path.isabs(command):
        fixed["exec"] = {**plugin, "command": os.path.abspath(os.path.join(base, command))}
    return {**entry, body_key: fixed}


def merge_kubeconfigs(paths: list[Path]) -> dict[str, Any]:
    """kubectl's merge: for each named cluster/context/user and for current-context, the first file wins."""
    merged: dict[str, Any] = {section: [] for section in _SECTIONS}
    seen: dict[str, set[str]] = {section: set() for section in _SECTIONS}
    for path in paths:
        config = _read(path)
        for section in _SECTIONS:
            entries = config.get(section) or []
            if not isinstance(entries, list):
                raise InputError(f"kubeconfig {path}: {section} must be a list")
            for index, entry in enumerate(entries):
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise InputError(f"kubeconfig {path}: {section}[{index}] needs a name")
                if entry["name"] not in seen[section]:
                    seen[section].add(entry["name"])
                    merged[section].append(_absolute_paths(section, entry, path.parent))
        if config.get("current-context") and "current-context" not in merged:
            merged["current-context"] = config["current-context"]
    return merged


def _named(merged: dict[str, Any], section: str, name: str) -> dict[str, Any] | None:
    for entry in merged[section]:
        if entry["name"] == name:
            body = entry.get(section[:-1])
            return body if isinstance(body, dict) else {}
    return None


def _choose_context(merged: dict[str, Any], context: str | None, where: str) -> tuple[str, dict[str, Any], dict[str, tuple[str, str]]]:
    """The context chosen, its body, and the data fields filled from the files they name (check_credential_fields)."""
    names = ", ".join(entry["name"] for entry in merged["contexts"]) or "none"
    chosen = context or merged.get("current-context")
    if not chosen:
        raise InputError(f"kubeconfig {where}: no current-context; pass --context (contexts: {names})")
    body = _named(merged, "contexts", chosen)
    if body is None:
        raise InputError(f"kubeconfig {where}: context {chosen!r} not found (contexts: {names})")
    cluster_name = body.get("cluster")
    cluster = _named(merged, "clusters", cluster_name) if isinstance(cluster_name, str) else None
    if cluster is None:
        raise InputError(f"kubeconfig {where}, context {chosen}: cluster {cluster_name!r} is not defined")
    if not isinstance(cluster.get("server"), str) or not cluster["server"]:
        raise InputError(f"kubeconfig {where}, context {chosen}: cluster {cluster_name} has no server")
    problem = _server_problem(cluster["server"])
    if problem:
        raise InputError(f"kubeconfig {where}, context {chosen}: cluster {cluster_name}: server {shown_server(cluster['server'])!r} {problem}")
    _check_types(cluster, CLUSTER_FIELD_TYPES, f"kubeconfig {where}, context {chosen}: cluster {cluster_name}")
    proxy = cluster.get("proxy-url")
    if proxy and (problem := _proxy_problem(proxy)):
        raise InputError(f"kubeconfig {where}, context {chosen}: cluster {cluster_name}: proxy-url {shown_server(proxy)!r} {problem}")
    authority = next((field for field in ("certificate-authority-data", "certificate-authority") if cluster.get(field)), None)
    if cluster.get("insecure-skip-tls-verify") is True and authority:
        # kubectl refuses the pair; the client took it and verified nothing, the CA ignored though it was written to be used
        raise InputError(f"kubeconfig {where}, context {chosen}: cluster {cluster_name}: insecure-skip-tls-verify: true beside "
                         f"{authority}: kubectl refuses the pair (\"specifying a root certificates file with the insecure flag is "
                         "not allowed\"): drop one (the certificate authority verifies the server; the flag verifies nothing)")
    filled = check_credential_fields(cluster, "clusters", str(cluster_name), f"kubeconfig {where}, context {chosen}")
    user = body.get("user")
    if isinstance(user, str) and user:
        user_body = _named(merged, "users", user)
        if user_body is None:
            raise InputError(f"kubeconfig {where}, context {chosen}: user {user!r} is not defined")
        written = next(entry.get("user") for entry in merged["users"] if entry["name"] == user)
        if written is not None and not isinstance(written, dict):  # kubectl refuses it too; _named reads it as {}
            raise InputError(f"kubeconfig {where}, context {chosen}: user {user} must be a mapping, got {written!r:.60}")
        _check_types(user_body, USER_FIELD_TYPES, f"kubeconfig {where}, context {chosen}: user {user}")
        if user_body.get("exec") is not None:
            user_body["exec"] = checked_exec(user_body["exec"], f"kubeconfig {where}, context {chosen}: user {user}: exec")
        filled |= check_credential_fields(user_body, "users", user, f"kubeconfig {where}, context {chosen}")
    return chosen, body, filled


# The kubeconfig fields the client reads, by type (kubectl refuses another type; the client would read the string
# "false" in insecure-skip-tls-verify as true, and send the token to a server it never verified).
CLUSTER_FIELD_TYPES: dict[str, type] = {
    "insecure-skip-tls-verify": bool, "certificate-authority": str, "certificate-authority-data": str,
    "tls-server-name": str, "proxy-url": str, "disable-compression": bool,
}
USER_FIELD_TYPES: dict[str, type] = {
    "token": str, "tokenFile": str, "client-certificate": str, "client-certificate-data": str, "client-key": str,
    "client-key-data": str, "username": str, "password": str,
}


def _check_types(body: dict[str, Any], types: dict[str, type], where: str) -> None:
    """One line naming the first field of `body` whose value is not of its type (a null is an absent field)."""
    for field, kind in types.items():
        value = body.get(field)
        if value is not None and not isinstance(value, kind):
            shown = "true or false" if kind is bool else "a string"
            raise InputError(f"{where}: {field} must be {shown}, got {value!r:.60}")


def _server_problem(server: str) -> str | None:
    """Why `server` is no API server URL (https://host[:port][/path]), or None."""
    try:
        url = urllib.parse.urlsplit(server)
        port = url.port  # raises on a port that is not a number or out of range
    except ValueError as error:
        return f"is not a URL ({error})"
    if url.scheme not in ("https", "http"):
        return "is not an https:// (or http://) URL"
    if not url.hostname:
        return "names no host"
    if url.username is not None or url.password is not None:
        # kubectl sends no credentials from the URL, and the client would fail combining them with a token
        return "holds credentials (user:password@): give them in the kubeconfig's user entry instead"
    return "has port 0" if port == 0 else None


def _proxy_problem(proxy: str) -> str | None:
    """Why `proxy` is no proxy URL the client can use, or None. kubectl also takes socks5://, which the client would
    have spoken HTTP to (CONNECT): the SOCKS server drops it, and the failure reads as the API server's."""
    try:
        url = urllib.parse.urlsplit(proxy)
        url.port  # noqa: B018 - raises on a port that is not a number or out of range
    except ValueError as error:
        return f"is not a URL ({error})"
    if url.scheme in ("socks5", "socks5h", "socks4"):
        return ("is a SOCKS proxy, which nvcre cannot speak (kubectl can): give an HTTP proxy (http:// or https://, one that "
                "takes CONNECT), or reach the server through an SSH tunnel's local port (ssh -L) instead of its SOCKS one (ssh -D)")
    if url.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    return None if url.hostname else "names no host"


async def _from_kubeconfig(paths: list[Path], where: str, context: str | None,
                           namespace: str | None) -> KubeTarget:
    from ..store.kube.client import Configuration, ExecCredentialLoader

    merged = merge_kubeconfigs(paths)
    chosen, body, filled = _choose_context(merged, context, where)
    configuration = Configuration()
    library_config = _as_the_library_reads(merged, chosen, body)
    if isinstance(body.get("user"), str):
        library_config = with_cluster_info(library_config, body["user"], _named(merged, "clusters", body["cluster"]) or {})
    loader = ExecCredentialLoader(config_dict=library_config, active_context=chosen, config_base_path="")
    user_entry = _named(merged, "users", body["user"]) if isinstance(body.get("user"), str) else None
    # An exec plugin without a terminal to prompt on (a script, CI, a pod, the console's screen) that gives nothing for
    # this long is hung; on a terminal it may be waiting for a browser login or MFA, as long as it takes (as kubectl does).
    unattended = _unattended() if user_entry and "exec" in user_entry else None
    try:
        await asyncio.wait_for(loader.load_and_set(configuration), None if unattended is None else EXEC_PLUGIN_SECONDS)
    except TimeoutError:
        raise InputError(f"kubeconfig {where}, context {chosen}: the user's exec plugin gave no credentials within "
                         f"{EXEC_PLUGIN_SECONDS:g} s ({unattended})") from None
    except Exception as error:  # the library raises anything from ConfigException to OSError and ValueError
        raise InputError(f"kubeconfig {where}, context {chosen}: {_one_line(error)}") from None
    cluster = _named(merged, "clusters", body["cluster"]) or {}
    # the library wrote each *-data field to a temporary file: a message names the field, not that file
    written = {path: " ".join(filled.get(field, (field,))) for path, field, entry in ((configuration.ssl_ca_cert, "certificate-authority-data", cluster),
                                                      (configuration.cert_file, "client-certificate-data", user_entry or {}),
                                                      (configuration.key_file, "client-key-data", user_entry or {}))
               if path and entry.get(field)}
    _check_tls(configuration, f"kubeconfig {where}, context {chosen}", written)
    user = loader._user  # the library keeps the resolved user here
    renew = refresh_certificate = None
    if user is not None and "exec" in user:
        renew, refresh = _exec_credentials(configuration, loader)
        if hasattr(loader, "token"):
            _refresh_exec_token(configuration, refresh)
        if loader.certificate_files.current is not None:  # presented at the handshake: the transport runs this before each request
            refresh_certificate = refresh
    elif "token" in filled and filled["token"][0] == "tokenFile" and os.path.isfile(filled["token"][1]):
        renew = _reread_token_file(configuration, token_file_reader(filled["token"][1], TOKEN_FILE_SECONDS))
    elif "token" in filled and filled["token"][0] == "tokenFile" and _is_pipe(filled["token"][1]):  # a device: read once
        renew = _reread_token_file(configuration, pipe_token_reader(filled["token"][1], TOKEN_FILE_SECONDS))
    chosen_namespace = namespace or body.get("namespace") or DEFAULT_NAMESPACE
    bare = None if any((user_entry or {}).get(field) for field in CREDENTIAL_FIELDS) else (
        f"kubeconfig {where}, user {body['user']}" if user_entry is not None else f"kubeconfig {where}, context {chosen} (it names no user)")
    return KubeTarget(configuration, str(chosen_namespace), chosen, shown_server(str(configuration.host)), f"kubeconfig {where}",
                      without_credentials=bare, compression=cluster.get("disable-compression") is not True, renew_credentials=renew,
                      refresh_certificate=refresh_certificate,
                      certificate_files=loader.certificate_files if user is not None and "exec" in user else None)


def _as_the_library_reads(merged: dict[str, Any], chosen: str, body: dict[str, Any]) -> dict[str, Any]:
    """`merged` with what kubectl reads as "no credentials" spelt out for the client library, which raises on it
    instead: a user entry without its `user` mapping (a ConfigException at once), and a context naming no user (it
    then reads the client certificate of an https server from None: "argument of type 'NoneType' is not iterable")."""
    users = [{**entry, "user": entry.get("user") or {}} for entry in merged["users"]]
    contexts = merged["contexts"]
    if not (isinstance(body.get("user"), str) and body["user"]):
        anonymous = "nvcre-anonymous"
        while any(entry["name"] == anonymous for entry in users):  # never one the files define
            anonymous += "-"
        users.append({"name": anonymous, "user": {}})
        contexts = [{**entry, "context": {**body, "user": anonymous}} if entry["name"] == chosen else entry
                    for entry in contexts]
    return {**merged, "users": users, "contexts": contexts}


# What in a kubeconfig's user entry authenticates it: without any, every request is anonymous (kubectl proxy's URL, or a
# server that allows anonymous requests, may take them; others answer 401).
CREDENTIAL_FIELDS = ("token", "tokenFile", "client-certificate", "client-certificate-data", "username", "exec", "auth-provider")


# The library logs an exec plugin's failure before raising it: the error is ours to tell, in one line.
logging.getLogger("kubernetes_asyncio.config.kube_config").addHandler(logging.NullHandler())
logging.getLogger("kubernetes_asyncio.config.kube_config").propagate = False


def _check_tls(configuration: Configuration, where: str, written: Mapping[str, str] | None = None) -> None:
    """Load the CA and client certificate now (no network), so a bad file is a one-line InputError here
    rather than a traceback at the first request."""
    for what, path in (("certificate-authority", configuration.ssl_ca_cert), ("client-certificate",
                                                                             configuration.cert_file),
                       ("client-key", configuration.key_file)):
        if path and not os.path.isfile(path):
            raise InputError(f"{where}: {what} {path}: file not found")
    if not (configuration.ssl_ca_cert or configuration.cert_file):
        return  # nothing of ours to load (building a context would only read the system's CA store)
    try:
        context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, keyfile=configuration.key_file)
    except (ssl.SSLError, OSError) as error:
        files = ", ".join((written or {}).get(p, p) for p in (configuration.ssl_ca_cert, configuration.cert_file, configuration.key_file) if p)
        raise InputError(f"{where}: cannot load TLS files ({files}): {_one_line(error, UNSAID_TLS)}") from None


def _reread_token_file(configuration: Configuration, fresh: TokenReader) -> Callable[[str, str | None], Awaitable[bool]]:
    """Read the user's tokenFile again each TOKEN_FILE_SECONDS through `fresh` (credential_fields' readers), as kubectl
    does (a token rotated there: Vault agent, a projected ServiceAccount token, a helper writing a named pipe); it was
    read once, and an engine running for hours met 401s once it rotated. Returned: KubeTarget.renew_credentials, which
    reads it again at once when its token is refused, as client-go does after a 401 (nvcre waited for its minute, each
    request refused meanwhile); a pipe's read is under way then, for a later request."""

    async def refresh(config: Configuration, *_: object) -> None:
        if (token := fresh()) is not None:
            config.api_key["BearerToken"] = f"Bearer {token}"

    async def renew(refused: str, _certificate: str | None) -> bool:
        if configuration.api_key.get("BearerToken") == refused and (token := fresh(at_once=True)) is not None:
            configuration.api_key["BearerToken"] = f"Bearer {token}"
        return configuration.api_key.get("BearerToken") != refused

    configuration.refresh_api_key_hook = refresh
    return renew


def _is_pipe(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _unattended() -> str | None:
    """Why nobody can answer an exec plugin now (no terminal; the console holding it), or None: it may prompt."""
    from ..store.kube.client import held_terminal_hint, stdin_is_terminal

    held = terminal_holder()
    if held is not None:
        return held_terminal_hint(held)
    return None if stdin_is_terminal() else "and there is no terminal to log in on"


async def _run_exec_plugin(loader: KubeConfigLoader) -> None:
    """The loader's exec plugin run (a no-op until its token's expirationTimestamp), bounded in time where nobody can
    answer it (every request waits on it)."""
    from ..store.kube.client import ConfigException

    unattended = _unattended()
    try:
        await asyncio.wait_for(loader.load_from_exec_plugin(), None if unattended is None else EXEC_PLUGIN_SECONDS)
    except TimeoutError:
        raise ConfigException(f"exec: the plugin gave no credentials within {EXEC_PLUGIN_SECONDS:g} s ({unattended})") from None


def _refresh_exec_token(configuration: Configuration, refresh: Callable[[], Awaitable[None]]) -> None:
    """Re-run an exec credential plugin when its token expires (the engine runs for hours), as the client asks for the
    token of each request; one whose last answer gave no expirationTimestamp only when its token is refused
    (_exec_credentials). Through `refresh`, which holds a lock: the requests sent together past the expiry each ran the
    plugin (a dozen `aws eks get-token` at once), where client-go runs it once."""

    async def hook(*_: object) -> None:
        await refresh()

    configuration.refresh_api_key_hook = hook


def _exec_credentials(configuration: Configuration, loader: ExecCredentialLoader) -> tuple[
        Callable[[str, str | None], Awaitable[bool]], Callable[[], Awaitable[None]]]:
    """KubeTarget.renew_credentials and .refresh_certificate for an exec plugin's credential. A plugin that gave no
    expirationTimestamp was never run again, so a token revoked or rotated (an IdP session ended, a short-lived token
    past its lifetime) was refused for as long as the engine ran; client-go runs it again on a 401, as renew does.
    A client certificate was never renewed at all, at its expirationTimestamp or on a 401. Requests refused together,
    or sent together at its expiry, run it once."""
    lock = asyncio.Lock()

    def held() -> tuple[str, str | None]:
        return configuration.api_key.get("BearerToken", ""), configuration.cert_file

    def take() -> None:
        if hasattr(loader, "token"):
            configuration.api_key["BearerToken"] = loader.token
        if loader.certificate_files.current is not None:  # the transport's next requests go out on a new connection pool presenting it
            configuration.cert_file, configuration.key_file = loader.cert_file, loader.key_file

    async def renew(authorization: str, certificate: str | None) -> bool:
        async with lock:
            if held() == (authorization, certificate):  # not renewed since by another request
                if hasattr(loader, "exec_plugin_expiry"):  # refused before its expiry: run it anyway; the answer
                    del loader.exec_plugin_expiry  # sets it again if it gives one
                await _run_exec_plugin(loader)
                take()
            return held() != (authorization, certificate)

    async def refresh() -> None:
        async with lock:
            if hasattr(loader, "exec_plugin_expiry"):  # else the library would run it at each request (a 401 runs it)
                await _run_exec_plugin(loader)  # a no-op before its expirationTimestamp
                take()

    return renew, refresh


def _from_service_account(directory: Path, environ: Mapping[str, str], namespace: str | None) -> KubeTarget:
    from ..store.kube.client import Configuration, InClusterConfigLoader

    configuration = Configuration()
    loader = InClusterConfigLoader(token_filename=str(directory / "token"), cert_filename=str(directory / "ca.crt"),
                                   environ=dict(environ))
    try:
        loader.load_and_set(configuration)  # also installs a hook that re-reads the rotated token file
    except Exception as error:
        raise InputError(f"in-cluster service account {directory}: {_one_line(error)}") from None
    _check_tls(configuration, f"in-cluster service account {directory}")
    if namespace is None:
        try:
            namespace = (directory / "namespace").read_text().strip() or None
        except OSError:
            namespace = None
    return KubeTarget(configuration, namespace or DEFAULT_NAMESPACE, None, shown_server(str(configuration.host)),
                      "in-cluster service account")


def _in_cluster(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("KUBERNETES_SERVICE_HOST"))


def _one_line(error: BaseException, otherwise: str = UNSAID) -> str:
    return said(error, otherwise)


async def load_target(kubeconfig: str | None = None, context: str | None = None, namespace: str | None = None,
                      *, environ: Mapping[str, str] | None = None,
                      service_account_dir: Path = SERVICE_ACCOUNT_DIR) -> KubeTarget:
    """Resolve the cluster to use; InputError (one line naming the file and context) on any problem."""
    environ = os.environ if environ is None else environ
    found = _kubeconfig_paths(kubeconfig, environ, service_account_dir)
    if found is not None:
        return await _from_kubeconfig(*found, context, namespace)
    if _in_cluster(environ):
        if context:
            raise InputError(f"--context {context}: no kubeconfig found (running in-cluster has no contexts)")
        return _from_service_account(service_account_dir, environ, namespace)
    raise InputError("no cluster configured: no --kubeconfig, $KUBECONFIG unset, ~/.kube/config missing, "
                     "and not in a pod (KUBERNETES_SERVICE_HOST unset)")


def cluster_configured(kubeconfig: str | None = None, *, environ: Mapping[str, str] | None = None,
                       service_account_dir: Path = SERVICE_ACCOUNT_DIR) -> bool:
    """Is there any cluster configuration at all? Cheap: looks at files and variables, no network."""
    environ = os.environ if environ is None else environ
    if kubeconfig:
        return True  # asked for explicitly: load_target reports what is wrong with it
    if environ.get("KUBECONFIG"):
        return True  # set on purpose: even if its files are missing, load_target says so (outside a pod, as kubectl fails)
    default = _default_kubeconfig(environ)
    if default is not None and default.is_file():
        return True
    return _in_cluster(environ) and (service_account_dir / "token").is_file()
