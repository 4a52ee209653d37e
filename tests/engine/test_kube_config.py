"""Which cluster nvcre talks to: kubeconfig files (kubectl's merge rules), contexts, namespaces, in-cluster."""

from __future__ import annotations

import asyncio
import os

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import cluster_configured, load_target


def kubeconfig(path: Path, contexts: dict[str, tuple[str, str | None]], current: str | None = None,
               servers: dict[str, str] | None = None, users: dict[str, dict[str, Any]] | None = None) -> Path:
    """Write a kubeconfig: contexts name -> (cluster, namespace); clusters name -> server."""
    clusters = servers or {cluster: f"http://{cluster}.example:6443" for cluster, _ in contexts.values()}
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server}} for name, server in clusters.items()],
        "users": [{"name": name, "user": user} for name, user in (users or {"me": {"token": "secret"}}).items()],
        "contexts": [{"name": name, "context": {"cluster": cluster, "user": next(iter(users)) if users else "me",
                                                **({"namespace": ns} if ns else {})}}
                     for name, (cluster, ns) in contexts.items()],
    }
    if current:
        body["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(body))
    return path


NO_ENV: dict[str, str] = {"HOME": "/nonexistent-home"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-signed certificate and its key (cert.pem, key.pem), made by openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a test certificate")
    folder = tmp_path_factory.mktemp("pki")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(folder / "key.pem"),
                    "-out", str(folder / "cert.pem"), "-subj", "/CN=nvcre-test", "-days", "1"],
                   check=True, capture_output=True)
    return folder


async def test_credentials_in_the_server_url_are_refused_without_being_shown(tmp_path: Path) -> None:
    """A server URL with `user:password@` was printed as it is in every message naming the cluster, stored as the
    history's source, and beside a token made the client fail with a traceback. kubectl sends no credentials from
    the URL: refused in one line that names the server without them."""
    path = kubeconfig(tmp_path / "config", {"lab": ("lab", None)}, current="lab",
                      servers={"lab": "https://admin:hunter2@lab.example:6443/k8s"})
    with pytest.raises(InputError) as refused:
        await load_target(str(path), environ=NO_ENV)
    said = str(refused.value)
    assert "hunter2" not in said and "'https://lab.example:6443/k8s' holds credentials (user:password@)" in said


async def test_explicit_kubeconfig_uses_its_current_context(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"lab": ("lab", "team-a"), "prod": ("prod", None)}, current="lab")
    target = await load_target(str(path), environ=NO_ENV)
    assert (target.context, target.namespace, target.server) == ("lab", "team-a", "http://lab.example:6443")
    assert target.source == f"kubeconfig {path}"
    assert target.configuration.host == "http://lab.example:6443"
    assert target.configuration.api_key["BearerToken"] == "Bearer secret"


async def test_a_kubeconfig_from_a_pipe_is_read_like_a_file(tmp_path: Path) -> None:
    """`--kubeconfig <(vault read ...)`: process substitution gives a pipe, /dev/fd/N, not a regular file."""
    text = kubeconfig(tmp_path / "config", {"lab": ("lab", "team-a")}, current="lab").read_bytes()
    reader, writer = os.pipe()
    try:
        os.write(writer, text)
        os.close(writer)
        target = await load_target(f"/dev/fd/{reader}", environ=NO_ENV)
    finally:
        os.close(reader)
    assert (target.context, target.namespace, target.server) == ("lab", "team-a", "http://lab.example:6443")


async def test_context_and_namespace_flags_override(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"lab": ("lab", "team-a"), "prod": ("prod", None)}, current="lab")
    prod = await load_target(str(path), context="prod", environ=NO_ENV)
    assert (prod.context, prod.namespace, prod.server) == ("prod", "default", "http://prod.example:6443")
    other = await load_target(str(path), context="lab", namespace="nvcre-system", environ=NO_ENV)
    assert (other.context, other.namespace) == ("lab", "nvcre-system")


async def test_kubeconfig_variable_merges_files_first_one_wins(tmp_path: Path) -> None:
    first = kubeconfig(tmp_path / "a", {"lab": ("shared", "from-a")}, current="lab",
                       servers={"shared": "http://first:6443"})
    second = kubeconfig(tmp_path / "b", {"lab": ("shared", "from-b"), "extra": ("shared", "x")}, current="extra",
                        servers={"shared": "http://second:6443"})
    missing = tmp_path / "does-not-exist"
    environ = {**NO_ENV, "KUBECONFIG": f"{missing}:{first}:{second}"}
    target = await load_target(environ=environ)
    # current-context and every name come from the first file that sets them, as kubectl merges
    assert (target.context, target.namespace, target.server) == ("lab", "from-a", "http://first:6443")
    extra = await load_target(context="extra", environ=environ)
    assert (extra.namespace, extra.server) == ("x", "http://first:6443")
    assert extra.source == f"kubeconfig {first}:{second}"


def tls_kubeconfig(folder: Path, cluster: dict[str, str], user: dict[str, str]) -> Path:
    path = kubeconfig(folder / "config", {"tls": ("tls", None)}, current="tls", servers={"tls": "https://tls:6443"},
                      users={"me": user})
    body = yaml.safe_load(path.read_text())
    body["clusters"][0]["cluster"].update(cluster)
    path.write_text(yaml.safe_dump(body))
    return path


async def test_relative_certificate_paths_are_relative_to_their_file(tmp_path: Path, pki: Path) -> None:
    folder = tmp_path / "conf"
    shutil.copytree(pki, folder / "pki")
    path = tls_kubeconfig(folder, {"certificate-authority": "pki/cert.pem"},
                          {"client-certificate": "pki/cert.pem", "client-key": "pki/key.pem"})
    target = await load_target(str(path), environ={"HOME": str(tmp_path)})
    assert target.configuration.ssl_ca_cert == str((folder / "pki" / "cert.pem").resolve())
    assert target.configuration.key_file == str((folder / "pki" / "key.pem").resolve())


async def test_bad_tls_files_are_one_line_errors_at_load(tmp_path: Path, pki: Path) -> None:
    missing = tls_kubeconfig(tmp_path, {"certificate-authority": "nope.pem"}, {"token": "t"})
    with pytest.raises(InputError, match=r"^kubeconfig .*/config, context tls: clusters\[tls\]\.cluster\.certificate-authority: .*/nope\.pem: "
                                         r"no such file$"):
        await load_target(str(missing), environ=NO_ENV)
    (tmp_path / "garbage.pem").write_text("not a certificate")
    garbage = tls_kubeconfig(tmp_path, {"certificate-authority": "garbage.pem"}, {"token": "t"})
    with pytest.raises(InputError, match=r"^kubeconfig .*, context tls: cannot load TLS files \(.*garbage\.pem\)"):
        await load_target(str(garbage), environ=NO_ENV)
    wrong_key = tls_kubeconfig(tmp_path, {"certificate-authority": str(pki / "cert.pem")},
                               {"client-certificate": str(pki / "cert.pem"), "client-key": str(tmp_path / "garbage.pem")})
    with pytest.raises(InputError, match="cannot load TLS files"):
        await load_target(str(wrong_key), environ=NO_ENV)
    # data fields are written to temporary files by the library: the message named /tmp/tmpXXXX, not the field
    garbage_data = tls_kubeconfig(tmp_path, {"certificate-authority-data": "bm90IGEgY2VydGlmaWNhdGU="}, {"token": "t"})
    with pytest.raises(InputError, match=r"^kubeconfig .*, context tls: cannot load TLS files \(certificate-authority-data\): "):
        await load_target(str(garbage_data), environ=NO_ENV)


async def test_default_kubeconfig_in_home(tmp_path: Path) -> None:
    kubeconfig(tmp_path / ".kube" / "config", {"home": ("home", None)}, current="home")
    target = await load_target(environ={"HOME": str(tmp_path)})
    assert (target.context, target.server) == ("home", "http://home.example:6443")
    assert cluster_configured(environ={"HOME": str(tmp_path)})


def service_account(folder: Path, pki: Path, namespace: str | None = "nvcre-system") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "token").write_text("sa-token")
    shutil.copy(pki / "cert.pem", folder / "ca.crt")
    if namespace:
        (folder / "namespace").write_text(namespace)
    return folder


IN_CLUSTER = {"HOME": "/nonexistent-home", "KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}


async def test_in_cluster_service_account(tmp_path: Path, pki: Path) -> None:
    folder = service_account(tmp_path / "sa", pki)
    target = await load_target(environ=IN_CLUSTER, service_account_dir=folder)
    assert (target.server, target.namespace, target.context) == ("https://10.0.0.1:443", "nvcre-system", None)
    assert target.source == "in-cluster service account"
    assert target.configuration.ssl_ca_cert == str(folder / "ca.crt")
    assert await target.configuration.get_api_key_with_prefix("BearerToken") == "Bearer sa-token"
    flagged = await load_target(namespace="other", environ=IN_CLUSTER, service_account_dir=folder)
    assert flagged.namespace == "other"
    bare = await load_target(environ=IN_CLUSTER, service_account_dir=service_account(tmp_path / "bare", pki, None))
    assert bare.namespace == "default"
    assert cluster_configured(environ=IN_CLUSTER, service_account_dir=folder)
    assert not cluster_configured(environ=IN_CLUSTER, service_account_dir=tmp_path / "nothing")


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _sparse(path: Path, size: int) -> str:
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: no time, no disk
    return str(path)


TYPED = ("apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\n"
         "clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:1', {cluster}}}}}]\nusers: [{{name: u, user: {{{user}}}}}]\n")

BAD_CASES = [
    ("missing", lambda d: {"kubeconfig": str(d / "nope")}, r"^--kubeconfig .*/nope: file not found$"),
    ("yaml", lambda d: {"kubeconfig": _write(d / "c", "clusters: [\n  - name: x\n bad")},
     r"^kubeconfig .*/c: not valid YAML at line \d+$"),
    ("nested-too-deep", lambda d: {"kubeconfig": _write(d / "c", "a: " + "[" * 5000 + "]" * 5000 + "\n")},
     r"^kubeconfig .*/c: not valid YAML at line 1: nested deeper than 64 levels$"),
    ("endless", lambda d: {"kubeconfig": "/dev/zero"}, r"^kubeconfig /dev/zero: larger than the 4 MiB limit for this input; not read$"),
    ("not-a-mapping", lambda d: {"kubeconfig": _write(d / "c", "- a\n- b\n")},
     r"^kubeconfig .*/c: expected a mapping"),
    ("unknown-context", lambda d: {"kubeconfig": str(kubeconfig(d / "c", {"lab": ("lab", None)}, "lab")),
                                   "context": "prod"},
     r"^kubeconfig .*/c: context 'prod' not found \(contexts: lab\)$"),
    ("no-current", lambda d: {"kubeconfig": str(kubeconfig(d / "c", {"lab": ("lab", None)}))},
     r"^kubeconfig .*/c: no current-context; pass --context \(contexts: lab\)$"),
    ("no-server", lambda d: {"kubeconfig": str(kubeconfig(d / "c", {"lab": ("lab", None)}, "lab",
                                                           servers={"lab": ""}))},
     r"^kubeconfig .*/c, context lab: cluster lab has no server$"),
    ("no-cluster", lambda d: {"kubeconfig": str(kubeconfig(d / "c", {"lab": ("ghost", None)}, "lab",
                                                            servers={"lab": "http://x"}))},
     r"^kubeconfig .*/c, context lab: cluster 'ghost' is not defined$"),
    ("not-utf8", lambda d: {"kubeconfig": str(d / "c") if (d / "c").write_bytes(b"clusters: [\xff\xfe]\n") else ""},
     r"^kubeconfig .*/c: not UTF-8 text \(byte 11\); a kubeconfig is YAML$"),
    # a quoted "false" turned TLS verification off and the token went to a server nobody verified
    ("skip-tls-string", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster='insecure-skip-tls-verify: "false"', user="token: t"))},
     r"^kubeconfig .*/c, context x: cluster c: insecure-skip-tls-verify must be true or false, got 'false'$"),
    # kubectl refuses the pair; the client verified nothing, the CA ignored
    ("skip-tls-beside-ca", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: true, certificate-authority-data: YWJj",
                                                                                 user="token: t"))},
     r"^kubeconfig .*/c, context x: cluster c: insecure-skip-tls-verify: true beside certificate-authority-data: kubectl refuses the pair "
     r"\(\"specifying a root certificates file with the insecure flag is not allowed\"\): drop one \(the certificate authority verifies the "
     r"server; the flag verifies nothing\)$"),
    # the library's own words named neither the field nor the entry ([Errno 2] ..., File does not exists, Invalid base64)
    ("token-file-missing", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false", user="tokenFile: /nonexist"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user\.tokenFile: /nonexist: no such file$"),
    # the library reads the file whole: /dev/zero filled memory (gigabytes); a device is read here, bounded
    ("token-file-device", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false", user="tokenFile: /dev/zero"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user\.tokenFile: /dev/zero: a device giving more than the 1 MiB of any token, "
     r"certificate or key \(/dev/zero\?\); name the file that holds it$"),
    ("token-file-huge", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false",
                                                                             user=f"tokenFile: {_sparse(d / 'token', 3 * 2**20)}"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user\.tokenFile: .*/token: 3\.0 MiB, larger than the 1 MiB of any token, certificate or key$"),
    ("client-certificate-missing", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false",
                                                                                           user="client-certificate: /nonexist"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user\.client-certificate: /nonexist: no such file$"),
    ("client-key-folder", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false", user="client-key: /"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user\.client-key: /: is a directory, not a file$"),
    ("ca-data-not-base64", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="certificate-authority-data: '@@notbase64'", user="token: t"))},
     r"^kubeconfig .*/c, context x: clusters\[c\]\.cluster\.certificate-authority-data: not base64 data \(it holds the file's contents"),
    # kubectl requires both; a certificate alone was "[SSL] PEM lib", a key alone silently ignored (requests anonymous)
    ("certificate-without-key", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false",
                                                                                        user="client-certificate-data: YWJj"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user: client-certificate without client-key \(or client-key-data\): a client "
     r"certificate authenticates with both, as kubectl requires$"),
    ("key-without-certificate", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false",
                                                                                        user="client-key-data: YWJj"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user: client-key without client-certificate \(or client-certificate-data\)"),
    ("key-data-not-base64", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false", user="client-key-data: abcde"))},
     r"^kubeconfig .*/c, context x: users\[u\]\.user\.client-key-data: not base64 data"),
    ("token-number", lambda d: {"kubeconfig": _write(d / "c", TYPED.format(cluster="insecure-skip-tls-verify: false", user="token: 123"))},
     r"^kubeconfig .*/c, context x: user u: token must be a string, got 123$"),
    *[(f"server-{name}", (lambda server: lambda d: {"kubeconfig": str(kubeconfig(d / "c", {"lab": ("lab", None)}, "lab", servers={"lab": server}))})(server),
       rf"^kubeconfig .*/c, context lab: cluster lab: server '{re.escape(server)}' {why}$")
      for name, server, why in (("words", "not a url", r"is not an https:// \(or http://\) URL"),
                                ("ipv6", "https://[::1", r"is not a URL \(Invalid IPv6 URL\)"),
                                ("port", "https://127.0.0.1:99999", r"is not a URL \(Port out of range 0-65535\)"),
                                ("scheme", "ftp://host", r"is not an https:// \(or http://\) URL"),
                                ("no-host", "https://:6443", "names no host"))],
]


@pytest.mark.parametrize(("case", "arguments", "message"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
async def test_bad_kubeconfig_is_one_line_naming_file_and_context(tmp_path: Path, case: str, arguments: Any,
                                                                   message: str) -> None:
    with pytest.raises(InputError) as caught:
        await load_target(**arguments(tmp_path), environ=NO_ENV)
    assert len(caught.value.messages) == 1 and "\n" not in caught.value.messages[0]
    assert caught.value.messages[0] == str(caught.value)
    assert re.search(message, caught.value.messages[0]), caught.value.messages[0]


async def test_kubeconfig_variable_naming_only_missing_files(tmp_path: Path) -> None:
    environ = {**NO_ENV, "KUBECONFIG": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}
    with pytest.raises(InputError, match=r"^\$KUBECONFIG .*/a:.*/b: none of these files exists$"):
        await load_target(environ=environ)
    assert cluster_configured(environ=environ)  # set on purpose: the user meant a cluster


async def test_kubeconfig_variable_naming_only_missing_files_in_a_pod_is_its_service_account(tmp_path: Path, pki: Path) -> None:
    """kubectl falls back to the pod's service account when no file of $KUBECONFIG exists (a Deployment's env naming a
    kubeconfig it does not mount); nvcre refused: none of these files exists."""
    environ = {**IN_CLUSTER, "KUBECONFIG": f"{tmp_path / 'a'}"}
    target = await load_target(environ=environ, service_account_dir=service_account(tmp_path / "sa", pki))
    assert target.source == "in-cluster service account"
    with pytest.raises(InputError, match=r"^\$KUBECONFIG .*/a: none of these files exists$"):  # no token mounted: no fallback
        await load_target(environ=environ, service_account_dir=tmp_path / "unmounted")


async def test_kubeconfig_variable_naming_a_folder_among_files_is_one_line(tmp_path: Path) -> None:
    """kubectl refuses it; nvcre skipped it, and the contexts its files were meant to hold were 'not found'."""
    file = kubeconfig(tmp_path / "a", {"lab": ("lab", None)}, current="lab")
    (tmp_path / "configs").mkdir()
    environ = {**NO_ENV, "KUBECONFIG": f"{file}:{tmp_path / 'configs'}"}
    with pytest.raises(InputError) as caught:
        await load_target(environ=environ)
    assert str(caught.value) == f"$KUBECONFIG {file}:{tmp_path / 'configs'}: {tmp_path / 'configs'} is a directory, not a file"


async def test_nothing_configured(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no cluster configured"):
        await load_target(environ=NO_ENV, service_account_dir=tmp_path)
    assert not cluster_configured(environ=NO_ENV, service_account_dir=tmp_path)
    assert cluster_configured("anything", environ=NO_ENV)


async def test_in_cluster_without_token_names_the_folder(tmp_path: Path, pki: Path) -> None:
    with pytest.raises(InputError, match=rf"^in-cluster service account {tmp_path}: Service token file does not"):
        await load_target(environ=IN_CLUSTER, service_account_dir=tmp_path)
    with pytest.raises(InputError, match="--context lab: no kubeconfig found"):
        await load_target(context="lab", environ=IN_CLUSTER, service_account_dir=service_account(tmp_path / "sa", pki))


def exec_plugin(folder: Path, expires: str) -> Path:
    """A credential plugin that hands out token-1, token-2, ... (counting its runs in a file)."""
    script = folder / "credentials.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'n=$(cat "{folder}/runs" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "{folder}/runs"\n'
        'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
        f'"status":{{"token":"token-%s","expirationTimestamp":"{expires}"}}}}\' "$n"\n')
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(("expires", "second_token"), [("2000-01-01T00:00:00Z", "Bearer token-2"),
                                                       ("2999-01-01T00:00:00Z", "Bearer token-1")])
async def test_exec_plugin_token_is_refreshed_when_it_expires(tmp_path: Path, expires: str,
                                                              second_token: str) -> None:
    plugin = exec_plugin(tmp_path, expires)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": str(plugin),
                     "interactiveMode": "Never"}}
    path = kubeconfig(tmp_path / "config", {"lab": ("lab", None)}, current="lab", users={"me": user})
    target = await load_target(str(path), environ=NO_ENV)
    assert target.configuration.api_key["BearerToken"] == "Bearer token-1"
    # an engine runs for hours: each request asks for the key, which re-runs the plugin only once expired
    assert await target.configuration.get_api_key_with_prefix("BearerToken") == second_token


def _exec_kubeconfig(path: Path, command: str, args: list[str]) -> str:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": command, "args": args}}
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "lab",
                                    "clusters": [{"name": "lab", "cluster": {"server": "https://127.0.0.1:6443"}}],
                                    "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "u"}}],
                                    "users": [{"name": "u", "user": user}]}))
    return str(path)


async def test_an_exec_plugin_that_hangs_or_is_missing_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import nvcre_tui.engine.kube.config as config

    monkeypatch.setattr(config, "EXEC_PLUGIN_SECONDS", 0.5)  # 60 s in use: a plugin that sleeps forever (no terminal here)
    with pytest.raises(InputError, match=r"context lab: the user's exec plugin gave no credentials within 0.5 s \(and there is no terminal to log in on\)$"):
        await load_target(_exec_kubeconfig(tmp_path / "hang", "/bin/sleep", ["1"]), environ=NO_ENV)
    # The library does not let us stop the hung plugin: let it end while this loop runs, so its transport closes
    # here and is not collected in a later test, after this loop closed ("Event loop is closed").
    await asyncio.sleep(1.0)
    with pytest.raises(InputError, match=r"context lab: \[Errno 2\] No such file or directory: '/no/such/plugin'$"):
        await load_target(_exec_kubeconfig(tmp_path / "missing", "/no/such/plugin", []), environ=NO_ENV)
    assert capsys.readouterr().err == ""  # the library's own log line of the same error is not printed


@pytest.mark.parametrize(("script", "stream"), [("head -c 3145728 /dev/zero | tr '\\0' ' '", "stdout"),
                                               ("head -c 3145728 /dev/zero >&2; printf '{}'", "stderr")])
async def test_an_exec_plugin_printing_past_a_mebibyte_is_one_line(tmp_path: Path, script: str, stream: str) -> None:
    """The library read a plugin's stdout and stderr whole: one printing without end (`cat /dev/zero`) filled memory,
    7 GB before its 60 s were up. Here 3 MiB, then it exits (the library said "failed to decode process output")."""
    with pytest.raises(InputError) as caught:
        await load_target(_exec_kubeconfig(tmp_path / "flood", "/bin/sh", ["-c", script]), environ=NO_ENV)
    assert str(caught.value).endswith(f"context lab: exec: the plugin printed more than 1 MiB on its {stream}: no ExecCredential is")


async def test_a_file_field_beside_its_data_twin_is_not_opened(tmp_path: Path) -> None:
    """The client (as client-go) uses `certificate-authority-data` when it is set and never opens
    `certificate-authority`: a kubeconfig holding both, the file long gone, loaded before the field checks and must
    still load."""
    import base64

    from tests.kubeapi.tls import authority

    data = base64.standard_b64encode(authority().ca_pem).decode()
    text = TYPED.format(cluster=f"certificate-authority: /nonexist/ca.crt, certificate-authority-data: {data}", user="token: t")
    target = await load_target(kubeconfig=_write(tmp_path / "c", text), environ=NO_ENV)
    assert target.server == "https://127.0.0.1:1"


async def test_an_exec_plugin_whose_child_prints_without_end_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin that is a shell script runs its tools as children, which outlive the kill of the script and hold its
    pipes: the reader drained them to their end, for ever (at full CPU), so a script printing without end waited out
    the 60 s without a terminal ("gave no credentials within") and, on a terminal, hung."""
    import nvcre_tui.engine.kube.config as config

    monkeypatch.setattr(config, "EXEC_PLUGIN_SECONDS", 10.0)
    with pytest.raises(InputError) as caught:
        await load_target(_exec_kubeconfig(tmp_path / "flood", "/bin/sh", ["-c", "cat /dev/zero | cat; true"]), environ=NO_ENV)
    assert str(caught.value).endswith("context lab: exec: the plugin printed more than 1 MiB on its stdout: no ExecCredential is")


async def test_an_exec_plugin_prompts_on_our_stderr_where_it_is_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capfd: pytest.CaptureFixture[str]) -> None:
    """A plugin prompts on stderr (kubelogin's device code, an MFA code), which kubectl leaves the user's: read into a
    pipe, the user on a terminal never saw the code to enter and nvcre waited for ever. Where stderr is no terminal it is
    still read, for the one line of its failure."""
    from nvcre_tui.engine.store.kube import client

    credential = ('{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
                  '"status":{"token":"t-1"}}')
    script = f"echo 'To sign in, enter the code ABCD-1234' >&2; printf '%s' '{credential}'"
    monkeypatch.setattr(client, "_stderr_seen", lambda: True, raising=False)
    target = await load_target(_exec_kubeconfig(tmp_path / "prompt", "/bin/sh", ["-c", script]), environ=NO_ENV)
    assert target.configuration.api_key["BearerToken"] == "Bearer t-1"
    assert "To sign in, enter the code ABCD-1234" in capfd.readouterr().err
    monkeypatch.setattr(client, "_stderr_seen", lambda: False)
    with pytest.raises(InputError, match=r"context lab: exec: process returned 3\. denied$"):
        await load_target(_exec_kubeconfig(tmp_path / "fails", "/bin/sh", ["-c", "echo denied >&2; exit 3"]), environ=NO_ENV)
    assert "denied" not in capfd.readouterr().err


async def test_an_exec_plugin_named_by_a_relative_path_runs_from_beside_the_kubeconfig(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl resolves an exec command that names a folder (`./bin/get-token`) against the kubeconfig's folder, as it
    does tokenFile and certificates; nvcre ran it from the working folder: "No such file or directory" elsewhere."""
    folder = tmp_path / "cluster"
    (folder / "bin").mkdir(parents=True)
    plugin = folder / "bin" / "get-token"
    plugin.write_text("#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
                      "\"status\":{\"token\":\"beside\"}}'\n")
    plugin.chmod(0o755)
    path = _exec_kubeconfig(folder / "config", "./bin/get-token", [])
    monkeypatch.chdir(tmp_path)  # not the kubeconfig's folder
    target = await load_target(path, environ=NO_ENV)
    assert target.configuration.api_key["BearerToken"] == "Bearer beside"


async def test_a_missing_exec_plugin_says_its_install_hint(tmp_path: Path) -> None:
    """kubectl says a missing plugin's installHint (GKE's kubeconfigs carry how to install gke-gcloud-auth-plugin); nvcre
    said `[Errno 2] No such file or directory: 'gke-gcloud-auth-plugin'` alone."""
    path = Path(_exec_kubeconfig(tmp_path / "gke", "nvcre-test-no-such-auth-plugin", []))
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"]["exec"]["installHint"] = "Install it for use with kubectl by following\n  https://example.com/plugin\n"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(InputError, match=r"context lab: exec: executable nvcre-test-no-such-auth-plugin not found; Install it for "
                                         r"use with kubectl by following https://example\.com/plugin$"):
        await load_target(str(path), environ=NO_ENV)


@pytest.mark.parametrize(("stdin_terminal", "mode", "told"), [(True, None, "true"), (True, "IfAvailable", "true"),
                                                               (True, "Never", "false"), (False, None, "false")])
async def test_an_exec_plugin_is_told_it_is_interactive_as_kubectl_tells_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                            stdin_terminal: bool, mode: str | None, told: str) -> None:
    """kubectl tells a plugin it is interactive where stdin is a terminal (and its interactiveMode is not Never); the
    library told it whether stdout is one, so `report -o json > file` on a terminal told a plugin that could prompt that
    it could not (stdout here is no terminal either)."""
    from nvcre_tui.engine.store.kube import client

    monkeypatch.setattr(client, "stdin_is_terminal", lambda: stdin_terminal, raising=False)
    monkeypatch.setattr("nvcre_tui.engine.store.kube.terminal._holders", [], raising=False)  # no console left holding it by an earlier test
    script = ('case "$KUBERNETES_EXEC_INFO" in *\'"interactive": true\'*) t=true;; *) t=false;; esac; '
              'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s"}}\' "$t"')
    path = Path(_exec_kubeconfig(tmp_path / "told", "/bin/sh", ["-c", script]))
    if mode is not None:
        config = yaml.safe_load(path.read_text())
        config["users"][0]["user"]["exec"]["interactiveMode"] = mode
        path.write_text(yaml.safe_dump(config))
    target = await load_target(str(path), environ=NO_ENV)
    assert target.configuration.api_key["BearerToken"] == f"Bearer {told}"


async def test_an_exec_plugin_that_must_prompt_without_a_terminal_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.engine.store.kube import client

    monkeypatch.setattr(client, "stdin_is_terminal", lambda: False, raising=False)
    path = Path(_exec_kubeconfig(tmp_path / "always", "/bin/true", []))
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"]["exec"]["interactiveMode"] = "Always"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(InputError, match=r"context lab: exec: the plugin's interactiveMode is Always and standard input is not a terminal$"):
        await load_target(str(path), environ=NO_ENV)
