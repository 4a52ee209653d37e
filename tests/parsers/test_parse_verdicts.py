"""Never a false PASS from `nvcre parse`: cut-off, crashed and NaN runs, refused step lines, strict JSON."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.parsers import ParseError, parse_dcgm, parse_nccl, parse_training
from nvcre_tui.engine.runners.simulated import render_output
from nvcre_tui.engine.sim.outputs import NcclFormat, kubelet_prefix
from tests.parsers.golden import fixture_text as fixture
from tests.sim.helpers import ALL_NODES, plan, scenario, training_run

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
MEGATRON = fixture("training_megatron_8b.log")
CRASH = ("[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n")


def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, text: str) -> tuple[int, str, str]:
    path = tmp_path / "input.log"
    path.write_text(text, encoding="utf-8")
    code = main(["parse", kind, str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def head(text: str, lines: int) -> str:
    return "".join(text.splitlines(keepends=True)[:lines])


# --- training ---------------------------------------------------------------------------------------


def test_a_crashed_run_is_not_passed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = cli(capsys, tmp_path, "training", head(MEGATRON, 7) + CRASH)
    assert code == 1 and "PASSED" not in out
    assert "FAILED RunIncomplete: stopped at step 20 of 50: [rank3]: RuntimeError: CUDA error: an illegal memory " \
           "access was encountered (line 8)" in " ".join(out.split())


def test_a_log_cut_short_without_an_error_is_incomplete() -> None:
    result = parse_training(head(MEGATRON, 7))
    assert result.incomplete == "stopped at step 20 of 50 (output cut off, or the run was killed)"
    assert parse_training(MEGATRON).incomplete is None  # 50 of 50


def test_an_error_after_the_last_step_is_incomplete_even_at_the_total() -> None:
    result = parse_training(MEGATRON + "[rank0]: Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                            "[rank0]: OSError: [Errno 28] No space left on device\n")
    assert result.incomplete == "failed after its last step (50 of 50): [rank0]: OSError: [Errno 28] No space left on " \
                                "device (line 16)"


def test_an_ignored_exception_at_shutdown_is_no_failure() -> None:
    tail = ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f>\n"
            "Traceback (most recent call last):\n  File \"dataloader.py\", line 1478, in __del__\n"
            "AssertionError: can only test a child process\n")
    assert parse_training(MEGATRON + tail).incomplete is None


def test_an_error_that_more_steps_follow_did_not_stop_the_run() -> None:
    lines = MEGATRON.splitlines(keepends=True)
    text = "".join(lines[:7]) + "ImportError: apex is not installed, using the torch implementation\n" + "".join(lines[7:])
    assert parse_training(text).incomplete is None
    assert parse_training(fixture("training_megatron_restart.log")).incomplete is None  # an error, then a restart


def test_megatron_stopping_on_its_own_limit_is_a_remark() -> None:
    text = head(MEGATRON, 7) + "[exiting program after 30.02 minutes] datetime: 2026-03-02 12:12:00 \n"
    result = parse_training(text)
    assert result.incomplete is None
    assert result.notes() == ("training: stopped at step 20 of 50 on Megatron's own limit "
                              "(exiting program after 30.02 minutes)",)


def test_nemo_stopping_on_its_time_limit_is_a_remark() -> None:
    nemo = "\n".join(fixture("training_nemo.log").split("\n")[:6]) + "\n"  # lines with steps 0-2 of 4
    assert parse_training(nemo).incomplete is not None  # cut off: stopped short
    # Lightning's Timer (trainer max_time) prints it on rank 0, often behind a progress bar's carriage return.
    stop = ("2026-03-02T13:00:53.000000123Z Epoch 0: : 3it [00:08]\rTime limit reached. Elapsed time is 1 day, 0:00:03. "
            "Signaling Trainer to stop.\n")
    result = parse_training(nemo + stop)
    assert result.incomplete is None
    assert result.notes() == ("training: stopped at step 2 of 4 on NeMo's own limit (time limit reached after 1 day, 0:00:03)",)


def test_a_time_limit_before_any_step_says_so() -> None:
    start = head(fixture("training_nemo.log"), 3)
    with pytest.raises(ParseError) as failure:
        parse_training(start + "Time limit reached. Elapsed time is 0:10:00. Signaling Trainer to stop.\n")
    assert "NeMo stopped on its own limit first (time limit reached after 0:10:00): a longer max_time" in str(failure.value)


def test_the_printed_log_interval_decides_how_close_to_the_total_is_whole() -> None:
    step = [line for line in MEGATRON.splitlines(keepends=True) if "iteration       10/" in line][0]
    two = step.replace("iteration       10/      50", "iteration       90/     150") + \
        step.replace("iteration       10/      50", "iteration      100/     150")
    assert parse_training(two).incomplete is not None  # interval 10 measured: 50 steps missing
    assert parse_training("  log_interval .................................... 100\n" + two).incomplete is None


def test_one_logged_step_with_no_interval_known_is_not_called_short() -> None:
    # NeMo 2 with log_every_n_steps 10 and max_steps 15 logs step 9 of 14 only: that may be its last logged step.
    nemo = ("Training epoch 0, iteration 9/14 | lr: 0.000599 | global_batch_size: 32 | global_step: 9 | reduced_train_loss: 9.80 | "
            "train_step_timing in s: 2.87 | TFLOPS_per_GPU: 613.1 | consumed_samples: 320\n"
            "`Trainer.fit` stopped: `max_steps=15` reached.\n")
    assert parse_training(nemo).incomplete is None


def test_interleaved_ignored_reports_of_two_ranks_are_no_error() -> None:
    ignored = "".join(f"[rank{r}]: {text}\n" for text in ("Exception ignored in: <function Q.__del__ at 0x7f>", "Traceback (most recent call last):",
                                                          '  File "/x.py", line 1, in __del__', "AttributeError: 'NoneType' object has no attribute 'x'")
                      for r in (0, 1))
    assert parse_training(MEGATRON + ignored).incomplete is None


def test_nan_loss_is_a_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = MEGATRON.replace("number of nan iterations:   0", "number of nan iterations:   3")
    text = "".join(line.replace(line[line.index("lm loss:"):].split("|")[0], "lm loss: nan ") if "lm loss:" in line
                   else line for line in text.splitlines(keepends=True))
    result = parse_training(text)
    assert result.failure is not None and result.failure.reason == "LossNaN"
    assert result.failure.message == "NaN loss in 15 iterations, first reported at step 10 (line 6)"
    code, out, _ = cli(capsys, tmp_path, "training", text)
    assert code == 1 and "FAILED LossNaN" in out
    nemo = fixture("training_nemo.log").replace("reduced_train_loss: 10.20", "reduced_train_loss: nan")
    assert parse_training(nemo).failure is not None


@pytest.mark.parametrize("cell", ["-613.0", "1e999", "inf", "nan"])
def test_a_step_with_an_unreadable_tflops_cell_is_skipped_and_named(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                    cell: str) -> None:
    text = MEGATRON.replace("(TFLOP/s/GPU): 613.0", f"(TFLOP/s/GPU): {cell}")
    result = parse_training(text)
    assert result.notes() == (f"training: 1 step skipped: TFLOP/s {cell} at step 40 (line 11)",)
    assert 40 not in [step.step for step in result.recent_steps] and result.step_count == 4
    assert result.avg_tflops_per_gpu == pytest.approx((611.2 + 612.4 + 611.4) / 3)  # step 10 is warm-up
    code, out, _ = cli(capsys, tmp_path, "training", text)
    assert code == 0 and "training: 1 step skipped: TFLOP/s" in out


def test_a_step_past_its_total_is_skipped_and_named() -> None:
    result = parse_training(MEGATRON.replace("iteration       40/      50", "iteration       40/      30"))
    assert result.notes() == ("training: 1 step skipped: iteration 40/30 (past its total) (line 11)",)
    assert result.incomplete is None and result.last_step == 50


def test_every_step_refused_is_no_data_naming_them() -> None:
    with pytest.raises(ParseError) as caught:
        parse_training(head(MEGATRON, 6).replace("elapsed time per iteration (ms): 3105.2", "elapsed time per iteration (ms): -1"))
    assert caught.value.message == "no valid training step lines: 1 step skipped: step time -1 at step 10 (line 6)"


def test_no_steps_names_the_error_the_log_shows() -> None:
    with pytest.raises(ParseError) as caught:
        parse_training(fixture("training_no_steps.log"))
    assert caught.value.message.endswith("; the log shows: [rank0]: RuntimeError: CUDA error: out of memory (line 2)")


def _simulated(run: dict[str, object], faults: list[dict[str, object]] | None = None) -> list[str]:
    run_plan = plan(scenario(faults=faults or []), run)
    timed = render_output(run_plan, START, random.Random("verdicts"), NcclFormat())
    return [kubelet_prefix(START + timedelta(seconds=moment)) + text for moment, text in timed]


@pytest.mark.parametrize("iters", [10, 50, 55])
def test_simulated_training_logs_are_whole(iters: int) -> None:
    result = parse_training(_simulated(training_run("train", ALL_NODES[:8], iters=iters)))
    # Ten steps log one step, a warm-up one: whole, with no speed measured, and the notes say so.
    warmup = ("training: the only logged step is warm-up (the first 10 steps of a run): no goodputRatio, avgTFLOPsPerGPU "
              "or avgStepTimeSec measured (log steps past warm-up: a larger maxSteps)",) if iters == 10 else ()
    assert (result.incomplete, result.notes(), result.failure) == (None, warmup, None)


def test_a_simulated_failed_training_run_is_incomplete_with_its_error() -> None:
    lines = _simulated(training_run("flaky", ALL_NODES[:8]), [{"type": "flaky", "node": "gpu-node-05", "probability": 1.0}])
    result = parse_training(lines)
    assert result.incomplete is not None and "DistBackendError" in result.incomplete
    assert measure("training", lines).failure is None  # the engine fails it by its exit code, as before


# --- nccl -------------------------------------------------------------------------------------------


def test_a_cut_off_nccl_run_is_not_passed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = cli(capsys, tmp_path, "nccl", head(fixture("nccl_e1_modern.txt"), 25))
    assert code == 1 and "PASSED" not in out
    assert "FAILED RunIncomplete: the run never concluded: no 'Avg bus bandwidth' summary" in " ".join(out.split())
    code, out, _ = cli(capsys, tmp_path, "nccl", fixture("nccl_e1_modern.txt"))
    assert code == 0 and "PASSED" in out


def test_rows_after_the_last_footer_are_incomplete_on_the_batched_path() -> None:
    whole = fixture("nccl_e1_modern.txt")
    assert parse_nccl(whole, max_rows=2).incomplete is None  # batched rows are folded before the footer counts
    rows = [line for line in whole.splitlines(keepends=True) if line[:1] == " "]
    assert parse_nccl(whole + "".join(rows), max_rows=2).incomplete is not None


def test_nccl_json_without_its_summary_is_incomplete() -> None:
    document = json.loads(fixture("nccl_json_output.json"))
    del document["average_bus_bandwidth"], document["out_of_bounds"]
    assert parse_nccl(json.dumps(document)).incomplete is not None
    assert parse_nccl(fixture("nccl_json_output.json")).incomplete is None


# --- strict JSON ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "name", "old", "new", "message"), [
    ("dcgm", "dcgm_4x_memory_fail.json", '"status": "Fail"', '"status": "Fail", "status": "Pass"',
     "not valid JSON (duplicate key 'status' on line 76)"),
    ("nccl", "nccl_json_output.json", '"nwrong":0.000000}', '"nwrong":9.000000,"nwrong":0.000000}',
     "not valid JSON (duplicate key 'nwrong' on line 1)"),
])
def test_a_duplicated_json_key_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, name: str,
                                            old: str, new: str, message: str) -> None:
    text = fixture(name)
    assert old in text
    code, out, err = cli(capsys, tmp_path, kind, text.replace(old, new, 1))
    assert (code, out, err) == (2, "", f"{tmp_path / 'input.log'}: {message}\n")


def test_a_duplicate_is_found_in_its_own_object_only() -> None:
    text = '{\n "a": {"k": 1},\n "b": {"k": 2,\n   "k": 3}\n}\n'
    with pytest.raises(ParseError) as caught:
        parse_dcgm(text)
    assert caught.value.message == "not valid JSON (duplicate key 'k' on line 4)"


def test_a_number_too_long_for_int_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = fixture("dcgm_4x_memory_fail.json").replace('"entity_id": 0,', f'"entity_id": {"1" * 5000},', 1)
    code, out, err = cli(capsys, tmp_path, "dcgm", text)
    assert (code, out) == (2, "")
    assert err == f"{tmp_path / 'input.log'}: not valid JSON (number too long: 5000 digits on line 13)\n"
