"""A trend in one line of block characters (the CLI's tables and the console's node screen)."""

from __future__ import annotations

from collections.abc import Sequence

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int | None = None) -> str:
    """One block per value (the last `width` values), scaled between the series' min and max; a flat
    series is a row of middle blocks."""
    shown = list(values)[-width:] if width else list(values)
    if not shown:
        return ""
    low, high = min(shown), max(shown)
    if high - low < 1e-9:
        return BLOCKS[3] * len(shown)
    return "".join(BLOCKS[round((v - low) / (high - low) * (len(BLOCKS) - 1))] for v in shown)
