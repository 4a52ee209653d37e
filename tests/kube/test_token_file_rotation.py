"""A kubeconfig user's tokenFile, read as client-go reads it (whitespace trimmed, read again when it changes), against
the emulator's token authentication over HTTP."""

from __future__ import annotations

from pathlib import Path

import yaml

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import NODE
from tests.kube.cluster import store_on
from tests.kubeapi import ApiServer


async def test_a_rotated_token_file_is_sent_as_it_is_now_and_its_trailing_newline_is_not(tmp_path: Path) -> None:
    """The token was read once, as written: a file ending in a newline (`kubectl create token SA > file`) raised the
    HTTP client's ValueError ("Forbidden control character detected in headers") at the first request, and a file a
    sidecar rotated kept sending the old token, every request 401 once the server stopped taking it."""
    async with ApiServer() as server:
        config = yaml.safe_load(server.write_kubeconfig(tmp_path / "kubeconfig").read_text())
        token = tmp_path / "token"
        token.write_text(server.add_token("first-token", "alice", ("system:masters",)) + "\n")
        config["users"][0]["user"] = {"tokenFile": str(token)}
        (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
        store = await store_on(tmp_path / "kubeconfig", SystemClock(), "nvcre-test")
        try:
            assert (await store.list(NODE)).items == []
            rotated = tmp_path / "token.new"  # as a rotation writes it: a new file renamed over the old one
            rotated.write_text(server.add_token("second-token-rotated", "alice", ("system:masters",)) + "\n")
            rotated.replace(token)
            del server.tokens["first-token"]  # the old one expired
            assert (await store.list(NODE)).items == []
            assert [r.user for r in server.requests if r.resource == "nodes"] == ["alice", "alice"]
        finally:
            await store.close()
