"""A newline in a path never splits a message into two lines: `NVCRE_STATE=$'x\\ny.db' nvcre certification list`
printed `No certifications ... (x` and `y.db).`; the history-off notice and run's advice (`--state 'a` / `b.db'`)
did the same. Each message is one line, the newline shown as U+FFFD."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")


def _one_line_each(err: str, piece: str) -> None:
    """Every line that names the path's second half names its first half too: never split."""
    lines = [line for line in err.splitlines() if piece.split("\n")[1] in line]
    assert lines, err
    assert all(piece.replace("\n", "\ufffd") in line for line in lines), err


def test_list_names_a_state_path_with_a_newline_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVCRE_STATE", "x\ny.db")
    assert main(["certification", "list"]) == 0
    err = capsys.readouterr().err
    assert err == "No certifications in namespace default of the simulator (x\ufffdy.db).\n"


def test_run_advice_and_notices_name_paths_with_a_newline_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ro").mkdir(mode=0o555)  # the history's default place cannot be written there: the "history off" notice names it
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "ro" / "h\nk"))
    assert main(["certification", "run", "--cert-file", BURN_IN, "--state", "a\nb.db"]) == 0
    err = capsys.readouterr().err
    _one_line_each(err, "a\nb.db")
    _one_line_each(err, "h\nk/nvcre/history.db")
