"""What an nccl-tests run yields: rows, per-size averages, rank placement, and the aggregation that builds them.

The aggregation is streaming: it keeps one accumulator per message size (and at most `max_rows` raw
rows), so a log of any length parses in memory proportional to the number of sizes. Rows come one at
a time (`add`) or a size's worth at once from the batched reader (`add_group`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from nvcre_tui.engine.parsers.base import NO_DATA, PAST_FLOAT, Failure, ParseError
from nvcre_tui.engine.parsers.measurements import ALG_BANDWIDTH, BUS_BANDWIDTH

DATA_CORRUPTION = "DataCorruption"
#: nccl-tests' own bandwidth check failed: its average bus bandwidth below 0.9 x NCCL_TESTS_MIN_BW (it exits non-zero).
BANDWIDTH_CHECK_FAILED = "BandwidthCheckFailed"
#: Every process ran nccl-tests as its own one-rank run (a build without MPI started by mpirun): nothing crossed GPUs.
RANKS_NOT_JOINED = "RanksNotJoined"

#: Raw rows kept by default; averages always cover every row.
DEFAULT_MAX_ROWS = 2048

#: Skipped rows named in the result; the rest are only counted, so a log of bad rows cannot grow memory.
MAX_SKIPPED_NAMED = 3

#: How an nccl-tests note begins, in notes() and so in a run's completion message (the report finds it there).
NOTE_PREFIX = "nccl: "

#: NCCL's built-in TCP transport, as its init line names it ("NCCL INFO Using network Socket"): what NCCL falls back
#: to when no network plugin (aws-ofi-nccl, GPUDirect-TCPX/TCPXO) loads and no RDMA device is in the pod.
SOCKET_NETWORK = "Socket"


@dataclass(frozen=True)
class Half:
    """One half of a row (out-of-place or in-place): time in µs, bandwidths in GB/s, wrong elements."""

    time_us: float
    algbw: float
    busbw: float
    wrong: float | None  # None when data checking was off (N/A) or the table prints `error` instead
    error: float | None = None  # the `error` column of older builds: max deviation, not a count


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
    wrong: float  # total wrong elements, both halves (the `#wrong` column)
    max_error: float | None = None  # largest `error` cell (older builds); None when none was printed


@dataclass(frozen=True)
class SkippedRow:
    """A result row left out of every average: a time or bandwidth cell is inf, nan or negative, or the line
    looks like a row but a cell is unreadable or the cell count is not the table's."""

    size: int | None  # None when the size itself is what cannot be read ("size -1048576")
    cells: str  # what is wrong, cells as printed: "busbw inf", "algbw -1.00, busbw -1.00", "count 1_000", "14 cells
    # (the table has 13)"
    where: str  # "line 57" in a stdout table, "results[3]" in a -J document


def describe_skipped(count: int, named: tuple[SkippedRow, ...]) -> str:
    """'2 rows skipped: busbw inf at size 1048576 B (line 57); busbw nan at size 2097152 B (line 58)'."""
    examples = "; ".join(f"{row.cells}{'' if row.size is None else f' at size {row.size} B'} ({row.where})"
                         for row in named)
    more = f" and {count - len(named)} more" if count > len(named) else ""
    return f"{count} row{'s' if count != 1 else ''} skipped: {examples}{more}"


#: Counts beyond this many digits are taken as this power of ten: a message then says "at least 10^1000", and no
#: number reaches int()'s 4300-digit limit on its way to text or JSON.
MAX_COUNT_DIGITS = 1000


def read_count(digits: str) -> int:
    """A count printed as `digits` (ASCII), at most 10^MAX_COUNT_DIGITS."""
    return int(digits) if len(digits) <= MAX_COUNT_DIGITS else 10**MAX_COUNT_DIGITS


def shown_count(count: float) -> str:
    """A count as a message says it: a float as %g, an integer exact up to 24 digits, else by its order of magnitude
    ("at least 10^28"), never cut to a smaller number."""
    if isinstance(count, float):
        return f"{count:g}"
    digits = str(min(count, 10**MAX_COUNT_DIGITS))
    return digits if len(digits) <= 24 else f"at least 10^{len(digits) - 1}"


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
    skipped_count: int = 0  # rows left out of the averages: inf, nan or negative cells, or refused row-like lines
    skipped_rows: tuple[SkippedRow, ...] = ()  # the first MAX_SKIPPED_NAMED of them
    # Why the output does not show every run concluding (rows without a summary footer, or a started run that
    # printed no row and no summary): never a pass for `nvcre parse`; `failure` stays what the rows themselves show.
    incomplete: str | None = None
    remarks: tuple[str, ...] = ()  # what the output leaves unsaid or unreadable beside the rows ("no out_of_bounds")

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

    def notes(self) -> tuple[str, ...]:
        """Rows left out of the averages, named ("nccl: 2 rows skipped: ..."), and the remarks; none for a clean log."""
        skipped = (describe_skipped(self.skipped_count, self.skipped_rows),) if self.skipped_count else ()
        return tuple(f"{NOTE_PREFIX}{note}" for note in (*skipped, *self.remarks))

    def measurements(self) -> dict[str, float]:
        """Threshold metrics this result yields."""
        return {BUS_BANDWIDTH: self.bus_bandwidth_gbps, ALG_BANDWIDTH: self.alg_bandwidth_gbps}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        data = asdict(self)
        data["ranks"] = {str(rank): asdict(device) for rank, device in sorted(self.ranks.items())}
        data["measurements"] = self.measurements()
        data["largest"] = asdict(self.largest)
        if self.notes():
            data["notes"] = list(self.notes())
        if not self.skipped_count:  # only a log with skipped rows carries these keys: a clean log's is what it was
            del data["skipped_count"], data["skipped_rows"]
        if not self.remarks:
            del data["remarks"]
        if self.incomplete is None:
            del data["incomplete"]
        return data


#: (time_us, algbw, busbw, wrong, error) of one half: plain tuples, Half objects only for kept rows.
HalfValues = tuple[float, float, float, float | None, float | None]
#: (size, count, type, redop, root, out-of-place, in-place): one row before it becomes a Row.
RowValues = tuple[int, int, str, str, int | None, HalfValues, HalfValues]

# The limit nccl-tests itself puts on the `error` column (DeltaMaxValue in src/common.cu) per data
# type; the later builds of that generation scale it by (ranks - 1), and the larger limit is taken so
# that a healthy run is never blamed. Integer types allow no deviation. The footer, when printed, decides.
ERROR_TOLERANCE = {"half": 5e-2, "float16": 5e-2, "bfloat16": 1e-2, "float": 1e-5, "float32": 1e-5,
                   "double": 1e-12, "float64": 1e-12}


def error_tolerance(kind: str, ranks: int) -> float:
    """The largest `error` cell nccl-tests accepts for data type `kind` on `ranks` ranks."""
    return ERROR_TOLERANCE.get(kind, 0.0) * max(1, ranks - 1)


class _SizeAccumulator:
    """Running sums for one size; slots keep per-size memory small."""

    __slots__ = ("size", "count", "type", "redop", "samples", "sums", "min_busbw", "max_busbw", "wrong",
                 "max_error")

    def __init__(self, size: int, count: int, kind: str, redop: str, busbw: float) -> None:
        self.size, self.count, self.type, self.redop = size, count, kind, redop
        self.samples = 0
        self.sums = [0.0] * 6  # oop time, algbw, busbw; ip time, algbw, busbw
        self.min_busbw = self.max_busbw = busbw
        self.wrong = 0.0
        self.max_error: float | None = None

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
        for error in (oop[4], ip[4]):
            if error is not None and (self.max_error is None or error > self.max_error):
                self.max_error = error

    def add_group(self, samples: int, sums: list[float], min_busbw: float, max_busbw: float, wrong: float,
                  max_error: float | None) -> None:
        """Fold many rows at once (the batch reader's path)."""
        self.samples += samples
        own = self.sums
        for index in range(6):
            own[index] += sums[index]
        self.min_busbw = min(self.min_busbw, min_busbw)
        self.max_busbw = max(self.max_busbw, max_busbw)
        self.wrong += wrong
        if max_error is not None and (self.max_error is None or max_error > self.max_error):
            self.max_error = max_error

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
            max_error=self.max_error,
        )


#: (size, error, tolerance): an `error` cell above what nccl-tests accepts.
Excess = tuple[int, float, float]


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
        self.rank_zero_devices: dict[tuple[str, int, str], None] = {}  # every GPU listed as rank 0, in order
        self.pending_excess: Excess | None = None  # since the last footer: the footer will decide
        self.unjudged_excess: Excess | None = None  # from a table that ended without its footer
        self.nccl_failure: str | None = None  # the first line saying NCCL (or CUDA) failed
        self.skipped_count = 0
        self.skipped_rows: list[SkippedRow] = []
        self.skipped_wrong: tuple[float, str] | None = None  # (wrong elements, where): the first refused row with any
        self.reported_errors: str | None = None  # what a -J document's "errors" says went wrong
        self.bandwidth_check: float | None = None  # the first average bus bandwidth nccl-tests itself judged FAILED
        self.remarks: list[str] = []
        self.networks: dict[str, None] = {}  # NCCL's network transports, as its init lines name them, in order
        self.connections: dict[str, None] = {}  # the network transports its connection lines name ("via NET/Socket/0")
        self.footed = 0  # rows (kept or skipped) that a summary footer closed
        self.unfooted_runs = 0  # runs whose last rows no summary followed: cut off, or the run failed
        # The run a "Collective test starting" line opened, until the next one or the end of input: whether it
        # printed its summary, the row count when it began, and the first line saying NCCL failed before its rows.
        self.run_open = False
        self.run_footed = False
        self.run_first_row = 0
        self.run_failure: str | None = None
        self.run_program = ""
        self.late_failure: str | None = None  # the first line saying NCCL failed after rows no summary closed yet
        self.unfooted_failure: str | None = None  # that line, of the first run whose rows no summary followed
        self.rowless_runs = 0  # started runs that printed neither a result row nor a summary (crashed, or cut off)
        self.first_rowless: tuple[int, str, str | None] | None = None  # (run number, program, NCCL failure) of the first

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
        if oop[4] is not None or ip[4] is not None:
            self.check_error(size, kind, max(oop[4] or 0.0, ip[4] or 0.0))

    def add_group(self, size: int, count: int, kind: str, redop: str, samples: int, sums: list[float],
                  min_busbw: float, max_busbw: float, wrong: float, max_error: float | None) -> None:
        """Count `samples` rows of one size at once (never kept as raw rows)."""
        self.row_count += samples
        accumulator = self.by_size.get(size)
        if accumulator is None:
            accumulator = self.by_size[size] = _SizeAccumulator(size, count, kind, redop, min_busbw)
        accumulator.add_group(samples, sums, min_busbw, max_busbw, wrong, max_error)
        if max_error is not None:
            self.check_error(size, kind, max_error)

    def skip(self, size: int | None, cells: str, where: str, wrong: float | None = None) -> None:
        """A row left out (inf, nan or negative cells, or a row-like line refused): in no average, but counted and
        named. Its wrong elements (`wrong`, when its data-check cells read) still convict: corruption is no cell to
        skip."""
        self.skipped_count += 1
        if len(self.skipped_rows) < MAX_SKIPPED_NAMED:
            self.skipped_rows.append(SkippedRow(size, cells, where))
        if wrong and self.skipped_wrong is None:
            self.skipped_wrong = (wrong, where)

    def check_error(self, size: int, kind: str, error: float) -> None:
        """Note the first `error` cell above nccl-tests' tolerance; the table's footer judges it. An error of inf is
        judged at once: no footer's count makes a deviation without bound a pass."""
        if math.isinf(error) and self.unjudged_excess is None:
            self.unjudged_excess = (size, error, error_tolerance(kind, len(self.ranks)))
        if self.pending_excess is None:
            tolerance = error_tolerance(kind, len(self.ranks))
            if error > tolerance:
                self.pending_excess = (size, error, tolerance)

    def add_rank(self, rank: int, device: RankDevice) -> None:
        """A rank the run's header lists, and where it ran."""
        self.ranks[rank] = device
        if rank == 0:
            self.rank_zero_devices.setdefault((device.host, device.device, device.bus_id), None)

    def end_table(self) -> None:
        """A new table (or the end of input) without a footer for the last one: its errors stand."""
        if self.pending_excess is not None and self.unjudged_excess is None:
            self.unjudged_excess = self.pending_excess
        self.pending_excess = None

    def start_run(self, program: str) -> None:
        self.end_table()
        self.close_run()
        self.runs_started += 1
        self.run_open, self.run_footed, self.run_first_row, self.run_failure = True, False, self.row_count, None
        self.run_program = program
        if program and program not in self.programs:
            self.programs.append(program)

    def note_network(self, name: str) -> None:
        """NCCL's init line naming the network transport it uses ("Using network Socket", "... IB", "... Libfabric"), or
        a connection line's ("Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0": traffic that takes it)."""
        self.networks.setdefault(name, None)

    def note_network_connection(self, name: str) -> None:
        """A connection NCCL made over its network transport `name` (a loopback run's too: P2P and SHM disabled)."""
        self.connections.setdefault(name, None)

    def _network_remarks(self) -> list[str]:
        """Network traffic over NCCL's Socket transport measured TCP, whatever fabric the nodes have: a connection made
        over it, or a run across several hosts whose transport it was. Said, so a bandwidth that passes (or fails) is
        not read as the RDMA fabric's, nor a loopback run as a test of the NIC."""
        hosts = {device.host for device in self.ranks.values()}
        if SOCKET_NETWORK not in self.connections and (SOCKET_NETWORK not in self.networks or len(hosts) < 2):
            return []
        return [f"NCCL's network transport was {SOCKET_NETWORK} (TCP over the pods' interfaces), not RDMA, EFA or GPUDirect: "
                "its traffic over the network measured TCP (the image's NCCL network plugin, NCCL_NET_PLUGIN and the pods' "
                "RDMA devices decide)"]

    def note_failure(self, line: str) -> None:
        """A line saying NCCL (or CUDA) failed, before the current run printed a row: why it may print none."""
        if self.run_failure is None:
            self.run_failure = line
        if self.nccl_failure is None:
            self.nccl_failure = line

    def note_late_failure(self, line: str) -> None:
        """A line saying NCCL (or CUDA) failed after result rows that no summary has closed: why the run may stop
        mid-table (a rank died), named if no summary follows."""
        if self.late_failure is None and self.row_count + self.skipped_count > self.footed:
            self.late_failure = line

    def footer(self) -> None:
        """A summary line ("Out of bounds values", "Avg bus bandwidth"): the rows so far belong to a concluded run."""
        self.footed = self.row_count + self.skipped_count
        self.run_footed = True
        self.late_failure = None

    def close_run(self) -> None:
        """A run ends (another starts, or the input ends): rows after its last summary mean it never concluded;
        so does a started run that printed no row and no summary (it died after its header, or was cut off)."""
        if self.row_count + self.skipped_count > self.footed:
            self.unfooted_runs += 1
            self.unfooted_failure = self.unfooted_failure or self.late_failure
            self.footer()
        elif self.run_open and not self.run_footed:
            self.rowless_runs += 1
            if self.first_rowless is None:
                self.first_rowless = (self.runs_started, self.run_program, self.run_failure)
        self.run_open = False

    def add_out_of_bounds(self, count: int) -> None:
        """The footer: nccl-tests' own count of cells over its tolerance, which decides for its table."""
        self.out_of_bounds = min((self.out_of_bounds or 0) + count, 10**MAX_COUNT_DIGITS)
        self.pending_excess = None

    def result(self) -> NcclResult:
        """The result, or ParseError(NoDataCollected) when no valid row was read."""
        self.end_table()
        self.close_run()
        if not self.by_size:
            skipped = describe_skipped(self.skipped_count, tuple(self.skipped_rows)) if self.skipped_count else ""
            if self.nccl_failure:
                also = f"; {skipped}" if skipped else ""
                raise ParseError(NO_DATA, f"no nccl-tests result rows: NCCL failed: {self.nccl_failure!r}{also}")
            if skipped:  # every row was skipped: no measurement, never a pass
                raise ParseError(NO_DATA, f"no valid nccl-tests result rows: {skipped}")
            raise ParseError(NO_DATA, "no nccl-tests result rows found")
        overflowed = next((size for size, sums in self.by_size.items() if not all(map(math.isfinite, sums.sums))), None)
        if overflowed is not None:
            raise ParseError(NO_DATA, f"no valid nccl-tests result rows: the values at size {overflowed} B {PAST_FLOAT}")
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
            failure=(_corruption(sizes, self.out_of_bounds, self.unjudged_excess, self.skipped_wrong)
                     or _unjoined(self.ranks, self.rank_zero_devices) or _bandwidth_check(self.bandwidth_check)),
            skipped_count=self.skipped_count,
            skipped_rows=tuple(self.skipped_rows),
            incomplete=self._incomplete(),
            remarks=(*self.remarks, *self._network_remarks()),
        )

    def _incomplete(self) -> str | None:
        """Why the output does not show every run finishing: result rows that no summary footer followed, or a
        started run that printed neither rows nor a summary."""
        missing = self.unfooted_runs + self.rowless_runs
        if self.reported_errors is not None:
            return f"nccl-tests reported errors: {self.reported_errors}"
        if not missing:
            return None
        runs = max(self.runs_started, missing)
        which = "the run" if runs == 1 else f"{missing} of {runs} runs"
        reasons = []
        if self.unfooted_runs:
            their = "its" if runs == 1 else "their"
            why = (f"NCCL failed after them: {self.unfooted_failure!r}" if self.unfooted_failure
                   else "output cut off, or the run failed")
            reasons.append(f"no 'Avg bus bandwidth' summary after {their} result rows ({why})")
        if self.first_rowless is not None:
            number, program, failure = self.first_rowless
            more = f" (and {self.rowless_runs - 1} more runs)" if self.rowless_runs > 1 else ""
            why = f": NCCL failed: {failure!r}" if failure else " (output cut off, or the run failed)"
            reasons.append(f"run {number}{f' ({program})' if program else ''}{more} printed no result rows and no "
                           f"summary{why}")
        return f"{which} never concluded: {'; '.join(reasons)}"


def _unjoined(ranks: dict[int, RankDevice], rank_zero: dict[tuple[str, int, str], None]) -> Failure | None:
    """RanksNotJoined: no header listed a rank above 0, yet rank 0 ran on several GPUs. Each process ran nccl-tests alone,
    as an nccl-tests build without MPI does when mpirun starts it (nccl-tests#107, #294): its rows measured one GPU's
    local copies (a broadcast or sendrecv of one rank reads as fast), never a link between GPUs."""
    if len(rank_zero) < 2 or any(rank > 0 for rank in ranks):
        return None
    where = ", ".join(f"{host} device {device}" for host, device, _ in list(rank_zero)[:3])
    more = f" and {len(rank_zero) - 3} more" if len(rank_zero) > 3 else ""
    return Failure(RANKS_NOT_JOINED, f"{len(rank_zero)} processes each ran nccl-tests as its own one-rank run ({where}{more}): "
                                     "nothing was measured between GPUs (an nccl-tests build without MPI, started by mpirun? "
                                     "build it with MPI=1)")


def _bandwidth_check(average: float | None) -> Failure | None:
    """BandwidthCheckFailed: nccl-tests' own check of its average bus bandwidth against NCCL_TESTS_MIN_BW said FAILED
    (its footer's word, or -J's average_bus_bandwidth okay false), whatever thresholds the category has."""
    if average is None:
        return None
    return Failure(BANDWIDTH_CHECK_FAILED, f"nccl-tests' own bandwidth check failed: average bus bandwidth {average:g} GB/s "
                                           "is below 0.9 x the NCCL_TESTS_MIN_BW it was given")


def _corruption(sizes: tuple[SizeAverage, ...], out_of_bounds: int | None, excess: Excess | None,
                skipped_wrong: tuple[float, str] | None = None) -> Failure | None:
    """DataCorruption: wrong elements counted (in a row read, or in one refused), an `error` over tolerance no footer
    judged, or out-of-bounds values."""
    corrupt = [size for size in sizes if size.wrong > 0]
    if corrupt:
        first = corrupt[0]
        more = f" (and {len(corrupt) - 1} more sizes)" if len(corrupt) > 1 else ""
        return Failure(DATA_CORRUPTION, f"{shown_count(first.wrong)} wrong elements at size {first.size} B{more}")
    if skipped_wrong is not None:
        wrong, where = skipped_wrong
        return Failure(DATA_CORRUPTION, f"{shown_count(wrong)} wrong elements in a row left out as unreadable ({where})")
    if excess is not None:
        size, error, tolerance = excess
        judged = "an error without bound" if math.isinf(error) else "the run printed no out-of-bounds footer"
        return Failure(DATA_CORRUPTION, f"max error {error:g} at size {size} B is above the nccl-tests tolerance "
                                        f"{tolerance:g} ({judged})")
    if out_of_bounds:
        worst = max((size for size in sizes if size.max_error is not None), key=lambda s: s.max_error or 0.0,
                    default=None)
        detail = f" (max error {worst.max_error:g} at size {worst.size} B)" if worst and worst.max_error else ""
        return Failure(DATA_CORRUPTION, f"{shown_count(out_of_bounds)} out-of-bounds values reported{detail}")
    return None
