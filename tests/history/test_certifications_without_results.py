"""`history certifications` of a record with no node results (a report archived by something other than this nvcre's
archiver, or one whose categories held no node): every count falls back to the archived report's own lists, as NODES
and EXCLUDED NODES did; a report without such a list or count leaves its column unknown (`-`), never a 0 it does not
say (NODES and EXCLUDED NODES too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.history.archive import write_record
from nvcre_tui.engine.history.db import open_history
from nvcre_tui.engine.history.record import CertRecord


def _archive(path: Path, name: str, report: dict[str, Any]) -> None:
    connection = open_history(path)
    try:
        assert write_record(connection, "test", CertRecord(f"uid-{name}", name, "default", report.get("result", "FAILED"),
                                                           "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", report, [], {}))
    finally:
        connection.close()


def _table(capsys: pytest.CaptureFixture[str], history: Path) -> dict[str, dict[str, str]]:
    capsys.readouterr()
    assert main(["history", "certifications", "--history", str(history)]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    columns = [h.strip() for h in head.split("  ") if h.strip()]
    return {cells[0]: dict(zip(columns, cells, strict=True)) for line in lines if (cells := [c.strip() for c in line.split("  ") if c.strip()])}


def test_a_record_without_node_results_counts_what_its_report_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "history.db"
    _archive(history, "listed", {
        "name": "listed", "result": "FAILED", "totalNodes": 4, "failedNodes": ["gpu-node-01", "gpu-node-02"], "suspectNodes": ["gpu-node-02"],
        "inconclusiveNodes": ["gpu-node-03"], "excludedNodes": [{"name": "gpu-node-04", "reason": "Cordoned"}]})
    _archive(history, "unlisted", {"name": "unlisted", "result": "PASSED"})  # not an nvcre report: no lists at all
    capsys.readouterr()
    assert main(["history", "certifications", "--history", str(history), "-o", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    counts = ("nodes", "excludedNodes", "failedNodes", "suspectNodes", "inconclusiveNodes")
    # It read FAILED NODES 0 and SUSPECT NODES 0 beside a report that lists two failed nodes, one of them a suspect.
    assert tuple(rows["listed"][key] for key in counts) == (4, 1, 2, 1, 1), rows["listed"]
    # NODES and EXCLUDED NODES read 0 for it: unknown is not zero.
    assert tuple(rows["unlisted"][key] for key in counts) == (None, None, None, None, None), rows["unlisted"]
    table = _table(capsys, history)
    columns = ("NODES", "EXCLUDED NODES", "FAILED NODES", "SUSPECT NODES", "INCONCLUSIVE NODES")
    assert [table["listed"][c] for c in columns] == ["4", "1", "2", "1", "1"]
    assert [table["unlisted"][c] for c in columns] == ["-", "-", "-", "-", "-"], table


def test_a_report_that_counts_no_node_says_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report that says 0 (its categories held no node) is read as it says: 0, not unknown."""
    history = tmp_path / "history.db"
    _archive(history, "none-held", {"name": "none-held", "result": "INCOMPLETE", "totalNodes": 0, "excludedNodes": [],
                                    "failedNodes": [], "suspectNodes": [], "inconclusiveNodes": []})
    table = _table(capsys, history)
    assert [table["none-held"][c] for c in ("NODES", "EXCLUDED NODES", "FAILED NODES", "SUSPECT NODES", "INCONCLUSIVE NODES")] == ["0"] * 5, table
