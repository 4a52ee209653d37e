"""A named history that does not exist and cannot be created where it is named says so: `report NAME --history
ro/h.db` in a read-only folder said `not a readable history database (unable to open database file)`, as if a file
were there and damaged."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main

ROOT = Path(__file__).resolve().parents[2]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")


def test_report_with_a_history_that_cannot_be_created_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state, folder = tmp_path / "s1.db", tmp_path / "ro"
    assert main(["certification", "run", "--cert-file", BURN_IN, "--state", str(state), "--wait"]) == 1
    folder.mkdir(mode=0o555)  # mode bits count, as for every file nvcre writes (root too sees a read-only folder)
    capsys.readouterr()
    assert main(["certification", "report", "burn-in", "--state", str(state), "--history", str(folder / "h.db")]) == 2
    out, err = capsys.readouterr()
    assert err == f"{folder / 'h.db'}: no such history database, and it cannot be created there: folder {folder} is not writable\n"
    assert list(folder.iterdir()) == []
