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


def test_a_training_run_that_reached_its_total_is_whole_whatever_it_printed_after() -> None:
    log = (FIXTURES / "training_megatron_8b.log").read_text().splitlines()
    measured = measure("training", [*log, "TimeoutError: async save queue drained late"])  # exit 0: teardown noise
    assert measured.finished_failure() is None
    steps = [i for i, line in enumerate(log) if "iteration " in line and "/" in line]
    cut = measure("training", log[: steps[1] + 1])  # stopped at its second logged step of five
    failure = cut.finished_failure()
    assert failure is not None and failure.reason == RUN_INCOMPLETE and "stopped at step 20 of 50" in failure.message
