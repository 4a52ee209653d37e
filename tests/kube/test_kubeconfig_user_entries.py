"""Kubeconfig user entries kubectl reads as "no credentials", against the emulator over TLS (the client library
reads an https server's client certificate from the user entry, and raised on these)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kube.test_setup import no_user_cluster, nvcre  # noqa: F401 - fixtures
from tests.kubeapi import ApiServer


def _no_user_in_context(config: dict[str, Any]) -> None:
    del config["contexts"][0]["context"]["user"]


def _user_without_body(config: dict[str, Any]) -> None:
    del config["users"][0]["user"]


@pytest.mark.parametrize("edit", [_no_user_in_context, _user_without_body], ids=["context-names-no-user", "user-without-body"])
async def test_a_user_entry_without_credentials_reaches_the_server(
        edit: Callable[[dict[str, Any]], None], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It was "argument of type 'NoneType' is not iterable" (a context naming no user) or an internal error, exit 70
    (a user entry with no `user:`); kubectl sends such requests anonymously, and so does nvcre: the server answers."""
    server = ApiServer(tls=True)
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        edit(config)
        kubeconfig.write_text(yaml.safe_dump(config))
        code, out, err = await asyncio.wait_for(nvcre(capsys, "setup", "status", "--kubeconfig", str(kubeconfig)), 60)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert "nvcre setup status: discovery: Unauthorized" in err and "holds no credentials" in err, err
    finally:
        await server.stop()


async def test_a_user_entry_that_is_no_mapping_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kubectl refuses `user: [1]`; nvcre read it as no credentials."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": [1]}]}))
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", str(kubeconfig))
    assert (code, out, err) == (2, "", f"kubeconfig {kubeconfig}, context c: user u must be a mapping, got [1]\n")
