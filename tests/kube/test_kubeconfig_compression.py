"""A kubeconfig cluster's disable-compression, as kubectl honours it, over real HTTP against the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from tests.kube.cluster import store_with_cluster_fields
from tests.kubeapi import ApiServer


@pytest.mark.parametrize("disabled", [True, False])
async def test_disable_compression_asks_for_answers_as_they_are(tmp_path: Path, disabled: bool) -> None:
    """It was ignored: every answer was asked for gzip-compressed (a fast network, a list of thousands of objects)."""
    server = ApiServer()
    await server.start()
    try:
        async with store_with_cluster_fields(server, tmp_path, {"disable-compression": disabled}) as store:
            await store.served_groups()
        asked = {request.accept_encoding for request in server.requests}
        assert asked == {"identity"} if disabled else all("gzip" in encodings for encodings in asked), asked
    finally:
        await server.stop()


async def test_disable_compression_that_is_no_boolean_is_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "x",
                                          "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "disable-compression": "true"}}],
                                          "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                                          "users": [{"name": "u", "user": {"token": "t"}}]}))
    with pytest.raises(InputError) as caught:
        await load_target(str(kubeconfig), environ={"HOME": str(tmp_path)})
    assert str(caught.value) == f"kubeconfig {kubeconfig}, context x: cluster c: disable-compression must be true or false, got 'true'"
