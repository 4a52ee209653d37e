"""An empty $HOME is taken as unset: the store and history go under the password database's home, as
os.path.expanduser does without HOME. Path.home() took "" for the filesystem root, so `HOME="" nvcre certification
run ...` made /.local/state/nvcre/sim.db and history.db. With no home at all, one line and nothing made."""

from __future__ import annotations

import pwd
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
