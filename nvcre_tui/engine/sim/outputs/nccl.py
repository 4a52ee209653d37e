"""nccl-tests output from numbers: what a simulated launcher pod prints (stdout table or -J JSON).

The caller says what was measured (busbw per size and cycle, wrong elements) and how the log looks
(table generation, stripped `#`, kubelet timestamps, NCCL INFO noise, a cut-off end); everything
random comes from the `random.Random` it passes, so a seed replays the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from nvcre_tui.engine.sim.outputs.kubelet import kubelet_prefix
from nvcre_tui.engine.sim.outputs.nccl_format import LAYOUTS, half_cells, header_lines, rank_line, row_prefix

#: A value per message size: a table, or a function of (size in bytes, cycle index).
PerSize = Mapping[int, float] | Callable[[int, int], float]

TYPE_BYTES = {"int8": 1, "uint8": 1, "half": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "float": 4,
              "int64": 8, "uint64": 8, "double": 8}

_INFO_MESSAGES = (
    "Channel {c:02d}/32 : 0 1 2 3 4 5 6 7",
    "Channel {c:02d}/0 : {r}[{d}] -> {n}[{d}] [send] via NET/IB/{d}/GDRDMA",
    "comm 0x{c:x}f0a0 rank {r} nRanks 8 nNodes 1 localRanks 8 localRank {r} MNNVL 0",
    "Connected all rings, use ring PXN 0 GDR 1",
    "NCCL_IB_HCA set to mlx5_{d}",
    "Using network IB",
)


def bus_factor(program: str, ranks: int) -> float:
    """busbw / algbw for a collective on `ranks` ranks (nccl-tests PERFORMANCE.md)."""
    if ranks <= 1:
        return 0.0 if "reduce" in program and "reduce_scatter" not in program else 1.0
    if program.startswith("all_reduce"):
        return 2 * (ranks - 1) / ranks
    if program.startswith(("all_gather", "reduce_scatter", "alltoall")):
        return (ranks - 1) / ranks
    return 1.0


@dataclass(frozen=True)
class NcclRun:
    """What one nccl-tests invocation measured."""

    program: str  # all_reduce_perf_mpi, all_gather_perf, alltoall_perf_mpi, sendrecv_perf ...
    ranks: Sequence[tuple[str, int, str]]  # (host, CUDA device, GPU name) per rank
    sizes: Sequence[int]
    busbw: PerSize  # out-of-place GB/s
    algbw: PerSize | None = None  # derived from busbw and the collective's factor when None
    cycles: int = 1  # -N
    wrong: Mapping[int, int] | Callable[[int, int], int] | None = None
    check: bool = True  # -c 0 prints N/A in the wrong column
    dtype: str = "float"
    redop: str | None = "sum"  # None for collectives without a reduction (legacy tables omit the column)
    gpus_per_process: int = 1  # -g: loopback runs drive every GPU from one process
    iters: int = 100
    warmup: int = 1


@dataclass(frozen=True)
class NcclFormat:
    """How the log looks."""

    layout: str = "modern"  # a key of LAYOUTS
    strip_hash: bool = False  # a launcher that drops the leading '#' of comment lines
    timestamps: datetime | None = None  # kubelet prefixes starting at this moment
    info_noise: float = 0.0  # probability of an NCCL INFO line after each data row (and an init block)
    truncate_after: int | None = None  # rows printed whole; the next one is cut mid-line


def _value(source: PerSize | Mapping[int, int] | Callable[[int, int], int], size: int, cycle: int) -> float:
    return float(source(size, cycle)) if callable(source) else float(source[size])


def _count(run: NcclRun, size: int) -> int:
    count = size // TYPE_BYTES.get(run.dtype, 4)
    return count // len(run.ranks) if run.program.startswith("all_gather") else count


def _measure(run: NcclRun, rng: random.Random, size: int, cycle: int) -> tuple[tuple[float, ...], ...]:
    """((time, algbw, busbw, wrong) out-of-place, (...) in-place) for one row."""
    factor = bus_factor(run.program, len(run.ranks))
    busbw = _value(run.busbw, size, cycle)
    if run.algbw is not None:
        algbw = _value(run.algbw, size, cycle)
    elif factor > 0:
        algbw = busbw / factor
    else:
        raise ValueError(f"{run.program} on {len(run.ranks)} rank(s): give algbw, busbw is always 0")
    wrong = 0.0 if run.wrong is None else _value(run.wrong, size, cycle)
    in_place = rng.uniform(0.975, 1.0)  # in-place is a little slower, as on real hardware
    halves = []
    for scale in (1.0, in_place):
        alg = algbw * scale
        time_us = size / 1e3 / alg if alg > 0 else 1e9
        halves.append((time_us, alg, busbw * scale, wrong))
    return tuple(halves)


def _preamble(run: NcclRun, layout_name: str, rng: random.Random) -> list[str]:
    layout = LAYOUTS[layout_name]
    first, second = run.sizes[0], run.sizes[1] if len(run.sizes) > 1 else run.sizes[0]
    step = f"{second // first}(factor)" if first > 0 and second % first == 0 else f"{second - first}(bytes)"
    lines = []
    if layout.version_line:
        lines += ["# nccl-tests version 2.19.6 nccl-headers=22903 nccl-library=22903",
                  f"# Collective test starting: {run.program}"]
    lines.append(f"# nThread 1 nGpus {run.gpus_per_process} minBytes {min(run.sizes)} maxBytes {max(run.sizes)} "
                 f"step: {step} warmup iters: {run.warmup} iters: {run.iters} agg iters: 1 "
                 f"validation: {int(run.check)} graph: 0" + (" unalign: 0" if layout.version_line else ""))
    lines += ["#", "# Using devices"]
    pid = 0
    for rank, (host, device, gpu_name) in enumerate(run.ranks):
        if rank % run.gpus_per_process == 0:
            pid = rng.randint(1000, 99999)
        lines.append("#" + rank_line(layout, rank, pid, host, device, gpu_name))
    lines.append("#")
    lines += ["#" + line for line in header_lines(layout, run.redop is not None)]
    return lines


def _info_line(run: NcclRun, rng: random.Random) -> str:
    rank = rng.randrange(len(run.ranks))
    host, device, _ = run.ranks[rank]
    message = rng.choice(_INFO_MESSAGES).format(c=rng.randrange(32), r=rank, d=device, n=(rank + 1) % 8)
    return f"{host}:{rng.randint(1000, 99999)}:{rng.randint(1000, 99999)} [{device}] NCCL INFO {message}"


def _table(run: NcclRun, fmt: NcclFormat, rng: random.Random) -> Iterator[str]:
    """The log's lines, without newlines or prefixes (write_nccl_log adds those)."""
    layout = LAYOUTS[fmt.layout]
    yield from _preamble(run, fmt.layout, rng)
    if fmt.info_noise > 0:
        for _ in range(8):
            yield _info_line(run, rng)
    busbw_sum, cells, wrong_total = 0.0, 0, 0
    for cycle in range(run.cycles):
        for size in run.sizes:
            halves = _measure(run, rng, size, cycle)
            row = row_prefix(layout, size, _count(run, size), run.dtype, run.redop, -1)
            for time_us, algbw, busbw, wrong in halves:
                row += half_cells(layout, time_us, algbw, busbw, int(wrong) if run.check else None)
                busbw_sum, cells = busbw_sum + busbw, cells + 1
            wrong_total += int(halves[0][3]) * 2 if run.check else 0
            yield row
            if fmt.info_noise > 0 and rng.random() < fmt.info_noise:
                yield _info_line(run, rng)
    yield f"# Out of bounds values : {wrong_total} {'FAILED' if wrong_total else 'OK'}"
    yield f"# Avg bus bandwidth    : {busbw_sum / max(cells, 1):g} "
    yield "#"
    if layout.version_line:
        yield f"# Collective test concluded: {run.program}"


def write_nccl_log(run: NcclRun, rng: random.Random, fmt: NcclFormat = NcclFormat()) -> Iterator[str]:
    """The stdout of `run`, one line per item, each ending in "\\n" except a cut-off last row."""
    moment = fmt.timestamps
    rows = 0
    for line in _table(run, fmt, rng):
        if fmt.strip_hash and line.startswith("#"):
            line = line[1:]
        is_row = line[:1] == " " and line.lstrip()[:1].isdigit()
        if is_row and fmt.truncate_after is not None and rows == fmt.truncate_after:
            cut = rng.randint(8, len(line) - 2)
            yield (kubelet_prefix(moment) if moment else "") + line[:cut]
            return
        rows += is_row
        if moment is not None:
            yield kubelet_prefix(moment) + line + "\n"
            moment += timedelta(milliseconds=rng.uniform(0.05, 40.0))
        else:
            yield line + "\n"


def write_nccl_json(run: NcclRun, rng: random.Random) -> str:
    """The `-J` document of `run` (nccl-tests JSON file version 2)."""
    results, busbw_sum, wrong_total = [], 0.0, 0
    for cycle in range(run.cycles):
        for size in run.sizes:
            halves = _measure(run, rng, size, cycle)
            entry: dict[str, object] = {"size": size, "count": _count(run, size), "type": run.dtype,
                                        "redop": run.redop or "none", "root": f"{-1:6d}"}
            for key, (time_us, algbw, busbw, wrong) in zip(("out_of_place", "in_place"), halves):
                entry[key] = {"time": round(time_us, 6), "alg_bw": round(algbw, 6), "bus_bw": round(busbw, 6),
                              "nwrong": float(wrong) if run.check else None}
                busbw_sum += round(busbw, 6)
            wrong_total += int(halves[0][3]) * 2 if run.check else 0
            entry.update({"actual_iterations": run.iters, "experiment_name": ""})
            results.append(entry)
    devices = [{"rank": rank, "group": 0, "pid": rng.randint(1000, 99999), "hostname": host, "device": device,
                "device_hex": f"0000:{device:02x}:00", "device_info": name}
               for rank, (host, device, name) in enumerate(run.ranks)]
    document = {
        "version": 2, "args": [f"./{run.program}", "-b", str(min(run.sizes)), "-e", str(max(run.sizes))],
        "nccl_version": 22903, "config": {"ngpus": run.gpus_per_process, "devices": devices},
        "results": results,
        "out_of_bounds": {"count": wrong_total, "okay": wrong_total == 0},
        "average_bus_bandwidth": {"bandwidth": round(busbw_sum / max(2 * len(results), 1), 6), "okay": "unchecked"},
        "errors": [],
    }
    return json.dumps(document, indent=1) + "\n"
