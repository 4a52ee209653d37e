"""A `~user` naming no user, in a file nvcre writes or a kubeconfig it reads, is refused in one line naming the flag
and the path, exit 2, nothing made: pathlib's expanduser raised RuntimeError "Could not determine home directory.",
which the CLI printed as an internal error."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.outfiles import replace_file

ROOT = Path(__file__).resolve().parents[1]
RUN = ["certification", "run", "--sim", "--cert-file", str(ROOT / "examples" / "burn-in.yaml"), "--wait"]
NOBODY = "~nvcre-no-such-user"
NO_HOME = "no user 'nvcre-no-such-user' on this machine, so no home folder ~nvcre-no-such-user"


@pytest.mark.parametrize(("argv", "env", "said"), [
    ([*RUN, "--state", "s.db", "--results-file", f"{NOBODY}/r.json"], {}, f"--results-file: {NOBODY}/r.json: {NO_HOME}"),
    ([*RUN, "--state", f"{NOBODY}/s.db"], {}, f"--state: {NOBODY}/s.db: {NO_HOME}"),
    ([*RUN, "--state", "s.db", "--history", f"{NOBODY}/h.db"], {}, f"--history: {NOBODY}/h.db: {NO_HOME}"),
    (["certification", "list", "--kubeconfig", f"{NOBODY}/config"], {}, f"--kubeconfig {NOBODY}/config: {NO_HOME}"),
    (["certification", "list"], {"KUBECONFIG": f"{NOBODY}/config"}, f"$KUBECONFIG: {NOBODY}/config: {NO_HOME}"),
])
def test_an_unknown_users_home_is_refused_in_one_line(argv: list[str], env: dict[str, str], said: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"{said}\n"
    assert list(tmp_path.rglob("*")) == []


def test_replace_file_says_an_unknown_users_home_as_an_oserror() -> None:
    """Its callers turn an OSError into their one line ("cannot save to ...: why")."""
    with pytest.raises(FileNotFoundError) as raised:
        replace_file(f"{NOBODY}/x.log", "text\n")
    assert raised.value.errno == errno.ENOENT and raised.value.strerror == NO_HOME


def test_no_expanduser_outside_the_one_helper() -> None:
    """Every `~` nvcre expands goes through nvcre_tui.paths.typed_path, which says an unknown user."""
    package = ROOT / "nvcre_tui"
    found = [str(path.relative_to(ROOT)) for path in package.rglob("*.py")
             if "expanduser(" in path.read_text() and path != package / "paths.py"]
    assert found == []


@pytest.mark.parametrize("env", [False, True])
def test_a_tilde_path_is_written_where_it_was_checked(env: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`--state '~/s.db'` (or $NVCRE_STATE, $NVCRE_HISTORY) was checked as $HOME/s.db and written to ./~/s.db."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    if env:
        monkeypatch.setenv("NVCRE_STATE", "~/s.db")
        monkeypatch.setenv("NVCRE_HISTORY", "~/h.db")
        argv = [*RUN, "--results-file", "~/r.json"]
    else:
        argv = [*RUN, "--state", "~/s.db", "--history", "~/h.db", "--results-file", "~/r.json"]
    assert main(argv) in (0, 1)
    capsys.readouterr()
    assert sorted(p.name for p in home.iterdir()) == ["h.db", "r.json", "s.db"]
    assert list(work.rglob("*")) == []


def test_an_environment_path_under_an_unknown_users_home_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVCRE_STATE", f"{NOBODY}/s.db")
    assert main(RUN) == 2
    assert capsys.readouterr().err == f"$NVCRE_STATE: {NOBODY}/s.db: {NO_HOME}\n"
    assert list(tmp_path.rglob("*")) == []
