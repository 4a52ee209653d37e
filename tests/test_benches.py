"""Every benchmark under bench/ still runs: at its smallest size it exits 0 and prints its ratio line. A bench that
only fails when someone wants its numbers is found here instead (bench/readmodel.py once failed its own check for
weeks after the read model changed). Timings are the benches' business, never asserted here.

bench/diagnose.py is run by tests/engine/test_diagnose.py; bench/tui.py is left out: its load phases run at fixed
event rates for about a minute whatever the rounds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUARD_SECONDS = 120  # a hung bench fails here instead of hanging the suite

SMALLEST = {  # bench -> (arguments for its smallest run, a line it must print)
    "readmodel.py": (["--rounds", "2"], r"ratio \d+(\.\d+)?x"),
    "reconcile.py": (["--nodes", "64", "--rounds", "2"], r"\n\s+64\s+1\s+\d+\.\d ms\s+\d+\.\d ms\s+\d+\.\dx"),
    "parse.py": (["--mb", "1", "--small-mb", "0.5", "--rounds", "1"], r"time ratio parse/baseline: \d+(\.\d+)?x"),
    "store.py": (["--objects", "50"], r"SqliteStore power-safe"),
    "engine.py": (["--sizes", "16"], r"kube/emulator vs memory at 16 nodes: .*x wall time"),
    "fleet.py": (["--nodes", "24", "--baseline", "16"], r"per node, 24 nodes vs 16 \(1\.0x: linear\): wall time \d+\.\d+x, "
                 r"store bytes \d+\.\d+x, history bytes \d+\.\d+x, peak memory \d+\.\d+x"),
    "tui_logs.py": (["--lines", "1000", "--rounds", "1"], r"search\s+\d+(\.\d+)? ms\s+\d+(\.\d+)? × idle"),
    "tui_map.py": (["--rounds", "1"], r"key to screen, \d+ changes/s\s+.*x idle key to screen"),
    "tui_wall.py": (["--nodes", "64", "--rounds", "1"], r"\n\s+64\s+\d+\.\d ms\s+\d+\.\d ms\s+\d+\.\dx\s+\d+\.\d ms\s+\d+\.\d ms\s+\d+\.\dx"),
    "console_fixtures.py": (["--rounds", "1"], r"reopen saved state .* ratio\s+\d+(\.\d+)?x"),
    "soak.py": (["--nodes", "2", "--warmup", "1", "--cycles", "2", "--history-copies", "3"],
                r"Events in the store \d+ at the baseline, \d+ after 1, \d+ after 2 \(ratio \d+\.\d+x; \d+\.\d simulated hours\)\n"
                r"asyncio tasks \d+ at the baseline, \d+ after 1, \d+ after 2 \(\d+\.\d+x\)"),
    "history.py": (["--certifications", "20"], r"history nodes\s+\d+ ms\s+\d+ ms\s+\d+\.\dx\nthe same said both ways: yes"),
    "console_engine.py": (["--nodes", "32", "--speed", "2000"], r"max loop block \d+\.\d ms \(\d+\.\dx idle\), p99 \d+\.\d ms \(\d+\.\dx idle\)"),
}


def test_every_bench_is_run_here_or_named_as_run_elsewhere() -> None:
    benches = {path.name for path in (ROOT / "bench").glob("*.py")} - {"timing.py"}  # timing.py: their shared helpers
    assert benches - {"diagnose.py", "tui.py"} == set(SMALLEST)


@pytest.mark.parametrize("bench", sorted(SMALLEST))
def test_a_bench_runs_at_its_smallest_and_prints_its_ratio(bench: str, tmp_path: Path) -> None:
    arguments, expected = SMALLEST[bench]
    env = {**os.environ, "HOME": str(tmp_path), "NVCRE_STATE": str(tmp_path / "sim.db"), "NVCRE_HISTORY": str(tmp_path / "history.db")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / bench), *arguments], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=GUARD_SECONDS, check=False)
    assert done.returncode == 0, f"{bench} exited {done.returncode}:\n{done.stderr[-2000:]}"
    assert re.search(expected, done.stdout), f"{bench} printed no line matching {expected!r}:\n{done.stdout[-2000:]}"
