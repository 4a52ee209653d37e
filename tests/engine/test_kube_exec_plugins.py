"""Exec credential plugins as client-go runs them: what they are given of nvcre's terminal (stdin, stderr)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.kube import load_target
from tests.kubeapi import ApiServer
from tests.kubeapi.fixtures import apiserver  # noqa: F401 - the fixture

NO_ENV: dict[str, str] = {"HOME": "/nonexistent-home"}
CREDENTIAL = '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t-1"}}'


def exec_kubeconfig(path: Path, script: str, **exec_fields: str) -> str:
    """A kubeconfig whose user's exec plugin is `sh -c script`."""
    plugin = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "/bin/sh", "args": ["-c", script], **exec_fields}
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "lab",
                                    "clusters": [{"name": "lab", "cluster": {"server": "https://127.0.0.1:6443"}}],
                                    "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "u"}}],
                                    "users": [{"name": "u", "user": {"exec": plugin}}]}))
    return str(path)


@contextmanager
def stdin_holding(text: bytes) -> Iterator[None]:
    """File descriptor 0 a pipe holding `text` (what `... | nvcre` gives it), restored after."""
    read_end, write_end = os.pipe()
    os.write(write_end, text)
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


async def test_a_plugin_not_told_it_is_interactive_is_not_given_our_stdin(tmp_path: Path) -> None:
    """client-go gives a plugin stdin only where it is interactive; nvcre gave it always, so one that reads it (told it
    may not prompt) took what was piped to nvcre, or what the user typed."""
    taken = tmp_path / "taken"
    script = f"head -c 64 > '{taken}'; printf '%s' '{CREDENTIAL}'"
    with stdin_holding(b"piped to nvcre"):
        target = await load_target(exec_kubeconfig(tmp_path / "config", script), environ=NO_ENV)
        assert os.read(0, 64) == b"piped to nvcre"  # still ours
    assert target.configuration.api_key["BearerToken"] == "Bearer t-1"
    assert taken.read_bytes() == b""


async def test_a_plugin_told_it_is_interactive_reads_our_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.engine.store.kube import client

    monkeypatch.setattr(client, "stdin_is_terminal", lambda: True)  # the pipe stands for the terminal the user answers on
    monkeypatch.setattr("nvcre_tui.engine.store.kube.terminal._holders", [])  # no console left holding it by an earlier test
    taken = tmp_path / "taken"
    with stdin_holding(b"123456"):
        await load_target(exec_kubeconfig(tmp_path / "config", f"head -c 6 > '{taken}'; printf '%s' '{CREDENTIAL}'"), environ=NO_ENV)
    assert taken.read_bytes() == b"123456"


@pytest.mark.parametrize(("status", "said"), [
    ("{}", "exec: the plugin returned no token and no client certificate and key"),
    ('{"clientCertificateData": "-----BEGIN CERTIFICATE-----"}', "exec: the plugin returned a client certificate without its key"),
    ('{"token": "abc\\n"}', "exec: the plugin's token is no string of one line (a line break or another control character, which no HTTP "
                              "header carries)"),
], ids=["nothing", "certificate-alone", "token-with-line-break"])
async def test_a_plugin_whose_credential_client_go_refuses_is_one_line(tmp_path: Path, status: str, said: str) -> None:
    """client-go refuses these; the library went on without credentials (a 401 then blamed "a wrong or expired token")
    or put the line break in the header ("Forbidden control character": an internal error, exit 70)."""
    from nvcre_tui.engine.errors import InputError

    credential = '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":' + status + "}"
    path = tmp_path / "config"
    with pytest.raises(InputError) as caught:
        await load_target(exec_kubeconfig(path, f"printf '%s' '{credential}'"), environ=NO_ENV)
    assert str(caught.value) == f"kubeconfig {path}, context lab: {said}"


@pytest.mark.parametrize(("fields", "said"), [
    ({"interactiveMode": "always"}, "exec: interactiveMode 'always' is none of Never, IfAvailable, Always"),
    ({"apiVersion": "client.authentication.k8s.io/v1alpha1"},
     "exec: apiVersion 'client.authentication.k8s.io/v1alpha1' is none kubectl takes (client.authentication.k8s.io/v1 or "
     "client.authentication.k8s.io/v1beta1)"),
    ({"apiVersion": "client.authentication.k8s.io/v1"},
     "exec: interactiveMode must be given with apiVersion client.authentication.k8s.io/v1 (Never, IfAvailable, Always), as kubectl requires"),
], ids=["mode-typo", "v1alpha1", "v1-without-mode"])
async def test_an_exec_entry_kubectl_refuses_is_one_line_before_the_plugin_runs(tmp_path: Path, fields: dict[str, str], said: str) -> None:
    """The library took any interactiveMode for IfAvailable (`always` told a plugin it may prompt only with a terminal)
    and any apiVersion; kubectl refuses these entries, and now nvcre does, in one line, the plugin never run."""
    from nvcre_tui.engine.errors import InputError

    ran = tmp_path / "ran"
    path = tmp_path / "config"
    with pytest.raises(InputError) as caught:
        await load_target(exec_kubeconfig(path, f"touch '{ran}'; printf '%s' '{CREDENTIAL}'", **fields), environ=NO_ENV)
    assert str(caught.value) == f"kubeconfig {path}, context lab: {said}"
    assert not ran.exists()


@pytest.mark.parametrize("provide", [True, False])
async def test_a_plugin_that_asks_for_the_cluster_is_told_it_as_client_go_tells_it(tmp_path: Path, provide: bool) -> None:
    """provideClusterInfo: client-go puts the cluster in KUBERNETES_EXEC_INFO's spec.cluster (the server, its CA, the
    exec extension's config); the library told the plugin nothing, so one minting a token per server could not."""
    import json

    told = tmp_path / "told"
    path = Path(exec_kubeconfig(tmp_path / "config", f"printf '%s' \"$KUBERNETES_EXEC_INFO\" > '{told}'; printf '%s' '{CREDENTIAL}'"))
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"]["exec"]["provideClusterInfo"] = provide
    import base64

    from tests.kubeapi.tls import authority

    (tmp_path / "ca.crt").write_bytes(authority().ca_pem)
    config["clusters"][0]["cluster"].update({"certificate-authority": "ca.crt", "tls-server-name": "api.lab",
                                             "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "lab"}}]})
    path.write_text(yaml.safe_dump(config))
    await load_target(str(path), environ=NO_ENV)
    spec = json.loads(told.read_text())["spec"]
    if not provide:
        assert "cluster" not in spec
        return
    assert spec["cluster"] == {"server": "https://127.0.0.1:6443", "tls-server-name": "api.lab",
                               "certificate-authority-data": base64.standard_b64encode(authority().ca_pem).decode(), "config": {"audience": "lab"}}


@pytest.mark.parametrize(("fields", "said"), [
    ({"args": "-c"}, "exec.args: must be a list of strings, got '-c'"),
    ({"env": {"X": "1"}}, "exec.env: must be a list of name and value, got {'X': '1'}"),
    ({"env": [{"name": "X", "value": 1}]}, "exec.env[0] (X): value must be a string (quote it), got 1"),
    ({"env": [{"value": "1"}]}, "exec.env[0]: needs a name, got {'value': '1'}"),
], ids=["args-string", "env-mapping", "env-number", "env-unnamed"])
async def test_an_exec_entry_of_the_wrong_shape_is_one_line_naming_its_field(tmp_path: Path, fields: dict[str, object], said: str) -> None:
    """The library said `'str' object has no attribute 'value'` or `expected str, bytes or os.PathLike object, not int`."""
    from nvcre_tui.engine.errors import InputError

    path = Path(exec_kubeconfig(tmp_path / "config", f"printf '%s' '{CREDENTIAL}'"))
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"]["exec"].update(fields)
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(InputError) as caught:
        await load_target(str(path), environ=NO_ENV)
    assert str(caught.value) == f"kubeconfig {path}, context lab: user u: {said}"


async def test_an_exec_env_entry_without_a_value_has_the_empty_one(tmp_path: Path) -> None:
    """kubectl gives it the empty value; the library refused it ("Expected key value in .../env/0")."""
    path = Path(exec_kubeconfig(tmp_path / "config", f"printf '%s' \"$EMPTY\" > '{tmp_path / 'seen'}'; printf '%s' '{CREDENTIAL}'"))
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"]["exec"]["env"] = [{"name": "EMPTY"}]
    path.write_text(yaml.safe_dump(config))
    target = await load_target(str(path), environ=NO_ENV)
    assert target.configuration.api_key["BearerToken"] == "Bearer t-1" and (tmp_path / "seen").read_text() == ""


def counting_plugin(folder: Path, tokens: str, expires: str | None) -> str:
    """A plugin script handing out `<tokens>-N` at its Nth run (`tokens` alone when it ends in `!`: always the same)."""
    expiry = f',"expirationTimestamp":"{expires}"' if expires else ""
    token = tokens.rstrip("!") if tokens.endswith("!") else f"{tokens}-$n"
    return (f'n=$(cat "{folder}/runs" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "{folder}/runs"; '
            'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
            f'"status":{{"token":"%s"{expiry}}}}}\' "{token}"')


def on_the_emulator(path: Path, server: ApiServer, script: str) -> str:
    """exec_kubeconfig's, pointing at `server`."""
    exec_kubeconfig(path, script, interactiveMode="Never")
    config = yaml.safe_load(path.read_text())
    config["clusters"][0]["cluster"]["server"] = server.url
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.mark.parametrize("expires", [None, "2999-01-01T00:00:00Z"], ids=["no-expiry", "far-expiry"])
async def test_a_refused_exec_token_runs_the_plugin_again_once(tmp_path: Path, apiserver: ApiServer,  # noqa: F811
                                                               expires: str | None) -> None:
    """client-go runs the plugin again on a 401; nvcre ran it again only past the expirationTimestamp it gave, so a
    token revoked or rotated before (or a plugin giving none) was refused for as long as the engine ran."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.store import CONFIGMAP
    from nvcre_tui.engine.store.kube import KubeStore

    apiserver.add_token("t-1", "alice", ["system:masters"])
    target = await load_target(on_the_emulator(tmp_path / "config", apiserver, counting_plugin(tmp_path, "t", expires)), environ=NO_ENV)
    store = KubeStore(target, ManualClock())
    try:
        assert (await store.list(CONFIGMAP, "default")).items == []
        del apiserver.tokens["t-1"]  # revoked
        apiserver.add_token("t-2", "alice", ["system:masters"])
        together = await asyncio.gather(*(store.list(CONFIGMAP, "default") for _ in range(3)))  # each refused, then sent again
        assert [listed.items for listed in together] == [[], [], []]
        assert [r.status for r in apiserver.requests].count(401) == 3
        assert (tmp_path / "runs").read_text().strip() == "2"  # once for the three refused together
        assert (await store.list(CONFIGMAP, "default")).items == []
        assert (tmp_path / "runs").read_text().strip() == "2"  # its new token in hand: not run at each request
    finally:
        await store.close()


async def test_a_plugin_handing_out_a_refused_token_is_run_again_once_and_said_unauthorized(tmp_path: Path,
                                                                                           apiserver: ApiServer) -> None:  # noqa: F811
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.store import CONFIGMAP
    from nvcre_tui.engine.store.errors import Unauthorized
    from nvcre_tui.engine.store.kube import KubeStore

    target = await load_target(on_the_emulator(tmp_path / "config", apiserver, counting_plugin(tmp_path, "revoked!", None)), environ=NO_ENV)
    store = KubeStore(target, ManualClock())
    try:
        with pytest.raises(Unauthorized, match=r"^ConfigMap in namespace default: Unauthorized \(the API server refused"):
            await store.list(CONFIGMAP, "default")
        assert (tmp_path / "runs").read_text().strip() == "2"  # loaded, then once on the 401: no loop
    finally:
        await store.close()


async def test_a_watch_refused_its_exec_token_runs_the_plugin_again(tmp_path: Path, apiserver: ApiServer) -> None:  # noqa: F811
    """A watch reopened after its token was revoked (the engine's watches last for hours) is refused as a request is."""
    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.store import CONFIGMAP
    from nvcre_tui.engine.store.kube import KubeStore
    from tests.store.fixtures import take

    apiserver.add_token("t-1", "alice", ["system:masters"])
    target = await load_target(on_the_emulator(tmp_path / "config", apiserver, counting_plugin(tmp_path, "t", None)), environ=NO_ENV)
    store = KubeStore(target, ManualClock())
    try:
        since = str(apiserver.resource_version)
        await store.create(CONFIGMAP, {"metadata": {"name": "seen", "namespace": "default"}})
        del apiserver.tokens["t-1"]
        apiserver.add_token("t-2", "alice", ["system:masters"])
        watch = store.watch(CONFIGMAP, "default", resource_version=since)
        assert await take(watch, 1) == [("ADDED", "seen")]
        await watch.aclose()
        assert (tmp_path / "runs").read_text().strip() == "2"
    finally:
        await store.close()


async def test_requests_sent_together_past_a_tokens_expiry_run_the_plugin_once(tmp_path: Path, apiserver: ApiServer,  # noqa: F811
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request past the expirationTimestamp ran the plugin (the library's hook holds no lock): an engine sending a
    dozen at once spawned a dozen `aws eks get-token`. As client-go, one runs it and the others take its token."""
    import datetime

    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.store import CONFIGMAP
    from nvcre_tui.engine.store.kube import KubeStore, client

    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    monkeypatch.setattr(client, "exec_now", lambda: now)
    for n in range(1, 6):
        apiserver.add_token(f"t-{n}", "alice", ["system:masters"])
    # one line appended per run (runs together append each theirs); run N hands out t-N, expiring at N o'clock
    script = (f'echo run >> "{tmp_path}/runs"; n=$(wc -l < "{tmp_path}/runs"); '
              'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
              '"status":{"token":"t-%s","expirationTimestamp":"2026-01-01T0%s:00:00Z"}}\' "$n" "$n"')
    target = await load_target(on_the_emulator(tmp_path / "config", apiserver, script), environ=NO_ENV)
    store = KubeStore(target, ManualClock())
    try:
        now += datetime.timedelta(minutes=90)  # past t-1's hour, not t-2's
        await asyncio.gather(*(store.list(CONFIGMAP, "default") for _ in range(3)))
        assert (tmp_path / "runs").read_text().count("run") == 2
    finally:
        await store.close()


async def test_a_token_answered_without_expiry_after_one_with_is_not_renewed_at_each_request(
        tmp_path: Path, apiserver: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The library kept the first answer's expirationTimestamp when a later answer gave none: past, the plugin ran at
    every request. As client-go, an answer without one drops it (the plugin then runs again on a 401 only)."""
    import datetime

    from nvcre_tui.engine.clock import ManualClock
    from nvcre_tui.engine.store import CONFIGMAP
    from nvcre_tui.engine.store.kube import KubeStore, client

    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    monkeypatch.setattr(client, "exec_now", lambda: now)
    for n in range(1, 6):
        apiserver.add_token(f"t-{n}", "alice", ["system:masters"])
    script = (f'echo run >> "{tmp_path}/runs"; n=$(wc -l < "{tmp_path}/runs"); '
              'if [ "$n" = 1 ]; then expiry=\',"expirationTimestamp":"2026-01-01T01:00:00Z"\'; else expiry=; fi; '
              'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
              '"status":{"token":"t-%s"%s}}\' "$n" "$expiry"')
    target = await load_target(on_the_emulator(tmp_path / "config", apiserver, script), environ=NO_ENV)
    store = KubeStore(target, ManualClock())
    try:
        now += datetime.timedelta(hours=2)  # past t-1's expiry: t-2 is taken, which gives none
        for _ in range(3):
            await store.list(CONFIGMAP, "default")
        assert (tmp_path / "runs").read_text().count("run") == 2
    finally:
        await store.close()
