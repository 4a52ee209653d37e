"""A damaged history (a hand edit, a damaged disk) is one line naming the file, table, row and field, exit 2,
nothing printed before it; the console says it in a notification. Cluster text in the history never reaches
the terminal raw, and `history nodes` gives the reason of the certification its LAST column shows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli import main
from nvcre_tui.engine.history import HistoryQuery, open_history
from nvcre_tui.engine.history.queries import DamagedHistory
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.screens.topology import TopologyScreen
from tests.history.test_console import finished_session, rendered

CATEGORY = "communication/nccl-loopback"
BASELINE = {"driver": "570.124.06", "kernel": "6.8.0", "osImage": "Ubuntu 24.04", "kubelet": "v1.31.0"}


def make_history(path: Path, certifications: list[tuple[str, dict[str, tuple[str, str, float]]]],
                 baselines: dict[tuple[int, str], dict[str, str]] | None = None) -> Path:
    """A history as the archive writes it: certifications in order, each {node: (state, reason, busBW)}."""
    connection = open_history(path)
    for number, (name, results) in enumerate(certifications, start=1):
        connection.execute(
            "INSERT INTO certifications (id, source, uid, name, namespace, result, start_time, completion_time, archived_at, report) "
            "VALUES (?, 'sim', ?, ?, 'default', ?, ?, ?, ?, '{}')",
            (number, f"uid-{number}", name, "FAILED" if any(s == "failed" for s, _, _ in results.values()) else "PASSED",
             f"2025-01-0{number}T00:00:00Z", f"2025-01-0{number}T01:00:00Z", f"2025-01-0{number}T01:00:00Z"))
        for node, (state, reason, bus_bw) in results.items():
            connection.execute(
                "INSERT INTO node_results (cert_id, node, category, state, reason, message, bus_bw, measurements, evidence, jobs) "
                "VALUES (?, ?, ?, ?, ?, '', ?, ?, '[]', '[]')",
                (number, node, CATEGORY, state, reason, bus_bw, json.dumps({"busBandwidthGBps": bus_bw})))
            baseline = (baselines or {}).get((number, node), BASELINE)
            connection.execute("INSERT INTO node_baselines (cert_id, node, baseline) VALUES (?, ?, ?)", (number, node, json.dumps(baseline)))
    connection.close()
    return path


@pytest.fixture()
def history(tmp_path: Path) -> Path:
    return make_history(tmp_path / "history.db", [
        ("week-1", {"gpu-node-07": ("failed", "ThresholdViolation", 120.0), "gpu-node-08": ("passed", "", 400.0)}),
        ("week-2", {"gpu-node-07": ("passed", "", 401.0), "gpu-node-08": ("passed", "", 402.0)}),
    ])


def damage(path: Path, sql: str) -> None:
    connection = sqlite3.connect(path)
    connection.execute(sql)
    connection.commit()
    connection.close()


DAMAGE = [
    ("UPDATE node_results SET bus_bw = 'abc' WHERE node = 'gpu-node-07' AND cert_id = 2",
     "node_results row (certification 2 week-2, node gpu-node-07, category communication/nccl-loopback): bus_bw is text 'abc', not a finite number"),
    ("UPDATE node_results SET measurements = '{not json' WHERE node = 'gpu-node-07' AND cert_id = 1",
     "node_results row (certification 1 week-1, node gpu-node-07, category communication/nccl-loopback): measurements is not JSON"),
    ("UPDATE node_results SET evidence = '{}' WHERE node = 'gpu-node-07' AND cert_id = 1",
     "node_results row (certification 1 week-1, node gpu-node-07, category communication/nccl-loopback): evidence is an object, not an array"),
    ("UPDATE node_results SET evidence = '[5]' WHERE node = 'gpu-node-07' AND cert_id = 1",  # printed as it was, once
     "node_results row (certification 1 week-1, node gpu-node-07, category communication/nccl-loopback): evidence[0] is a number, not an object"),
    ("UPDATE node_results SET jobs = '[{}, \"x\"]' WHERE node = 'gpu-node-07' AND cert_id = 1",
     "node_results row (certification 1 week-1, node gpu-node-07, category communication/nccl-loopback): jobs[1] is a string, not an object"),
    ("UPDATE node_results SET state = 'weird' WHERE node = 'gpu-node-07' AND cert_id = 1",
     "node_results row (certification 1 week-1, node gpu-node-07, category communication/nccl-loopback): state is text 'weird', not a node state"),
    ("UPDATE node_results SET cert_id = 999 WHERE node = 'gpu-node-07' AND cert_id = 1",  # dropped from every join, once
     "node_results row (node gpu-node-07): cert_id is an integer 999, the id of no certifications row"),
    ("UPDATE node_baselines SET baseline = '[1,2]' WHERE node = 'gpu-node-07' AND cert_id = 2",
     "node_baselines row (certification 2 week-2, node gpu-node-07): baseline is an array, not an object"),
    ("UPDATE node_baselines SET baseline = '{\"osImage\": 5}' WHERE node = 'gpu-node-07' AND cert_id = 2",
     "node_baselines row (certification 2 week-2, node gpu-node-07): baseline.osImage is a number, not text"),
    ("UPDATE certifications SET completion_time = x'00' WHERE id = 1",
     "certifications row (certification 1 week-1): completion_time is a BLOB of 1 byte, not text"),
    ("UPDATE certifications SET completion_time = 7 WHERE id = 1",  # a TEXT column: stored as '7'
     "certifications row (certification 1 week-1): completion_time is text '7', not a time like 2026-11-29T10:00:00Z"),
]


@pytest.mark.parametrize(("sql", "problem"), DAMAGE, ids=[problem.split(": ")[1].split(" ")[0] for _, problem in DAMAGE])
@pytest.mark.parametrize("command", [["nodes"], ["node", "gpu-node-07"], ["nodes", "-o", "json"], ["node", "gpu-node-07", "-o", "json"]])
def test_a_damaged_row_is_one_line_naming_file_table_row_and_field(history: Path, sql: str, problem: str, command: list[str],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    damage(history, sql)
    assert main(["history", *command, "--history", str(history)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing printed before the error
    assert err.count("\n") == 1 and err.startswith(f"{history}: damaged history: {problem}")


def test_a_node_stored_as_a_blob_is_named(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    damage(history, "UPDATE node_results SET node = CAST('gpu-node-07' AS BLOB) WHERE cert_id = 1 AND node = 'gpu-node-07'")
    assert main(["history", "nodes", "--history", str(history)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"{history}: damaged history: node_results row (certification 1 week-1, node b'gpu-node-07'): "
                                 "node is a BLOB of 11 bytes, not text\n")


def test_a_damaged_certification_row_stops_certifications_and_report(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    damage(history, "UPDATE certifications SET name = x'1b5b326a', report = 'nope' WHERE id = 2")
    assert main(["history", "certifications", "--history", str(history)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "\x1b" not in err
    assert err == f"{history}: damaged history: certifications row (certification 2 b'\\x1b[2j'): name is a BLOB of 4 bytes, not text\n"
    damage(history, "UPDATE certifications SET name = 'week-2' WHERE id = 2")
    with pytest.raises(DamagedHistory, match="certifications row \\(certification 2 week-2\\): report is not JSON"):
        HistoryQuery(history).report("week-2")


def test_a_report_that_is_no_json_object_is_damage_not_a_real_gpus_result(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Read as no report, a simulated certification lost its `simulated` mark and listed as a real GPU fleet's, exit 0."""
    for report in ("x", "[1]"):
        damage(history, f"UPDATE certifications SET report = '{report}' WHERE id = 1")
        assert main(["history", "certifications", "--history", str(history), "-o", "json"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == (f"{history}: damaged history: certifications row (certification 1 week-1): report is not a JSON "
                                     "object (its simulated mark and node counts are unknown)\n")


def test_control_characters_in_a_damaged_value_are_not_passed_on(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    damage(history, "UPDATE node_results SET bus_bw = char(27) || ']0;pwned' || char(7) WHERE node = 'gpu-node-07'")
    assert main(["history", "nodes", "--history", str(history)]) == 2
    err = capsys.readouterr().err
    assert "bus_bw is text" in err and "\x1b" not in err and "\x07" not in err


def test_history_node_never_prints_raw_control_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """osImage is free text the kubelet reports: the `software:` and `baseline: STALE:` lines escape it."""
    hostile = {**BASELINE, "osImage": "Ubuntu\x1b[2J\x1b]0;owned\x07 24.04"}
    path = make_history(tmp_path / "history.db", [("week-1", {"gpu-node-07": ("passed", "", 400.0)}),
                                                  ("week-2", {"gpu-node-07": ("passed", "", 401.0)})],
                        baselines={(1, "gpu-node-07"): BASELINE, (2, "gpu-node-07"): hostile})
    assert main(["history", "node", "gpu-node-07", "--history", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "baseline: STALE: stale since week-2" not in out  # the last pass is week-2 itself: compared with its own baseline
    assert "software: " in out and "osImage Ubuntu\ufffd[2J\ufffd]0;owned\ufffd 24.04" in out
    # Judged against the Nodes given, the change shows on the STALE line, escaped too.
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": [{
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-07"},
        "status": {"nodeInfo": {"osImage": "Evil\x1b[31m OS", "kernelVersion": "6.8.0", "kubeletVersion": "v1.31.0"}}}]}))
    assert main(["history", "node", "gpu-node-07", "--history", str(path), "--nodes", str(nodes)]) == 0
    out = capsys.readouterr().out
    assert "baseline: STALE: stale since week-2" in out and "Evil\ufffd[31m OS" in out and "\x1b" not in out


def test_last_and_reason_describe_the_same_certification(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """gpu-node-07 failed week-1 and passed week-2: LAST passed, and no week-1 reason beside it."""
    assert main(["history", "nodes", "--history", str(history), "-o", "json"]) == 0
    node = {n["node"]: n for n in json.loads(capsys.readouterr().out)}["gpu-node-07"]
    assert (node["lastResult"], node["lastCertification"], node["lastReason"], node["failures"]) == ("passed", "week-2", "", 1)
    assert main(["history", "nodes", "--history", str(history)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu-node-07"))
    assert " passed " in row and "ThresholdViolation" not in row
    # A failure in the latest certification gives its own reason.
    failing = make_history(history.parent / "failing.db", [("week-1", {"gpu-node-07": ("passed", "", 400.0)}),
                                                           ("week-2", {"gpu-node-07": ("failed", "ThresholdViolation", 100.0)})])
    summary = HistoryQuery(failing).nodes()[0]
    assert (summary["lastResult"], summary["lastReason"]) == ("failed", "ThresholdViolation")


async def test_the_console_notifies_a_damaged_history_instead_of_crashing(tmp_path: Path) -> None:
    session = await finished_session(tmp_path)
    damage(tmp_path / "h.db", "UPDATE node_results SET bus_bw = 'abc' WHERE node = 'gpu-node-03'")
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        app.push_screen(NodeScreen("gpu-node-03"))
        await pilot.pause()
        notes: list[Any] = [(n.severity, str(n.message)) for n in app._notifications]
        assert any(severity == "error" and "damaged history: node_results row" in message and "bus_bw is text 'abc'" in message
                   for severity, message in notes), notes
        assert "history unreadable" in rendered(app, "#sentinel") and "unreadable" in rendered(app, "#history")
        assert isinstance(app.screen, NodeScreen)
    await session.close()


async def test_the_map_says_a_history_that_is_no_database_any_more(tmp_path: Path) -> None:
    """A history overwritten after the session opened it (not SQLite at all): the map shows no stale marks and says
    why, instead of crashing on the archive's change key."""
    session = await finished_session(tmp_path)
    for part in tmp_path.glob("h.db*"):  # its write-ahead log too: a reader would find the pages there
        part.unlink()
    (tmp_path / "h.db").write_bytes(b"this is not a database" * 100)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        app.push_screen(TopologyScreen())
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        assert "history unreadable, no stale marks" in rendered(app, "#marks")
    await session.close()


def test_an_inconclusive_node_says_why_it_has_no_reason() -> None:
    """`history nodes` showed "inconclusive  -": the node has no reason of its own (its group failed, another member
    was blamed), and its message says so, as the console does."""
    from nvcre_tui.engine.history.queries import last_reason, reason_said

    said = "communication/nccl-all-reduce: in failed group group-1-iter-1, not blamed"
    entry = {"categories": [{"state": "inconclusive", "reason": "", "message": said},
                            {"state": "passed", "reason": "", "message": "passed"}]}
    assert last_reason(entry) == said
    assert reason_said(entry["categories"][0]) == said  # `history node` prints each category's so
    entry["categories"].append({"state": "failed", "reason": "Timeout", "message": "no result within 1h"})
    assert last_reason(entry) == f"Timeout, {said}"  # most urgent first


@pytest.mark.parametrize("damage", ["DROP TABLE node_baselines", "ALTER TABLE node_results DROP COLUMN evidence"])
def test_a_partial_schema_is_refused_before_a_run(damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the certifications table was read when the history was opened: `run --history H` ran the whole
    certification, then could not archive it (a notice, exit 0)."""
    history, state = tmp_path / "history.db", tmp_path / "state.db"
    open_history(history).close()
    with sqlite3.connect(history) as connection:
        connection.execute(damage)
    connection.close()
    assert main(["certification", "run", "--category", "diagnostics/dcgm-level4", "--state", str(state), "--history",
                 str(history), "--wait"]) == 2
    out, err = capsys.readouterr()
    missing = "no such table: node_baselines" if "TABLE node_baselines" in damage else "no such column: evidence"
    assert (out, err) == ("", f"{history}: not a readable history database ({missing})\n")
    assert not state.exists()
