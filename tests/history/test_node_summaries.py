"""`history nodes` at scale: every node's summary worked out in SQL (history/summaries.py) says what reading every node's
whole history says (HistoryQuery.nodes_read_whole), on a history of this release grown with copies of its three
certifications (a loopback failed by gpu-node-02, one of gpu-node-01 alone, a diagnosis that judged gpu-node-02 faulty)
in turn, whose drivers change half-way, and decodes only the few results a summary shows."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.engine.history import queries
from nvcre_tui.engine.history.db import open_history
from nvcre_tui.engine.history.queries import HistoryQuery
from tests.history.test_read_indexes import RELEASE

COPIES = 30
NODES = ("gpu-node-01", "gpu-node-02", "gpu-node-03", "gpu-node-04")


def grown(folder: Path, copies: int = COPIES) -> Path:
    """The release's history with `copies` more certifications: its three in turn, a minute apart, the drivers of
    gpu-node-01 and gpu-node-03 upgraded from the middle on, gpu-node-04's baseline empty in the last."""
    path = folder / "history.db"
    shutil.copy(RELEASE, path)
    open_history(path).close()  # with its read indexes, as the command reads it
    connection = sqlite3.connect(path)
    with connection:
        for i in range(copies):
            source = i % 3 + 1
            cert = connection.execute(
                "INSERT INTO certifications (source, uid, name, namespace, result, start_time, completion_time, archived_at, report, run) "
                "SELECT source, uid || ?, name || ?, namespace, result, start_time, ?, archived_at, report, run || ? FROM certifications "
                "WHERE id = ?", (f"-{i}", f"-{i}", f"2027-01-01T{i // 60:02d}:{i % 60:02d}:00Z", f"-{i}", source)).lastrowid
            connection.execute("INSERT INTO node_results SELECT ?, node, category, state, reason, message, bus_bw, measurements, evidence, "
                               "jobs FROM node_results WHERE cert_id = ?", (cert, source))
            for node, baseline in connection.execute("SELECT node, baseline FROM node_baselines WHERE cert_id = ?", (source,)).fetchall():
                found = json.loads(baseline)
                if i >= copies // 2 and node in ("gpu-node-01", "gpu-node-03"):
                    found["driver"] = "575.57.08"
                if i == copies - 1 and node == "gpu-node-04":
                    found = {}
                connection.execute("INSERT INTO node_baselines VALUES (?, ?, ?)", (cert, node, json.dumps(found, sort_keys=True)))
    connection.close()
    return path


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return grown(tmp_path_factory.mktemp("summaries"))


@pytest.mark.parametrize("last", [None, 1, 2, 5, COPIES + 10])
def test_the_summaries_say_what_reading_every_history_whole_says(history: Path, last: int | None) -> None:
    query = HistoryQuery(history)
    live = {"gpu-node-01": {"driver": "575.57.08"}, "gpu-node-03": {}}  # gpu-node-03: the latest archived stands in
    for current in (None, live):
        summaries = query.nodes(last, current)
        assert summaries == query.nodes_read_whole(last, current)
        assert [s["node"] for s in summaries] == list(NODES)  # the newest: a copy of the diagnosis, of every node
    every = {s["node"]: s for s in query.nodes(last)}
    assert every["gpu-node-02"]["lastResultSaid"] == "faulty"
    assert [every[node]["staleness"].status for node in NODES] == ["current", "never-passed", "current", "unknown"]
    judged = {s["node"]: s["staleness"] for s in query.nodes(last, live)}
    assert [judged[node].status for node in NODES] == ["stale", "absent", "current", "absent"]
    assert judged["gpu-node-01"] == query.staleness("gpu-node-01", {"driver": "575.57.08"})


def test_a_source_s_summaries_are_its_own(history: Path, tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    shutil.copy(history, path)
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("UPDATE certifications SET source = 'cluster:https://other' WHERE id % 4 = 0")
    connection.close()
    for sources in (["cluster:https://other"], [str(HistoryQuery(path).all_sources()[-1])]):
        query = HistoryQuery(path, sources)
        for last in (None, 3):
            assert query.nodes(last) == query.nodes_read_whole(last)


def test_only_the_results_a_summary_shows_are_decoded(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each node's latest certification, last pass, latest baseline and the results that measured its series' last
    values: every result of every node was read and decoded (36 s at 10,000 certifications of 32 nodes)."""
    decoded: list[str] = []
    checked = queries._checked

    def counted(path: Path, table: str, row: sqlite3.Row, fields: Any, where: str) -> Any:
        decoded.append(table)
        return checked(path, table, row, fields, where)

    monkeypatch.setattr(queries, "_checked", counted)
    HistoryQuery(history).nodes()
    results = decoded.count("node_results")
    assert 0 < results <= len(NODES) * 4 * 2, results  # at most four certifications of two categories per node; all: 150

