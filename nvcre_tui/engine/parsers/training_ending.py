"""How a training log ends, and what it shows beside the steps: refused step lines, NaN loss, error lines.

A run is whole when its last step line reaches the printed total (within one log interval: Megatron logs
every `log_interval` iterations, so the last iterations may go unlogged) and no error line follows it. With
one step line and no interval printed, the interval is at most that step + 1 (a framework logs the steps that
are multiples of it, counting from 0 or 1): a log whose only step line is 10 of 50 stopped short.
Megatron's own stops (--exit-duration-in-mins, --exit-interval) and NeMo's (Lightning's max_time) end a run
early on purpose: a remark, not a gap. An error line that more steps follow did not stop the process; one after the last step did.
"""

from __future__ import annotations

from nvcre_tui.engine.parsers.base import Failure
from nvcre_tui.engine.parsers.training_lines import ErrorLine, Exit, Step, UnreadableStep
from nvcre_tui.engine.parsers.training_model import SkippedStep, describe_skipped

LOSS_NAN = "LossNaN"
MAX_SKIPPED_NAMED = 3

#: (line number, text, is a bare "Traceback" line: a later exception line says more)
_Seen = tuple[int, str, bool]


class Ending:
    """Fed every step line, error line and stop; one instance per parse."""

    def __init__(self) -> None:
        self.reached: tuple[int, int | None] | None = None  # (step, total) of the last step line within its total
        self.after_step: _Seen | None = None  # the first error line since the last step line
        self.in_segment: _Seen | None = None  # the first error line since the process (re)started
        self.ignoring: set[str] = set()  # the ranks inside Python's "Exception ignored in" report
        self.steps = 0  # step lines seen
        self.exit: Exit | None = None  # the framework's own stop (Megatron's, NeMo's), since the last step line
        self.log_interval: int | None = None  # from Megatron's argument dump
        self.nan = 0
        self.nan_step: int | None = None
        self.first_nan: tuple[int, int] | None = None  # (step, line)
        self.skipped = 0
        self.skipped_steps: list[SkippedStep] = []

    def step(self, event: Step, number: int) -> str | None:
        """Note a step line; returns why it is refused (then it is in no average), or None."""
        if event.nan and event.step != self.nan_step:  # a progress bar redrawn with the same step counts once
            self.nan += event.nan
            self.nan_step, self.first_nan = event.step, self.first_nan or (event.step, number)
        problem = event.problem and f"{event.problem} at step {event.step}"
        if event.total is not None and event.step > event.total:
            problem = problem or f"iteration {event.step}/{event.total} (past its total)"
        else:
            self.reached = (event.step, event.total)
        self.after_step, self.exit = None, None
        self.steps += 1
        self.ignoring.clear()  # a report that did not end on an exception line (KeyboardInterrupt:) ends here
        if problem:
            self._skip(SkippedStep(event.step, problem, f"line {number}"))
        return problem

    def unreadable(self, event: UnreadableStep, number: int) -> None:
        """Note a step line whose step or total is no number: left out and named, the run's progress unknown from it."""
        self._skip(SkippedStep(None, f"{event.text} (no step number)", f"line {number}"))

    def _skip(self, step: SkippedStep) -> None:
        self.skipped += 1
        if len(self.skipped_steps) < MAX_SKIPPED_NAMED:
            self.skipped_steps.append(step)

    def restart(self) -> None:
        """A process (re)started: errors before it belong to the one that ended."""
        self.after_step = self.in_segment = self.exit = None
        self.ignoring.clear()

    def error(self, event: ErrorLine, number: int) -> None:
        if event.kind == "ignored":
            self.ignoring.add(event.source)
            return
        if event.source in self.ignoring:  # that rank's ignored exception's traceback, up to its exception line
            if event.kind == "error":
                self.ignoring.discard(event.source)
            return
        seen = (number, event.text, event.kind == "traceback")
        if self.after_step is None or (self.after_step[2] and not seen[2]):
            self.after_step = seen
        if self.in_segment is None or (self.in_segment[2] and not seen[2]):
            self.in_segment = seen

    def skipped_note(self) -> str:
        return describe_skipped(self.skipped, tuple(self.skipped_steps)) if self.skipped else ""

    def failure(self) -> Failure | None:
        if not self.nan or self.first_nan is None:
            return None
        step, line = self.first_nan
        return Failure(LOSS_NAN, f"NaN loss in {self.nan} iteration{'s' if self.nan != 1 else ''}, first reported "
                                 f"at step {step} (line {line})")

    def _interval(self, interval: int, step: int) -> int | None:
        """The log interval the last step is judged by: the printed one, else the smallest gap between logged steps.
        With one step logged and none printed, the largest interval that logs that step: frameworks log when the
        step (counted from 0 or from 1) is a multiple of it, so it is at most step + 1; a step 0 fits any (None)."""
        if self.log_interval is not None:
            return self.log_interval
        if self.steps > 1:
            return interval
        return step + 1 if step > 0 else None

    def short(self, interval: int) -> bool:
        """Whether the last step line falls short of the total by a log interval or more (not on the framework's own
        limit)."""
        if self.reached is None:
            return False
        step, total = self.reached
        if total is None or self.exit is not None:
            return False
        # One logged step and no interval known: it may be the last one logged (log_every_n_steps 10, max_steps 15:
        # step 9 of 14), unless even the largest interval that logs it would have logged another before the total.
        longest = self._interval(interval, step)
        return longest is not None and total - step >= longest

    def incomplete(self, interval: int) -> str | None:
        """Why the log does not show the run finishing, or None."""
        if self.reached is None:
            return None
        step, total = self.reached
        short = self.short(interval)
        where = f"stopped at step {step} of {total}" if short else f"failed after its last step ({step} of {total or '?'})"
        if short and self.steps == 1 and self.log_interval is None:
            where += f", its only step line, when any log interval that logs step {step} logs another by step {2 * step + 1}"
        if self.after_step is not None:
            return f"{where}: {self.after_step[1]} (line {self.after_step[0]})"
        if not short:
            return None
        earlier = f"; earlier error: {self.in_segment[1]} (line {self.in_segment[0]})" if self.in_segment else ""
        return f"{where}{earlier or ' (output cut off, or the run was killed)'}"

    def remarks(self) -> tuple[str, ...]:
        if self.reached is None:
            return ()
        step, total = self.reached
        if self.exit is not None and total is not None and step < total:
            return (f"stopped at step {step} of {total} on {self.exit.framework}'s own limit ({self.exit.text})",)
        if total is None:
            return ("the log prints no total step count: whether the run finished is not checked",)
        return ()
