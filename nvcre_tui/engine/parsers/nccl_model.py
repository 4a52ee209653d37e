"""What an nccl-tests run yields: rows, per-size averages, rank placement, and the aggregation that builds them.

The aggregation is streaming: it keeps one accumulator per message size (and at most `max_rows` raw
rows), so a log of any length parses in memory proportional to the number of sizes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from nvcre_tui.engine.parsers.base import NO_DATA, Failure, ParseError

DATA_CORRUPTION = "DataCorruption"

#: Raw rows kept by default; averages always cover every row.
DEFAULT_MAX_ROWS = 2048


@dataclass(frozen=True)
class Half:
    """One half of a row (out-of-place or in-place): time in µs, bandwidths in GB/s, wrong elements."""

    time_us: float
    algbw: float
    busbw: float
    wrong: float | None  # None when data checking was off (N/A)


@dataclass(frozen=True)
class Row:
    """One printed result row."""

    size: int
    count: int
    type: str
    redop: str
    root: int | None  # None in table generations without the root column
    out_of_place: Half
    in_place: Half


@dataclass(frozen=True)
class HalfAverage:
    """Mean of one half over every row of a size."""

    time_us: float
    algbw: float
    busbw: float


@dataclass(frozen=True)
class SizeAverage:
    """Every row of one message size folded together (all cycles and runs)."""

    size: int
    count: int
    type: str
    redop: str
    samples: int
    out_of_place: HalfAverage
    in_place: HalfAverage
    min_busbw: float  # out-of-place, over the samples: spread shows a flaky link
    max_busbw: float
    wrong: float  # total wrong elements, both halves


@dataclass(frozen=True)
class RankDevice:
    """Where a rank ran: host, CUDA device index, PCI bus id and GPU name."""

    host: str
    device: int
    bus_id: str
    gpu_name: str


@dataclass(frozen=True)
class NcclResult:
    """An nccl-tests log (or -J JSON) reduced to what certification needs."""

    programs: tuple[str, ...]
    runs_started: int
    runs_concluded: int
    row_count: int
    rows: tuple[Row, ...]  # the first `max_rows` rows
    sizes: tuple[SizeAverage, ...]  # first-seen order
    avg_bus_bandwidth: float | None  # the footer of the last run, if printed
    out_of_bounds: int | None  # summed over footers
    ranks: dict[int, RankDevice] = field(default_factory=dict)
    failure: Failure | None = None

    @property
    def bus_bandwidth_gbps(self) -> float:
        """Max over sizes of the per-size average out-of-place busbw (the NVCRE threshold value)."""
        return max(size.out_of_place.busbw for size in self.sizes)

    @property
    def alg_bandwidth_gbps(self) -> float:
        """Max over sizes of the per-size average out-of-place algbw."""
        return max(size.out_of_place.algbw for size in self.sizes)

    @property
    def largest(self) -> SizeAverage:
        """The averages of the largest message size (what AICR and most reports show)."""
        return max(self.sizes, key=lambda size: size.size)

    @property
    def passed(self) -> bool:
        return self.failure is None

    def measurements(self) -> dict[str, float]:
        """Threshold metrics this result yields."""
        return {"busBandwidthGBps": self.bus_bandwidth_gbps, "algBandwidthGBps": self.alg_bandwidth_gbps}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        data = asdict(self)
        data["ranks"] = {str(rank): asdict(device) for rank, device in sorted(self.ranks.items())}
        data["measurements"] = self.measurements()
        data["largest"] = asdict(self.largest)
        return data


#: (time_us, algbw, busbw, wrong) of one half: plain tuples on the hot path, Half objects only for kept rows.
HalfValues = tuple[float, float, float, float | None]
#: (size, count, type, redop, root, out-of-place, in-place): one row before it becomes a Row.
RowValues = tuple[int, int, str, str, int | None, HalfValues, HalfValues]


class _SizeAccumulator:
    """Running sums for one size; slots keep per-size memory small."""

    __slots__ = ("size", "count", "type", "redop", "samples", "sums", "min_busbw", "max_busbw", "wrong")

    def __init__(self, size: int, count: int, kind: str, redop: str, busbw: float) -> None:
        self.size, self.count, self.type, self.redop = size, count, kind, redop
        self.samples = 0
        self.sums = [0.0] * 6  # oop time, algbw, busbw; ip time, algbw, busbw
        self.min_busbw = self.max_busbw = busbw
        self.wrong = 0.0

    def add(self, oop: HalfValues, ip: HalfValues) -> None:
        sums = self.sums
        self.samples += 1
        sums[0] += oop[0]
        sums[1] += oop[1]
        sums[2] += oop[2]
        sums[3] += ip[0]
        sums[4] += ip[1]
        sums[5] += ip[2]
        if oop[2] < self.min_busbw:
            self.min_busbw = oop[2]
        if oop[2] > self.max_busbw:
            self.max_busbw = oop[2]
        if oop[3] or ip[3]:
            self.wrong += (oop[3] or 0.0) + (ip[3] or 0.0)

    def average(self) -> SizeAverage:
        n, s = self.samples, self.sums
        return SizeAverage(
            size=self.size,
            count=self.count,
            type=self.type,
            redop=self.redop,
            samples=n,
            out_of_place=HalfAverage(s[0] / n, s[1] / n, s[2] / n),
            in_place=HalfAverage(s[3] / n, s[4] / n, s[5] / n),
            min_busbw=self.min_busbw,
            max_busbw=self.max_busbw,
            wrong=self.wrong,
        )


class NcclAggregator:
    """Collects rows and run markers as they stream past, then builds the NcclResult."""

    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.max_rows = max_rows
        self.rows: list[Row] = []
        self.row_count = 0
        self.by_size: dict[int, _SizeAccumulator] = {}  # dicts keep first-seen order
        self.programs: list[str] = []
        self.runs_started = 0
        self.runs_concluded = 0
        self.avg_bus_bandwidth: float | None = None
        self.out_of_bounds: int | None = None
        self.ranks: dict[int, RankDevice] = {}

    def add(self, size: int, count: int, kind: str, redop: str, root: int | None, oop: HalfValues,
            ip: HalfValues) -> None:
        """Count one row: into its size's sums always, into `rows` while fewer than max_rows are kept."""
        self.row_count += 1
        if len(self.rows) < self.max_rows:
            self.rows.append(Row(size, count, kind, redop, root, Half(*oop), Half(*ip)))
        accumulator = self.by_size.get(size)
        if accumulator is None:
            accumulator = self.by_size[size] = _SizeAccumulator(size, count, kind, redop, oop[2])
        accumulator.add(oop, ip)

    def start_run(self, program: str) -> None:
        self.runs_started += 1
        if program and program not in self.programs:
            self.programs.append(program)

    def add_out_of_bounds(self, count: int) -> None:
        self.out_of_bounds = (self.out_of_bounds or 0) + count

    def result(self) -> NcclResult:
        """The result, or ParseError(NoDataCollected) when no row was read."""
        if not self.by_size:
            raise ParseError(NO_DATA, "no nccl-tests result rows found")
        sizes = tuple(accumulator.average() for accumulator in self.by_size.values())
        return NcclResult(
            programs=tuple(self.programs),
            runs_started=self.runs_started,
            runs_concluded=self.runs_concluded,
            row_count=self.row_count,
            rows=tuple(self.rows),
            sizes=sizes,
            avg_bus_bandwidth=self.avg_bus_bandwidth,
            out_of_bounds=self.out_of_bounds,
            ranks=dict(self.ranks),
            failure=_corruption(sizes, self.out_of_bounds),
        )


def _corruption(sizes: tuple[SizeAverage, ...], out_of_bounds: int | None) -> Failure | None:
    """DataCorruption when any row reported wrong elements or the footer counted out-of-bounds values."""
    corrupt = [size for size in sizes if size.wrong > 0]
    if corrupt:
        first = corrupt[0]
        more = f" (and {len(corrupt) - 1} more sizes)" if len(corrupt) > 1 else ""
        return Failure(DATA_CORRUPTION, f"{first.wrong:g} wrong elements at size {first.size} B{more}")
    if out_of_bounds:
        return Failure(DATA_CORRUPTION, f"{out_of_bounds} out-of-bounds values reported")
    return None
