"""Kubeconfig credential files that are named pipes (a credential helper writing a FIFO, `client-key: <(vault ...)`),
read as kubectl reads them, over real HTTPS against the emulator; a device that never ends is refused in one line."""

from __future__ import annotations

import asyncio
import base64
import os
import threading
from pathlib import Path

import pytest
import yaml

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.store.kube import KubeStore
from tests.kubeapi import ApiServer

NO_ENV = {"HOME": "/nonexistent-home"}


def fed_pipe(path: Path, contents: bytes) -> Path:
    """A FIFO at `path` that a helper (a thread) writes `contents` to once a reader opens it, then closes."""
    os.mkfifo(path)

    def write() -> None:
        with path.open("wb") as pipe:  # waits for the reader, as a helper's open does
            pipe.write(contents)

    threading.Thread(target=write, daemon=True).start()
    return path


async def test_credentials_written_to_named_pipes_reach_the_server(tmp_path: Path) -> None:
    """They were refused ("not a regular file") though kubectl reads them; the CA, the client certificate and its key,
    each from a pipe, now authenticate over TLS."""
    server = ApiServer(tls=True)
    await server.start()
    try:
        assert server.tls is not None
        cert, key = server.client_certificate("pipe-user", ("system:masters",))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        del config["clusters"][0]["cluster"]["certificate-authority-data"]
        config["clusters"][0]["cluster"]["certificate-authority"] = str(fed_pipe(tmp_path / "ca", server.tls.ca_pem))
        config["users"][0]["user"] = {"client-certificate": str(fed_pipe(tmp_path / "cert", cert)),
                                      "client-key": str(fed_pipe(tmp_path / "key", key))}
        kubeconfig.write_text(yaml.safe_dump(config))
        store = KubeStore(await load_target(str(kubeconfig), environ=NO_ENV), SystemClock(), user_agent="nvcre-test")
        try:
            assert "" in await store.served_groups()
        finally:
            await store.close()
        assert server.requests and {request.user for request in server.requests} == {"pipe-user"}
    finally:
        await server.stop()


async def test_a_token_written_to_a_named_pipe_reaches_the_server(tmp_path: Path) -> None:
    server = ApiServer()
    await server.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        config["users"][0]["user"] = {"tokenFile": str(fed_pipe(tmp_path / "token", server.add_token("t-pipe", "piped").encode()))}
        kubeconfig.write_text(yaml.safe_dump(config))
        store = KubeStore(await load_target(str(kubeconfig), environ=NO_ENV), SystemClock(), user_agent="nvcre-test")
        try:
            await store.served_groups()
        finally:
            await store.close()
        assert {request.user for request in server.requests} == {"piped"}
    finally:
        await server.stop()


async def test_a_token_pipe_is_read_again_as_a_token_file_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """client-go reads a tokenFile again each minute, a named pipe too (a helper writing the token each time it is
    opened); nvcre read a pipe once, so the token it rotated there was never taken. It is read again in the background:
    requests go out with the token in hand meanwhile (a pipe left by its one-shot writer, `<(...)`, waits 10 s)."""
    import nvcre_tui.engine.kube.config as config

    monkeypatch.setattr(config, "TOKEN_FILE_SECONDS", 0.0)  # a minute in use
    server = ApiServer()
    await server.start()
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    served = [server.add_token("t-first", "first").encode()]
    stop = threading.Event()

    def helper() -> None:  # writes the newest token each time the pipe is opened, until stopped
        while True:
            with fifo.open("wb") as pipe:
                if stop.is_set():
                    return
                pipe.write(served[-1])
            stop.wait(0.05)  # opened again at once, it wrote into the same read (the reader not yet at its end)

    writer = threading.Thread(target=helper, daemon=True)
    writer.start()
    try:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        settings = yaml.safe_load(kubeconfig.read_text())
        settings["users"][0]["user"] = {"tokenFile": str(fifo)}
        kubeconfig.write_text(yaml.safe_dump(settings))
        store = KubeStore(await load_target(str(kubeconfig), environ=NO_ENV), SystemClock(), user_agent="nvcre-test")
        try:
            await store.served_groups()
            served.append(server.add_token("t-second", "second").encode())  # rotated by the helper
            for _ in range(100):  # the pipe read again in the background, taken by a request after
                await store.served_groups()
                if server.requests[-1].user == "second":
                    break
                await asyncio.sleep(0.01)
            assert [request.user for request in server.requests][:1] == ["first"] and server.requests[-1].user == "second"
        finally:
            await store.close()
    finally:
        stop.set()
        unblock = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the helper waiting for a reader opens, and stops
        writer.join(5)
        os.close(unblock)
        await server.stop()


def _kubeconfig(path: Path, user: dict[str, str]) -> str:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "x",
                                    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                                    "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                                    "users": [{"name": "u", "user": user}]}))
    return str(path)


async def test_a_pipe_nobody_writes_and_a_device_without_end_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.engine.kube import credential_fields

    monkeypatch.setattr(credential_fields, "PIPE_SECONDS", 0.2)  # 10 s in use
    os.mkfifo(tmp_path / "silent")
    with pytest.raises(InputError) as caught:
        await load_target(_kubeconfig(tmp_path / "c1", {"client-key": str(tmp_path / "silent"), "client-certificate": "/dev/null"}),
                          environ=NO_ENV)
    assert str(caught.value) == (f"kubeconfig {tmp_path / 'c1'}, context x: users[u].user.client-key: {tmp_path / 'silent'}: a named pipe "
                                 "nothing wrote to and closed within 0.2 s (its writer is the credential helper: is it running?)")
    with pytest.raises(InputError) as caught:
        await load_target(_kubeconfig(tmp_path / "c2", {"tokenFile": "/dev/zero"}), environ=NO_ENV)
    assert str(caught.value) == (f"kubeconfig {tmp_path / 'c2'}, context x: users[u].user.tokenFile: /dev/zero: a device giving more "
                                 "than the 1 MiB of any token, certificate or key (/dev/zero?); name the file that holds it")


async def test_a_bad_certificate_from_a_pipe_is_named_by_its_field_and_pipe(tmp_path: Path) -> None:
    """The library writes what a pipe gave to a temporary file: the message names the kubeconfig's field and pipe."""
    pipe = fed_pipe(tmp_path / "cert", b"not a certificate")
    with pytest.raises(InputError) as caught:
        await load_target(_kubeconfig(tmp_path / "c", {"client-certificate": str(pipe),
                                                       "client-key-data": base64.standard_b64encode(b"x").decode()}), environ=NO_ENV)
    assert f"cannot load TLS files (client-certificate {pipe}, client-key-data)" in str(caught.value)
