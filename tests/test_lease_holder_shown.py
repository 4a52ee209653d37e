"""What `run` shows of the engine Lease's holder on the simulator: another process's identity is text anyone who
writes the store chose, never a control sequence on this terminal; a renewTime ahead of this clock is said to be
so, not "renewed -3598s ago"."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.lease import format_micro_time

BURN_IN = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
LEASES = "kind = 'coordination.k8s.io/v1/leases'"


def held_by(state: Path, identity: str, renewed: datetime) -> None:
    """The store's Lease as another host's live process would leave it."""
    db = sqlite3.connect(state)
    body = json.loads(db.execute(f"SELECT body FROM objects WHERE {LEASES}").fetchone()[0])
    body["spec"].update(holderIdentity=identity, leaseDurationSeconds=15, renewTime=format_micro_time(renewed))
    db.execute(f"UPDATE objects SET body = ? WHERE {LEASES}", (json.dumps(body),))
    db.commit()
    db.close()


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "s.db"
    assert main(["certification", "run", "--sim", "--cert-file", BURN_IN, "--state", str(path)]) == 0
    capsys.readouterr()
    return path


@pytest.mark.parametrize(("ahead", "shown"), [
    (timedelta(0), r"\(renewed [01]s ago\)"),
    (timedelta(hours=1), r"\(renewTime 59m5\ds ahead of this clock: the clocks disagree; it expires once unchanged for 15s\)"),
])
def test_run_shows_the_holder_printable_and_a_clock_ahead_as_such(state: Path, ahead: timedelta, shown: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    held_by(state, "\x1b]0;pwned\x07run@otherhost/1/a", datetime.now(UTC) + ahead)
    assert main(["certification", "run", "--sim", "--cert-file", BURN_IN, "--name", "again", "--state", str(state)]) == 0
    err = capsys.readouterr().err  # run's progress goes to stderr
    assert "\x1b" not in err and "\x07" not in err
    line = next(line for line in err.splitlines() if line.startswith("viewer: "))
    assert re.fullmatch(re.escape("viewer: engine held by \ufffd]0;pwned\ufffdrun@otherhost/1/a ") + shown, line), line
