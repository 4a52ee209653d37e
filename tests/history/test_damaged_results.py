"""History fields the archive writes from a closed vocabulary: a certification's result (PASSED, FAILED or
INCOMPLETE: only finished certifications are archived) and each measurement (a finite number). Anything else is a
damaged row, told as the others are: one line naming the file, table, row and field, exit 2, nothing printed first."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.history import HistoryQuery
from tests.history.test_damaged import damage, make_history

NODE_ROW = "node_results row (certification 1 week-1, node gpu-node-07, category communication/nccl-loopback)"


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return make_history(tmp_path / "history.db", [
        ("week-1", {"gpu-node-07": ("failed", "ThresholdViolation", 120.0), "gpu-node-08": ("passed", "", 400.0)}),
        ("week-2", {"gpu-node-07": ("passed", "", 401.0), "gpu-node-08": ("passed", "", 402.0)}),
    ])


DAMAGE = [
    ("UPDATE certifications SET result = 'PASSED-ish' WHERE id = 1",
     "certifications row (certification 1 week-1): result is text 'PASSED-ish', not a certification result (PASSED, FAILED, INCOMPLETE)"),
    ("UPDATE certifications SET result = 'RUNNING' WHERE id = 1",
     "certifications row (certification 1 week-1): result is text 'RUNNING', not a certification result (PASSED, FAILED, INCOMPLETE)"),
    ("UPDATE node_results SET measurements = '{\"busBandwidthGBps\": \"fast\"}' WHERE node = 'gpu-node-07' AND cert_id = 1",
     f"{NODE_ROW}: measurements.busBandwidthGBps is a string, not a finite number"),
    ("UPDATE node_results SET measurements = '{\"busBandwidthGBps\": NaN}' WHERE node = 'gpu-node-07' AND cert_id = 1",
     f"{NODE_ROW}: measurements.busBandwidthGBps is nan, not a finite number"),
    ("UPDATE node_results SET measurements = '{\"stepTime\": Infinity}' WHERE node = 'gpu-node-07' AND cert_id = 1",
     f"{NODE_ROW}: measurements.stepTime is inf, not a finite number"),
    ("UPDATE node_results SET measurements = '{\"busBandwidthGBps\": true}' WHERE node = 'gpu-node-07' AND cert_id = 1",
     f"{NODE_ROW}: measurements.busBandwidthGBps is a boolean, not a finite number"),
    ("UPDATE node_results SET measurements = '{\"busBandwidthGBps\": null}' WHERE node = 'gpu-node-07' AND cert_id = 1",
     f"{NODE_ROW}: measurements.busBandwidthGBps is null, not a finite number"),
]


@pytest.mark.parametrize(("sql", "problem"), DAMAGE, ids=["result", "result-running", "text", "nan", "infinity", "boolean", "null"])
@pytest.mark.parametrize("command", [["nodes"], ["node", "gpu-node-07"], ["node", "gpu-node-07", "-o", "json"]])
def test_a_result_or_measurement_outside_what_the_archive_writes_is_one_line(history: Path, sql: str, problem: str, command: list[str],
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    damage(history, sql)
    assert main(["history", *command, "--history", str(history)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{history}: damaged history: {problem}\n"


def test_history_certifications_checks_the_result(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    damage(history, "UPDATE certifications SET result = 'PASSED-ish' WHERE id = 2")
    assert main(["history", "certifications", "--history", str(history)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"{history}: damaged history: certifications row (certification 2 week-2): result is text "
                                 "'PASSED-ish', not a certification result (PASSED, FAILED, INCOMPLETE)\n")


def test_every_result_the_engine_archives_reads_back(history: Path) -> None:
    for result in ("PASSED", "FAILED", "INCOMPLETE"):
        damage(history, f"UPDATE certifications SET result = '{result}' WHERE id = 1")
        assert HistoryQuery(history).certifications()[0]["result"] == result
    damage(history, "UPDATE node_results SET measurements = '{\"busBandwidthGBps\": 401, \"stepTime\": 1.5e-3}' WHERE cert_id = 2")
    assert HistoryQuery(history).node("gpu-node-07")[1]["categories"][0]["measurements"] == {"busBandwidthGBps": 401, "stepTime": 0.0015}
