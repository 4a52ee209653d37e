"""A workload that exits 0 with output that never reached the run's end (cut off, or a tool that died under a wrapper
that hid it) does not pass on the part it measured: the Job fails RunIncomplete. A whole output passes as before."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.engine.judging.measure import RUN_INCOMPLETE, measure

FIXTURES = Path(__file__).resolve().parents[1] / "parsers" / "fixtures"


def test_cut_off_output_of_a_finished_run_fails_it() -> None:
    lines = (FIXTURES / "nccl_e1_modern.txt").read_text().splitlines()[:25]
    measured = measure("nccl", lines)
    assert measured.failure is None and measured.measurements  # rows were read: the parse itself is no failure
    failure = measured.finished_failure()
    assert failure is not None and failure.reason == RUN_INCOMPLETE
    assert failure.message.startswith("the workload exited 0 but its output is incomplete: ")


def test_whole_output_of_a_finished_run_has_no_failure() -> None:
    measured = measure("nccl", (FIXTURES / "nccl_e1_modern.txt").read_text().splitlines())
    assert measured.incomplete is None and measured.finished_failure() is None
