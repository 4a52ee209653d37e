"""A kubeconfig exec credential plugin run while the console holds the terminal (its token refreshed mid-session): as
without a terminal, never over the screen; one that needs the user says to log in from a shell."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.store.kube import client
from tests.kube.cluster import installed
from tests.kube.test_console_on_cluster import args_for, opened, opener

POLL_SECONDS = 0.05
EXPIRED = "2000-01-01T00:00:00Z"  # every request runs the plugin again, as a token refreshed mid-session


def plugin_kubeconfig(kubeconfig: Path, token: str, runs: Path) -> Path:
    """The kubeconfig's user made an exec plugin that logs each run (what it was told, its stdin) to `runs`, prompts on
    stderr as kubelogin does, and once a file `expired` is beside `runs` fails as a plugin that needs a browser login."""
    script = kubeconfig.parent / "plugin.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'printf \'%s %s\\n\' "$(readlink /proc/self/fd/0)" "$KUBERNETES_EXEC_INFO" >> "{runs}"\n'
        "echo 'To sign in, open https://login.example and enter the code ABCD-1234' >&2\n"
        f'if [ -e "{runs.parent / "expired"}" ]; then echo "interactive login required" >&2; exit 1; fi\n'
        'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
        f'"status":{{"token":"{token}","expirationTimestamp":"{EXPIRED}"}}}}\'\n')
    script.chmod(0o755)
    config = yaml.safe_load(kubeconfig.read_text())
    config["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": str(script)}}
    kubeconfig.write_text(yaml.safe_dump(config))
    return kubeconfig


def _told(runs: Path) -> list[tuple[str, bool]]:
    """Each run's stdin and whether it was told it is interactive."""
    lines = [line.split(" ", 1) for line in runs.read_text().splitlines()]
    return [(stdin, json.loads(info)["spec"]["interactive"]) for stdin, info in lines]


async def _until(pilot: Any, ready: Callable[[], bool], seconds: float = 5.0) -> None:
    """Let the console run until `ready()` (or `seconds` pass: the assertion after it says what is wrong)."""
    for _ in range(int(seconds / POLL_SECONDS)):
        if ready():
            return
        await pilot.pause(POLL_SECONDS)


@pytest.fixture()
def on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """nvcre's stdin and stderr are a terminal, as for a user at the console."""
    monkeypatch.setattr(client, "stdin_is_terminal", lambda: True)
    monkeypatch.setattr(client, "_stderr_seen", lambda: True)


async def test_a_plugin_run_inside_the_console_may_not_prompt_on_its_screen(tmp_path: Path, on_a_terminal: None,
                                                                           capfd: pytest.CaptureFixture[str]) -> None:
    """It was told it is interactive and given the terminal: its prompt was drawn over the console, and the keys typed
    in answer went to Textual and the plugin both."""
    async with installed(tmp_path) as (server, kubeconfig):
        runs = tmp_path / "runs"
        plugin_kubeconfig(kubeconfig, server.token, runs)
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), live=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and app.startup_error is None
        told = _told(runs)
        assert len(told) >= 2 and set(told) == {("/dev/null", False)}
        assert "ABCD-1234" not in capfd.readouterr().err


async def test_a_plugin_that_needs_a_login_mid_session_says_to_log_in_from_a_shell(
        tmp_path: Path, on_a_terminal: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its failure was a Forbidden: the header said this user may not read the engine Lease and which Role RBAC needs.
    Now the header leads with the way out, and the console goes on, taking the credentials once the plugin gives them."""
    import nvcre_tui.app

    monkeypatch.setattr(nvcre_tui.app, "CLUSTER_TAKE_OVER_SECONDS", 0.2)  # the viewer's look at the Lease: a request
    async with installed(tmp_path) as (server, kubeconfig):
        plugin_kubeconfig(kubeconfig, server.token, tmp_path / "runs")
        app = NvcreApp(opener=opener(args_for(kubeconfig), read_only=True), live=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await opened(app, pilot)
            (tmp_path / "expired").touch()  # the token expired, and a new one needs the user
            await _until(pilot, lambda: "no credentials" in app.sub_title)
            assert app.sub_title.startswith(f"⚠ no credentials for {server.url}: exec: the plugin may not prompt while the console holds "
                                            "the terminal: log in from a shell (kubectl with the same kubeconfig runs it where it can ask), "
                                            "and the console runs it again at its next request (process returned 1. To sign in, open "
                                            "https://login.example and enter the code ABCD-1234 interactive login required) (since ")
            assert "RBAC" not in app.sub_title and "Role" not in app.sub_title and "forbidden" not in app.sub_title
            (tmp_path / "expired").unlink()  # logged in from a shell
            await _until(pilot, lambda: "no credentials" not in app.sub_title)
            assert "no credentials" not in app.sub_title and app.return_code is None
