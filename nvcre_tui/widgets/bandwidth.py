"""Bandwidth pictures in plain text: bus bandwidth against message size, and the spread of
busBandwidthGBps over nodes (or groups) with its low outliers named.

The functions build rich Text from plain data (no Textual), so tests read them directly. The widgets only
resolve theme styles and redraw at their width.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT, BUS_BANDWIDTH, shown_unit
from nvcre_tui.widgets.detail import shown_measurement

MAD_TO_SIGMA = 1.4826  # scales the median absolute deviation to a normal standard deviation
OUTLIER_MADS = 3.0
# Below this fraction of the median a value is never an outlier: a tight, healthy fleet has a tiny MAD,
# and 1 GB/s of noise must not be flagged.
MIN_RELATIVE_DROP = 0.05
SERIES_GLYPHS = ("●", "▲", "■", "◆")
MEDIAN_GLYPH = "○"
OUTLIER_GLYPH = "▾"  # a low outlier: flagged, not judged (its Job's verdict is its own ✓ or ✗)
Y_LABEL_WIDTH = 7


@dataclass(frozen=True)
class Series:
    """One curve: GB/s per message size in bytes; `role` picks its style (selected, other, median)."""

    name: str
    points: Mapping[int, float]
    glyph: str
    role: str = "other"


@dataclass(frozen=True)
class Outlier:
    """A low value and why it counts as one; `shown`: the value as every screen shows it (detail.shown_measurement)."""

    label: str
    value: float
    reason: str
    shown: str


@dataclass(frozen=True)
class Spread:
    """Median, scaled MAD and the cutoff below which a value is an outlier."""

    median: float
    mad: float
    cutoff: float


def spread(values: Sequence[float]) -> Spread:
    """Median and median absolute deviation (×1.4826); cutoff = median − max(3 MAD, 5% of the median)."""
    median = statistics.median(values)
    mad = MAD_TO_SIGMA * statistics.median(abs(v - median) for v in values)
    return Spread(median, mad, median - max(OUTLIER_MADS * mad, MIN_RELATIVE_DROP * median))


def find_outliers(values: Mapping[str, float], meets: Callable[[float], bool] | None = None,
                  threshold_text: str = "", shown: Mapping[str, str] | None = None) -> list[Outlier]:
    """Values below the spread's cutoff or failing `meets` (the threshold), lowest first. `shown`: each label's value
    on its side of the threshold (detail.shown_measurement); a label it lacks is shown as no threshold judged it."""
    if not values:
        return []
    cut = spread(list(values.values()))
    found = []
    for label, value in values.items():
        reasons = []
        if meets is not None and not meets(value):
            reasons.append(f"fails {threshold_text}".strip())
        if value < cut.cutoff:
            reasons.append(f"{(cut.median - value) / cut.median:.0%} below the median {cut.median:.1f}")
        if reasons:
            said = (shown or {}).get(label) or shown_measurement(BUS_BANDWIDTH, value)
            found.append(Outlier(label, value, "; ".join(reasons), said))
    return sorted(found, key=lambda o: (o.value, o.label))


def size_label(size: int) -> str:
    """Bytes in binary units: 8B, 1K, 16M, 2G."""
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size}B"


def _nice_ceiling(value: float) -> float:
    """1, 2, 2.5 or 5 times a power of ten, at least `value` (axis tops people read at a glance)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def plot_text(series: Sequence[Series], styles: Mapping[str, Style], width: int, height: int = 11) -> Text:
    """GB/s (y) against log2 message size (x), one glyph per series; later series draw over earlier ones."""
    buckets = sorted({round(math.log2(size)) for s in series for size in s.points if size > 0})
    if not buckets:
        return Text("no nccl-tests rows to plot yet", style="italic")
    first, last = buckets[0], buckets[-1]
    column = max(1, min(3, (width - Y_LABEL_WIDTH - 1) // (last - first + 1)))
    top = _nice_ceiling(max((v for s in series for v in s.points.values()), default=0.0))
    grid: list[list[tuple[str, Style | None]]] = [[(" ", None)] * ((last - first + 1) * column) for _ in range(height)]
    for item in series:
        for size, value in item.points.items():
            if size > 0:
                x = (round(math.log2(size)) - first) * column + column // 2
                y = height - 1 - round(max(0.0, min(value, top)) / top * (height - 1))
                grid[y][x] = (item.glyph, styles.get(item.role))
    text = Text(no_wrap=True)
    text.append(f"{BANDWIDTH_UNIT:>{Y_LABEL_WIDTH - 1}}\n", style="bold")
    for y, row in enumerate(grid):
        steps_up = height - 1 - y
        value = top * steps_up / (height - 1)
        text.append(f"{value:>{Y_LABEL_WIDTH - 2}.0f} ┤" if steps_up % 2 == 0 else " " * (Y_LABEL_WIDTH - 1) + "│")
        for glyph, style in row:
            text.append(glyph, style)
        text.append("\n")
    text.append(" " * (Y_LABEL_WIDTH - 1) + "└" + "─" * len(grid[0]) + "\n")
    text.append(_x_labels(first, last, column) + "\n")
    for index, item in enumerate(series):  # the legend uses the plot's styles too; the glyph tells them apart
        text.append("   " if index else " " * Y_LABEL_WIDTH)
        text.append(item.glyph, styles.get(item.role))
        text.append(f" {item.name}")
    return text


def _x_labels(first: int, last: int, column: int) -> str:
    """Size labels under the axis at both ends and every 2^10, each centred on its bucket; crowded ones are left out."""
    line = [" "] * (Y_LABEL_WIDTH + (last - first + 1) * column + 6)
    free = 0
    for bucket in sorted({first, last, *range(first - first % 10 + 10, last, 10)}):
        label = size_label(1 << bucket)
        ideal = Y_LABEL_WIDTH + (bucket - first) * column + column // 2 - len(label) // 2
        x = max(free, ideal)
        if x - ideal <= 1 and x + len(label) <= len(line):
            line[x : x + len(label)] = label
            free = x + len(label) + 1
    return "".join(line).rstrip()


def histogram_text(values: Mapping[str, float], outliers: Sequence[Outlier], styles: Mapping[str, Style],
                   bins: int = 10, bar_width: int = 40) -> Text:
    """Rows of GB/s bins (lowest first): a bar and a count each; a bin holding an outlier names it."""
    if not values:
        return Text(f"no {BUS_BANDWIDTH} measurements yet", style="italic")
    low, high = min(values.values()), max(values.values())
    step = (high - low) / bins if high > low else 1.0
    counts = [0] * bins
    flagged: dict[int, list[Outlier]] = {}
    marked = {o.label: o for o in outliers}
    for label, value in values.items():
        index = min(bins - 1, int((value - low) / step)) if high > low else 0
        counts[index] += 1
        if label in marked:
            flagged.setdefault(index, []).append(marked[label])
    most = max(counts)
    text = Text(no_wrap=True)
    for index in range(bins if high > low else 1):
        start = low + index * step
        text.append(f"{start:8.1f}–{start + step:<8.1f}│")
        bar = "█" * max(1 if counts[index] else 0, round(counts[index] / most * bar_width))
        text.append(bar, styles.get("outlier" if index in flagged else "bar"))
        text.append(f" {counts[index]}" if counts[index] else "")
        for outlier in sorted(flagged.get(index, []), key=lambda o: o.value):
            text.append(f"  {OUTLIER_GLYPH} {outlier.label} {outlier.shown}", styles.get("outlier"))
        text.append("\n")
    text.append(" " * 17 + f"{shown_unit(BUS_BANDWIDTH)} ({BUS_BANDWIDTH})", style="italic")
    return text


class BandwidthPlot(Widget):
    """`plot_text` at the widget's width; `series` replaces what is drawn."""

    COMPONENT_CLASSES = {"bandwidth--selected", "bandwidth--other", "bandwidth--median"}
    DEFAULT_CSS = """
    BandwidthPlot { height: auto; }
    BandwidthPlot > .bandwidth--selected { color: $accent; text-style: bold; }
    BandwidthPlot > .bandwidth--other { color: $secondary; }
    BandwidthPlot > .bandwidth--median { color: $text-muted; }
    """

    def __init__(self, *, plot_height: int = 11, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.plot_height = plot_height
        self._series: list[Series] = []

    @property
    def series(self) -> list[Series]:
        return list(self._series)

    @series.setter
    def series(self, series: Sequence[Series]) -> None:
        self._series = list(series)
        self.refresh(layout=True)

    def render(self) -> Text:
        styles = {role: self.get_component_rich_style(f"bandwidth--{role}") for role in ("selected", "other", "median")}
        return plot_text(self._series, styles, self.size.width or 80, self.plot_height)


class BandwidthHistogram(Widget):
    """`histogram_text` of values with their outliers."""

    COMPONENT_CLASSES = {"bandwidth--bar", "bandwidth--outlier"}
    DEFAULT_CSS = """
    BandwidthHistogram { height: auto; }
    BandwidthHistogram > .bandwidth--bar { color: $verdict-passed; }
    BandwidthHistogram > .bandwidth--outlier { color: $verdict-failed; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._values: dict[str, float] = {}
        self._outliers: list[Outlier] = []

    def set_values(self, values: Mapping[str, float], outliers: Sequence[Outlier]) -> None:
        """Replace the values (label -> GB/s) and the outliers to mark."""
        self._values, self._outliers = dict(values), list(outliers)
        self.refresh(layout=True)

    def render(self) -> Text:
        styles = {role: self.get_component_rich_style(f"bandwidth--{role}") for role in ("bar", "outlier")}
        return histogram_text(self._values, self._outliers, styles, bar_width=max(10, min(40, self.size.width - 50)))
