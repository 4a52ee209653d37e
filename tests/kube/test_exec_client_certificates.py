"""Exec credential plugins answering a client certificate (Teleport's `tsh kube credentials`, some OIDC helpers), over
real HTTPS against the emulator, which checks a certificate's dates at each request (401 once expired), as the real
API server does. client-go runs such a plugin again past its expirationTimestamp and on a 401, and closes the
connections presenting the old certificate."""

from __future__ import annotations

import datetime
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yaml

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store import CONFIGMAP
from nvcre_tui.engine.store.kube import KubeStore
from tests.kubeapi import ApiServer

NO_ENV = {"HOME": "/nonexistent-home"}
ISSUED = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)  # the test clock's now when the plugin first runs


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ApiServer]:
    served = ApiServer(tls=True)
    await served.start()
    try:
        yield served
    finally:
        await served.stop()


def certificate_plugin(server: ApiServer, folder: Path, answers: list[tuple[str, int, datetime.datetime | None]],
                       mode: str = "Never") -> str:
    """A kubeconfig on `server` whose exec plugin hands out, at its Nth run, the Nth of `answers`: a client certificate
    of that user in system:masters, valid for that many days (-1: expired), with that expirationTimestamp (None:
    none). It counts its runs in folder/runs, logs in folder/told its stdin and whether it was told it is interactive,
    and fails (exit 1) past the last answer."""
    for number, (user, days, expires) in enumerate(answers, 1):
        cert, key = server.client_certificate(user, ("system:masters",), days=days)
        status = {"clientCertificateData": cert.decode(), "clientKeyData": key.decode()}
        if expires is not None:
            status["expirationTimestamp"] = expires.strftime("%Y-%m-%dT%H:%M:%SZ")
        (folder / f"credential-{number}.json").write_text(json.dumps(
            {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": status}))
    script = (f'n=$(cat "{folder}/runs" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "{folder}/runs"; '
              f'printf "%s %s\\n" "$(readlink /proc/self/fd/0)" "$KUBERNETES_EXEC_INFO" >> "{folder}/told"; '
              f'cat "{folder}/credential-$n.json" 2>/dev/null || {{ echo "no certificate for you" >&2; exit 1; }}')
    path = server.write_kubeconfig(folder / "kubeconfig")
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "/bin/sh",
                                           "args": ["-c", script], "interactiveMode": mode}}
    path.write_text(yaml.safe_dump(config))
    return str(path)


def runs(folder: Path) -> int:
    return int((folder / "runs").read_text())


async def test_a_client_certificate_is_renewed_at_its_expiry_and_new_connections_present_it(
        server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin ran once: its certificate presented for as long as the engine ran, refused by the server once expired
    (a burn-in, the console, the controller, refused for good). Now it runs again once the expirationTimestamp is past,
    before the request goes out, and the request is sent on a new connection presenting the new certificate (the
    kept-alive one presented the old)."""
    from nvcre_tui.engine.store.errors import NoCredentials
    from nvcre_tui.engine.store.kube import client

    now = ISSUED
    monkeypatch.setattr(client, "exec_now", lambda: now)
    hour = datetime.timedelta(hours=1)
    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", 2, ISSUED + hour), ("alice-2", 2, ISSUED + 3 * hour)])
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    try:
        await store.list(CONFIGMAP, "default")
        await store.list(CONFIGMAP, "default")
        now = ISSUED + 2 * hour  # past the first certificate's expirationTimestamp
        await store.list(CONFIGMAP, "default")
        await store.list(CONFIGMAP, "default")
        assert [r.user for r in server.requests] == ["alice-1", "alice-1", "alice-2", "alice-2"]
        assert runs(tmp_path) == 2  # loaded, then once at its expiry: not at each request
        now = ISSUED + 4 * hour  # the plugin now fails (a login needed): one line, no traceback, nothing sent
        with pytest.raises(NoCredentials, match=r"^ConfigMap in namespace default: no credentials for https://127\.0\.0\.1:\d+: "
                                                r"exec: process returned 1\. no certificate for you$"):
            await store.list(CONFIGMAP, "default")
        assert len(server.requests) == 4
    finally:
        await store.close()


async def test_a_watch_on_the_old_certificate_goes_on_and_its_pool_is_closed_once_unused(
        server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server checks a certificate as a request comes in, never while a watch it let in streams: a watch opened
    with the old certificate goes on undisturbed (closing its connection at the renewal ended it with aiohttp's
    RuntimeError, "Connection closed."), while requests go out on a new pool; the old pool is closed once nothing reads
    from it, and the watch reopened after presents the new certificate."""
    from nvcre_tui.engine.store.kube import client
    from tests.store.fixtures import take

    now = ISSUED
    monkeypatch.setattr(client, "exec_now", lambda: now)
    hour = datetime.timedelta(hours=1)
    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", 2, ISSUED + hour), ("alice-2", 2, ISSUED + 3 * hour)])
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    try:
        since = str(server.resource_version)
        watch = store.watch(CONFIGMAP, "default", resource_version=since)
        await store.create(CONFIGMAP, {"metadata": {"name": "before", "namespace": "default"}})
        assert await take(watch, 1) == [("ADDED", "before")]
        old = store._transport._pools.current
        now = ISSUED + 2 * hour
        await store.create(CONFIGMAP, {"metadata": {"name": "after", "namespace": "default"}})
        assert await take(watch, 1) == [("ADDED", "after")]
        assert old is not None and old is not store._transport._pools.current and old.in_use == 1  # the watch's
        await watch.aclose()
        await store.get(CONFIGMAP, "after", "default")
        assert old.client.rest_client.pool_manager.closed
        watch = store.watch(CONFIGMAP, "default", resource_version=since)
        assert await take(watch, 2) == [("ADDED", "before"), ("ADDED", "after")]
        await watch.aclose()
        assert [r.user for r in server.requests if r.query.get("watch")] == ["alice-1", "alice-2"]
        assert [r.user for r in server.requests if r.method == "POST"] == ["alice-1", "alice-2"]
    finally:
        await store.close()


@pytest.mark.parametrize("expires", [None, datetime.datetime(2999, 1, 1, tzinfo=datetime.UTC)], ids=["no-expiry", "far-expiry"])
async def test_a_refused_client_certificate_runs_the_plugin_again_once(server: ApiServer, tmp_path: Path,
                                                                      expires: datetime.datetime | None) -> None:
    """A certificate the server refuses (401: expired before its expirationTimestamp said, or without one) was never
    renewed; as client-go, the plugin now runs again, once for the requests refused together, and they are sent again
    on connections presenting the new certificate."""
    import asyncio

    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", -1, expires), ("alice-2", 2, expires)])
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    try:
        together = await asyncio.gather(*(store.list(CONFIGMAP, "default") for _ in range(3)))
        assert [listed.items for listed in together] == [[], [], []]
        assert sorted((r.status, r.user) for r in server.requests) == [(200, "alice-2")] * 3 + [(401, "")] * 3
        assert runs(tmp_path) == 2
        await store.list(CONFIGMAP, "default")
        assert runs(tmp_path) == 2  # the new certificate in hand: not run at each request
    finally:
        await store.close()


async def test_a_plugin_handing_out_a_refused_certificate_is_run_again_once_and_said_unauthorized(server: ApiServer,
                                                                                                  tmp_path: Path) -> None:
    from nvcre_tui.engine.store.errors import Unauthorized

    kubeconfig = certificate_plugin(server, tmp_path, [("old-1", -1, None), ("old-2", -1, None), ("old-3", -1, None)])
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    try:
        with pytest.raises(Unauthorized, match=r"^ConfigMap in namespace default: Unauthorized \(the API server refused"):
            await store.list(CONFIGMAP, "default")
        assert runs(tmp_path) == 2  # loaded, then once on the 401: no loop
    finally:
        await store.close()


async def test_a_certificate_renewed_while_the_console_holds_the_terminal_is_not_given_it(
        server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules of a token's renewal inside the console hold for a certificate's: the plugin is told it is not
    interactive, given no stdin, and one that needs a login says to log in from a shell."""
    from nvcre_tui.engine.store.errors import NoCredentials
    from nvcre_tui.engine.store.kube import client
    from nvcre_tui.engine.store.kube.terminal import hold_terminal

    now = ISSUED
    monkeypatch.setattr(client, "exec_now", lambda: now)
    monkeypatch.setattr(client, "stdin_is_terminal", lambda: True)  # a user at the console
    monkeypatch.setattr(client, "_stderr_seen", lambda: True)
    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", 2, ISSUED + datetime.timedelta(hours=1))], mode="IfAvailable")
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    release = hold_terminal("the console")
    try:
        now = ISSUED + datetime.timedelta(hours=2)
        with pytest.raises(NoCredentials, match=r": exec: the plugin may not prompt while the console holds the terminal: log in from a "
                                                r"shell .* \(process returned 1\. no certificate for you\)$"):
            await store.list(CONFIGMAP, "default")
        told = [line.split(" ", 1) for line in (tmp_path / "told").read_text().splitlines()]
        assert [json.loads(info)["spec"]["interactive"] for _, info in told] == [True, False]
        assert told[1][0] == "/dev/null"
    finally:
        release()
        await store.close()


async def test_a_renewed_certificate_that_does_not_load_is_one_line_nothing_sent(server: ApiServer, tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A certificate is loaded by the client as it makes a connection pool: one the plugin garbled at a renewal was an
    ssl.SSLError there (an internal error, exit 70). It is loaded when the plugin answers: one line naming the plugin."""
    from nvcre_tui.engine.store.errors import NoCredentials
    from nvcre_tui.engine.store.kube import client

    now = ISSUED
    monkeypatch.setattr(client, "exec_now", lambda: now)
    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", 2, ISSUED + datetime.timedelta(hours=1))])
    garbled = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
    (tmp_path / "credential-2.json").write_text(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                                                            "status": {"clientCertificateData": garbled, "clientKeyData": garbled}}))
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    try:
        await store.list(CONFIGMAP, "default")
        now = ISSUED + datetime.timedelta(hours=2)
        with pytest.raises(NoCredentials, match=r": exec: the plugin's client certificate and key do not load \(.*\)$"):
            await store.list(CONFIGMAP, "default")
        assert len(server.requests) == 1
    finally:
        await store.close()


async def test_a_superseded_certificate_s_files_are_removed_once_no_pool_presents_it(
        server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each certificate and private key the plugin handed out stayed in a temporary file until the process exited (a
    controller renewing hourly for months). A superseded pair is now removed once the last pool presenting it is closed
    (a watch on it keeps it until it ends); the pair in use stays, removed at exit."""
    import os

    from nvcre_tui.engine.store.kube import client
    from tests.store.fixtures import take

    now = ISSUED
    monkeypatch.setattr(client, "exec_now", lambda: now)
    hour = datetime.timedelta(hours=1)
    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", 2, ISSUED + hour), ("alice-2", 2, ISSUED + 3 * hour)])
    target = await load_target(kubeconfig, environ=NO_ENV)
    store = KubeStore(target, ManualClock())
    try:
        watch = store.watch(CONFIGMAP, "default", resource_version=str(server.resource_version))
        await store.create(CONFIGMAP, {"metadata": {"name": "before", "namespace": "default"}})
        assert await take(watch, 1) == [("ADDED", "before")]
        old = (str(target.configuration.cert_file), str(target.configuration.key_file))
        now = ISSUED + 2 * hour
        await store.list(CONFIGMAP, "default")
        await store.list(CONFIGMAP, "default")
        new = (str(target.configuration.cert_file), str(target.configuration.key_file))
        assert new != old and all(os.path.isfile(path) for path in (*old, *new))  # the watch's pool presents the old
        await watch.aclose()
        await store.list(CONFIGMAP, "default")  # the old pool, unused, is closed as a request takes a pool
        assert not any(os.path.exists(path) for path in old) and all(os.path.isfile(path) for path in new)
        assert [r.user for r in server.requests if r.method == "GET"][-1] == "alice-2"
        assert target.certificate_files is not None
        target.certificate_files.remove_all()  # at exit
        assert not any(os.path.exists(path) for path in new)
    finally:
        await store.close()


async def test_a_token_and_a_client_certificate_are_both_presented(server: ApiServer, tmp_path: Path) -> None:
    """A plugin answering both: client-go sends the token and presents the certificate, the API server authenticating
    by either. nvcre took the token alone (the library's choice): a token the server does not know was refused, where
    the certificate beside it would have been taken."""
    kubeconfig = certificate_plugin(server, tmp_path, [("alice-1", 2, None)])
    credential = json.loads((tmp_path / "credential-1.json").read_text())
    credential["status"]["token"] = "a-token-of-another-cluster"
    (tmp_path / "credential-1.json").write_text(json.dumps(credential))
    store = KubeStore(await load_target(kubeconfig, environ=NO_ENV), ManualClock())
    try:
        assert (await store.list(CONFIGMAP, "default")).items == []
        assert [(r.status, r.auth_scheme, r.user) for r in server.requests] == [(200, "Bearer", "alice-1")]
        assert runs(tmp_path) == 1
    finally:
        await store.close()
