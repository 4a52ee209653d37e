"""The CEL environment (celpy's Lark parser, about 0.1 s of CPU) is built at the first expression, not at import: every
command built it at start, `--help` and a simulated `list` that judge nothing included. The recursion limit it sets
stays as every process had it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import contextlib, io, sys
import celpy.celparser
from nvcre_tui.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
built_before = celpy.celparser.CELParser.CEL_PARSER is not None
limit = sys.getrecursionlimit()
from nvcre_tui.engine.judging.thresholds import compile_threshold
compile_threshold("busBandwidthGBps", "value > 1.0")
print(code, built_before, limit, celpy.celparser.CELParser.CEL_PARSER is not None)
"""


def _probe(*argv: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=60, check=True)
    return done.stdout.split()


def test_help_builds_no_cel_parser_and_the_first_threshold_does() -> None:
    assert _probe("--help") == ["0", "False", "2500", "True"]


def test_a_simulated_list_builds_no_cel_parser(tmp_path: Path) -> None:
    assert _probe("certification", "list", "--sim", "--state", str(tmp_path / "sim")) == ["0", "False", "2500", "True"]
