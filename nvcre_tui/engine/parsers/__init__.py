"""Result parsers: real tool output (nccl-tests, dcgmi diag, Megatron/NeMo logs) -> measurements and verdicts.

Contract, for every parser and any input text:
- it returns a result, or raises `ParseError` (a ValueError with `.reason` and `.message`); no other
  exception escapes for any content of the input;
- it never invents a number: every value it reports was printed in the input or is computed from
  printed values (averages, maxima, the goodput formula);
- a result exposes `measurements()` (threshold metric name -> value, only those it measured),
  `notes()` (qualifiers of a pass, e.g. "passed, 7 of 8 tests skipped", or input rows left out, named),
  `to_dict()` (JSON-ready) and `failure` (None, or a Failure with a reason and a message).

Reasons: `NoDataCollected` (the input holds no result) and `WrongFormat` (it is not this tool's output). Through
PARSERS, a result whose measurement is implausible (measurements.METRICS' bounds: 1e308 GB/s) has the failure
`ImplausibleMeasurement` naming the value and the bound, where it has none of its own.

Imports nothing else from the engine: pure functions of text, so judging, the simulator and the benches share them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Protocol, cast

from nvcre_tui.engine.parsers.base import IMPLAUSIBLE, NO_DATA, WRONG_FORMAT, Failure, ParseError
from nvcre_tui.engine.parsers.dcgm import DcgmResult, parse_dcgm
from nvcre_tui.engine.parsers.measurements import implausible
from nvcre_tui.engine.parsers.nccl import NcclResult, parse_nccl
from nvcre_tui.engine.parsers.training import TrainingResult, parse_training


class ParseResult(Protocol):
    """What every parser returns."""

    @property
    def failure(self) -> Failure | None: ...

    def measurements(self) -> dict[str, float]: ...

    def notes(self) -> tuple[str, ...]: ...

    def to_dict(self) -> dict[str, Any]: ...


def plausible(result: ParseResult) -> ParseResult:
    """`result`, failed ImplausibleMeasurement where a measurement of it is outside its metric's bound (a value no
    hardware measures is a misread output, never a pass) and it shows no failure of its own (which stands)."""
    if result.failure is not None:
        return result
    said = [why for key, value in sorted(result.measurements().items()) if (why := implausible(key, value)) is not None]
    if not said:
        return result
    return cast(ParseResult, dataclasses.replace(cast(Any, result), failure=Failure(IMPLAUSIBLE, "; ".join(said))))


def _checked(parse: Callable[..., ParseResult]) -> Callable[..., ParseResult]:
    """`parse`, its result checked for plausibility (plausible)."""
    @functools.wraps(parse)
    def checked(*args: Any, **options: Any) -> ParseResult:
        return plausible(parse(*args, **options))

    return checked


#: kind -> parse function taking lines (or one whole text), its result checked (plausible). Messages name no source:
#: callers prefix it.
PARSERS: dict[str, Callable[..., ParseResult]] = {
    "nccl": _checked(parse_nccl),
    "dcgm": _checked(parse_dcgm),
    "training": _checked(parse_training),
}


__all__ = [
    "IMPLAUSIBLE",
    "NO_DATA",
    "PARSERS",
    "WRONG_FORMAT",
    "DcgmResult",
    "Failure",
    "NcclResult",
    "ParseError",
    "ParseResult",
    "TrainingResult",
    "parse_dcgm",
    "parse_nccl",
    "parse_training",
]
