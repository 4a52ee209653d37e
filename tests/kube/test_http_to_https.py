"""A kubeconfig naming http:// for an API server that speaks only HTTPS, against the emulator over TLS."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from tests.kube.test_setup import no_user_cluster, nvcre  # noqa: F401 - fixtures
from tests.kubeapi import ApiServer


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
        assert "connection lost" in err and "the server may speak HTTPS: check the scheme of the kubeconfig's server" in err, err
    finally:
        await server.stop()
