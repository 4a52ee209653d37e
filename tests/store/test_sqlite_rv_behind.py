"""A store whose resourceVersion counter (meta rv) is behind the resourceVersions it already gave out (a hand edit, a
restored meta page): the next write would fail a UNIQUE constraint, blamed on whatever was being written, or hand out
a resourceVersion a watch has seen. It is refused on opening, one line naming the file, nothing changed."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.store.sqlite.database import StoreFileError, connect

BURN_IN = str(Path(__file__).resolve().parents[2] / "examples" / "burn-in.yaml")


@pytest.fixture(scope="module")
def created(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with burn-in created in it (not run: quick)."""
    state = tmp_path_factory.mktemp("rv") / "state.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("KUBECONFIG", raising=False)
        patch.setenv("HOME", str(state.parent))
        assert main(["certification", "run", "--sim", "--cert-file", BURN_IN, "--state", str(state)]) == 0
    return state


def edited(created: Path, into: Path, *statements: str) -> tuple[Path, int, int]:
    """A copy of the store after `statements`; its newest change and newest object resourceVersions."""
    state = into / "state.db"
    shutil.copy(created, state)
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        for statement in statements:
            db.execute(statement)
        changes, objects = db.execute("SELECT (SELECT MAX(rv) FROM changes), (SELECT MAX(rv) FROM objects)").fetchone()
    return state, changes, objects


def test_rv_behind_the_change_log_is_refused_by_run_in_one_line(created: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    state, changes, _ = edited(created, tmp_path, "UPDATE meta SET value = 5 WHERE key = 'rv'")
    before = state.read_bytes()
    capsys.readouterr()
    assert main(["certification", "run", "--sim", "--cert-file", BURN_IN, "--name", "again", "--state", str(state), "--wait"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"{state}: damaged nvcre store: its resourceVersion counter (meta rv 5) is behind "
                                 f"its change log ({changes})\n")
    assert state.read_bytes() == before


def test_rv_behind_an_object_is_refused_too(created: Path, tmp_path: Path) -> None:
    """The change log may have been trimmed: the objects' own resourceVersions count as much."""
    state, _, objects = edited(created, tmp_path, "DELETE FROM changes", "UPDATE meta SET value = 1 WHERE key = 'rv'")
    with pytest.raises(StoreFileError) as error:
        connect(state)
    assert str(error.value) == (f"{state}: damaged nvcre store: its resourceVersion counter (meta rv 1) is behind "
                                f"its newest object ({objects})")


def test_a_store_as_written_opens(created: Path, tmp_path: Path) -> None:
    state, changes, objects = edited(created, tmp_path)
    with contextlib.closing(connect(state, readonly=True)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0] >= max(changes, objects)
