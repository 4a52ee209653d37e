"""Benchmark the nccl-tests parser against a bare line-splitting loop over the same file.

    python bench/parse.py [--mb 200] [--small-mb 50] [--rounds 3]

Writes a log of about --mb megabytes (many runs, NCCL INFO noise, kubelet timestamps) into a temp
dir, then reports, in this one process: throughput and tracemalloc peak of `parse_nccl` as ratios
against `for line in file: line.split()`, and the parser's peak on a --small-mb file of the same
kind, to show that memory does not grow with the log (the default peak is mostly the first
DEFAULT_MAX_ROWS raw rows the result keeps; max_rows=0 shows the per-size state alone). Not run by pytest.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from nvcre_tui.engine.parsers import parse_nccl
from nvcre_tui.engine.sim.outputs import NcclFormat, NcclRun, write_nccl_log

MB = 1024 * 1024


def write_log(path: Path, megabytes: float) -> int:
    """A log of several 8-rank all-reduce runs (-N 20, 25 sizes each), about `megabytes` long."""
    rng = random.Random(7)
    ranks = [(f"gpu-n{rank // 8:02d}", rank % 8, "NVIDIA H100 80GB HBM3") for rank in range(16)]
    run = NcclRun("all_reduce_perf_mpi", ranks, [2**power for power in range(10, 35)],
                  busbw=lambda size, cycle: min(480.0, size / 2**21) + cycle % 3, cycles=20)
    fmt = NcclFormat(timestamps=datetime(2026, 3, 2, 10, tzinfo=timezone.utc), info_noise=0.6)
    block = "".join(write_nccl_log(run, rng, fmt))  # one run; the file repeats it like retried launches
    with path.open("w", encoding="utf-8") as stream:
        while stream.tell() < megabytes * MB:
            stream.write(block)
    return path.stat().st_size


def split_lines(path: Path) -> int:
    """The baseline: the least any line-oriented reader does."""
    count = 0
    with path.open(encoding="utf-8", newline="\n") as stream:
        for line in stream:
            count += len(line.split())
    return count


def parse(path: Path) -> int:
    with path.open(encoding="utf-8", newline="\n") as stream:
        return parse_nccl(stream).row_count


def parse_keeping_no_rows(path: Path) -> int:
    """The streaming state alone: per-size sums, no raw rows kept."""
    with path.open(encoding="utf-8", newline="\n") as stream:
        return parse_nccl(stream, max_rows=0).row_count


def seconds(works: list[Callable[[Path], int]], path: Path, rounds: int) -> list[float]:
    """The best of `rounds` interleaved timings of each work, in CPU seconds of this process.

    CPU time, not wall time: on a shared machine other processes' load would otherwise land on
    whichever run it happened to overlap (the long parse more often than the short baseline), and
    only ever add time, so the minimum is the closest to what each costs.
    """
    best = [float("inf")] * len(works)
    for _ in range(rounds):
        for index, work in enumerate(works):
            started = time.process_time()
            work(path)
            best[index] = min(best[index], time.process_time() - started)
    return best


def peak_bytes(work: Callable[[Path], int], path: Path) -> int:
    tracemalloc.start()
    work(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--mb", type=float, default=200.0, help="size of the big log (default 200)")
    options.add_argument("--small-mb", type=float, default=50.0, help="size of the small log (default 50)")
    options.add_argument("--rounds", type=int, default=3, help="timings of each, best kept (default 3)")
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        big, small = Path(folder) / "big.log", Path(folder) / "small.log"
        size = write_log(big, args.mb)
        small_size = write_log(small, args.small_mb)
        rows = parse(big)
        base_time, parse_time = seconds([split_lines, parse], big, args.rounds)
        base_peak, parse_peak = peak_bytes(split_lines, big), peak_bytes(parse, big)
        small_peak = peak_bytes(parse, small)
        bare_peak = peak_bytes(parse_keeping_no_rows, big)
    print(f"log: {size / MB:.0f} MB, {rows} result rows (plus headers and NCCL INFO noise)")
    print(f"{'':24s}{'CPU s':>10s}{'MB/s':>10s}{'peak KiB':>12s}")
    print(f"{'split lines (baseline)':24s}{base_time:10.2f}{size / MB / base_time:10.1f}{base_peak / 1024:12.1f}")
    print(f"{'parse_nccl':24s}{parse_time:10.2f}{size / MB / parse_time:10.1f}{parse_peak / 1024:12.1f}")
    print(f"{'parse_nccl(max_rows=0)':24s}{'':10s}{'':10s}{bare_peak / 1024:12.1f}")
    print(f"time ratio parse/baseline: {parse_time / base_time:.2f}x; "
          f"peak ratio parse/baseline: {parse_peak / max(base_peak, 1):.2f}x")
    print(f"parser peak on {small_size / MB:.0f} MB: {small_peak / 1024:.1f} KiB; on {size / MB:.0f} MB: "
          f"{parse_peak / 1024:.1f} KiB (growth {parse_peak / max(small_peak, 1):.2f}x "
          f"for {size / small_size:.1f}x input)")


if __name__ == "__main__":
    main()
