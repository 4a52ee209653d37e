"""A finished run's output -> measurements and, when the output itself says the node failed, why.

The one place where the engine calls the parsers, so a real cluster's logs and the simulator's go
through exactly the same code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from nvcre_tui.engine.parsers import IMPLAUSIBLE, NO_DATA, PARSERS, WRONG_FORMAT, ParseError
from nvcre_tui.engine.parsers.measurements import implausible
from nvcre_tui.engine.parsers.nccl_model import describe_skipped


RUN_INCOMPLETE = "RunIncomplete"
#: Why a run that exited 0 convicts no node: its output stopped short, holds no result, is not the tool's output, or
#: reads a value no hardware measures (1e308 GB/s: a misread output, never a pass, no verdict on a node).
#: A workload that says it succeeded yet printed nothing to measure points at its command or options (a step count
#: below the log interval, a wrong image), not at the nodes it ran on: it fails, blaming none.
UNMEASURED_REASONS = frozenset({RUN_INCOMPLETE, NO_DATA, WRONG_FORMAT, IMPLAUSIBLE})


@dataclass(frozen=True)
class MeasureFailure:
    """The output shows a failure: reason word, message, and the node when the output names one."""

    reason: str
    message: str
    node: str | None = None


@dataclass(frozen=True)
class Measured:
    """Threshold metrics read from the output, and a failure if the output shows one."""

    measurements: dict[str, float] = field(default_factory=dict)
    failure: MeasureFailure | None = None
    notes: tuple[str, ...] = ()  # qualifiers of a pass the report shows ("passed, 7 of 8 tests skipped")
    remarks: tuple[str, ...] = ()  # those of the notes that qualify what was measured whatever the verdict (Socket)
    unmeasured: str | None = None  # a whole run that measured nothing (training: warm-up steps only): what, never a pass
    incomplete: str | None = None  # the output stops short of the run's end (cut off, or a run that died): why
    partial: str | None = None  # rows of the output left out of the measurements (nccl-tests rows skipped): which

    def finished_failure(self) -> MeasureFailure | None:
        """What fails a run whose workload exited 0: a failure the output shows, or output that never reached the
        run's end (its measurements would be of part of a run)."""
        if self.failure is None and self.incomplete:
            return MeasureFailure(RUN_INCOMPLETE, f"the workload exited 0 but its output is incomplete: {self.incomplete}")
        return self.failure


def stored_value(value: float) -> float:
    """A measurement at 12 significant digits: averages of printed values carry float noise in the 17th
    (479.81000000000006), which every copy in a Workflow's status would otherwise keep."""
    return float(f"{value:.12g}")


def measure(parser: str, lines: Iterable[str], gpus: int | None = None) -> Measured:
    """Parse with the named parser ("nccl", "dcgm", "training"); "none" measures nothing.

    No result data at all is a failure (NoDataCollected): a run that measured nothing never passes; nor does a
    diagnostic whose results name fewer GPUs than the `gpus` the run was given (the others were not tested).
    """
    parse = PARSERS.get(parser)
    if parse is None:
        return Measured()
    try:
        # Runners give lines without newlines (runners/base.py); parsers read lines as a file gives them,
        # and a last line without one is how they recognise output cut off mid-row.
        given = list(lines)
        result = parse([line if line.endswith("\n") else f"{line}\n" for line in given[:-1]] + given[-1:])
    except ParseError as error:
        return Measured(failure=MeasureFailure(error.reason, f"{parser} output unreadable: {error.message}"))
    failure = getattr(result, "failure", None)
    measured = MeasureFailure(failure.reason, failure.message) if failure else _untested_gpus(getattr(result, "gpus", ()), gpus)
    return Measured(
        # an implausible value is no measurement (its failure names it): never stored, shown, archived or judged
        measurements={name: stored_value(value) for name, value in result.measurements().items() if implausible(name, value) is None},
        failure=measured,
        notes=tuple(result.notes()),
        remarks=tuple(note for note in result.notes() if any(note.endswith(remark) for remark in getattr(result, "remarks", ()))),
        unmeasured=getattr(result, "unmeasured", None) if getattr(result, "warmup_only", False) else None,
        # A run that exited 0 after its last step and printed an error then (teardown noise) is whole; one that
        # stopped short of its total, or nccl-tests rows no summary follows, is not.
        incomplete=getattr(result, "incomplete", None) if getattr(result, "stopped_short", True) else None,
        partial=_skipped(result),
    )


def _skipped(result: object) -> str | None:
    """The rows a parser left out of its measurements ("2 rows skipped: busbw inf at size ..."), or None."""
    count = getattr(result, "skipped_count", 0)
    return describe_skipped(count, tuple(getattr(result, "skipped_rows", ()))) if count else None


def _untested_gpus(tested: Iterable[int], given: int | None) -> MeasureFailure | None:
    """NoDataCollected when results name some GPUs, yet fewer than the run was given (none named: the output ties
    its checks to no GPU, and says nothing either way)."""
    named = sorted(set(tested))
    if not named or given is None or len(named) >= given:
        return None
    return MeasureFailure(NO_DATA, f"the results name {len(named)} GPU{'s' if len(named) != 1 else ''} "
                                   f"({', '.join(map(str, named))}) of the {given} the run was given: the others were not tested")
