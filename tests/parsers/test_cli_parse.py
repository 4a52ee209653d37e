"""`nvcre parse`: exit codes 0 / 1 / 2, table and JSON output, files and stdin."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from tests.parsers.golden import FIXTURES


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["parse", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_table_output_shows_the_threshold_metric(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "nccl", str(FIXTURES / "nccl_e1_modern.txt"))
    assert code == 0 and not err
    assert "busBandwidthGBps" in out and "470.37" in out and "PASSED" in out


def test_json_output_is_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "nccl", str(FIXTURES / "nccl_kubelet_info_cycles.txt"), "-o", "json")
    data = json.loads(out)
    assert code == 0 and data["measurements"]["busBandwidthGBps"] == pytest.approx(467.28)
    assert len(data["sizes"]) == 4 and data["ranks"]["7"]["host"] == "gpu-n02"


@pytest.mark.parametrize(
    ("kind", "name", "words"),
    [("dcgm", "dcgm_4x_memory_fail.json", ["DcgmTestFailed", "memory failed on GPU 1"]),
     ("nccl", "nccl_all_gather_wrong.txt", ["DataCorruption", "16777216"])],
)
def test_a_failing_result_exits_1(capsys: pytest.CaptureFixture[str], kind: str, name: str, words: list[str]) -> None:
    code, out, _ = run(capsys, kind, str(FIXTURES / name))
    assert code == 1 and all(word in out for word in words)


def test_stdin_text(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((FIXTURES / "training_megatron_8b.log").read_text()))
    code, out, _ = run(capsys, "training", "-", "-o", "json")
    assert code == 0 and json.loads(out)["measurements"]["avgTFLOPsPerGPU"] == pytest.approx(612.0)


def test_stdin_bytes_keep_carriage_returns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Real stdin is bytes underneath: progress-bar carriage returns must not split a kubelet-stamped line."""
    raw = (FIXTURES / "training_nemo.log").read_bytes()
    assert b"\r" in raw
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    code, out, _ = run(capsys, "training", "-", "-o", "json")
    steps = json.loads(out)["recent_steps"]
    assert code == 0 and all(step["timestamp"] for step in steps)


@pytest.mark.parametrize(
    ("kind", "content", "message"),
    [
        ("nccl", None, "no such file"),
        ("nccl", "", "empty input"),
        ("dcgm", "\n  \n", "empty input"),
        ("nccl", (FIXTURES / "dcgm_4x_memory_fail.json").read_text(), "not nccl-tests -J output"),
        ("dcgm", (FIXTURES / "nccl_e1_modern.txt").read_text(), "not dcgmi diag output"),
        ("training", (FIXTURES / "nccl_e1_modern.txt").read_text(), "no Megatron-LM or NeMo training step lines"),
        ("nccl", b"\xff\xfe garbage \x00\n", "binary data (a NUL byte on line 1), not a tool's text output"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str,
                                         content: str | bytes | None, message: str) -> None:
    path = tmp_path / "input.log"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = run(capsys, kind, str(path))
    assert code == 2 and not out
    assert err == f"{path}: {message}\n" if message.startswith(("cannot", "empty")) else err.startswith(f"{path}: ")
    assert message in err and err.count("\n") == 1


def test_stdin_empty_names_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert run(capsys, "dcgm", "-") == (2, "", "stdin: empty input\n")


def test_a_directory_is_unreadable(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "nccl", str(tmp_path))
    assert code == 2 and err == f"{tmp_path}: is a directory, not a file\n"


def test_unknown_kind_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "ib_write_bw", "-"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and err.count("\n") == 1


def test_a_pass_with_skipped_tests_says_how_little_ran(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "dcgm", str(FIXTURES / "dcgm_mostly_skipped.json"))
    assert code == 0 and "PASSED (7 of 8 tests skipped: pcie, memory" in out
    code, out, _ = run(capsys, "dcgm", str(FIXTURES / "dcgm_mostly_skipped.json"), "-o", "json")
    assert json.loads(out)["verdict"] == "passed, 7 of 8 tests skipped"


NCCL_HEADER = "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
NCCL_ROW = "  1048576  262144  float  sum  -1  21.88  47.92  83.85  0  22.15  47.35  82.86  0\n"
NCCL_INF_ROW = "  2097152  524288  float  sum  -1   0.00    inf    inf  0  22.15  47.35  82.86  0\n"


def test_skipped_nccl_rows_are_noted_in_table_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "nccl.log"
    path.write_text(NCCL_HEADER + NCCL_ROW + NCCL_INF_ROW + "# Avg bus bandwidth    : 83.85\n")  # a whole run
    note = "nccl: 1 row skipped: algbw inf, busbw inf at size 2097152 B (line 3)"
    code, out, _ = run(capsys, "nccl", str(path))
    assert code == 0 and note in out and "PASSED" in out and "83.85" in out
    code, out, _ = run(capsys, "nccl", str(path), "-o", "json")
    data = json.loads(out)
    assert code == 0 and data["notes"] == [note] and data["skipped_count"] == 1
    assert data["skipped_rows"] == [{"size": 2097152, "cells": "algbw inf, busbw inf", "where": "line 3"}]


def test_nccl_rows_all_invalid_exit_2_naming_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "nccl.log"
    path.write_text(NCCL_HEADER + NCCL_INF_ROW)
    code, out, err = run(capsys, "nccl", str(path))
    assert (code, out) == (2, "")
    assert err == f"{path}: no valid nccl-tests result rows: 1 row skipped: algbw inf, busbw inf at size 2097152 B (line 2)\n"


# Two cycles of two sizes: the largest's out-of-place busbw (the 8th column, what busBandwidthGBps takes the max of over
# the per-size averages) is 1.11 then 1.12, whose average is 1.1150000000000002: 1.12 at two decimals, where the engine
# stores 1.115 (stored_value, 12 significant digits) and the report says 1.11.
TWO_CYCLES = """# nccl-tests version 2.19.6 nccl-headers=22903 nccl-library=22903
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 8388608 maxBytes 33554432 step: 4(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   5100 on    gpu-n01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   5101 on    gpu-n01 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
     8388608       2097152     float     sum      -1   9000.0    0.93    0.93       0   9000.0    0.93    0.93       0
    33554432       8388608     float     sum      -1  30000.0    1.11    1.11       0  30000.0    1.11    1.11       0
     8388608       2097152     float     sum      -1   9000.0    0.93    0.93       0   9000.0    0.93    0.93       0
    33554432       8388608     float     sum      -1  30000.0    1.12    1.12       0  30000.0    1.12    1.12       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 1.0225
#
# Collective test concluded: all_reduce_perf
"""


def test_measurements_read_as_the_engine_stores_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`nvcre parse nccl` formatted the raw average of the cycles (1.1150000000000002: "1.12") where the engine stores
    1.115 and the report says 1.11; its JSON measurements carried the float noise the engine drops."""
    from nvcre_tui.engine.judging.measure import measure
    from nvcre_tui.engine.parsers import PARSERS

    path = tmp_path / "two-cycles.log"
    path.write_text(TWO_CYCLES)
    assert PARSERS["nccl"](io.StringIO(TWO_CYCLES)).measurements()["busBandwidthGBps"] == 1.1150000000000002  # the noise
    stored = measure("nccl", TWO_CYCLES.splitlines()).measurements
    assert stored["busBandwidthGBps"] == 1.115
    code, out, _ = run(capsys, "nccl", str(path))
    summary = dict(line.split(None, 1) for line in out.splitlines() if line.startswith(("busBandwidthGBps", "algBandwidthGBps")))
    assert code == 0 and summary["busBandwidthGBps"] == "1.11", out
    largest = next(line.split() for line in out.splitlines() if line.lstrip().startswith("33554432"))
    assert largest[4] == "1.11", largest  # the per-size busbw the metric is the max of, read alike
    code, out, _ = run(capsys, "nccl", str(path), "-o", "json")
    assert code == 0 and json.loads(out)["measurements"] == stored


@pytest.mark.parametrize("name", ["nccl_error_column_healthy.txt", "nccl_legacy_error_noroot.txt"])
def test_an_output_without_run_markers_says_so_rather_than_0_of_0(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """nccl-tests builds that print no `# Collective test starting/concluded` lines (as the simulated fleet's logs):
    the table read `runs 0/0 concluded`, as if no run had started, over the rows of a whole run."""
    code, out, _ = run(capsys, "nccl", str(FIXTURES / name))
    runs = [line.split(None, 1)[1].strip() for line in out.splitlines() if line.startswith("runs ")]
    assert code == 0 and runs and "0/0" not in runs[0], out
    from nvcre_tui.cli.parse import NO_RUN_MARKERS

    assert runs == [NO_RUN_MARKERS]
