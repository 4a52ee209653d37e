"""A kubeconfig cluster's proxy-url, over real HTTPS against the emulator: requests go through an HTTP CONNECT proxy,
a proxy that refuses is named as such, and a SOCKS proxy (which the client cannot speak) is refused at load."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.kube.retry import RetryPolicy
from tests.kubeapi import ApiServer

NO_ENV = {"HOME": "/nonexistent-home"}


@contextlib.asynccontextmanager
async def connect_proxy(asked: list[str], credentials: list[str] | None = None) -> AsyncIterator[str]:
    """An HTTP proxy taking CONNECT (as squid does for https://), on 127.0.0.1; `asked` gets each CONNECT's target,
    `credentials` each one's Proxy-Authorization header ("" without one)."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b" ")[1].decode()
        asked.append(target)
        if credentials is not None:
            headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if ": " in line)
            credentials.append(headers.get("Proxy-Authorization", ""))
        host, port = target.rsplit(":", 1)
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    proxy = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}"
    finally:
        proxy.close()


def _with_proxy(kubeconfig: Path, proxy: str) -> str:
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"][0]["cluster"]["proxy-url"] = proxy
    kubeconfig.write_text(yaml.safe_dump(config))
    return str(kubeconfig)


@pytest.fixture()
async def server() -> AsyncIterator[ApiServer]:
    served = ApiServer(tls=True)
    await served.start()
    yield served
    await served.stop()


async def test_requests_go_through_the_proxy_url(server: ApiServer, tmp_path: Path) -> None:
    asked: list[str] = []
    async with connect_proxy(asked) as proxy:
        target = await load_target(_with_proxy(server.write_kubeconfig(tmp_path / "kubeconfig"), proxy), environ=NO_ENV)
        store = KubeStore(target, SystemClock(), user_agent="nvcre-test")
        try:
            assert "" in await store.served_groups()
        finally:
            await store.close()
    assert asked and set(asked) == {server.url.removeprefix("https://")}


async def test_a_proxy_that_refuses_is_named_without_its_credentials(server: ApiServer, tmp_path: Path) -> None:
    """It said `cannot connect to https://<server>: Connect call failed ('127.0.0.1', 1)`: the proxy's address, read as
    the API server's."""
    target = await load_target(_with_proxy(server.write_kubeconfig(tmp_path / "kubeconfig"), "http://me:secret@127.0.0.1:1"), environ=NO_ENV)
    store = KubeStore(target, SystemClock(), user_agent="nvcre-test", retry=RetryPolicy(attempts=1))
    try:
        with pytest.raises(StoreError) as caught:
            await store.served_groups()
    finally:
        await store.close()
    assert f"cannot connect to {server.url} through proxy http://127.0.0.1:1: " in str(caught.value) and "secret" not in str(caught.value)
    assert server.requests == []


async def test_a_socks_proxy_is_refused_in_one_line(tmp_path: Path) -> None:
    """kubectl takes socks5:// (ssh -D); the client spoke HTTP CONNECT to it, which a SOCKS server drops."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "x",
                                          "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1",
                                                                                 "proxy-url": "socks5://127.0.0.1:1080"}}],
                                          "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                                          "users": [{"name": "u", "user": {"token": "t"}}]}))
    with pytest.raises(InputError) as caught:
        await load_target(str(kubeconfig), environ=NO_ENV)
    assert str(caught.value) == (f"kubeconfig {kubeconfig}, context x: cluster c: proxy-url 'socks5://127.0.0.1:1080' is a SOCKS proxy, "
                                 "which nvcre cannot speak (kubectl can): give an HTTP proxy (http:// or https://, one that takes CONNECT), "
                                 "or reach the server through an SSH tunnel's local port (ssh -L) instead of its SOCKS one (ssh -D)")


async def test_a_proxy_url_with_credentials_sends_them_to_the_proxy(server: ApiServer, tmp_path: Path) -> None:
    """kubectl sends a proxy-url's user:password@ as Proxy-Authorization; the client sent none (407 from the proxy)."""
    import base64

    asked: list[str] = []
    credentials: list[str] = []
    async with connect_proxy(asked, credentials) as proxy:
        target = await load_target(_with_proxy(server.write_kubeconfig(tmp_path / "kubeconfig"), proxy.replace("//", "//me:s3cret@")),
                                   environ=NO_ENV)
        store = KubeStore(target, SystemClock(), user_agent="nvcre-test")
        try:
            await store.served_groups()
        finally:
            await store.close()
    assert credentials and set(credentials) == {"Basic " + base64.b64encode(b"me:s3cret").decode()}


async def test_a_loopback_server_is_reached_without_the_environment_s_proxy(server: ApiServer, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Go (kubectl) never proxies localhost or a loopback address; nvcre sent a kind or minikube cluster's requests to
    $HTTPS_PROXY (a corporate proxy, which cannot reach the laptop's 127.0.0.1)."""
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:1")  # nothing listens
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    store = KubeStore(await load_target(str(server.write_kubeconfig(tmp_path / "kubeconfig")), environ=NO_ENV), SystemClock(),
                      user_agent="nvcre-test", retry=RetryPolicy(attempts=1))
    try:
        assert "" in await store.served_groups()
    finally:
        await store.close()


@pytest.mark.parametrize(("server", "no_proxy", "proxied"), [
    ("https://10.1.2.3:6443", "10.0.0.0/8", False), ("https://10.1.2.3:6443", "192.168.0.0/16,.corp", True),
    ("https://api.corp:6443", "192.168.0.0/16,.corp", False), ("https://[::1]:6443", "", False), ("https://localhost:6443", "", False),
])
def test_the_environment_s_proxy_is_chosen_as_go_chooses_it(monkeypatch: pytest.MonkeyPatch, server: str, no_proxy: str,
                                                           proxied: bool) -> None:
    """Go bypasses $NO_PROXY's address ranges (10.0.0.0/8) and loopback; Python's rules know names and suffixes only."""
    from yarl import URL

    from nvcre_tui.engine.store.kube.transport import _environment_proxy

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    assert _environment_proxy(URL(server)) == ("http://proxy.corp:3128" if proxied else None)
