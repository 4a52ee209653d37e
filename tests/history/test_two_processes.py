"""Two processes archiving the same certification into one history at once: exactly one copy."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from nvcre_tui.engine.history.db import open_history

WRITER = r"""
import json, sys
from pathlib import Path
from nvcre_tui.engine.history.archive import write_record
from nvcre_tui.engine.history.db import open_history
from nvcre_tui.engine.history.record import CertRecord, NodeResult
path, start = Path(sys.argv[1]), sys.stdin.readline()  # both wait on stdin, then race
connection = open_history(path)
won = 0
for index in range(40):
    record = CertRecord(f"uid-{index}", f"cert-{index}", "default", "PASSED", None, "2026-01-01T00:00:00Z", {"result": "PASSED"},
                        [NodeResult("gpu-node-01", "communication/nccl-loopback", "passed", measurements={"busBandwidthGBps": 400.0 + index})],
                        {"gpu-node-01": {"driver": "570.124.06"}})
    won += write_record(connection, "sim:shared", record)
print(json.dumps(won))
"""


def test_two_writers_race_and_each_certification_is_archived_once(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    open_history(history).close()
    root = Path(__file__).resolve().parents[2]
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(history)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=root) for _ in range(2)]
    results = [w.communicate("go\n", timeout=120) for w in writers]
    assert all(w.returncode == 0 for w in writers), [err for _, err in results]
    wins = [json.loads(out) for out, _ in results]
    assert sum(wins) == 40  # every certification won by exactly one process
    connection = sqlite3.connect(history)
    assert connection.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM certifications").fetchone() == (40, 40)
    assert connection.execute("SELECT COUNT(*) FROM node_results").fetchone() == (40,)
    assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
