"""A bug ends a command with one line (exit 70) saying it is a bug in nvcre, in which command, and what to report to
whom: it read `nvcre: internal error: ValueError: boom (NVCRE_DEBUG=1 shows where; please report it)`, Python's class
name leading it and no command named."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import EXIT_INTERNAL, main


def _boom(*_: object) -> None:
    raise ValueError("boom")


def test_a_bug_is_told_as_one_in_its_command_with_where_to_report_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("NVCRE_DEBUG", raising=False)
    monkeypatch.setattr("nvcre_tui.cli.history._query", _boom)  # the command's first step fails as a bug would
    assert main(["history", "node", "gpu-01", "--history", str(tmp_path / "h.db")]) == EXIT_INTERNAL
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("nvcre: internal error, a bug in nvcre"), err  # the stable marker, and what it is
    assert "in `nvcre history node` (ValueError: boom)" in err and "gpu-01" not in err and "h.db" not in err, err
    assert "report it to nvcre's maintainers" in err and "NVCRE_DEBUG=1" in err, err
