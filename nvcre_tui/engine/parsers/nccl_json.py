"""nccl-tests `-J <file>` JSON output: results[] with out_of_place / in_place objects.

An entry whose time or bandwidth is a negative or non-finite number (Python reads NaN and Infinity), or
that has both halves but a field that cannot be read (its size included), is skipped and reported, like a
table row, and so is an entry that is no object (null); an entry that is no result (trace replay: no
out-of-place half) is not. `errors` holds NCCL's last error text (ncclGetLastError: the last WARN NCCL printed, ""
when none, so a clean run writes [""]): in a run that stopped before its summary it says why (the run is incomplete);
after the summary (the run concluded) it is a note, never a failure. An `out_of_bounds` count that is missing or
unreadable is a note (nccl-tests' own data check was not read).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import PurePosixPath
from typing import Any

from nvcre_tui.engine.parsers.base import WRONG_FORMAT, ParseError
from nvcre_tui.engine.parsers.json_text import load_json
from nvcre_tui.engine.parsers.nccl_model import HalfValues, NcclAggregator, RankDevice, RowValues


def _number(value: Any) -> float | None:
    """A finite non-negative JSON number (bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any double (JSON allows it): no finite measurement
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _magnitude(value: Any) -> float | None:
    """A non-negative JSON number for a data check (wrong elements), inf included: Infinity, 1e400 or an integer
    beyond any double counts wrong elements without end, never a field to skip."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return math.inf if value > 0 else None
    return number if number >= 0 else None  # nan fails the comparison: unreadable


# What nccl-tests prints for an integer in text ("    -1"): int() alone would also take "+4", "1_000" and
# non-ASCII digits, and raise on "--5".
_PADDED_INTEGER = re.compile(r"\s*-?\d{1,20}\s*", re.ASCII)


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _PADDED_INTEGER.fullmatch(value):
        return int(value)  # nccl-tests writes root as the padded text "    -1"
    return None


_TIME_KEYS, _ALGBW_KEYS, _BUSBW_KEYS = ("time", "cpu_time"), ("alg_bw", "algbw"), ("bus_bw", "busbw")


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first of `keys` present (None when none is)."""
    return next((data[key] for key in keys if key in data), None)


def _half(data: Any) -> HalfValues | None:
    if not isinstance(data, dict):
        return None
    time_us = _number(_first(data, _TIME_KEYS))
    algbw = _number(_first(data, _ALGBW_KEYS))
    busbw = _number(_first(data, _BUSBW_KEYS))
    if time_us is None or algbw is None or busbw is None:
        return None
    raw_wrong = data.get("nwrong", data.get("wrong"))
    wrong = None if raw_wrong is None else _magnitude(raw_wrong)
    if raw_wrong is not None and wrong is None:
        return None
    return time_us, algbw, busbw, wrong, None


def _row(data: Any) -> RowValues | None:
    if not isinstance(data, dict):
        return None
    size, count = _integer(data.get("size")), _integer(data.get("count"))
    kind, redop = data.get("type"), data.get("redop", "none")
    if size is None or count is None or size < 0 or count < 0:
        return None
    if not isinstance(kind, str) or not isinstance(redop, str):
        return None
    root = _integer(data["root"]) if "root" in data else None
    out_of_place, in_place = _half(data.get("out_of_place")), _half(data.get("in_place"))
    if out_of_place is None or in_place is None:
        return None  # trace-replay rows have no out-of-place half: nothing comparable to measure
    return size, count, kind, redop, root, out_of_place, in_place


def _shown(value: int | float) -> str:
    """A JSON number as a note names it, cut short if it is absurdly long."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 24 else f"{text[:21]}..."


def _invalid_cells(data: dict[str, Any]) -> tuple[int, str] | None:
    """(size, "busbw -1") of an entry refused only because time or bandwidth numbers are negative or not
    finite; None for anything else."""
    named: list[str] = []
    repaired = dict(data)
    for half, key in (("", "out_of_place"), ("in-place ", "in_place")):
        values = data.get(key)
        if not isinstance(values, dict):
            return None
        repaired[key] = values = dict(values)
        for name, keys in (("time", _TIME_KEYS), ("algbw", _ALGBW_KEYS), ("busbw", _BUSBW_KEYS)):
            present = next((k for k in keys if k in values), "")
            value = values.get(present)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and _number(value) is None:
                named.append(f"{half}{name} {_shown(value)}")
                values[present] = 0
    row = _row(repaired) if named else None
    return None if row is None else (row[0], ", ".join(named))


def _described(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _shown(value)
    text = json.dumps(value)
    return text if len(text) <= 24 else f"{text[:21]}..."


def _half_problem(values: Any) -> str | None:
    """What makes a half unreadable ("time missing", 'busbw "fast"'); None for a readable half."""
    if not isinstance(values, dict):
        return f"{_described(values)} (no object)"
    for name, keys in (("time", _TIME_KEYS), ("algbw", _ALGBW_KEYS), ("busbw", _BUSBW_KEYS)):
        present = next((key for key in keys if key in values), None)
        if present is None:
            return f"{name} missing"
        if _number(values[present]) is None:
            return f"{name} {_described(values[present])}"
    wrong = values.get("nwrong", values.get("wrong"))
    return None if wrong is None or _magnitude(wrong) is not None else f"#wrong {_described(wrong)}"


def _refusal(data: Any) -> tuple[int | None, str] | None:
    """(size, 'count "1e3"') of a result entry refused for any other reason than its numbers' values: one with a
    readable size and both halves (a trace-replay entry has no out-of-place half, and is no result)."""
    if not isinstance(data, dict) or "out_of_place" not in data or "in_place" not in data:
        return None
    size, count = _integer(data.get("size")), _integer(data.get("count"))
    if size is None or size < 0:
        return None, f"size {_described(data.get('size'))}"
    if count is None or count < 0:
        return size, f"count {_described(data.get('count'))}"
    for key in ("type", "redop"):
        if not isinstance(data.get(key, "none"), str):
            return size, f"{key} {_described(data.get(key))}"
    for half, key in (("", "out_of_place"), ("in-place ", "in_place")):
        if (problem := _half_problem(data[key])) is not None:
            return size, f"{half}{problem}"
    return None


def _devices(config: Any, aggregator: NcclAggregator) -> None:
    devices = config.get("devices") if isinstance(config, dict) else None
    for device in devices if isinstance(devices, list) else []:
        if not isinstance(device, dict):
            continue
        rank, index = _integer(device.get("rank")), _integer(device.get("device"))
        host, bus, name = device.get("hostname"), device.get("device_hex", ""), device.get("device_info", "")
        if rank is not None and index is not None and isinstance(host, str):
            aggregator.add_rank(rank, RankDevice(host, index, str(bus), str(name)))


def read_json(text: str, aggregator: NcclAggregator) -> None:
    """Fold one -J document into `aggregator`; ParseError(WrongFormat) if it is not one."""
    document = load_json(text)
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise ParseError(WRONG_FORMAT, "JSON but not nccl-tests -J output (no results list)")
    args = document.get("args")
    program = PurePosixPath(args[0]).name if isinstance(args, list) and args and isinstance(args[0], str) else ""
    aggregator.start_run(program)
    _devices(document.get("config"), aggregator)
    for index, entry in enumerate(document["results"]):
        row = _row(entry)
        if row is not None:
            aggregator.add(*row)
        elif not isinstance(entry, dict):
            aggregator.skip(None, f"entry {_described(entry)}: no result object", f"results[{index}]")
        elif (invalid := _invalid_cells(entry) or _refusal(entry)) is not None:
            aggregator.skip(invalid[0], invalid[1], f"results[{index}]", _wrong(entry))
    average = document.get("average_bus_bandwidth")
    bandwidth = _number(average.get("bandwidth")) if isinstance(average, dict) else None
    if concluded := isinstance(average, dict) and bandwidth is not None:
        aggregator.avg_bus_bandwidth = bandwidth
        aggregator.runs_concluded += 1
        aggregator.footer()
        # nccl-tests' own NCCL_TESTS_MIN_BW check: its jsonBool writes the string "false" ("unchecked" without one)
        if average.get("okay") in ("false", False):
            aggregator.bandwidth_check = aggregator.avg_bus_bandwidth
    _out_of_bounds(document.get("out_of_bounds"), aggregator)
    errors = _errors(document.get("errors"))
    if errors and concluded:  # a warning NCCL printed on the way (nccl-tests writes its last one whatever the outcome)
        aggregator.remarks.append(f"NCCL's last warning (nccl-tests' errors), in a run that concluded: {errors}")
    elif errors:
        aggregator.reported_errors = errors


def _wrong(entry: dict[str, Any]) -> float | None:
    """The wrong elements a refused entry's readable `nwrong` fields count (None: none)."""
    halves = [entry.get(key) for key in ("out_of_place", "in_place")]
    counts = [_magnitude(half.get("nwrong", half.get("wrong"))) for half in halves if isinstance(half, dict)]
    return sum(count for count in counts if count is not None) or None


def _out_of_bounds(bounds: Any, aggregator: NcclAggregator) -> None:
    """nccl-tests' own count of values over its tolerance; a missing or unreadable one is said, never taken for 0."""
    count = _integer(bounds.get("count")) if isinstance(bounds, dict) else None
    if count is not None and count >= 0:
        aggregator.add_out_of_bounds(count)
        aggregator.footer()
    elif bounds is None:
        aggregator.remarks.append("no out_of_bounds count: nccl-tests' own data check not read")
    else:
        shown = _described(bounds.get("count")) if isinstance(bounds, dict) else _described(bounds)
        aggregator.remarks.append(f"out_of_bounds count {shown} unreadable: nccl-tests' own data check not read")


def _errors(errors: Any) -> str | None:
    """What a non-empty `errors` (a list, or a lone value) says, shown short; None for none (an empty text is none:
    nccl-tests writes NCCL's last error text even when it is "")."""
    items = errors if isinstance(errors, list) else [errors]
    items = [item for item in items if item not in (None, "", {})]
    if not items:
        return None
    first = items[0] if isinstance(items[0], str) else json.dumps(items[0])
    more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
    return f"{first[:200]!r}{more}"
