"""A kubeconfig's token as kubectl sends it, over real HTTP against the emulator: a tokenFile's whitespace trimmed
(client-go's file token source), an empty one or a token no header can carry refused in one line."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from tests.kube.test_setup import nvcre  # noqa: F401 - the CLI runner
from tests.kubeapi import ApiServer


@pytest.fixture()
async def server() -> AsyncIterator[ApiServer]:
    served = ApiServer()
    await served.start()
    yield served
    await served.stop()


def _with_user(server: ApiServer, path: Path, user: dict[str, str]) -> Path:
    kubeconfig = server.write_kubeconfig(path)
    config = yaml.safe_load(kubeconfig.read_text())
    config["users"][0]["user"] = user
    kubeconfig.write_text(yaml.safe_dump(config))
    return kubeconfig


async def test_a_token_file_ending_in_a_line_break_is_sent_trimmed(server: ApiServer, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`kubectl create token sa > token` ends the file with a line break: the client put it in the Authorization header
    and every command ended "internal error: ValueError: Forbidden control character detected in headers", exit 70."""
    (tmp_path / "token").write_text(server.add_token("t-file", "filed") + "\n")
    kubeconfig = _with_user(server, tmp_path / "kubeconfig", {"tokenFile": "token"})  # beside the kubeconfig
    code, out, err = await asyncio.wait_for(nvcre(capsys, "certification", "list", "--kubeconfig", str(kubeconfig)), 60)
    assert "internal error" not in err and {request.user for request in server.requests} == {"filed"}, err


@pytest.mark.parametrize(("user", "said"), [
    ({"tokenFile": "empty"}, "users[emulator].user.tokenFile: {dir}/empty: empty: it holds no token"),
    ({"tokenFile": "two-lines"}, "users[emulator].user.tokenFile: {dir}/two-lines: holds more than one line, or a control character: a token is one line"),
    ({"token": "abc\ndef"}, "users[emulator].user.token: holds a line break or another control character, which no HTTP header carries"),
], ids=["empty-file", "two-lines", "inline-line-break"])
async def test_a_token_no_header_can_carry_is_one_line(server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      user: dict[str, str], said: str) -> None:
    (tmp_path / "empty").write_text(" \n")
    (tmp_path / "two-lines").write_text("abc\ndef\n")
    kubeconfig = _with_user(server, tmp_path / "kubeconfig", user)
    code, out, err = await asyncio.wait_for(nvcre(capsys, "certification", "list", "--kubeconfig", str(kubeconfig)), 60)
    assert (code, out, err) == (2, "", f"kubeconfig {kubeconfig}, context emulator: {said.format(dir=tmp_path)}\n")
    assert server.requests == []


async def test_a_token_file_rotated_under_a_long_session_is_read_again(server: ApiServer, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl reads a tokenFile again each minute (a token an agent rotates there); nvcre read it once, and an engine
    running for hours met 401s once the old token expired. A file that cannot be read meanwhile keeps the token in hand."""
    import nvcre_tui.engine.kube.config as config
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.kube import load_target
    from nvcre_tui.engine.store.kube import KubeStore

    monkeypatch.setattr(config, "TOKEN_FILE_SECONDS", 0.0, raising=False)  # a minute in use
    token = tmp_path / "token"
    token.write_text(server.add_token("t-first", "first") + "\n")
    kubeconfig = _with_user(server, tmp_path / "kubeconfig", {"tokenFile": str(token)})
    store = KubeStore(await load_target(str(kubeconfig), environ={"HOME": str(tmp_path)}), SystemClock(), user_agent="nvcre-test")
    seen: list[set[str]] = []
    try:
        for rewrite in (None, server.add_token("t-second", "second") + "\n", ""):  # then rotated, then mid-rewrite
            if rewrite is not None:
                token.write_text(rewrite)
                server.tokens.pop("t-first", None)  # expired
            server.clear_requests()
            await store.served_groups()
            seen.append({request.user for request in server.requests})
    finally:
        await store.close()
    assert seen == [{"first"}, {"second"}, {"second"}]


async def test_a_token_file_whose_token_is_refused_is_read_again_at_once(server: ApiServer, tmp_path: Path) -> None:
    """client-go reads a tokenFile again at the next request after a 401; nvcre waited for its minute, every request
    refused meanwhile (an engine refused its Lease stops). Now the refused request reads it again, and is sent once more
    with the token rotated there."""
    from nvcre_tui.engine.clock import SystemClock
    from nvcre_tui.engine.kube import load_target
    from nvcre_tui.engine.store.kube import KubeStore

    token = tmp_path / "token"
    token.write_text(server.add_token("t-first", "first") + "\n")
    kubeconfig = _with_user(server, tmp_path / "kubeconfig", {"tokenFile": str(token)})
    store = KubeStore(await load_target(str(kubeconfig), environ={"HOME": str(tmp_path)}), SystemClock(), user_agent="nvcre-test")
    try:
        await store.served_groups()
        token.write_text(server.add_token("t-second", "second") + "\n")  # rotated, the old one revoked at once
        del server.tokens["t-first"]
        server.clear_requests()
        await store.served_groups()
    finally:
        await store.close()
    assert [(request.status, request.user) for request in server.requests][:2] == [(401, ""), (200, "second")]
