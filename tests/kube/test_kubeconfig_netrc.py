"""~/.netrc is not read for the API server, as kubectl reads none: over real HTTP(S) against the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store.kube import KubeStore
from tests.kubeapi import ApiServer


@pytest.mark.parametrize("user", ["token", "client-certificate"])
async def test_a_netrc_default_entry_is_not_sent_to_the_api_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: str) -> None:
    """A `default` netrc entry (or one for the server's host) made every request with a token an internal error
    ("Cannot combine AUTHORIZATION header with AUTH argument", exit 70), and one without a token carry its password."""
    netrc = tmp_path / "netrc"
    netrc.write_text("default login someone password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    server = ApiServer(tls=True)
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", client_certificate=(
            server.client_certificate("cert-user", ("system:masters",)) if user == "client-certificate" else None))
        store = KubeStore(await load_target(str(kubeconfig), environ={"HOME": str(tmp_path)}), SystemClock(), user_agent="nvcre-test")
        try:
            assert "" in await store.served_groups()
        finally:
            await store.close()
        assert {request.user for request in server.requests} == {"admin" if user == "token" else "cert-user"}
        assert {request.auth_scheme for request in server.requests} == {"Bearer" if user == "token" else ""}
    finally:
        await server.stop()
