"""A kubeconfig cluster's tls-server-name, over real HTTPS against the emulator (its certificate names 127.0.0.1 and
localhost): the server's certificate is checked against that name, not the URL's host, as kubectl checks it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store.errors import StoreError
from nvcre_tui.engine.store.kube import KubeStore
from tests.kubeapi import ApiServer


@pytest.mark.parametrize(("name", "verified"), [("localhost", True), ("api.elsewhere.example", False)])
async def test_the_certificate_is_checked_against_tls_server_name(tmp_path: Path, name: str, verified: bool) -> None:
    server = ApiServer(tls=True)
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        config["clusters"][0]["cluster"]["tls-server-name"] = name
        kubeconfig.write_text(yaml.safe_dump(config))
        store = KubeStore(await load_target(str(kubeconfig), environ={"HOME": str(tmp_path)}), SystemClock(), user_agent="nvcre-test")
        try:
            if verified:
                assert "" in await store.served_groups()
            else:
                with pytest.raises(StoreError, match=f"TLS with {server.url} failed: .*not valid for '{name}'"):
                    await store.served_groups()
        finally:
            await store.close()
    finally:
        await server.stop()
