"""A store that fails while run creates the certification is named, not the certification file: `run --cert-file
burn-in.yaml` on a store another process held locked said `.../burn-in.yaml: store lk.db: database is locked` (the
file is not at fault), and the same prefix came before a damaged row of the store. The lock is told with what to do."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.store.sqlite import database, tables

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")


def test_a_store_locked_by_another_process_is_named_with_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "lk.db"
    assert main(["certification", "run", "--cert-file", BURN_IN, "--name", "first", "--state", str(state)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(database, "BUSY_TIMEOUT_SECONDS", 0.2)
    monkeypatch.setattr(tables, "BUSY_TIMEOUT_SECONDS", 0.2)
    with contextlib.closing(sqlite3.connect(state, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")
        assert main(["certification", "run", "--cert-file", BURN_IN, "--state", str(state), "--wait"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"store {state}: locked by another process for more than 0.2 s (another nvcre process"), line
    assert "burn-in.yaml" not in line and "database is locked" not in line


def test_a_damaged_certification_row_is_not_blamed_on_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "x.db"
    assert main(["certification", "run", "--cert-file", BURN_IN, "--state", str(state)]) == 0
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        assert db.execute("UPDATE objects SET body = '[1]' WHERE kind LIKE '%/certifications' AND name = 'burn-in'").rowcount == 1
    capsys.readouterr()
    assert main(["certification", "run", "--cert-file", BURN_IN, "--state", str(state), "--wait"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"Certification default/burn-in: damaged row in {state}: "), line
