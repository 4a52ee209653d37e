"""The history's default place ($XDG_STATE_HOME/nvcre/history.db) failing turns archiving off out loud: one
line on stderr for a command, a notification in the console; never fatal, never a traceback. A history the
user named (--history) and cannot be written stays a one-line error, exit 2.

Folders and files are made read-only with chmod; nvcre counts the mode bits (outfiles.check_writable), so
these tests restrict root as much as anyone else."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli import main
from nvcre_tui.engine.history import HistoryQuery
from nvcre_tui.engine.session import SimSession
from tests.history.helpers import certify, fleet, loopback


@pytest.fixture()
def inputs(tmp_path: Path) -> list[str]:
    """The flags of a quick simulated run (a scenario, a store, a loopback certification), history not named."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    cert = tmp_path / "cert.yaml"
    cert.write_text(yaml.safe_dump(loopback("weekly")))
    return ["--sim", "--scenario", str(scenario), "--state", str(tmp_path / "state.db"), "--cert-file", str(cert)]


@pytest.fixture()
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """$XDG_STATE_HOME: a folder nothing may be written in."""
    folder = tmp_path / "state-home"
    folder.mkdir(mode=0o555)
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def _off(folder: Path) -> str:
    return f"nvcre: history off: {folder / 'nvcre' / 'history.db'}: cannot write: folder {folder} is not writable (give --history PATH)"


def test_an_unwritable_default_place_is_told_on_stderr_and_the_run_goes_on(inputs: list[str], locked: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "run", *inputs, "--wait"]) == 1  # FAILED: gpu-node-02 is slow, as without a history
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == _off(locked) and err.count("history off") == 1 and "Traceback" not in err
    assert "Result:" in out and list(locked.iterdir()) == []
    assert main(["certification", "report", "weekly", *inputs[:5]]) == 1
    assert capsys.readouterr().err.splitlines() == [_off(locked)]


def test_a_default_place_that_is_not_a_history_is_told_and_kept(inputs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home"))
    junk = tmp_path / "home" / "nvcre" / "history.db"
    junk.parent.mkdir(parents=True)
    junk.write_text("not a database" * 200)
    assert main(["certification", "run", *inputs, "--wait"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"nvcre: history off: {junk}: not a readable history database (file is not a database) (give --history PATH)"
    assert err.count("history off") == 1 and junk.read_text() == "not a database" * 200


def test_a_read_only_history_in_the_default_place_is_still_read(inputs: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "run", *inputs, "--wait"]) == 1
    history = Path(os.environ["XDG_STATE_HOME"]) / "nvcre" / "history.db"
    assert capsys.readouterr().err.count("history") == 0 and [c["name"] for c in HistoryQuery(history).certifications()] == ["weekly"]
    history.chmod(0o444)
    try:
        assert main(["certification", "report", "weekly", *inputs[:5]]) == 1
        assert capsys.readouterr().err.splitlines() == [
            f"nvcre: history read-only, nothing is archived: {history}: is read-only; not written (give --history PATH)"]
    finally:
        history.chmod(0o644)


async def test_a_session_keeps_a_read_only_history_to_show_and_archives_nothing(tmp_path: Path) -> None:
    state = tmp_path / "s.db"  # one store: a session shows its own store's archive
    first = await SimSession.open(fleet(), state)
    try:
        await certify(first, "kept")
    finally:
        await first.close()
    assert first.history is not None
    first.history.path.chmod(0o444)
    try:
        session = await SimSession.open(fleet(), state)
        try:
            assert session.archiver is None and session.history is not None
            assert [c["name"] for c in session.history.certifications()] == ["kept"]
            assert session.notices == [f"history read-only, nothing is archived: {first.history.path}: is read-only; not written "
                                       "(give --history PATH)"]
        finally:
            await session.close()
    finally:
        first.history.path.chmod(0o644)


def test_a_named_history_that_cannot_be_written_is_still_refused(inputs: list[str], locked: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    named = locked / "mine.db"
    assert main(["certification", "run", *inputs, "--wait", "--history", str(named)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"--history: {named}: cannot write: folder {locked} is not writable"]


@pytest.mark.parametrize("command", [["certification", "run", "--wait"], ["certification", "run"]])
def test_a_history_the_variable_names_that_cannot_be_written_is_refused_as_the_flag_is(
        inputs: list[str], locked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: list[str]) -> None:
    """$NVCRE_HISTORY is as explicit as --history: it said "history off" and the run went on (exit 0 or 1) where the
    flag naming the same file is exit 2, before the store is made."""
    named = locked / "mine.db"
    monkeypatch.setenv("NVCRE_HISTORY", str(named))
    assert main([*command, *inputs]) == 2
    assert capsys.readouterr().err.splitlines() == [f"$NVCRE_HISTORY: {named}: cannot write: folder {locked} is not writable"]
    assert not (tmp_path / "state.db").exists()
    damaged = tmp_path / "damaged.db"
    damaged.write_text("not a history\n")
    monkeypatch.setenv("NVCRE_HISTORY", str(damaged))
    assert main([*command, *inputs]) == 2
    assert capsys.readouterr().err.splitlines() == [f"{damaged}: not a readable history database (file is not a database)"]
    assert not (tmp_path / "state.db").exists()


async def test_the_console_shows_the_notice(locked: Path) -> None:
    app = NvcreApp(scenario=fleet(), live=False)
    shown: list[tuple[str, Any]] = []
    original = app.notify

    def notify(message: str, **kw: Any) -> None:
        shown.append((message, kw.get("severity")))
        original(message, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.session, SimSession) and app.session.history is None
        assert shown == [(_off(locked).removeprefix("nvcre: "), "warning")]
