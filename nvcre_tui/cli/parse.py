"""`nvcre parse nccl|dcgm|training FILE|-`: read a tool's output the way the engine does and show what it yields.

Exit codes: 0 parsed, 1 parsed and the result is a failure (data corruption, failed diagnostic), the
output does not show the whole run (cut off, crashed, stopped early), or it measures nothing (a training log of
warm-up steps only), 2 unreadable, empty or wrong-kind input (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import io
import os
import stat
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from nvcre_tui.cli.kubeflags import add_kube_arguments
from nvcre_tui.cli.output import print_table
from nvcre_tui.cli.stdout import verdict_output
from nvcre_tui.engine.api.serialize import to_json
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs import MAX_LOG_LINE_CHARS, MAX_WHOLE_OUTPUT_BYTES, TEXT_PROBE_CHARS
from nvcre_tui.engine.inputs.read import TERMINAL_ADVICE, open_binary, stdin_is_terminal
from nvcre_tui.engine.judging.measure import RUN_INCOMPLETE, stored_value
from nvcre_tui.engine.parsers import PARSERS, DcgmResult, NcclResult, ParseError, ParseResult, TrainingResult
from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT

EXIT_OK, EXIT_FAILED = 0, 1
STDIN = "-"
# The `runs` of an nccl-tests output without run markers: how many runs it holds is not said, never 0 of 0
NO_RUN_MARKERS = "not marked: no '# Collective test starting' line (older nccl-tests builds print none)"
# From here a value is written as %g: its fixed-point digits past a float's 15 or so are noise, and 1e+308 made a
# table thousands of columns wide (no measurement comes near it: parsers.measurements bounds them far below).
HUGE = 1e15


def register(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `parse` command."""
    parser = groups.add_parser(
        "parse",
        help="parse nccl-tests, dcgmi diag or training output into measurements",
        description="Parse real tool output with the engine's parsers: nccl-tests stdout or -J JSON, "
        "`dcgmi diag` JSON or text, Megatron-LM / NeMo training logs. Exit 1 when the result is a failure, "
        "the output does not show the whole run, or it measures nothing (a training log of warm-up steps only).",
    )
    parser.add_argument("kind", choices=tuple(PARSERS), help="which tool produced the output")
    parser.add_argument("file", metavar="FILE", help="the output to read, or - for standard input")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table", help="table (default) or JSON")
    add_kube_arguments(parser, namespace_help="accepted for symmetry; parsing reads a file, never a cluster")
    parser.set_defaults(func=run_parse)


class _Lines:
    """Iterates a text stream, noting whether any non-blank line went by and turning read errors into InputError."""

    def __init__(self, stream: TextIO, label: str, limit: int | None = None) -> None:
        self.stream, self.label, self.content, self.limit = stream, label, False, limit

    def __iter__(self) -> Iterator[str]:
        readline, number, total = self.stream.readline, 0, 0
        try:
            while line := readline(MAX_LOG_LINE_CHARS + 1):
                number += 1
                total += len(line)
                if self.limit is not None and total > self.limit:  # a parser that reads its input whole
                    raise InputError(f"{self.label}: more than {self.limit // 2**20} Mi characters by line {number}; "
                                     "not one dcgmi run's output")
                if len(line) > MAX_LOG_LINE_CHARS:  # e.g. /dev/zero or a binary file: refuse at once
                    raise InputError(f"{self.label}: line {number} is longer than {MAX_LOG_LINE_CHARS // 2**20} MiB; "
                                     "not a tool's text output")
                if total - len(line) < TEXT_PROBE_CHARS and "\0" in line[:TEXT_PROBE_CHARS - (total - len(line))]:
                    # /dev/urandom: short lines, never an end; streamed through, it was read forever
                    raise _binary(self.label, number)
                self.content = self.content or bool(line.strip())
                yield line
        except OSError as error:
            raise InputError(f"{self.label}: cannot read: {error.strerror or error}") from None
        except ValueError:  # a closed stream
            raise InputError(f"{self.label}: cannot read: the stream is closed") from None


def _open(path: str) -> TextIO:
    """The input as text. Undecodable bytes become U+FFFD (a stray byte in a pod log must not hide its
    results); only "\n" ends a line, so progress-bar carriage returns stay inside theirs."""
    if path == STDIN:
        if sys.stdin is None or sys.stdin.closed:
            raise InputError("stdin: standard input is closed; pass a file instead of -")
        if stdin_is_terminal():
            raise InputError(f"stdin: {TERMINAL_ADVICE}")
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # already text (a test's StringIO)
            return sys.stdin
        return io.TextIOWrapper(buffer, encoding="utf-8", errors="replace", newline="\n")
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace", newline="\n")


def read_result(kind: str, path: str) -> ParseResult:
    """Parse the file (or stdin for "-") with the `kind` parser; every problem becomes an InputError."""
    label = "stdin" if path == STDIN else path
    # nccl and training output is streamed, any length; dcgmi's is read whole, so an endless stream would fill memory.
    limit = MAX_WHOLE_OUTPUT_BYTES if kind == "dcgm" else None
    stream = _open(path)
    try:
        if _regular_file(stream):
            # A file is checked for size and content first, then handed to the parser as it is: a text stream
            # is the parsers' fast path (no per-line wrapper).
            size = os.fstat(stream.fileno()).st_size
            if limit is not None and size > limit:
                raise InputError(f"{label}: {size // 2**20} MiB, more than the {limit // 2**20} MiB of one dcgmi run's output")
            if not _has_content(stream, label):
                raise InputError(f"{label}: empty input")
            _check_line_lengths(stream, label)
            stream.seek(0)
            source: TextIO | _Lines = stream
        else:
            source = _Lines(stream, label, limit)
        try:
            return PARSERS[kind](source)
        except ParseError as error:
            empty = isinstance(source, _Lines) and not source.content
            raise InputError(f"{label}: {'empty input' if empty else error.message}") from None
        except OSError as error:
            raise InputError(f"{label}: cannot read: {error.strerror or error}") from None
    finally:
        if path != STDIN:
            stream.close()
        elif stream is not sys.stdin and isinstance(stream, io.TextIOWrapper):
            stream.detach()  # the wrapper must not close the process's stdin when collected


def _regular_file(stream: TextIO) -> bool:
    """A regular file (not a device such as /dev/zero, a pipe or a terminal, which only the bounded reader takes)."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def _check_line_lengths(stream: TextIO, label: str, chunk_size: int = 4 * MAX_LOG_LINE_CHARS) -> None:
    """Refuse a regular file with a line past MAX_LOG_LINE_CHARS bytes anywhere (the parsers read its lines unbounded,
    at full speed): scanned in chunks, split in C, so a long log costs one quick read."""
    buffer = stream.buffer
    buffer.seek(0)
    number, carried = 1, 0  # the line the chunk starts in, and its length before the chunk
    head = buffer.read(TEXT_PROBE_CHARS)
    if b"\0" in head:
        raise _binary(label, head[:head.index(b"\0")].count(b"\n") + 1)
    buffer.seek(0)
    while chunk := buffer.read(chunk_size):
        parts = chunk.split(b"\n")
        if carried + len(parts[0]) > MAX_LOG_LINE_CHARS or max(map(len, parts)) > MAX_LOG_LINE_CHARS:
            long = next(k for k, part in enumerate(parts) if (carried if k == 0 else 0) + len(part) > MAX_LOG_LINE_CHARS)
            raise InputError(f"{label}: line {number + long} is longer than {MAX_LOG_LINE_CHARS // 2**20} MiB; "
                             "not a tool's text output")
        carried = (carried if len(parts) == 1 else 0) + len(parts[-1])
        number += len(parts) - 1


def _binary(label: str, line: int) -> InputError:
    return InputError(f"{label}: binary data (a NUL byte on line {line}), not a tool's text output")


def _has_content(stream: TextIO, label: str) -> bool:
    """Whether a non-blank line comes before the end; a line past the limit is refused (a binary file)."""
    return any(line.strip() for line in _Lines(stream, label))


def run_parse(args: argparse.Namespace) -> int:
    """Parse, print as a table or JSON, and exit 1 when the result is a failure or the run is incomplete."""
    result = read_result(args.kind, args.file)
    with verdict_output():  # a reader gone (`| head`): the exit code is still the verdict's
        if args.output == "json":
            data = result.to_dict()
            if "measurements" in data:  # as the engine stores them (and the report shows them), not the float noise of an average
                data["measurements"] = {name: stored_value(value) for name, value in result.measurements().items()}
            print(to_json(data))
        else:
            _print_table(result)
    return EXIT_FAILED if _failed(result) else EXIT_OK


def _failed(result: ParseResult) -> str | None:
    """Why the verdict is FAILED: the result's failure, else the output not showing the whole run, else a training
    log that measures nothing (never a pass)."""
    if result.failure is not None:
        return f"{result.failure.reason}: {result.failure.message}"
    incomplete: str | None = getattr(result, "incomplete", None)
    if incomplete:
        return f"{RUN_INCOMPLETE}: {incomplete}"
    if isinstance(result, TrainingResult) and result.warmup_only:
        # Every logged step warm-up: no goodput, TFLOP/s or step time (training_model.measurements). The engine fails
        # a threshold on any of them so, blaming no node (controllers/job.py); this reading has no threshold to weigh
        # and nothing measured, which is never a pass. Its note says why. (Imported here: thresholds loads CEL.)
        from nvcre_tui.engine.judging.thresholds import MEASUREMENT_UNAVAILABLE

        return f"{MEASUREMENT_UNAVAILABLE}: {result.unmeasured}"
    return None


def _fmt(value: Any) -> str:
    """A cell; a float as the engine stores a measurement (stored_value) before it is rounded: the raw average of two
    cycles' 467.08 and 467.49 is 467.28499999999997, and read 467.28 here where the report, from the stored 467.285,
    says 467.29."""
    if value is None:
        return "-"
    if isinstance(value, float):
        value = stored_value(value)
        if abs(value) >= HUGE:  # an implausible value (1e+308) as its verdict says it, not its 309 digits
            return f"{value:g}"
        return f"{value:.4g}" if abs(value) < 1 else f"{value:.2f}"
    return str(value)


def _print_table(result: ParseResult) -> None:
    summary = [(name, _fmt(value)) for name, value in result.measurements().items()]
    if isinstance(result, NcclResult):
        _nccl(result, summary)
    elif isinstance(result, DcgmResult):
        _dcgm(result, summary)
    elif isinstance(result, TrainingResult):
        _training(result, summary)
    failed = _failed(result)
    verdict = f"FAILED {failed}" if failed else "PASSED"
    if isinstance(result, DcgmResult) and not failed and result.skipped_tests:
        # Not a clean pass: say how little ran.
        verdict = f"PASSED ({result.verdict.split(', ', 1)[1]}: {', '.join(result.skipped_tests)})"
    print_table(("field", "value"), [*summary, ("verdict", verdict)], title="Summary")


def _nccl(result: NcclResult, summary: list[tuple[str, str]]) -> None:
    hosts = sorted({device.host for device in result.ranks.values()})
    summary += [("programs", ", ".join(result.programs) or "-"), ("rows", str(result.row_count)),
                ("runs", _runs(result)),
                ("avg bus bandwidth (footer)", _fmt(result.avg_bus_bandwidth)),
                ("ranks", f"{len(result.ranks)} on {', '.join(hosts) or '-'}")]
    summary += [("note", note) for note in result.notes()]  # rows left out of the averages, named
    rows = [(size.size, size.samples, _fmt(size.out_of_place.time_us), _fmt(size.out_of_place.algbw),
             _fmt(size.out_of_place.busbw), _fmt(size.in_place.busbw), _fmt(size.min_busbw), _fmt(size.max_busbw),
             f"{size.wrong:g}" if size.max_error is None else f"max error {size.max_error:g}") for size in result.sizes]
    print_table(("size (B)", "samples", "time (us)", "algbw", "busbw", "in-place busbw", "min busbw", "max busbw",
                 "wrong"), rows, title=f"Per-size averages (out-of-place unless noted, {BANDWIDTH_UNIT})")


def _runs(result: NcclResult) -> str:
    """How many runs the output marks as started and concluded. An output with no run markers (nccl-tests builds
    before the `# Collective test starting/concluded` lines, the simulated fleet's among them) read `0/0 concluded`,
    as if nothing ran: it says there are none; its tables' summaries and the verdict say whether they ended."""
    if not result.runs_started:
        return NO_RUN_MARKERS
    return f"{result.runs_concluded}/{result.runs_started} concluded"


def _dcgm(result: DcgmResult, summary: list[tuple[str, str]]) -> None:
    summary += [("format", result.format), ("DCGM version", _fmt(result.version)), ("driver", _fmt(result.driver)),
                ("iterations", str(result.iterations)), ("GPUs", ", ".join(map(str, result.gpus)) or "-")]
    if result.runtime_error:
        summary.append(("runtime error", result.runtime_error))
    rows = []
    for test in result.tests:
        failing = [r.entity for r in test.results if r.status not in ("Pass", "Skip", "Not Run")]
        warnings = [w.message for r in test.results for w in r.warnings] + [w.message for w in test.warnings]
        rows.append((test.iteration + 1, test.category, test.name, test.status, ", ".join(failing) or "-",
                     (warnings[0][:80] if warnings else "-")))
    print_table(("run", "category", "test", "status", "not passing", "first warning"), rows, title="Tests")


def _training(result: TrainingResult, summary: list[tuple[str, str]]) -> None:
    steps = (f"{result.step_count} logged, {result.warmup_step_count} warmup, "
             f"{result.first_step}..{result.last_step}/{_fmt(result.total_steps)}")
    summary += [("framework", result.framework), ("steps", steps),
                ("last step at", _fmt(result.last_step_time)), ("checkpoints", str(result.checkpoints_saved)),
                ("interruptions", str(result.interruptions))]
    if result.goodput is not None:
        g = result.goodput
        summary.append(("goodput terms (s)", f"wall {g.training_time_sec:.1f}, lost {g.lost_work_sec:.1f}, resume "
                        f"{g.resume_sec:.1f}, reschedule {g.reschedule_sec:.1f}, saves {g.checkpoint_save_sec:.1f}"))
    summary += [("note", note) for note in result.notes()]  # step lines left out, named; how the run ended
    rows = [(step.step, _fmt(step.step_time_sec), _fmt(step.tflops_per_gpu), _fmt(step.loss),
             "yes" if step.warmup else "") for step in result.recent_steps[-10:]]
    print_table(("step", "step time (s)", "TFLOP/s/GPU", "loss", "warmup"), rows, title="Last steps")
