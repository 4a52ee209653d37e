"""How each nccl-tests generation prints its table: layouts, headers, number cells.

Widths and number rules follow nccl-tests itself (`getFloatStr` in v2.13+, fixed `%6.2f` cells and
an `error` column with `%5.0e` values in older builds), so the simulated logs look like real ones.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NcclLayout:
    """One table generation."""

    name: str
    version_line: bool  # "# nccl-tests version ..." and "Collective test starting/concluded" lines
    root_column: bool
    wrong_label: str  # "#wrong" (counts, %6g) or "error" (max error, %5.0e)
    rank_group: bool  # "Group g" in the "Using devices" lines
    pci_bus_ids: bool  # [0000:18:00] rather than [0x18]


LAYOUTS: dict[str, NcclLayout] = {
    # nccl-tests 2.13 and later: root column, #wrong counts, getFloatStr cells.
    "modern": NcclLayout("modern", True, True, "#wrong", True, True),
    # roughly 2.0 - 2.12: root column and an `error` column of maxima printed as 0e+00.
    "root-error": NcclLayout("root-error", False, True, "error", True, True),
    # 2018-2019 per-test headers: no root column, `error` column, no Group in rank lines.
    "legacy": NcclLayout("legacy", False, False, "error", False, False),
}

_BUS_IDS = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")


def float_cell(value: float, width: int) -> str:
    """nccl-tests getFloatStr: 2, 1 or 0 decimals as the width allows, then exponent notation."""
    power, bound = 0, 1
    while value >= bound:
        power += 1
        bound *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    if width >= 7:
        return f"{value:{width}.1e}"
    return f"{value:{width}.0e}"


def legacy_time_cell(value: float) -> str:
    """Older builds: `%7.0f` from 10 ms, `%7.1f` from 100 µs, else `%7.2f`."""
    if value >= 10000.0:
        return f"{value:7.0f}"
    if value >= 100.0:
        return f"{value:7.1f}"
    return f"{value:7.2f}"


def half_cells(layout: NcclLayout, time_us: float, algbw: float, busbw: float, wrong: int | None) -> str:
    """One half of a data row, leading separator included."""
    if layout.wrong_label == "#wrong":
        wrong_cell = "   N/A" if wrong is None else f"{float(wrong):6g}"
        return f"  {float_cell(time_us, 7)}  {float_cell(algbw, 6)}  {float_cell(busbw, 6)}  {wrong_cell}"
    wrong_cell = f"{float(wrong or 0):5.0e}"
    return f"  {legacy_time_cell(time_us)}  {algbw:6.2f}  {busbw:6.2f}  {wrong_cell}"


def row_prefix(layout: NcclLayout, size: int, count: int, dtype: str, redop: str | None, root: int) -> str:
    """size, count, type, [redop], [root] cells."""
    text = f"{size:12d}  {count:12d}  {dtype:>8s}"
    if redop is not None or layout.root_column:
        text += f"  {redop or 'none':>6s}"
    if layout.root_column:
        text += f"  {root:6d}"
    return text


def header_lines(layout: NcclLayout, with_redop: bool) -> list[str]:
    """The three header lines (over-header, names, units) without the leading '#'."""
    prefix_names = ["size", "count", "type"] + (["redop"] if with_redop or layout.root_column else [])
    prefix_names += ["root"] if layout.root_column else []
    widths = [10, 12, 8, 6, 6][: len(prefix_names)]
    wrong_width = 6 if layout.wrong_label == "#wrong" else 5
    half = [("time", 7), ("algbw", 6), ("busbw", 6), (layout.wrong_label, wrong_width)]
    units = [("(us)", 7), ("(GB/s)", 6), ("(GB/s)", 6), ("", wrong_width)]

    def line(prefix: list[str], cells: list[tuple[str, int]]) -> str:
        parts = [f"{name:>{width}s}" for name, width in zip(prefix, widths)]
        parts += [f"{name:>{width}s}" for name, width in cells + cells]
        return " " + "  ".join(parts) + " "

    blank = " " + "  ".join(" " * width for width in widths)
    over = blank + "           out-of-place                       in-place          "
    unit_prefix = ["(B)", "(elements)"] + [""] * (len(prefix_names) - 2)
    return [over, line(prefix_names, half), line(unit_prefix, units)]


def rank_line(layout: NcclLayout, rank: int, pid: int, host: str, device: int, gpu_name: str) -> str:
    """One "Using devices" line, without the leading '#'."""
    bus = _BUS_IDS[device % len(_BUS_IDS)]
    bus_id = f"0000:{bus}:00" if layout.pci_bus_ids else f"0x{bus}"
    group = f"Group {0:2d} " if layout.rank_group else ""
    return f"  Rank {rank:2d} {group}Pid {pid:6d} on {host:>10s} device {device:2d} [{bus_id}] {gpu_name}"
