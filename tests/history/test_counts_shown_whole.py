"""A count metric (DCGM's diagTestsRun, diagTestsSkipped: parsers.measurements' Metric.count) prints whole in `history
node`, judged by a threshold or not: it printed "diagTestsRun 10.00, diagTestsSkipped 0.00", a rate's two decimals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.history.queries import shown_value
from tests.history.helpers import NAMESPACE, fleet


def test_history_node_prints_dcgm_counts_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    cert = tmp_path / "dcgm.yaml"
    cert.write_text(yaml.safe_dump({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "dcgm", "namespace": NAMESPACE},
        "spec": {"target": {"nodeNames": ["gpu-node-01"]},
                 "categories": [{"domain": "diagnostics", "variant": "dcgm-level4"},  # recorded, not judged
                                {"domain": "diagnostics", "variant": "dcgm-level4", "options": {"thresholds": {"diagTestsRun": "value >= 1"}}}]}}))
    history = tmp_path / "history.db"
    assert main(["certification", "run", "--sim", "--scenario", str(scenario), "--state", str(tmp_path / "state.json"),
                 "--history", str(history), "--cert-file", str(cert), "--wait"]) == 0
    capsys.readouterr()
    assert main(["history", "node", "gpu-node-01", "--history", str(history)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "diagnostics/dcgm-level4" in line]
    assert len(rows) == 2, rows
    for row in rows:
        assert row.endswith("diagTestsRun 10 tests, diagTestsSkipped 0 tests"), row
    assert main(["history", "node", "gpu-node-01", "--history", str(history), "-o", "json"]) == 0
    measured = [c["measurements"] for e in json.loads(capsys.readouterr().out)["certifications"] for c in e["categories"]]
    assert measured == [{"diagTestsRun": 10.0, "diagTestsSkipped": 0.0}] * 2  # JSON keeps the numbers as they were


def test_a_count_that_is_not_whole_keeps_its_decimals() -> None:
    """Only an exact count is printed whole: an average of counts (a merged record) is not rounded to one."""
    assert shown_value({}, "diagTestsRun", 9.5) == "9.50"
    assert shown_value({}, "busBandwidthGBps", 10.0) == "10.00"  # a rate keeps two decimals
