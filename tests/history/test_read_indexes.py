"""A history at scale is read through indexes (db.INDEXES): an archive of this release (fixtures/history-0.1.0.db, written
by nvcre 0.1.0 before them: three certifications on a 4-node fleet, gpu-node-02 judged faulty by a diagnosis) gains them
in place the first time it is opened where it can be written, reads the same before and after, and one that cannot be
written is read as it is."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.history import db, queries
from nvcre_tui.engine.history.db import INDEXES, SCHEMA_VERSION, open_history
from nvcre_tui.engine.history.queries import HistoryQuery
from tests.history.test_long_history import _copy

RELEASE = Path(__file__).parent / "fixtures" / "history-0.1.0.db"
READ_INDEXES = {index.split()[5] for index in INDEXES}


def _indexes(path: Path) -> set[str]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    finally:
        connection.close()


def _said(path: Path, capsys: pytest.CaptureFixture[str], *command: str) -> str:
    assert main(["history", *command, "--history", str(path)]) == 0
    return capsys.readouterr().out


def _queries_kept(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[Any, ...]]]:
    """Every query HistoryQuery asks from now on (its SQL and parameters), in order, each still answered."""
    asked: list[tuple[str, tuple[Any, ...]]] = []
    rows = HistoryQuery._rows

    def kept(self: HistoryQuery, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        asked.append((sql, parameters))
        return rows(self, sql, parameters)

    monkeypatch.setattr(HistoryQuery, "_rows", kept)
    return asked


def test_a_history_of_this_release_gains_its_read_indexes_and_reads_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(RELEASE, tmp_path / "history.db")
    released = _indexes(tmp_path / "history.db")
    assert not READ_INDEXES & released  # as 0.1.0 wrote it
    commands = (("node", "gpu-node-02"), ("node", "gpu-node-02", "-o", "json"), ("nodes",), ("nodes", "-o", "json"), ("certifications",))
    with monkeypatch.context() as patched:  # as a history that cannot be written is read (the tests run as root)
        patched.setattr(db, "_add_indexes", lambda connection: None)
        as_it_is = [_said(tmp_path / "history.db", capsys, *command) for command in commands]
    assert "faulty" in as_it_is[0]  # the diagnosis's verdict, read from the report
    assert _indexes(tmp_path / "history.db") == released
    assert [_said(tmp_path / "history.db", capsys, *command) for command in commands] == as_it_is
    assert READ_INDEXES <= _indexes(tmp_path / "history.db")
    connection = open_history(tmp_path / "history.db")  # still this release's schema: 0.1.0 reads and writes it as before
    try:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 1
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        connection.close()


def test_a_node_s_verdicts_are_found_by_the_index_of_reports_that_hold_some(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`history node` looked for the key in every report of the node (2.7 s at 10,000 certifications): the partial
    index holds the reports with a diagnosis's verdicts, and the verdicts' queries are answered from it."""
    shutil.copy(RELEASE, tmp_path / "history.db")
    open_history(tmp_path / "history.db").close()
    asked = _queries_kept(monkeypatch)
    history = HistoryQuery(tmp_path / "history.db").node("gpu-node-02")
    assert [c["verdict"] for e in history for c in e["categories"]] == [None, "faulty", None]
    connection = sqlite3.connect(tmp_path / "history.db")
    try:
        plans = [" ".join(str(step[3]) for step in connection.execute(f"EXPLAIN QUERY PLAN {sql}", parameters))
                 for sql, parameters in asked if "json_each" in sql]
    finally:
        connection.close()
    assert len(plans) == 2 and all("certifications_with_verdicts" in plan for plan in plans), plans


def test_a_trend_s_last_values_are_judged_once_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """trend_last_shown judged every value of the node (a CEL run each where its evidence judged another), to keep the
    last of each series."""
    shutil.copy(RELEASE, tmp_path / "history.db")
    _copy(tmp_path / "history.db", 20)
    judged: list[float] = []
    shown = queries.shown_value

    def counted(category: dict[str, Any], metric: str, value: float) -> str:
        judged.append(value)
        return shown(category, metric, value)

    query = HistoryQuery(tmp_path / "history.db")
    history = query.node("gpu-node-01")
    expected = {key: shown(category, queries.BUS_BANDWIDTH, value) for key, value, category in query._trend_points("gpu-node-01", history)}
    monkeypatch.setattr(queries, "shown_value", counted)
    assert query.trend_last_shown("gpu-node-01", history) == expected
    assert len(judged) == len(expected) == 2  # one per series: loopback, all-reduce


def test_a_history_whose_lock_another_process_holds_is_read_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding the read indexes waits for the history's write lock: another process holding it past the wait (an
    archive, another nvcre adding them) made `nvcre history` fail (exit 2, `database is locked`), where it read the
    history as it was before the indexes."""
    shutil.copy(RELEASE, tmp_path / "history.db")
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    other = sqlite3.connect(tmp_path / "history.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        said = _said(tmp_path / "history.db", capsys, "nodes", "-o", "json")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [node["node"] for node in json.loads(said)] == ["gpu-node-02", "gpu-node-01", "gpu-node-03", "gpu-node-04"]
    assert not READ_INDEXES & _indexes(tmp_path / "history.db")


def _nested_scans(connection: sqlite3.Connection, sql: str, parameters: tuple[Any, ...]) -> list[str]:
    """The steps of the query's plan that scan a whole table (no index, no json_each) for each row of the whole scan
    before them: a join whose cost is the product of the two."""
    steps = [(parent, str(detail)) for _, parent, _, detail in connection.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)]
    return [f"{a} then {b}" for (pa, a), (pb, b) in zip(steps, steps[1:]) if pa == pb and a.startswith("SCAN ") and b.startswith("SCAN ")
            and "USING" not in b and "VIRTUAL TABLE" not in b]


def test_a_source_s_queries_join_through_an_index_however_long_the_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map's stale marks and the summaries of one source (the console's history is its store's): an index of the
    certifications by source made SQLite take the source's certifications for a few and scan them whole for every
    node's result (78 s at 10,000 certifications, where it took 0.5 s without)."""
    from tests.history.test_node_summaries import grown

    path = grown(tmp_path, 10)
    asked = _queries_kept(monkeypatch)
    query = HistoryQuery(path, HistoryQuery(path).all_sources())
    query.stale_nodes()
    query.nodes()
    connection = sqlite3.connect(path)
    try:
        assert [scan for sql, parameters in asked for scan in _nested_scans(connection, sql, parameters)] == []
    finally:
        connection.close()
