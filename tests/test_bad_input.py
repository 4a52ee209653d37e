"""The malformed-manifest corpus: each file gives exit code 2, one line naming file and field, no
traceback, and nothing created (neither by render nor by run)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main

CORPUS = Path(__file__).parent / "corpus" / "bad"
EXPECTED: dict[str, str] = yaml.safe_load((CORPUS / "expected-messages.yaml").read_text())
FILES = sorted(CORPUS.glob("[0-9][0-9]-*.yaml"))


def test_corpus_is_large_and_fully_described() -> None:
    assert len(FILES) >= 30
    assert sorted(EXPECTED) == [f.name for f in FILES]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_render_rejects_with_one_line(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["certification", "render", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err == f"{path}{EXPECTED[path.name]}\n"
    assert "Traceback" not in err


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_run_creates_nothing(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    code = main(["certification", "run", "--cert-file", str(path), "--state", str(state), "--wait"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines() == [f"{path}{EXPECTED[path.name]}"]
    if state.exists():  # the fleet may be recorded; no certification may be
        with contextlib.closing(sqlite3.connect(state)) as db:
            kinds = {row[0] for row in db.execute("SELECT kind FROM objects")}
        assert "nodes" in " ".join(kinds) and not any(kind.endswith("/certifications") for kind in kinds)
