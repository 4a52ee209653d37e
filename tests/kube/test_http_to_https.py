"""A kubeconfig naming http:// for an API server that speaks only HTTPS, against the emulator over TLS."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from tests.kube.test_setup import no_user_cluster, nvcre  # noqa: F401 - fixtures
from tests.kubeapi import ApiServer, Fault


async def test_http_to_an_https_server_says_it_may_speak_https(tmp_path: Path, capsys) -> None:
    """The server drops a plain-HTTP request at its TLS handshake: the user read only "connection lost (Server
    disconnected)", and looked for a server that was down or overloaded."""
    server = ApiServer(tls=True)
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        https = config["clusters"][0]["cluster"]["server"]
        assert https.startswith("https://")
        config["clusters"][0]["cluster"]["server"] = "http://" + https.removeprefix("https://")
        kubeconfig.write_text(yaml.safe_dump(config))
        code, out, err = await asyncio.wait_for(nvcre(capsys, "setup", "status", "--kubeconfig", str(kubeconfig)), 60)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert "connection lost" in err and "the server speaks HTTPS (it completes a TLS handshake): use https:// in the kubeconfig's server" in err, err
    finally:
        await server.stop()


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
async def test_a_reset_connection_is_not_told_as_https(tmp_path: Path, capsys, tls: bool) -> None:
    """A server that resets the first requests (restarting), over http:// or https://: it was told "the server may
    speak HTTPS" over http://, sending the user to change a scheme that was right. Now it says the connection was lost
    and tried again, nothing about HTTPS."""
    server = ApiServer(tls=tls)
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        server.faults.add(Fault(reset_connection=True))
        code, out, err = await asyncio.wait_for(nvcre(capsys, "setup", "status", "--kubeconfig", str(kubeconfig)), 60)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert "connection lost" in err and "gave up after 2 tries" in err and "HTTPS" not in err, err
    finally:
        await server.stop()
