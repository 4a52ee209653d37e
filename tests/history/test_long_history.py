"""A history that a burn-in fills for weeks: what the console asks of it at every refresh or archive (the wall's last
archived certification, the map's stale marks) reads the same few rows whatever it holds, and says what reading it
whole says."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.history.baseline import baseline_of
from nvcre_tui.engine.history.queries import HistoryQuery
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import NODE
from tests.history.helpers import certify, fleet

COPIES = 40  # certifications archived in all: the first, run, and copies of it


def _copy(history: Path, copies: int) -> None:
    """Archive the first certification again `copies` times (new uids), as a long burn-in would."""
    connection = sqlite3.connect(history)
    with connection:
        for i in range(copies):
            cursor = connection.execute(
                "INSERT INTO certifications (source, uid, name, namespace, result, start_time, completion_time, archived_at, report, run) "
                "SELECT source, uid || ?, name || ?, namespace, result, start_time, completion_time, archived_at, report, run || ? "
                "FROM certifications WHERE id = 1", (f"-{i}", f"-{i}", f"-{i}"))
            for table in ("node_results", "node_baselines"):
                columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")][1:]
                connection.execute(f"INSERT INTO {table} SELECT ?, {', '.join(columns)} FROM {table} WHERE cert_id = 1", (cursor.lastrowid,))
    connection.close()


async def test_the_newest_and_the_stale_nodes_read_a_few_rows_of_a_long_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = await SimSession.open(fleet(), None, history=tmp_path / "history.db")
    try:
        await certify(session, "burn-in")
        live = {n["metadata"]["name"]: baseline_of(n) for n in session.cache.list(NODE)}
        query = session.history
    finally:
        await session.close()
    assert query is not None
    _copy(tmp_path / "history.db", COPIES - 1)
    live["gpu-node-03"] = {**live["gpu-node-03"], "driver": "575.57.08"}  # upgraded since its last pass
    live["gpu-node-04"] = {}  # no baseline on the Node: the latest archived stands in
    every = query.certifications()
    expected = {name: query.staleness(name, live[name]) for name in live}
    read: list[int] = []
    rows = HistoryQuery._rows

    def counted(self: HistoryQuery, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        found = rows(self, sql, parameters)
        read.append(len(found))
        return found

    monkeypatch.setattr(HistoryQuery, "_rows", counted)
    assert query.certifications(last=2) == every[-2:] and sum(read) == 2  # the wall's last archived: it read all 40
    read.clear()
    stale = query.stale_nodes(live)
    assert sum(read) <= 2 * len(live)  # a row per node that ever passed, and its latest baseline: it read all 160 and more
    assert stale == {name: found for name, found in expected.items() if found.stale} and set(stale) == {"gpu-node-03"}
    assert stale["gpu-node-03"].last_pass == f"burn-in-{COPIES - 2}"  # the newest pass


async def test_a_node_s_history_parses_no_report_without_a_diagnosis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`history node` and the node screen: the verdicts of a diagnosis are read from the reports that hold one; each of
    the node's reports was parsed twice (its categories, then its verdicts), most of its time at 2,000 certifications."""
    session = await SimSession.open(fleet(), None, history=tmp_path / "history.db")
    try:
        await certify(session, "burn-in")
        query = session.history
    finally:
        await session.close()
    assert query is not None
    _copy(tmp_path / "history.db", COPIES - 1)
    read: list[str] = []
    rows = HistoryQuery._rows

    def counted(self: HistoryQuery, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        found = rows(self, sql, parameters)
        read.extend(sql for _ in found)
        return found

    monkeypatch.setattr(HistoryQuery, "_rows", counted)
    history = query.node("gpu-node-01")
    assert len(history) == COPIES and all(category["verdict"] is None for entry in history for category in entry["categories"])
    assert not [sql for sql in read if "json_each" in sql]  # no report's categories read: none has a diagnosis
