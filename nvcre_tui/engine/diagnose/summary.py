"""What the report and the console say about a diagnose run: per-node verdict lines and thresholds out of reach."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from nvcre_tui.engine.parsers.measurements import shown_unit

# A lower bound ("value >= 900", "value > 900") or an upper bound ("value <= 5"); other expressions are not judged.
_BOUND = re.compile(r"^\s*value\s*(>=|>|<=|<)\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$")
FAR = 0.10  # "far": the best measured value misses the threshold by more than this share of it


def out_of_reach(metric: str, expression: str | None, values: Sequence[float], every_test_failed: bool) -> str | None:
    """When every test failed and even the best measured value is far from the threshold, say so: the threshold is
    wrong for this fleet, not the nodes."""
    shown = (expression or "").strip()
    match = _BOUND.match(shown)
    if not match or not values or not every_test_failed:
        return None
    op, limit = match.group(1), float(match.group(2))
    unit = shown_unit(metric)
    if op.startswith(">"):
        best = max(values)
        if best < limit * (1 - FAR):
            return f"threshold {shown} is above anything measured on this fleet: best {best:.2f} {unit}".rstrip()
    else:
        best = min(values)
        if best > limit * (1 + FAR):
            return f"threshold {shown} is below anything measured on this fleet: best {best:.2f} {unit}".rstrip()
    return None


def verdict_rows(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every node that is not plainly healthy, with its verdict and the tests that decided it (readable state)."""
    verdict_of = {n: v for key, v in (("faultyNodes", "faulty"), ("intermittentNodes", "intermittent"),
                                      ("inconclusiveNodes", "inconclusive"), ("suspectNodes", "suspect")) for n in state.get(key) or []}
    rows = []
    for node, verdict in sorted(verdict_of.items()):
        tests = [t for t in state.get("tests") or [] if node in t.get("nodes", [])]
        failed = [t for t in tests if t.get("passed") is False]
        values = [t["value"] for t in tests if t.get("value") is not None]
        rows.append({"node": node, "verdict": verdict, "failed": len(failed), "tests": len(tests),
                     "failedTests": [t["group"] for t in failed], "values": values})
    return rows


def verdict_line(row: Mapping[str, Any]) -> str:
    """One line: node, verdict, its record."""
    values = f"; measured {', '.join(f'{v:g}' for v in row['values'])}" if row["values"] else ""
    failed = f": {', '.join(row['failedTests'][:6])}{' ...' if len(row['failedTests']) > 6 else ''}" if row["failedTests"] else ""
    return f"{row['node']}  {row['verdict']}, failed {row['failed']} of {row['tests']} tests{failed}{values}"
