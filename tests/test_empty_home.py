"""An empty $HOME is taken as unset: the store and history go under the password database's home, as
os.path.expanduser does without HOME. Path.home() took "" for the filesystem root, so `HOME="" nvcre certification
run ...` made /.local/state/nvcre/sim.db and history.db. With no home at all, one line and nothing made."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.kube.config import cluster_configured
from nvcre_tui.paths import state_home

ROOT = Path(__file__).resolve().parents[1]
RUN = ["certification", "run", "--cert-file", str(ROOT / "examples" / "burn-in.yaml"), "--name", "hh2", "--wait"]


@pytest.fixture
def password_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME="" and no $XDG_STATE_HOME; the password database's home is a temporary folder."""
    folder = tmp_path / "pw-home"
    folder.mkdir()
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: SimpleNamespace(pw_dir=str(folder)))
    return folder


def test_an_empty_home_is_the_password_databases_home(password_home: Path) -> None:
    assert state_home() == password_home / ".local" / "state" / "nvcre"
    assert not cluster_configured()  # no /.kube/config looked up either


def test_run_with_an_empty_home_writes_under_the_password_databases_home(password_home: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(RUN) in (0, 1)
    capsys.readouterr()
    assert sorted(p.name for p in (password_home / ".local" / "state" / "nvcre").iterdir()) == ["history.db", "sim.db"]


def test_no_home_at_all_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(tmp_path)

    def missing(uid: int) -> None:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", missing)
    assert main(RUN) == 2
    err = capsys.readouterr().err
    assert err.startswith("$HOME is empty and user ") and "no home folder" in err and len(err.splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


# A container run as an arbitrary UID (OpenShift): $HOME unset and the UID in no password entry. A fresh interpreter,
# because the case is in how kubernetes-asyncio is first imported (it computes Path.home() at import time).
NO_PASSWORD_ENTRY = """
import os, pwd, sys
def missing(uid):
    raise KeyError(uid)
pwd.getpwuid = missing
os.environ.pop("HOME", None)
from nvcre_tui.cli import main
code = main(sys.argv[1:])
print("HOME after:", os.environ.get("HOME"), file=sys.stderr)
sys.exit(code)
"""


def _no_password_entry(tmp_path: Path, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items()
               if key not in ("HOME", "XDG_STATE_HOME", "KUBECONFIG", "NVCRE_STATE", "NVCRE_HISTORY")}
    environ.update(env, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", NO_PASSWORD_ENTRY, *args], cwd=tmp_path, env=environ,
                          capture_output=True, text=True, timeout=300)


def test_an_arbitrary_uid_without_home_runs_with_xdg_state_home(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = _no_password_entry(tmp_path, RUN, XDG_STATE_HOME=str(state))
    assert done.returncode in (0, 1), done.stderr
    assert sorted(p.name for p in (state / "nvcre").iterdir()) == ["history.db", "sim.db"]
    assert "HOME after: None" in done.stderr  # the placeholder the client library's import was given is taken back


def test_an_arbitrary_uid_without_home_is_told_what_to_set(tmp_path: Path) -> None:
    done = _no_password_entry(tmp_path, RUN)
    assert done.returncode == 2, done.stderr
    line = done.stderr.splitlines()[0]
    assert line.startswith("$HOME is unset and user ") and "the simulator's store has no default place" in line, done.stderr
    assert "$XDG_STATE_HOME" in line and "--state PATH" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_without_home_a_cluster_command_names_the_history_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("HOME")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("NVCRE_HISTORY", raising=False)

    def missing(uid: int) -> None:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", missing)
    kubeconfig = tmp_path / "kubeconfig"  # never reached: the history's place is settled before the cluster is asked
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    assert main(["certification", "list", "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "the history archive has no default place" in err and "--history PATH" in err, err


def test_kubernetes_asyncio_is_imported_through_one_module() -> None:
    """Any other first import of it would compute Path.home() unguarded again."""
    import ast

    guarded = ROOT / "nvcre_tui" / "engine" / "store" / "kube" / "client.py"
    offenders = []
    for path in (ROOT / "nvcre_tui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if path != guarded and any(name.split(".")[0] == "kubernetes_asyncio" for name in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_a_typed_tilde_with_an_empty_home_is_the_password_databases_home(password_home: Path) -> None:
    """os.path.expanduser takes HOME="" at its word: `--state ~/s.db` was the filesystem root's /s.db."""
    from nvcre_tui.paths import typed_path

    assert typed_path("~/s.db") == password_home / "s.db"
    assert typed_path("~") == password_home


def test_a_typed_tilde_without_any_home_says_so(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    monkeypatch.delenv("HOME")
    monkeypatch.delenv("XDG_STATE_HOME")

    def missing(uid: int) -> None:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", missing)
    assert main([*RUN, "--state", "~/s.db", "--history", str(tmp_path / "h.db")]) == 2
    err = capsys.readouterr().err
    assert err == (f"--state: ~/s.db: $HOME is unset and user {os.getuid()} has no home folder in the password database, so ~ "
                   "names no folder: give the path in full\n"), err


def test_an_unwritable_default_store_is_not_blamed_on_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """$HOME a file: the default store cannot be made. It said "--state: ...", a flag the user had not given."""
    home = tmp_path / "home-a-file"
    home.write_text("")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_STATE_HOME", "NVCRE_STATE", "NVCRE_HISTORY", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    assert main(["certification", "run", "--category", "diagnostics/dcgm-level4", "--wait"]) == 2
    assert capsys.readouterr().err == (f"the simulator's store (default place; --state PATH names another): {home}/.local/state/nvcre/"
                                       "sim.db: cannot write: Not a directory\n")
    monkeypatch.setenv("NVCRE_STATE", str(home / "s.db"))
    assert main(["certification", "run", "--category", "diagnostics/dcgm-level4", "--wait"]) == 2
    assert capsys.readouterr().err == f"$NVCRE_STATE: {home}/s.db: cannot write: Not a directory\n"
