"""`history node NAME --last N` for a node none of the last N certifications held says so in one line: it printed the
table's headers over no row, as if the node had no results at all."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main
from tests.history.helpers import fleet, loopback


def test_a_node_outside_the_last_n_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    history = tmp_path / "history.db"
    one = loopback("one-node")
    one["spec"]["target"] = {"nodeNames": ["gpu-node-01"]}
    for name, body in (("all", loopback("all")), ("one-node", one)):
        cert = tmp_path / f"{name}.yaml"
        cert.write_text(yaml.safe_dump(body))
        main(["certification", "run", "--sim", "--scenario", str(scenario), "--state", str(tmp_path / "state.json"),
              "--history", str(history), "--cert-file", str(cert), "--wait"])
    capsys.readouterr()
    assert main(["history", "node", "gpu-node-03", "--history", str(history), "--last", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gpu-node-03: in none of the last 1 certifications (the last it was in: all, completed ") and "CERTIFICATION" not in out, out
    assert main(["history", "node", "gpu-node-03", "--history", str(history), "--last", "2"]) == 0
    assert "CERTIFICATION" in capsys.readouterr().out
