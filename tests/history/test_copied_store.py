"""A simulator store copied or moved is the same store: the history counts its certifications once. The simulator's
uids and times are seeded (a certification made at the same point of two stores of one scenario has the same uid and
creationTimestamp), so the history keys a simulated certification by the store's own id, recorded in the store, with
its uid and creation time: a copy keeps the id, another store (even a new one at a deleted one's path) has its own,
and its run is never lost."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.sim_state import STORE_ID_PROPERTY

ROOT = Path(__file__).resolve().parents[2]
BURN_IN = ROOT / "examples" / "burn-in.yaml"
TWO_SOURCES = "sources, whose nodes are merged by name"


def _run(state: Path, history: Path) -> None:
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--state", str(state), "--history", str(history)]) == 1


def _node_07(history: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """gpu-node-07's certifications in `history nodes`, and what it said on stderr."""
    capsys.readouterr()
    assert main(["history", "nodes", "--history", str(history), "-o", "json"]) == 0
    out, err = capsys.readouterr()
    return next(row["certifications"] for row in json.loads(out) if row["node"] == "gpu-node-07"), err


def _uid(state: Path) -> tuple[str, str]:
    body = sqlite3.connect(state).execute("select body from objects where name = 'burn-in' and kind like '%certifications'").fetchone()[0]
    meta = json.loads(body)["metadata"]
    return meta["uid"], meta["creationTimestamp"]


def _store_id(state: Path) -> object:
    found = sqlite3.connect(state).execute("select value from properties where key = ?", (STORE_ID_PROPERTY,)).fetchone()
    return found and found[0]


def test_a_copied_or_moved_store_counts_its_certifications_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "h.db"
    _run(tmp_path / "a.db", history)
    shutil.copy(tmp_path / "a.db", tmp_path / "copy.db")
    shutil.move(tmp_path / "a.db", tmp_path / "moved.db")
    for state in ("copy.db", "moved.db"):  # opening them archives what finished there
        assert main(["certification", "list", "--state", str(tmp_path / state), "--history", str(history)]) == 0
    assert _node_07(history, capsys) == (1, "")
    # a certification the copy's history holds from the original is kept when the copy deletes it
    assert main(["certification", "delete", "burn-in", "--state", str(tmp_path / "copy.db"), "--history", str(history)]) == 0
    assert f"its record is kept in the history ({history})" in capsys.readouterr().err
    assert _node_07(history, capsys)[0] == 1


def test_a_copy_of_a_store_made_before_store_ids_read_at_another_path_counts_its_certifications_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store without an id (made before ids, and only read since: `report` opens it read-only, so it gains none) and
    its copy read at another path archived the same run twice, one source each, and history nodes counted it twice."""
    _run(tmp_path / "old.db", tmp_path / "first.db")
    old = sqlite3.connect(tmp_path / "old.db")
    with old:
        old.execute("DELETE FROM properties WHERE key = ?", (STORE_ID_PROPERTY,))
    old.close()
    shutil.copy(tmp_path / "old.db", tmp_path / "copy.db")
    history = tmp_path / "h.db"
    for state in ("old.db", "copy.db"):
        assert main(["certification", "report", "burn-in", "--state", str(tmp_path / state), "--history", str(history)]) == 1
        assert _store_id(tmp_path / state) is None
    assert _node_07(history, capsys) == (1, "")


def test_another_store_of_the_same_scenario_and_a_new_one_in_a_deleted_ones_place_are_second_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "h.db"
    _run(tmp_path / "a.db", history)
    _run(tmp_path / "b.db", history)
    assert _uid(tmp_path / "a.db") == _uid(tmp_path / "b.db")  # seeded alike: uid and time tell no two stores apart
    ids = {name: _store_id(tmp_path / name) for name in ("a.db", "b.db")}
    for leftover in tmp_path.glob("a.db*"):
        leftover.unlink()
    _run(tmp_path / "a.db", history)  # a new store where a.db was: the same path and uid, another run
    count, err = _node_07(history, capsys)
    assert count == 3 and TWO_SOURCES in err
    assert len({*ids.values(), _store_id(tmp_path / "a.db")}) == 3  # what tells them apart


OLD_SCHEMA = """
CREATE TABLE certifications (id INTEGER PRIMARY KEY, source TEXT NOT NULL, uid TEXT NOT NULL, name TEXT NOT NULL,
    namespace TEXT NOT NULL, result TEXT NOT NULL, start_time TEXT, completion_time TEXT, archived_at TEXT NOT NULL,
    report TEXT NOT NULL, UNIQUE (source, uid));
CREATE TABLE node_results (cert_id INTEGER NOT NULL REFERENCES certifications(id), node TEXT NOT NULL, category TEXT NOT NULL,
    state TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL, bus_bw REAL, measurements TEXT NOT NULL,
    evidence TEXT NOT NULL, jobs TEXT NOT NULL, PRIMARY KEY (cert_id, node, category));
CREATE TABLE node_baselines (cert_id INTEGER NOT NULL REFERENCES certifications(id), node TEXT NOT NULL, baseline TEXT NOT NULL,
    PRIMARY KEY (cert_id, node));
CREATE INDEX node_results_by_node ON node_results (node);
PRAGMA user_version = 1;
"""


def test_a_history_made_before_the_run_key_keeps_its_records_and_gains_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history, first = tmp_path / "h.db", tmp_path / "first.db"
    _run(first, tmp_path / "new.db")
    old = sqlite3.connect(history)  # the same record, as an nvcre before the run key archived it
    old.executescript(OLD_SCHEMA)
    old.execute("ATTACH ? AS new", (str(tmp_path / "new.db"),))
    old.execute("INSERT INTO certifications SELECT id, source, uid, name, namespace, result, start_time, completion_time, archived_at, "
                "report FROM new.certifications")
    for table in ("node_results", "node_baselines"):
        old.execute(f"INSERT INTO {table} SELECT * FROM new.{table}")
    old.commit()
    old.close()
    assert _node_07(history, capsys)[0] == 1  # read as it is
    _run(tmp_path / "second.db", history)
    assert _node_07(history, capsys)[0] == 2
    # the store archived before the key, opened again: its record without a run key is that run's
    assert main(["certification", "list", "--state", str(first), "--history", str(history)]) == 0
    assert _node_07(history, capsys)[0] == 2
    with sqlite3.connect(history) as db:
        assert [row[0] for row in db.execute("select run is null from certifications order by id")] == [1, 0]
        assert db.execute("select count(*) from node_results where cert_id = 1").fetchone()[0] == 64  # ids kept


async def _shown(state: Path, history: Path, **options: Any) -> tuple[list[str], tuple[str, ...] | None]:
    """The certifications a session on `state` shows from the history (its own store's), and the sources they are of."""
    session = await SimSession.open(default_scenario(), state, history=history, **options)
    try:
        assert session.history is not None
        return [c["name"] for c in session.history.certifications()], session.history.sources
    finally:
        await session.close()


def test_a_moved_stores_session_shows_the_records_archived_from_its_old_path(tmp_path: Path) -> None:
    """The console shows its own store's records only: a moved store's are those archived under its old path."""
    history, moved = tmp_path / "h.db", tmp_path / "moved.db"
    _run(tmp_path / "a.db", history)
    shutil.move(tmp_path / "a.db", moved)
    names, sources = asyncio.run(_shown(moved, history, readonly=True, archive_writes=False))
    assert names == ["burn-in"] and sources == tuple(sorted([f"sim:{tmp_path / 'a.db'}", f"sim:{moved}"]))
    _run(tmp_path / "other.db", history)  # another store's certification stays another's
    assert asyncio.run(_shown(moved, history))[0] == ["burn-in"]
