"""A history that opened but cannot be written later (another process holds its lock too long, the disk is
read-only) is told once per cause: by `run --wait` and `report` on stderr before they exit (exit code unchanged),
by the console as a notification. The certification is archived once the history can be written again.

Real SQLite conditions, as root too: a write lock held by another connection (its wait shortened from
10 s), and the archiver's connection made query-only (SQLITE_READONLY, the error of a file made read-only,
which root could still write)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli import main
from nvcre_tui.engine.history import HistoryQuery, db, open_history
from nvcre_tui.engine.session import SimSession
from tests.history.helpers import certify, fleet, loopback


@pytest.fixture()
def history(tmp_path: Path) -> Path:
    path = tmp_path / "history.db"
    open_history(path).close()
    return path


@pytest.fixture()
def locked(history: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlite3.Connection]:
    """Another writer holds the history's write lock (readers go on: WAL); a writer here gives up after 20 ms."""
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 20)
    holder = sqlite3.connect(history, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield holder
    finally:
        holder.close()


def test_run_and_report_tell_a_failed_archive_once(tmp_path: Path, history: Path, locked: sqlite3.Connection,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    scenario, cert = tmp_path / "scenario.yaml", tmp_path / "cert.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    cert.write_text(yaml.safe_dump(loopback("weekly")))
    flags = ["--sim", "--scenario", str(scenario), "--state", str(tmp_path / "state.db"), "--history", str(history)]
    told = f"nvcre: history: could not archive weekly: {history}: database is locked"

    assert main(["certification", "run", *flags, "--cert-file", str(cert), "--wait"]) == 1  # FAILED, as when archived
    out, err = capsys.readouterr()
    assert "Result:" in out and err.splitlines()[-1] == told and err.count("could not archive") == 1
    assert main(["certification", "report", "weekly", *flags]) == 1  # report archives what run could not: it fails too
    assert capsys.readouterr().err.splitlines() == [told]

    locked.execute("ROLLBACK")
    assert main(["certification", "report", "weekly", *flags]) == 1
    assert capsys.readouterr().err == "" and [c["name"] for c in HistoryQuery(history).certifications()] == ["weekly"]


async def test_the_console_notifies_a_failed_archive_once(history: Path) -> None:
    session = await SimSession.open(fleet(), None, history=history)
    assert session.archiver is not None
    session.archiver.connection.execute("PRAGMA query_only = 1")  # after it opened: as if the file became read-only
    app = NvcreApp(session=session, live=False)
    shown: list[tuple[str, Any]] = []
    original = app.notify

    def notify(message: str, **options: Any) -> None:
        shown.append((message, options.get("severity")))
        original(message, **options)

    app.notify = notify  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert shown == []
            await certify(session, "weekly")
            await app.refresh_snapshot()  # what the console does every REFRESH_SECONDS
            read_only = f"history: could not archive weekly: {history}: attempt to write a readonly database"
            assert shown == [(read_only, "warning")]
            await certify(session, "daily")  # the same cause: not told again
            await app.refresh_snapshot()
            assert shown == [(read_only, "warning")] and len(session.archiver.errors) > 1
    finally:
        await session.close()
