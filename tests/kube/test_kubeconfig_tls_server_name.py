"""A kubeconfig cluster's tls-server-name, over real HTTPS against the emulator (its certificate names 127.0.0.1 and
localhost): the server's certificate is checked against that name, not the URL's host, as kubectl checks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.engine.store.errors import StoreError
from tests.kube.cluster import store_with_cluster_fields
from tests.kubeapi import ApiServer


@pytest.mark.parametrize(("name", "verified"), [("localhost", True), ("api.elsewhere.example", False)])
async def test_the_certificate_is_checked_against_tls_server_name(tmp_path: Path, name: str, verified: bool) -> None:
    server = ApiServer(tls=True)
    await server.start()
    try:
        async with store_with_cluster_fields(server, tmp_path, {"tls-server-name": name}) as store:
            if verified:
                assert "" in await store.served_groups()
            else:
                with pytest.raises(StoreError, match=f"TLS with {server.url} failed: .*not valid for '{name}'"):
                    await store.served_groups()
    finally:
        await server.stop()
