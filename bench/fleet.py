"""A burn-in certification on a large simulated fleet: wall time, store and history bytes, peak memory per node.

`nvcre certification run --sim --scenario FLEET --cert-file examples/burn-in.yaml --wait` (two categories, a Job
per node, 8 at a time), run in this process as the command runs it (SQLite store, history archive, JSON report), on
a small fleet (the baseline) and on a large one. Each figure is per node and printed as a ratio to the baseline's:
1.0x means it grows linearly with the fleet; a cost rewritten in full on every step (a Workflow of a group per node
stored again at each of its Jobs) shows as a ratio that grows with the large fleet's size. A 3,000-node fleet once
took 7.5 minutes and a 376 MB store; run the bench on the commit before a fix and after it to compare the ratios.
Measured side by side on one loaded 2-core machine, 256 nodes vs 32: before the fixes (the Workflow deep-copied and
its every version logged whole) wall time 2.25x, store bytes 1.46x; after them 1.33x and 1.05x (peak memory 0.64x
both: the store's bytes, not the process's, grew).

    python bench/fleet.py                           # 32 nodes, then 256
    python bench/fleet.py --nodes 1024 --baseline 64

Store bytes are the simulator's file and its WAL as the command leaves them; peak memory is tracemalloc's peak over
the run, measured in a second run of each size (tracemalloc slows Python down, so the timed run goes without it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

from nvcre_tui.cli import main as nvcre

ROOT = Path(__file__).resolve().parents[1]
CERT = ROOT / "examples" / "burn-in.yaml"
FAULTS = """faults:
  - {type: slow-gpu, node: gpu-node-07, gpu: 2, factor: 0.5}
  - {type: degraded-nic, node: gpu-node-12, factor: 0.4}
"""


@dataclass
class Run:
    nodes: int
    seconds: float
    store_bytes: int
    history_bytes: int
    peak_bytes: int
    result: str


def scenario(folder: Path, nodes: int) -> Path:
    path = folder / f"fleet-{nodes}.yaml"
    path.write_text(f"name: bench fleet {nodes}\nseed: 7\nnodes:\n  - {{count: {nodes}, cliques: {max(1, nodes // 32)}}}\n{FAULTS}")
    return path


def size(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def run(folder: Path, nodes: int, traced: bool) -> tuple[float, int, int, int, str]:
    """One burn-in to its report: (seconds, store bytes, history bytes, peak traced bytes, result)."""
    here = Path(tempfile.mkdtemp(prefix=f"{nodes}-{'traced' if traced else 'timed'}-", dir=folder))
    argv = ["certification", "run", "--sim", "--scenario", str(scenario(folder, nodes)), "--cert-file", str(CERT),
            "--state", str(here / "sim.db"), "--history", str(here / "history.db"), "--wait",
            "--results-file", str(here / "report.json")]
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as errors:
        code = nvcre(argv)
    seconds = time.perf_counter() - started
    peak = 0
    if traced:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if code not in (0, 1):
        raise SystemExit(f"nvcre exited {code} at {nodes} nodes: {errors.getvalue()[-2000:]}")
    result = json.loads((here / "report.json").read_text()).get("result", "?")
    return seconds, size(here / "sim.db"), size(here / "history.db"), peak, str(result)


def measure(folder: Path, nodes: int) -> Run:
    seconds, store, history, _, result = run(folder, nodes, traced=False)
    _, _, _, peak, _ = run(folder, nodes, traced=True)
    return Run(nodes, seconds, store, history, peak, result)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=256, help="the large fleet (default 256)")
    parser.add_argument("--baseline", type=int, default=32, help="the baseline fleet (default 32)")
    args = parser.parse_args()
    if not 16 <= args.baseline < args.nodes:
        parser.error("--baseline must be at least 16 (the scenario's faults name gpu-node-12) and below --nodes")
    with tempfile.TemporaryDirectory(prefix="nvcre-bench-fleet-") as name:
        folder = Path(name)
        run(folder, 16, traced=False)  # warm-up, not counted: imports and first-use caches would weigh on the baseline
        runs = [measure(folder, args.baseline), measure(folder, args.nodes)]
    print(f"{'nodes':>6}{'result':>8}{'wall s':>9}{'ms/node':>9}{'store MB':>10}{'KB/node':>9}{'history KB':>12}"
          f"{'KB/node':>9}{'peak MB':>9}{'KB/node':>9}")
    for r in runs:
        print(f"{r.nodes:>6}{r.result:>8}{r.seconds:>9.2f}{r.seconds / r.nodes * 1000:>9.2f}{r.store_bytes / 1e6:>10.1f}"
              f"{r.store_bytes / r.nodes / 1e3:>9.1f}{r.history_bytes / 1e3:>12.0f}{r.history_bytes / r.nodes / 1e3:>9.2f}"
              f"{r.peak_bytes / 1e6:>9.1f}{r.peak_bytes / r.nodes / 1e3:>9.1f}")
    base, large = runs

    def ratio(value: float, baseline: float) -> str:
        return f"{(value / large.nodes) / (baseline / base.nodes):.2f}x" if baseline > 0 else "n/a"

    print(f"per node, {large.nodes} nodes vs {base.nodes} (1.0x: linear): wall time {ratio(large.seconds, base.seconds)}, "
          f"store bytes {ratio(large.store_bytes, base.store_bytes)}, history bytes {ratio(large.history_bytes, base.history_bytes)}, "
          f"peak memory {ratio(large.peak_bytes, base.peak_bytes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
