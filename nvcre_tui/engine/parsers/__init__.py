"""Result parsers: real tool output (nccl-tests, dcgmi diag, Megatron/NeMo logs) -> measurements and verdicts.

Contract, for every parser and any input text:
- it returns a result, or raises `ParseError` (a ValueError with `.reason` and `.message`); no other
  exception escapes for any content of the input;
- it never invents a number: every value it reports was printed in the input or is computed from
  printed values (averages, maxima, the goodput formula);
- a result exposes `measurements()` (threshold metric name -> value, only those it measured),
  `notes()` (qualifiers of a pass, e.g. "passed, 7 of 8 tests skipped", or input rows left out, named),
  `to_dict()` (JSON-ready) and `failure` (None, or a Failure with a reason and a message).

Reasons: `NoDataCollected` (the input holds no result) and `WrongFormat` (it is not this tool's output).

Imports nothing else from the engine: pure functions of text, so judging, the simulator and the benches share them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from nvcre_tui.engine.parsers.base import NO_DATA, WRONG_FORMAT, Failure, ParseError
from nvcre_tui.engine.parsers.dcgm import DcgmResult, parse_dcgm
from nvcre_tui.engine.parsers.nccl import NcclResult, parse_nccl
from nvcre_tui.engine.parsers.training import TrainingResult, parse_training


class ParseResult(Protocol):
    """What every parser returns."""

    @property
    def failure(self) -> Failure | None: ...

    def measurements(self) -> dict[str, float]: ...

    def notes(self) -> tuple[str, ...]: ...

    def to_dict(self) -> dict[str, Any]: ...


#: kind -> parse function taking lines (or one whole text). Messages name no source: callers prefix it.
PARSERS: dict[str, Callable[..., ParseResult]] = {
    "nccl": parse_nccl,
    "dcgm": parse_dcgm,
    "training": parse_training,
}


__all__ = [
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
