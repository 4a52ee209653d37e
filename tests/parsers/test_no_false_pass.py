"""Never a false PASS, continued: runs that died after their header, logs of one step far short of their total,
diagnostics that measured nothing or name no readable GPU, numbers too large for a float."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.judging.measure import UNMEASURED_REASONS, measure
from nvcre_tui.engine.parsers import ParseError, parse_dcgm, parse_nccl, parse_training
from tests.parsers.golden import fixture_text as fixture

E1 = fixture("nccl_e1_modern.txt")
CRASHED = fixture("nccl_crashed_no_rows.txt")  # kubelet timestamps: a run that printed its header, then NCCL failed
MEGATRON = fixture("training_megatron_8b.log")
NCCL_HEADER = "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
NCCL_ROW = "     1048576        262144     float     sum      -1    21.88   47.92   83.85       0    22.15   47.35   82.86       0\n"


def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, text: str) -> tuple[int, str]:
    path = tmp_path / "input.log"
    path.write_text(text, encoding="utf-8")
    code = main(["parse", kind, str(path)])
    return code, " ".join(capsys.readouterr().out.split())


def unprefixed(text: str) -> str:
    """The log without its first token per line (the reviewer's `sed 's/^[^ ]* //'`: the kubelet timestamps)."""
    return "".join(line.split(" ", 1)[1] for line in text.splitlines(keepends=True))


# --- nccl: a run that died after its header -----------------------------------------------------------------

NCCL_WARN = ("'gpu-n09:4101:4160 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.20<48190> with status=12 "
             "opcode=0 len=0 vendor err 129 (Send)'")


@pytest.mark.parametrize("max_rows", [2048, 0])  # the strict reader, and the batched one
@pytest.mark.parametrize("crashed", [unprefixed(CRASHED), CRASHED], ids=["bare", "kubelet"])
def test_a_second_run_that_died_after_its_header_is_not_passed(max_rows: int, crashed: str) -> None:
    """A whole first run, then one that printed its header and died (NCCL WARN ... vendor err 129): it measured
    nothing, so the log does not show the whole run; the first NCCL failure line of that run says why."""
    result = parse_nccl(E1 + crashed, max_rows=max_rows)
    assert (result.runs_started, result.runs_concluded, result.failure) == (2, 1, None)
    assert result.incomplete == ("1 of 2 runs never concluded: run 2 (all_reduce_perf_mpi) printed no result rows and "
                                 f"no summary: NCCL failed: {NCCL_WARN}")
    failure = measure("nccl", (E1 + crashed).splitlines()).finished_failure()
    assert failure is not None and failure.reason == "RunIncomplete"


def test_the_cli_fails_a_second_run_that_died(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = cli(capsys, tmp_path, "nccl", E1 + unprefixed(CRASHED))
    assert code == 1 and "runs 1/2 concluded" in out
    assert "verdict FAILED RunIncomplete: 1 of 2 runs never concluded: run 2 (all_reduce_perf_mpi) printed no result rows" in out


@pytest.mark.parametrize("max_rows", [2048, 0])
def test_a_second_run_cut_off_before_its_first_row_is_incomplete(max_rows: int) -> None:
    cut = E1[: E1.index(NCCL_ROW[:12])]  # its header and rank lines, no row
    result = parse_nccl(E1 + cut, max_rows=max_rows)
    assert result.incomplete == ("1 of 2 runs never concluded: run 2 (all_reduce_perf_mpi) printed no result rows and "
                                 "no summary (output cut off, or the run failed)")


@pytest.mark.parametrize("max_rows", [2048, 0])
def test_batched_rows_of_a_run_cut_off_before_the_next_run_count_as_that_runs(max_rows: int) -> None:
    """On the batched path the rows of a run cut off before its summary were still unfolded when the next run
    started, and that run's summary then closed them: a run without summary passed."""
    cut = E1[: E1.index("# Out of bounds")]
    result = parse_nccl(E1 + cut + E1, max_rows=max_rows)
    assert result.incomplete == ("1 of 3 runs never concluded: no 'Avg bus bandwidth' summary after their result rows "
                                 "(output cut off, or the run failed)")


@pytest.mark.parametrize("max_rows", [2048, 0])
def test_whole_runs_with_a_warning_before_their_rows_still_pass(max_rows: int) -> None:
    """NCCL prints harmless WARN lines at start-up: a run that goes on to print rows and its summary concluded."""
    warned = E1.replace("# Using devices\n", "gpu-n01:4101:4160 [0] NCCL WARN Could not find real path of "
                                             "/sys/class/net/ib9\n# Using devices\n", 1)
    assert warned != E1
    result = parse_nccl(E1 + warned + E1, max_rows=max_rows)
    assert (result.incomplete, result.failure, result.runs_started) == (None, None, 3)


def test_a_single_run_that_died_after_its_header_is_still_no_data() -> None:
    with pytest.raises(ParseError) as caught:
        parse_nccl(CRASHED)
    assert caught.value.reason == "NoDataCollected" and "vendor err 129" in caught.value.message


# --- nccl: data-check cells of inf, or too large for a float -------------------------------------------------


@pytest.mark.parametrize("cell", ["inf", "1e400", "INF"])
@pytest.mark.parametrize("max_rows", [2048, 0])
def test_a_wrong_count_of_inf_is_data_corruption_not_a_skipped_row(cell: str, max_rows: int) -> None:
    bad = NCCL_ROW[: NCCL_ROW.rindex("0")] + cell + "\n"
    result = parse_nccl("#\n" + NCCL_HEADER + NCCL_ROW * 3000 + bad + NCCL_ROW * 10 + "# Out of bounds values : 0 OK\n"
                        "# Avg bus bandwidth    : 83.85\n", max_rows=max_rows)
    assert result.failure is not None and result.failure.reason == "DataCorruption"
    assert result.failure.message == "inf wrong elements at size 1048576 B" and result.skipped_count == 0


@pytest.mark.parametrize("cell", ["inf", "1e400"])
@pytest.mark.parametrize("max_rows", [2048, 0])
def test_an_error_cell_of_inf_fails_whatever_the_footer_says(cell: str, max_rows: int) -> None:
    text = fixture("nccl_error_column_healthy.txt")
    row = next(line for line in text.splitlines(keepends=True) if line.startswith("     8388608"))
    result = parse_nccl(text.replace(row, row.replace("5e-07    311.9", f"{cell}    311.9")), max_rows=max_rows)
    assert result.failure is not None and result.failure.reason == "DataCorruption"
    assert result.failure.message.startswith("max error inf at size 8388608 B is above the nccl-tests tolerance")
    assert parse_nccl(text, max_rows=max_rows).failure is None


@pytest.mark.parametrize("value", ["1e400", "1" + "0" * 400])  # (Infinity is no JSON: refused)
def test_a_json_wrong_count_beyond_any_double_is_data_corruption(value: str) -> None:
    document = fixture("nccl_json_output.json").replace('"nwrong":0.0', f'"nwrong":{value}', 1)
    assert value in document
    result = parse_nccl(document)
    assert result.failure is not None and result.failure.reason == "DataCorruption" and result.skipped_count == 0


# --- training: one step line far short of its total ----------------------------------------------------------

ONE_STEP = "".join(line for line in MEGATRON.splitlines(keepends=True)
                   if not re.search(r"iteration       [2-5]0/|after training", line))


def _megatron_step(step: int, total: int) -> str:
    line = next(line for line in MEGATRON.splitlines(keepends=True) if "iteration       10/" in line)
    return line.replace("iteration       10/      50", f"iteration {step:>8}/{total:>8}")


def test_one_step_line_far_short_of_its_total_is_incomplete(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Step 10 of 50 and nothing more: whatever the log interval, one that logs step 10 logs another by step 21."""
    result = parse_training(ONE_STEP)
    assert result.incomplete == ("stopped at step 10 of 50, its only step line, when any log interval that logs step 10 "
                                 "logs another by step 21 (output cut off, or the run was killed)")
    failure = measure("training", ONE_STEP.splitlines()).finished_failure()
    assert failure is not None and failure.reason == "RunIncomplete"
    code, out = cli(capsys, tmp_path, "training", ONE_STEP)
    assert code == 1 and "verdict FAILED RunIncomplete: stopped at step 10 of 50" in out


@pytest.mark.parametrize(("step", "total", "whole"), [
    (10, 10, True),  # its last logged step is its total
    (10, 20, True),  # a log interval of 10 or 11 logs no step after 10 within 20
    (10, 21, False),
    (1, 2, True),  # step 1 counted from 0 is logged by an interval of 2, whose next step is 3
    (1, 3, False),
    (0, 4, True),  # step 0 is a multiple of every interval: the next may be past the total
    (9, 14, True),  # NeMo's log_every_n_steps 10 and max_steps 15, counted from 0 (the Megatron line reads the same)
])
def test_one_step_line_is_short_only_when_every_interval_would_have_logged_another(step: int, total: int,
                                                                                   whole: bool) -> None:
    assert (parse_training(_megatron_step(step, total)).incomplete is None) == whole


def test_one_step_line_and_megatrons_own_stop_is_whole() -> None:
    """exitDurationMins: Megatron stops on its limit and says so; maxSteps -1 is a total of 10^9."""
    stop = "[exiting program after 30.02 minutes] datetime: 2026-03-02 12:12:00 \n"
    for total in (50, 1_000_000_000):
        result = parse_training(_megatron_step(10, total) + stop)
        assert result.incomplete is None and result.stopped_short is False
        assert result.remarks == (f"stopped at step 10 of {total} on Megatron's own limit (exiting program after 30.02 minutes)",)


def test_a_printed_log_interval_still_decides_for_one_step() -> None:
    interval = "  log_interval .................................... 100\n"
    assert parse_training(interval + _megatron_step(10, 50)).incomplete is None  # the next logged step would be 100


# --- training: a measurement of warm-up steps alone is none ---------------------------------------------------


def test_warm_up_steps_alone_measure_no_speed_and_say_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A whole run of ten steps logs step 10 only, a warm-up step (start-up: compilation, allocation). Its TFLOP/s is
    no GPU's speed, so nothing is measured: a threshold on it fails unevaluated and convicts no node, where a value of
    warm-up would fail every healthy node against a threshold at their real speed."""
    text = MEGATRON.splitlines(keepends=True)[:5] + [_megatron_step(10, 10)]
    result = parse_training("".join(text))
    assert result.incomplete is None and result.warmup_step_count == result.step_count == 1
    assert result.avg_tflops_per_gpu is None and result.avg_step_time_sec is None
    # Nor goodput: warm-up's share of wall time is no training's (it read 1.00, a perfect number of nothing measured).
    assert result.goodput is None and result.measurements() == {}
    assert result.notes() == ("training: the only logged step is warm-up (the first 10 steps of a run): no goodputRatio, "
                              "avgTFLOPsPerGPU or avgStepTimeSec measured (log steps past warm-up: a larger maxSteps)",)
    assert measure("training", text).measurements == {}
    code, out = cli(capsys, tmp_path, "training", "".join(text))
    assert "566.9" not in out.split("avg")[-1] and "goodputRatio 1" not in out
    # Nothing measured is never a pass: `parse` said PASSED (the run ended well) beside the note, exit 0. It says what the
    # engine says of a threshold on any of the three (MeasurementUnavailable), exit 1.
    assert code == 1 and "PASSED" not in out, out
    assert ("verdict FAILED MeasurementUnavailable: no goodputRatio, avgTFLOPsPerGPU or avgStepTimeSec measured" in out), out
    code, out = cli(capsys, tmp_path, "training", MEGATRON)  # steps past warm-up: measured, a pass
    assert code == 0 and "verdict PASSED" in out, out


def test_steps_past_warm_up_average_without_the_warm_up() -> None:
    result = parse_training(MEGATRON)
    assert result.measurements()["avgTFLOPsPerGPU"] == pytest.approx((611.2 + 612.4 + 613.0 + 611.4) / 4)
    assert result.notes() == ()


# --- training: a loss too large for a float is infinite -------------------------------------------------------


@pytest.mark.parametrize("loss", ["1e400", "9.9E+999", "-1e400", "inf", "INF", "nan"])
def test_a_loss_beyond_any_float_fails_like_inf(capsys: pytest.CaptureFixture[str], tmp_path: Path, loss: str) -> None:
    text = re.sub(r"lm loss: [0-9.E+-]+", f"lm loss: {loss}", MEGATRON, count=1)
    assert text != MEGATRON
    result = parse_training(text)
    assert result.failure is not None and result.failure.reason == "LossNaN" and result.skipped_count == 0
    assert result.failure.message == "NaN loss in 1 iteration, first reported at step 10 (line 6)"
    code, out = cli(capsys, tmp_path, "training", text)
    assert code == 1 and "FAILED LossNaN" in out


@pytest.mark.parametrize(("name", "old", "new"), [
    ("training_nemo.log", "reduced_train_loss: 10.20", "reduced_train_loss: 1e400"),
    ("training_nemo1_progress.log", "reduced_train_loss=10.80", "reduced_train_loss=1e400"),
])
def test_a_nemo_loss_beyond_any_float_fails_like_inf(name: str, old: str, new: str) -> None:
    text = fixture(name)
    assert old in text
    result = parse_training(text.replace(old, new))
    assert result.failure is not None and result.failure.reason == "LossNaN"


def test_a_loss_that_is_merely_large_is_a_loss() -> None:
    result = parse_training(re.sub(r"lm loss: [0-9.E+-]+", "lm loss: 1.0E+300", MEGATRON, count=1))
    assert result.failure is None and result.incomplete is None


# --- dcgm: a test that measured nothing, GPU ids that are none -----------------------------------------------


def _dcgm(results: list[object], status: str | None = "Pass", name: str = "memory", more: list[object] | None = None) -> str:
    test: dict[str, object] = {"name": name, "results": results}
    if status is not None:
        test["test_summary"] = {"status": status}
    return json.dumps({"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [test, *(more or [])]}]}})


def _gpu(index: object, status: str = "Pass") -> dict[str, object]:
    return {"entity_group": "GPU", "entity_group_id": 1, "entity_id": index, "status": status}


def test_a_passing_test_with_no_gpu_result_is_no_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = _dcgm([])
    result = parse_dcgm(text)
    assert result.failure is not None and result.failure.reason == "NoDataCollected" and result.gpus == ()
    assert result.failure.message == "memory reported a pass with no per-GPU result: nothing measured"
    failure = measure("dcgm", text.splitlines()).finished_failure()
    assert failure is not None and failure.reason in UNMEASURED_REASONS  # no node is blamed for it
    code, out = cli(capsys, tmp_path, "dcgm", text)
    assert code == 1 and "verdict FAILED NoDataCollected: memory reported a pass" in out


def test_one_test_without_a_gpu_result_among_measured_ones_is_named() -> None:
    empty = {"name": "diagnostic", "results": [], "test_summary": {"status": "Warn"}}
    result = parse_dcgm(_dcgm([_gpu(0), _gpu(1)], more=[empty]))
    assert result.failure is not None and result.failure.reason == "NoDataCollected"
    assert result.failure.message.startswith("diagnostic reported a pass")
    assert parse_dcgm(_dcgm([_gpu(0), _gpu(1)])).passed


def test_a_gpu_that_failed_still_convicts_beside_a_test_that_measured_nothing() -> None:
    empty = {"name": "diagnostic", "results": [], "test_summary": {"status": "Pass"}}
    result = parse_dcgm(_dcgm([_gpu(0), _gpu(1, "Fail")], "Fail", more=[empty]))
    assert result.failure is not None and result.failure.reason == "DcgmTestFailed" and result.failure.gpus == (1,)


def test_a_skipped_test_without_gpu_results_is_still_a_skip() -> None:
    skipped = {"name": "memtest", "results": [], "test_summary": {"status": "Skip"}}
    result = parse_dcgm(_dcgm([_gpu(0)], more=[skipped]))
    assert result.passed and result.skipped_tests == ("memtest",)


def _table(rows: str) -> str:
    return ("+---------------------------+------------------------------------------------+\n"
            "| Diagnostic                | Result                                         |\n"
            "+===========================+================================================+\n"
            "|-----  Metadata  ----------+------------------------------------------------|\n"
            "| DCGM Version              | 3.3.5                                          |\n"
            "| GPU Device IDs Detected   | 1eb8,1eb8                                      |\n"
            "|-----  Deployment  --------+------------------------------------------------|\n"
            "| Denylist                  | Pass                                           |\n"
            "| NVML Library              | Pass                                           |\n"
            "+-----  Hardware  ----------+------------------------------------------------+\n"
            f"{rows}"
            "+---------------------------+------------------------------------------------+\n")


def test_the_text_table_s_node_level_checks_need_no_gpu_but_its_gpu_tests_do() -> None:
    whole = parse_dcgm(_table("| GPU Memory                | Pass - All                                     |\n"))
    assert whole.passed and whole.gpus == (0, 1)
    bare = parse_dcgm(_table("| GPU Memory                | Pass                                           |\n"))
    assert bare.failure is not None and bare.failure.reason == "NoDataCollected"
    assert bare.failure.message == "memory reported a pass with no per-GPU result: nothing measured"


@pytest.mark.parametrize(("value", "shown"), [(-5, "-5"), ("0", '"0"'), (1.5, "1.5"), (True, "true"), (None, "null"),
                                              (2 ** 40, str(2 ** 40))])
def test_an_entity_id_that_is_no_index_is_unreadable(capsys: pytest.CaptureFixture[str], tmp_path: Path, value: object,
                                                     shown: str) -> None:
    text = _dcgm([_gpu(0), _gpu(value)])
    result = parse_dcgm(text)
    assert result.failure is not None and result.failure.reason == "WrongFormat" and result.gpus == (0,)
    assert result.failure.message == f"unreadable dcgmi diag result: memory results[1]: entity_id {shown} is no entity index"
    code, out = cli(capsys, tmp_path, "dcgm", text)
    assert code == 1 and "verdict FAILED WrongFormat: unreadable dcgmi diag result: memory results[1]: entity_id" in out


def test_a_document_of_only_unreadable_entities_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        parse_dcgm(_dcgm([_gpu(-5)], status=None))
    assert caught.value.reason == "WrongFormat" and "entity_id -5" in caught.value.message


@pytest.mark.parametrize(("field", "value"), [("gpu_id", -1), ("gpu_id", "x"), ("gpu_ids", "0,-1"), ("gpu_ids", "")])
def test_a_3x_gpu_id_that_is_no_index_is_unreadable(field: str, value: object) -> None:
    results = [{"gpu_id": "0", "status": "Pass"}, {field: value, "status": "Pass"}]
    document = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": results}]}]}}
    result = parse_dcgm(json.dumps(document))
    assert result.failure is not None and result.failure.reason == "WrongFormat" and field in result.failure.message


def test_a_gpu_that_failed_convicts_before_an_unreadable_entity() -> None:
    result = parse_dcgm(_dcgm([_gpu(0, "Fail"), _gpu("1")], "Fail"))
    assert result.failure is not None and result.failure.reason == "DcgmTestFailed" and result.failure.gpus == (0,)


def test_3x_gpu_ids_as_digit_text_are_still_read() -> None:
    result = parse_dcgm(fixture("dcgm_3x_warn_pass.json"))
    assert result.passed and result.gpus == (0, 1, 2, 3)


def test_a_measurement_is_shown_on_its_side_of_the_threshold() -> None:
    """Two decimals, or more where rounding would cross the threshold: 241.145 missed `value >= 241.149`."""
    from nvcre_tui.engine.judging.thresholds import shown_measured

    assert shown_measured("busBandwidthGBps", "value >= 300", 241.145, False) == "241.15"
    assert shown_measured("busBandwidthGBps", "value >= 241.149", 241.145, False) == "241.145"
    assert shown_measured("busBandwidthGBps", "value >= 241.1449", 241.14495, True) == "241.145"
    assert shown_measured("busBandwidthGBps", "value > 1.0", 1.0000001, True) == "1.0000001"


# --- values each finite, their sum not -------------------------------------------------------------------------

HUGE_ROW = NCCL_ROW.replace("   83.85   ", "   1e308   ")


@pytest.mark.parametrize("max_rows", [2048, 0])  # the strict reader, and the batched one
def test_nccl_rows_whose_busbw_sum_overflows_are_no_measurement(max_rows: int) -> None:
    """Three rows of busbw 1e308 (each finite, so none was skipped) averaged to inf: busBandwidthGBps inf, PASSED, and
    `-o json` printed Infinity. Three tables of one row each, and one table of three."""
    for text in (NCCL_HEADER + HUGE_ROW * 3, "".join(NCCL_HEADER + HUGE_ROW for _ in range(3))):
        with pytest.raises(ParseError) as error:
            parse_nccl(text, max_rows=max_rows)
        assert error.value.message == ("no valid nccl-tests result rows: the values at size 1048576 B add up past the largest "
                                       "number a float holds (no tool prints such values)")


def test_training_steps_whose_tflops_sum_overflows_are_no_measurement() -> None:
    """Step lines of 1e308 TFLOP/s/GPU (each finite) averaged to inf: avgTFLOPsPerGPU inf, PASSED."""
    huge = re.sub(r"\(TFLOP/s/GPU\): [0-9.]+", "(TFLOP/s/GPU): 1e308", MEGATRON)
    assert huge != MEGATRON
    with pytest.raises(ParseError) as error:
        parse_training(huge)
    assert error.value.message == ("no valid training step lines: the steps' TFLOP/s add up past the largest number a float "
                                   "holds (no tool prints such values)")


@pytest.mark.parametrize("max_rows", [2048, 0])
def test_a_run_that_died_mid_table_names_the_failure_after_its_rows(max_rows: int) -> None:
    """nccl-tests#322: rows, then 'Test NCCL failure ... unhandled cuda error' and no summary. The run is incomplete
    and says why (it said 'output cut off, or the run failed', though the log says which); a warning after a run's
    summary, or one before rows that a summary then closed, names nothing."""
    died = "gpu-n02: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n"
    warned = "gpu-n02:4101:4160 [0] NCCL WARN Cuda failure 'unspecified launch failure'\n"
    cut = E1[: E1.index("# Out of bounds")]
    result = parse_nccl(cut + warned + died, max_rows=max_rows)
    assert result.incomplete == ("the run never concluded: no 'Avg bus bandwidth' summary after its result rows (NCCL "
                                 f"failed after them: {warned.strip()!r})")
    assert parse_nccl(E1 + died, max_rows=max_rows).incomplete is None
    again = parse_nccl(cut + died + E1[E1.index("# Out of bounds"):] + cut, max_rows=max_rows)
    assert again.incomplete == ("1 of 2 runs never concluded: no 'Avg bus bandwidth' summary after their result rows "
                                "(output cut off, or the run failed)")
