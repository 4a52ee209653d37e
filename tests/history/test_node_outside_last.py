"""`history node NAME --last N` for a node none of the last N certifications held says so in one line: it printed the
table's headers over no row, as if the node had no results at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main
from tests.history.helpers import all_then_one_node


def test_a_node_outside_the_last_n_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = all_then_one_node(tmp_path)
    capsys.readouterr()
    assert main(["history", "node", "gpu-node-03", "--history", str(history), "--last", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gpu-node-03: in none of the last 1 certifications (the last it was in: all, completed ") and "CERTIFICATION" not in out, out
    assert main(["history", "node", "gpu-node-03", "--history", str(history), "--last", "2"]) == 0
    assert "CERTIFICATION" in capsys.readouterr().out
