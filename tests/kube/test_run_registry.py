"""`certification run --workload-registry HOST --workload-registry-username U --workload-registry-password P`
(NVCRE's flags), over real HTTP: a dockerconfigjson Secret owned by the certification, named in its
imagePullSecrets (globally and where a category lists its own), deleted with it by --cleanup and `certification
delete` on a server with no garbage collector; all three flags or none;
refused on the simulator; the password can come on stdin."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import CERTIFICATION, SECRET
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.cluster import installed_in_thread, store_on

ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "examples" / "burn-in.yaml"
LOGIN = ["--workload-registry", "registry.example.com:5000", "--workload-registry-username", "svc-nvcre"]


async def _read(kubeconfig: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        return (await store.list(CERTIFICATION, "default")).items, (await store.list(SECRET, "default")).items
    finally:
        await store.close()


def test_a_pull_secret_owned_by_the_certification_and_named_in_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cert = tmp_path / "cert.yaml"  # a category with pull secrets of its own: they replace the global ones whole
    cert.write_text(CERT.read_text().replace("        testScale: intra-node\n",
                                             "        testScale: intra-node\n        imagePullSecrets: [{name: mirror}]\n"))
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        monkeypatch.setattr(sys, "stdin", io.StringIO("s3cr3t token\n"))
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(cert),
                *LOGIN, "--workload-registry-password", "-", "--history", str(tmp_path / "h.db")]
        assert main(argv) == 0
        err = capsys.readouterr().err
        [created], [secret] = asyncio.run(_read(kubeconfig))
        name = secret["metadata"]["name"]
        assert name.startswith("burn-in-registry-") and f"Pull secret {name} for registry.example.com:5000 created" in err
        assert secret["type"] == "kubernetes.io/dockerconfigjson"
        assert [(o["kind"], o["name"], o["uid"]) for o in secret["metadata"]["ownerReferences"]] == [
            ("Certification", "burn-in", created["metadata"]["uid"])]
        config = json.loads(base64.b64decode(secret["data"][".dockerconfigjson"]))
        assert config == {"auths": {"registry.example.com:5000": {
            "username": "svc-nvcre", "password": "s3cr3t token", "auth": base64.b64encode(b"svc-nvcre:s3cr3t token").decode()}}}
        spec = created["spec"]
        assert {"name": name} in (spec.get("options") or spec).get("imagePullSecrets")
        assert spec["categories"][0]["options"]["imagePullSecrets"] == [{"name": "mirror"}, {"name": name}]
        # --cleanup takes the secret with the certification (a server with no garbage collector would keep it)
        again = ["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(CERT), "--name", "again",
                 *LOGIN, "--workload-registry-password", "pw", "--wait", "--cleanup", "--history", str(tmp_path / "h.db")]
        assert main(again) == 1
        certs, secrets = asyncio.run(_read(kubeconfig))
        assert [c["metadata"]["name"] for c in certs] == ["burn-in"] and [s["metadata"]["name"] for s in secrets] == [name]
        # so does `certification delete` (this emulator runs no garbage collector, as the trial's bare API server)
        assert main(["certification", "delete", "burn-in", "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]) == 0
        assert asyncio.run(_read(kubeconfig)) == ([], [])


@pytest.mark.parametrize(("flags", "message"), [
    (LOGIN, "--workload-registry-password: the workload registry needs all three of --workload-registry, "
            "--workload-registry-username, --workload-registry-password"),
    (["--workload-registry", "r", "--workload-registry-username", "a:b", "--workload-registry-password", "p"],
     "--workload-registry-username: must not hold ':' (it separates the user from the password)"),
    ([*LOGIN, "--workload-registry-password", "pw"], "--workload-registry: the simulator pulls no image; a pull secret is for a "
                                                     "cluster's workloads"),
    ([*LOGIN, "--workload-registry-password", "-", "--cert-file", "-"],
     "--workload-registry-password - and --cert-file -: standard input can be read once; pass the certification as a file"),
])
def test_bad_registry_flags_in_one_line(flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.db"
    cert = [] if "--cert-file" in flags else ["--cert-file", str(CERT)]
    assert main(["certification", "run", "--sim", *cert, "--state", str(state), *flags]) == 2
    assert capsys.readouterr().err.splitlines() == [message]
    assert not state.exists()


def test_a_refused_pull_secret_takes_its_certification_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing half-created: workloads that could not pull their images would fail every node."""
    from tests.kubeapi import Fault

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        server.faults.add(Fault(method="POST", path="/secrets$", status=403, reason="Forbidden", message="secrets is forbidden"))
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(CERT),
                *LOGIN, "--workload-registry-password", "pw", "--history", str(tmp_path / "h.db")]
        assert main(argv) == 2
        [line] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("--workload-registry")]
        assert line.startswith("--workload-registry: the pull secret burn-in-registry-") and "forbidden" in line
        assert line.endswith("the certification burn-in was deleted again")
        assert asyncio.run(_read(kubeconfig)) == ([], [])


@pytest.mark.parametrize(("flags", "errors", "message"), [
    (["--workload-registry-username", "svc-\udcff", "--workload-registry-password", "pw"], "strict",
     "--workload-registry-username: not UTF-8 text"),
    (["--workload-registry-username", "svc-nvcre", "--workload-registry-password", "-"], "strict",
     "--workload-registry-password -: not UTF-8 text"),
    (["--workload-registry-username", "svc-nvcre", "--workload-registry-password", "-"], "surrogateescape",
     "--workload-registry-password: not UTF-8 text"),
], ids=["argv", "stdin-strict", "stdin-surrogateescape"])
def test_a_login_that_is_no_utf8_text_creates_nothing(flags: list[str], errors: str, message: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes that are no UTF-8 (argv, or stdin as a C.UTF-8 or en_US.UTF-8 locale decodes it): the certification was
    created, then encoding its pull secret failed (or reading stdin did), an internal error (exit 70) that left the
    certification behind."""
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"pw-\xff\n"), encoding="utf-8", errors=errors))
        argv = ["certification", "run", "--kubeconfig", str(kubeconfig), "--sim-runner", "--cert-file", str(CERT),
                "--workload-registry", "registry.example.com:5000", *flags, "--history", str(tmp_path / "h.db")]
        assert main(argv) == 2
        assert capsys.readouterr().err.splitlines() == [message]
        assert asyncio.run(_read(kubeconfig)) == ([], [])


def test_a_password_typed_on_a_terminal_is_not_echoed() -> None:
    """`--workload-registry-password -` on a terminal echoed the password as it was typed."""
    shown = _typed_at_the_prompt(b"s3cret-pw\n", b"read 's3cret-pw'")
    assert shown.count(b"s3cret-pw") == 1 and b"read 's3cret-pw'" in shown, shown
    ended = _typed_at_the_prompt(b"\x04", b"(end of input)")  # ctrl-d at the prompt: one line, not an internal error
    assert b"refused --workload-registry-password -: no password typed (end of input)" in ended, ended


def _typed_at_the_prompt(typed: bytes, done: bytes) -> bytes:
    """What a terminal shows when `typed` is typed at the password prompt, until `done` is shown."""
    import os
    import pty
    import select

    script = ("from nvcre_tui.cli.registry import _read_password\nfrom nvcre_tui.engine.errors import InputError\n"
              "try:\n    print(f'read {_read_password()!r}', flush=True)\nexcept InputError as error:\n"
              "    print(f'refused {error}', flush=True)")
    pid, fd = pty.fork()
    if pid == 0:  # the child: a fresh interpreter whose stdin, stdout and stderr are the terminal
        os.execv(sys.executable, [sys.executable, "-c", script])
    shown = b""

    def read_until(done: bytes) -> None:
        nonlocal shown
        while done not in shown:
            ready, _, _ = select.select([fd], [], [], 20)
            assert ready, f"waited for {done!r}: {shown!r}"
            try:
                shown += os.read(fd, 1024)
            except OSError:  # EIO: the child is gone
                break

    try:
        read_until(b"password:")
        os.write(fd, typed)
        read_until(done)
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    return shown
