"""nccl-tests parsing: the semantics behind the golden files, one rule per test."""

from __future__ import annotations

import json
import random
import tracemalloc
from datetime import datetime, timezone

import pytest

from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.parsers import ParseError, parse_nccl
from nvcre_tui.engine.parsers.nccl_table import infer_layout, layout_from_header
from nvcre_tui.engine.sim.outputs import NcclFormat, NcclRun, write_nccl_log
from tests.parsers.golden import fixture_text as fixture

HEADER = "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
ROW = "     1048576        262144     float     sum      -1    21.88   47.92   83.85       0    22.15   47.35   82.86       0\n"


def test_reference_example_gives_nvcre_numbers() -> None:
    """Reference E.1: busBandwidthGBps 470.37, algBandwidthGBps 268.78, footer 345.461, 8 ranks on one host."""
    result = parse_nccl(fixture("nccl_e1_modern.txt"))
    assert result.measurements() == {"busBandwidthGBps": 470.37, "algBandwidthGBps": 268.78}
    assert result.avg_bus_bandwidth == 345.461
    assert {device.host for device in result.ranks.values()} == {"gpu-n01"} and len(result.ranks) == 8
    assert result.largest.size == 1073741824 and result.passed


def test_measurements_are_kept_at_twelve_significant_digits_not_the_float_noise_of_an_average() -> None:
    """Averages of printed values carry noise in the 17th digit, which each copy in a Workflow's status would keep."""
    text = HEADER + ROW.replace("83.85", "479.70") + ROW.replace("83.85", "479.72")
    noisy = parse_nccl(text.splitlines(keepends=True)).measurements()["busBandwidthGBps"]
    assert noisy == 479.71000000000004  # (479.70 + 479.72) / 2 in floats
    assert measure("nccl", text.splitlines(keepends=True)).measurements["busBandwidthGBps"] == 479.71


def test_bandwidth_is_max_of_per_size_averages_not_the_largest_row() -> None:
    """The legacy fixture degrades at its largest size: the metric is the best size's average."""
    result = parse_nccl(fixture("nccl_legacy_error_noroot.txt"))
    assert result.largest.out_of_place.busbw == 16.75
    assert result.bus_bandwidth_gbps == 76.98
    assert all(row.root is None for row in result.rows)


def test_cycles_average_per_size_in_first_seen_order() -> None:
    result = parse_nccl(fixture("nccl_kubelet_info_cycles.txt"))
    assert [size.size for size in result.sizes] == [8388608, 33554432, 134217728, 536870912]
    assert all(size.samples == 2 for size in result.sizes)
    assert result.sizes[0].out_of_place.busbw == pytest.approx((249.20 + 256.06) / 2)
    assert (result.sizes[0].min_busbw, result.sizes[0].max_busbw) == (249.20, 256.06)


def test_wrong_elements_mean_data_corruption() -> None:
    result = parse_nccl(fixture("nccl_all_gather_wrong.txt"))
    assert result.failure is not None and result.failure.reason == "DataCorruption"
    assert "16777216" in result.failure.message
    assert result.out_of_bounds == 1049600


def test_out_of_bounds_footer_alone_fails_too() -> None:
    text = "#\n" + HEADER + ROW + "# Out of bounds values : 12 FAILED\n"
    result = parse_nccl(text)
    assert result.failure is not None and "12 out-of-bounds" in result.failure.message


def test_no_rows_raises_no_data_collected() -> None:
    with pytest.raises(ParseError) as caught:
        parse_nccl(fixture("nccl_crashed_no_rows.txt"))
    assert caught.value.reason == "NoDataCollected"


def test_row_cut_before_its_newline_is_ignored() -> None:
    """The truncated fixture's last row reads `... 10` where `1024` was being printed: dropping it avoids a false corruption."""
    result = parse_nccl(fixture("nccl_truncated.txt"))
    assert result.sizes[-1].size == 2048 and result.passed


def test_lines_without_newlines_are_all_complete() -> None:
    """Callers that pass str.splitlines() output lose no row: the cut-off rule needs newlines to apply."""
    lines = ("#\n" + HEADER + ROW + ROW.replace("1048576 ", "2097152 ")).splitlines()
    assert parse_nccl(lines).row_count == 2


def test_rows_beyond_max_rows_still_count_in_averages() -> None:
    text = "#\n" + HEADER + ROW * 5
    result = parse_nccl(text, max_rows=2)
    assert len(result.rows) == 2 and result.row_count == 5 and result.sizes[0].samples == 5


@pytest.mark.parametrize("header", [HEADER, HEADER.lstrip("#"), HEADER.replace("#wrong", " error")])
def test_header_generations_give_the_same_layout(header: str) -> None:
    layout = layout_from_header(header.lstrip().lstrip("#").split())
    assert layout is not None and layout.prefix == ("size", "count", "type", "redop", "root")
    assert layout.wrong_at == 3 and layout.half_width == 4 and not layout.timestamp


@pytest.mark.parametrize(
    ("row", "prefix"),
    [
        (ROW, ("size", "count", "type", "redop", "root")),
        ("  8  2  float  sum  18.41  0.00  0.00  0e+00  18.22  0.00  0.00  0e+00", ("size", "count", "type", "redop")),
        ("  8  2  float  18.41  0.00  0.00  0e+00  18.22  0.00  0.00  0e+00", ("size", "count", "type")),
    ],
)
def test_rows_without_a_header_are_recognised_by_shape(row: str, prefix: tuple[str, ...]) -> None:
    layout = infer_layout(row.split())
    assert layout is not None and layout.prefix == prefix


@pytest.mark.parametrize("cell", ["nan", "inf", "1_000", "-3.0", "٣", "1e999"])
def test_cells_python_would_accept_but_tools_never_print_reject_the_row(cell: str) -> None:
    bad = ROW.replace(" 83.85 ", f" {cell} ")
    with pytest.raises(ParseError):
        parse_nccl("#\n" + HEADER + bad)


def test_per_iteration_and_timestamp_columns() -> None:
    result = parse_nccl(fixture("nccl_per_iter_timestamps.txt"))
    assert result.row_count == 2 and result.bus_bandwidth_gbps == 132.02 and result.programs == ("sendrecv_perf",)


def test_json_output_reads_like_the_table() -> None:
    result = parse_nccl(fixture("nccl_json_output.json"))
    assert result.bus_bandwidth_gbps == pytest.approx(353.751531)
    assert result.programs == ("all_reduce_perf_mpi",) and result.rows[0].root == -1
    assert result.avg_bus_bandwidth == pytest.approx(306.243886)


@pytest.mark.parametrize("text", ['{"results": 3}', '{"results": [', '{"foo": 1}', "[" * 100000])
def test_broken_json_is_wrong_format_or_no_data(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_nccl(text)
    assert caught.value.reason in ("WrongFormat", "NoDataCollected")


def test_memory_stays_bounded_by_sizes_not_lines() -> None:
    """Parsing 4x more cycles must not need more memory: the parser streams (both logs fill its batches)."""

    def peak(cycles: int) -> int:
        run = NcclRun("all_reduce_perf_mpi", [("n1", d, "GPU") for d in range(8)], [2**i for i in range(10, 20)],
                      busbw=lambda size, cycle: 100.0 + cycle % 7, cycles=cycles)
        lines = write_nccl_log(run, random.Random(0), NcclFormat(info_noise=0.5))
        tracemalloc.start()
        parse_nccl(lines, max_rows=16)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(300), peak(1200)
    assert large < small * 1.25, (small, large)


# --- the `error` column of older builds (issue 12, point 1) -------------------------------------------------

ERROR_HEADER = ("#       size         count      type   redop    root     time   algbw   busbw  error     time   algbw   busbw"
                "  error\n")


def error_row(size: int, error: str, kind: str = "float") -> str:
    return f"  {size:10d}  {size // 4:10d}  {kind:>8s}     sum      -1    98.02   34.32   34.32  {error}    99.10   33.59   33.59  {error}\n"


def test_error_column_is_a_deviation_not_a_count() -> None:
    """A healthy old run prints 2e-07 .. 5e-07 errors: no DataCorruption, and no 'wrong elements' counted."""
    result = parse_nccl(fixture("nccl_error_column_healthy.txt"))
    assert result.passed and all(size.wrong == 0 for size in result.sizes)
    assert max(size.max_error or 0.0 for size in result.sizes) == 5e-07
    assert result.rows[3].out_of_place.error == 2e-07 and result.rows[3].out_of_place.wrong is None


@pytest.mark.parametrize(("footer", "passed"), [("# Out of bounds values : 0 OK\n", True),
                                                ("# Out of bounds values : 2 FAILED\n", False), ("", False)])
def test_the_footer_judges_errors_over_tolerance(footer: str, passed: bool) -> None:
    """3e-02 is over float's 1e-05; nccl-tests' own footer decides when printed, else the tolerance does."""
    result = parse_nccl("#\n" + ERROR_HEADER + error_row(1024, "2e-07") + error_row(4096, "3e-02") + footer)
    assert result.passed is passed
    if not passed:
        assert result.failure is not None and result.failure.reason == "DataCorruption"
        assert "4096" in result.failure.message


@pytest.mark.parametrize(("kind", "error", "passed"), [("half", "1e-02", True), ("float", "1e-02", False),
                                                       ("int32", "1e+00", False), ("double", "0e+00", True)])
def test_tolerance_follows_the_data_type(kind: str, error: str, passed: bool) -> None:
    result = parse_nccl("#\n" + ERROR_HEADER + error_row(1024, error, kind))
    assert result.passed is passed


def test_cut_off_run_with_an_error_over_tolerance_fails() -> None:
    result = parse_nccl(fixture("nccl_error_column_cut_off_over_tolerance.txt"))
    assert result.failure is not None and "16777216" in result.failure.message
    assert result.sizes[1].max_error == 3e-02


def test_headerless_rows_tell_error_cells_from_counts() -> None:
    """Without a header, a '2e-07' cell is an error (healthy), a '3' cell a count of wrong elements."""
    error_rows = error_row(1024, "2e-07") + error_row(2048, "5e-07")
    assert parse_nccl(error_rows).passed
    assert not parse_nccl(error_rows.replace("5e-07", "3")).passed


# --- launcher prefixes (point 2), blank redop cells (point 3), refusal causes (point 8) ------------------------

def test_srun_labels_are_prefixes() -> None:
    result = parse_nccl(fixture("nccl_srun_label.txt"))
    assert result.row_count == 4 and result.bus_bandwidth_gbps == 39.76 and result.runs_concluded == 1
    assert {device.host for device in result.ranks.values()} == {"gh200-c01", "gh200-c02"}


def test_any_mix_of_kubelet_srun_and_mpirun_prefixes() -> None:
    result = parse_nccl(fixture("nccl_mixed_prefixes.txt"))
    assert result.programs == ("all_gather_perf_mpi",) and result.row_count == 3
    assert result.bus_bandwidth_gbps == 25.34 and result.avg_bus_bandwidth == 19.9517


def test_a_header_that_fits_no_row_yields_to_the_rows_shape() -> None:
    """The header names redop, the alltoall rows leave that cell blank."""
    result = parse_nccl(fixture("nccl_alltoall_blank_redop.txt"))
    assert result.row_count == 3 and result.bus_bandwidth_gbps == 35.40
    assert result.sizes[0].redop == "none" and result.passed


def test_no_table_because_nccl_failed_says_so() -> None:
    with pytest.raises(ParseError) as caught:
        parse_nccl(fixture("nccl_unhandled_system_error.txt"))
    assert caught.value.reason == "NoDataCollected"
    assert "NCCL failed" in caught.value.message and "socketStartConnect" in caught.value.message


# --- the batched fast path (point 9) reads exactly what the strict reader reads -----------------------------

@pytest.mark.parametrize("layout", ["modern", "root-error", "legacy"])
@pytest.mark.parametrize("timestamps", [None, datetime(2026, 3, 2, 10, tzinfo=timezone.utc)])
def test_batched_rows_equal_strictly_read_rows(layout: str, timestamps: datetime | None) -> None:
    run = NcclRun("all_reduce_perf_mpi", [("n1", d, "GPU") for d in range(8)], [2**i for i in range(10, 22)],
                  busbw=lambda size, cycle: 10.0 + (size % 97) + cycle * 0.37, cycles=400,
                  wrong=lambda size, cycle: 1 if (size, cycle) == (4096, 333) else 0)
    text = "".join(write_nccl_log(run, random.Random(3), NcclFormat(layout=layout, timestamps=timestamps,
                                                                      info_noise=0.3)))
    batched, strict = parse_nccl(text, max_rows=0), parse_nccl(text, max_rows=10**9)
    assert batched.row_count == strict.row_count == 12 * 400
    for fast, slow in zip(batched.sizes, strict.sizes, strict=True):
        assert (fast.size, fast.samples, fast.wrong, fast.max_error) == (slow.size, slow.samples, slow.wrong, slow.max_error)
        assert fast.out_of_place.busbw == pytest.approx(slow.out_of_place.busbw, rel=1e-12)
        assert fast.in_place.time_us == pytest.approx(slow.in_place.time_us, rel=1e-12)
        assert (fast.min_busbw, fast.max_busbw) == (slow.min_busbw, slow.max_busbw)
    assert batched.failure == strict.failure and batched.failure is not None  # the one wrong cell, both ways


@pytest.mark.parametrize("cell", ["nan", "inf", "1_000", "-3.0", "٣", "1e999", "+4"])
def test_batched_rows_refuse_what_the_strict_reader_refuses(cell: str) -> None:
    good = "#\n" + HEADER + ROW * 3000
    bad = ROW.replace(" 83.85 ", f" {cell} ")
    result = parse_nccl(good + bad * 5 + ROW * 10, max_rows=0)
    assert result.row_count == 3010 and result.sizes[0].max_busbw == 83.85


def test_a_line_without_newline_followed_by_more_input_is_whole() -> None:
    """Only the last line can have been cut off; one in the middle of a list of lines was complete."""
    lines = ["#\n", HEADER, ROW.rstrip("\n"), "some noise\n", ROW.replace("1048576 ", "2097152 ").rstrip("\n")]
    result = parse_nccl(lines)
    assert result.row_count == 1 and result.sizes[0].size == 1048576  # the last row, cut off, is dropped


@pytest.mark.parametrize(("old", "new"), [("     float ", "    1float "), ("  262144 ", " 26214_4 "), ("   -1 ", " -1x "),
                                          ("       0\n", "    zero\n"), ("1048576 ", "١٠٤٨٥٧٦ ")])
def test_batched_rows_refuse_bad_prefix_and_wrong_cells(old: str, new: str) -> None:
    bad = ROW.replace(old, new, 1)
    assert bad != ROW
    result = parse_nccl("#\n" + HEADER + ROW * 3000 + bad * 5 + ROW * 10, max_rows=0)
    assert result.row_count == 3010 and [size.size for size in result.sizes] == [1048576]


def test_a_repeated_header_that_fits_no_row_of_its_table_still_yields() -> None:
    """Run 1's rows fit the header; run 2 prints the same header over rows with a blank redop cell."""
    blank = fixture("nccl_alltoall_blank_redop.txt")
    rows = [line for line in blank.splitlines(True) if line.strip() and not line.startswith("#")]
    fitting = [line.replace("float      ", "float  none", 1) for line in rows]
    header = [line for line in blank.splitlines(True) if line.startswith("#")][:12]
    result = parse_nccl("".join(header + fitting + header + rows))
    assert result.row_count == 6 and all(size.samples == 2 for size in result.sizes)


# --- rows whose time or bandwidth is inf, nan or negative: left out of the averages, never silently -----------

ROW_2M = ROW.replace("1048576 ", "2097152 ")
KUBELET = "2026-03-02T10:15:04.123456789Z "


@pytest.mark.parametrize(("old", "new", "named"), [
    (" 83.85 ", " inf ", "busbw inf"), (" 83.85 ", " -inf ", "busbw -inf"), (" 83.85 ", " nan ", "busbw nan"),
    (" 83.85 ", " -nan ", "busbw -nan"), (" 83.85 ", " -1.00 ", "busbw -1.00"), (" 83.85 ", " -0.00 ", "busbw -0.00"),
    (" 47.92 ", " inf ", "algbw inf"), (" 21.88 ", " -nan ", "time -nan"), (" 82.86 ", " nan ", "in-place busbw nan"),
    (" 47.92   83.85 ", " inf   inf ", "algbw inf, busbw inf"),
])
def test_a_row_with_an_invalid_cell_is_skipped_and_named(old: str, new: str, named: str) -> None:
    clean = "#\n" + HEADER + ROW
    result = parse_nccl(clean + ROW_2M.replace(old, new, 1))
    assert result.notes() == (f"nccl: 1 row skipped: {named} at size 2097152 B (line 4)",)
    assert result.to_dict()["notes"] == list(result.notes()) and result.to_dict()["skipped_count"] == 1
    # The verdict and the numbers are those of the valid rows, exactly as before.
    valid = parse_nccl(clean)
    assert result.measurements() == valid.measurements() and result.passed and result.row_count == 1
    assert valid.notes() == () and "notes" not in valid.to_dict() and "skipped_count" not in valid.to_dict()


def test_rows_without_a_header_are_named_too() -> None:
    result = parse_nccl(ROW + ROW_2M.replace(" 83.85 ", " inf "))
    assert result.notes() == ("nccl: 1 row skipped: busbw inf at size 2097152 B (line 2)",)


def test_batched_rows_with_invalid_cells_are_named_with_their_lines() -> None:
    bad = ROW_2M.replace(" 83.85 ", " inf ")
    result = parse_nccl("#\n" + HEADER + ROW * 3000 + bad * 5 + ROW * 10, max_rows=0)
    assert result.row_count == 3010 and result.skipped_count == 5 and result.sizes[0].max_busbw == 83.85
    named = "; ".join(f"busbw inf at size 2097152 B (line {number})" for number in (3003, 3004, 3005))
    assert result.notes() == (f"nccl: 5 rows skipped: {named} and 2 more",)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batched_rows_name_the_lines_the_strict_reader_names(seed: int) -> None:
    """Shuffled sizes (no cycle: the sorting path), bare and kubelet-prefixed rows: same skipped rows both ways."""
    rng = random.Random(seed)
    rows = [rng.choice([ROW, ROW_2M, ROW.replace("1048576 ", "4194304 ")]) for _ in range(6000)]
    rows = [KUBELET + row if rng.random() < 0.4 else row for row in rows]
    bad_at = sorted(rng.sample(range(100, 6000), 3))
    for index in bad_at:
        rows[index] = rows[index].replace(" 47.92 ", " -nan ")
    text = "#\n" + HEADER + "".join(rows)
    batched, strict = parse_nccl(text, max_rows=0), parse_nccl(text, max_rows=10**9)
    expected = {f"line {index + 3}" for index in bad_at}
    assert {row.where for row in batched.skipped_rows} == {row.where for row in strict.skipped_rows} == expected
    assert batched.skipped_count == strict.skipped_count == 3 and batched.row_count == strict.row_count == 5997


def test_named_skipped_rows_are_capped_and_the_rest_counted() -> None:
    result = parse_nccl("#\n" + HEADER + ROW + ROW_2M.replace(" 83.85 ", " nan ") * 1000)
    assert result.skipped_count == 1000 and len(result.skipped_rows) == 3
    assert result.notes()[0].startswith("nccl: 1000 rows skipped: busbw nan") and result.notes()[0].endswith(" and 997 more")


def test_a_log_of_only_invalid_rows_is_no_measurement() -> None:
    text = "#\n" + HEADER + ROW.replace(" 83.85 ", " inf ")
    with pytest.raises(ParseError) as caught:
        parse_nccl(text)
    assert caught.value.reason == "NoDataCollected"
    assert caught.value.message == "no valid nccl-tests result rows: 1 row skipped: busbw inf at size 1048576 B (line 3)"
    measured = measure("nccl", text.splitlines())  # what the engine judges a run's log with
    assert measured.failure is not None and measured.failure.reason == "NoDataCollected" and not measured.measurements
    assert "busbw inf at size 1048576 B" in measured.failure.message


def test_the_engine_passes_the_note_on_with_a_pass() -> None:
    measured = measure("nccl", ("#\n" + HEADER + ROW + ROW_2M.replace(" 83.85 ", " inf ")).splitlines())
    assert measured.failure is None and measured.measurements["busBandwidthGBps"] == 83.85
    assert measured.notes == ("nccl: 1 row skipped: busbw inf at size 2097152 B (line 4)",)


def test_json_entries_with_invalid_numbers_are_named_by_index() -> None:
    document = json.loads(fixture("nccl_json_output.json"))
    valid = parse_nccl(fixture("nccl_json_output.json"))
    document["results"][1]["out_of_place"]["bus_bw"] = -1.0
    document["results"][2]["in_place"]["alg_bw"] = float("nan")  # json.dumps writes NaN, which Python reads back
    sizes = [entry["size"] for entry in document["results"]]
    result = parse_nccl(json.dumps(document))
    assert result.notes() == (f"nccl: 2 rows skipped: busbw -1 at size {sizes[1]} B (results[1]); "
                              f"in-place algbw nan at size {sizes[2]} B (results[2])",)
    assert result.row_count == valid.row_count - 2


def test_a_json_integer_beyond_any_double_is_no_number_not_a_traceback() -> None:
    """float() of a 400-digit JSON integer raises OverflowError: the entry is named as skipped instead."""
    document = json.loads(fixture("nccl_json_output.json"))
    document["results"][0]["out_of_place"]["alg_bw"] = 10**400
    result = parse_nccl(json.dumps(document))
    assert result.skipped_count == 1 and result.skipped_rows[0].cells == "algbw 100000000000000000000..."


def test_json_entries_refused_for_any_other_reason_are_named_but_trace_replay_entries_are_not() -> None:
    document = json.loads(fixture("nccl_json_output.json"))
    sizes = [entry["size"] for entry in document["results"]]
    document["results"][0]["count"] = "1e3"
    del document["results"][1]["in_place"]["time"]
    document["results"].append({"size": 8, "count": 2, "type": "float", "in_place": {"time": 1.0}})  # trace replay
    result = parse_nccl(json.dumps(document))
    assert result.skipped_count == 2 and result.row_count == 1
    assert result.notes() == (f'nccl: 2 rows skipped: count "1e3" at size {sizes[0]} B (results[0]); in-place time missing '
                              f"at size {sizes[1]} B (results[1])",)
    document["results"][0]["count"], document["results"][0]["type"] = 4, 7
    assert parse_nccl(json.dumps(document)).skipped_rows[0].cells == "type 7"


# --- lines that look like rows but are refused for any other reason: named too, never dropped silently --------

E1 = fixture("nccl_e1_modern.txt")
E1_ROW_2M = "     2097152        524288     float     sum      -1    25.77   81.39  142.43       0    26.08   80.42  140.74       0\n"


@pytest.mark.parametrize("max_rows", [2048, 0])  # the strict reader, and the batched one handing a failed group back
@pytest.mark.parametrize(("old", "new", "named"), [
    (" 142.43 ", " +4 ", "busbw +4"), (" 524288 ", " 1_000 ", "count 1_000"), (" 81.39 ", " abc ", "algbw abc"),
    (" 142.43 ", " ٣ ", "busbw ٣"), (" 25.77 ", " +inf ", "time +inf"), ("    -1 ", "   -1x ", "root -1x"),
    ("     float ", "    1float ", "type 1float"), ("       0\n", "    zero\n", "in-place #wrong zero"),
    ("  140.74 ", "  ", "12 cells (the table has 13)"), ("       0\n", "       0    0\n", "14 cells (the table has 13)"),
])
def test_a_row_like_line_refused_for_another_reason_is_named(max_rows: int, old: str, new: str, named: str) -> None:
    """Reference E.1 with its 2 MB row damaged: that row is named with its line, the other ten measure as before."""
    bad = E1_ROW_2M.replace(old, new, 1)
    assert bad != E1_ROW_2M and E1.count(E1_ROW_2M) == 1
    result = parse_nccl(E1.replace(E1_ROW_2M, bad), max_rows=max_rows)
    assert result.notes() == (f"nccl: 1 row skipped: {named} at size 2097152 B (line 19)",)
    assert result.row_count == 10 and 2097152 not in [size.size for size in result.sizes]
    assert result.measurements() == parse_nccl(E1).measurements() and result.passed


def test_refused_rows_behind_kubelet_timestamps_are_named_with_their_lines() -> None:
    text = fixture("nccl_kubelet_info_cycles.txt")
    lines = text.splitlines(True)
    numbers = [number for number, line in enumerate(lines, 1) if line.split()[1:2] == ["134217728"]]
    assert len(numbers) == 2
    damaged = lines[numbers[1] - 1].replace(" 134217728 ", " 1_34217728 ", 1).replace("    float ", " float 7 ", 1)
    lines[numbers[0] - 1] = lines[numbers[0] - 1].replace("  float ", " +float ", 1)
    lines[numbers[1] - 1] = damaged  # its size cell is no integer: not row-like, no size to name
    result = parse_nccl("".join(lines))
    assert result.notes() == (f"nccl: 1 row skipped: type +float at size 134217728 B (line {numbers[0]})",)
    assert [size.samples for size in result.sizes] == [2, 2, 2]


@pytest.mark.parametrize("line", [
    "\n", "#\n", "# Avg bus bandwidth    : 345.461 \n", "Avg bus bandwidth    : 345.461\n", "# Out of bounds values : 0 OK\n",
    "Out of bounds values : 0 OK\n", "#  Rank  0 Group  0 Pid   4101 on    gpu-n01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n",
    "gpu-n01:4101:4188 [0] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7\n",
    "gpu-n01:4101:4160 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.20<48190> with status=12 opcode=0 len=0\n",
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 1 iters: 100 agg iters: 1\n",
    "nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 1 iters: 100 agg iters: 1\n",
    "#     1048576        262144     float     sum      -1    21.88   47.92   83.85       0    22.15   47.35   82.86       0\n",
    "8 ranks on 1 node, each rank runs one thread with one GPU and no graph capture at all\n",
    "Warning: Permanently added 'gpu-n02' (ED25519) to the list of known hosts.\n", "4101 4102 4103\n",
])
def test_lines_that_are_no_rows_are_no_refused_rows(line: str) -> None:
    """Headers, comments (a commented-out row too), banners, NCCL INFO/WARN lines, footers, prose and short
    number lines, in the middle of the table, are not named."""
    first = E1.index(E1_ROW_2M)
    result = parse_nccl(E1[:first] + line + E1[first:])
    assert result.notes() == () and result.row_count == 11


def test_a_log_of_only_refused_rows_is_no_measurement_and_names_them() -> None:
    rows = [line for line in E1.splitlines(True) if line.split()[2:3] == ["float"]]
    assert len(rows) == 11
    text = E1.replace(rows[0], rows[0].replace(" 262144 ", " 1_000 "))
    for row in rows[1:]:
        text = text.replace(row, row.replace("  float ", " f1oat 1 ", 1))
    with pytest.raises(ParseError) as caught:
        parse_nccl(text)
    assert caught.value.reason == "NoDataCollected"
    assert caught.value.message == ("no valid nccl-tests result rows: 11 rows skipped: count 1_000 at size 1048576 B (line 18); "
                                    "14 cells (the table has 13) at size 2097152 B (line 19); "
                                    "14 cells (the table has 13) at size 4194304 B (line 20) and 8 more")


def test_the_last_line_cut_off_mid_row_is_no_refused_row() -> None:
    """A log cut before its last newline drops that incomplete row by rule (its cells may be cut short)."""
    cut = E1[: E1.index(E1_ROW_2M) + E1_ROW_2M.index("26.08")]  # 9 of its 13 cells
    result = parse_nccl(cut)
    assert result.row_count == 1 and result.notes() == ()
    assert parse_nccl(cut + "\n").notes() == ("nccl: 1 row skipped: 9 cells (the table has 13) at size 2097152 B (line 19)",)


@pytest.mark.parametrize("text", ["--5", "+4", "1_000", "٣", "- 1"])
def test_a_json_root_int_would_read_or_choke_on_is_no_root_and_no_traceback(text: str) -> None:
    """int() takes "+4" and "1_000" and raises on "--5": nccl-tests writes "    -1", nothing else is read."""
    document = json.loads(fixture("nccl_json_output.json"))
    document["results"][0]["root"] = text
    result = parse_nccl(json.dumps(document))
    assert result.rows[0].root is None and result.rows[1].root == -1 and result.row_count == 3


def test_a_row_another_rank_printed_into_is_named_skipped_not_dropped() -> None:
    header = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    row = "     {size}   262144     float     sum      -1    50.00   20.97   31.46      0    50.00   20.97   31.46      0\n"
    log = (header + row.format(size=1048576)
           + "     2097152        524288     float     sum      -1    60.00  n02:4102:4190 [1] NCCL INFO comm 0x55d0 rank 1 Destroy COMPLETE\n"
           + " 34.95   52.43      0    60.00   34.95   52.43      0\n" + row.format(size=4194304)
           + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 31.46\n")
    result = parse_nccl(log)
    assert [s.size for s in result.sizes] == [1048576, 4194304]
    assert result.notes() and "at size 2097152 B (line 3)" in result.notes()[0]


@pytest.mark.parametrize("max_rows", [2048, 0])
def test_nccl_tests_own_bandwidth_check_failing_is_a_failure(max_rows: int) -> None:
    """nccl-tests (since its first release) judges its average bus bandwidth itself when NCCL_TESTS_MIN_BW is set (src/util.cu
    writeResultFooter: '# Avg bus bandwidth    : %g FAILED', or OK; -J: average_bus_bandwidth okay "false") and exits
    non-zero. The parser read the number and passed the run nccl-tests failed."""
    text = fixture("nccl_e1_modern.txt")
    footer = next(line for line in text.splitlines() if "Avg bus bandwidth" in line)
    failed = parse_nccl(text.replace(footer, footer.rstrip() + " FAILED"), max_rows=max_rows)
    assert failed.failure is not None and failed.failure.reason == "BandwidthCheckFailed"
    assert failed.failure.message == ("nccl-tests' own bandwidth check failed: average bus bandwidth 345.461 GB/s is below "
                                      "0.9 x the NCCL_TESTS_MIN_BW it was given")
    assert failed.measurements() == parse_nccl(text).measurements()  # still what it measured
    assert parse_nccl(text.replace(footer, footer.rstrip() + " OK"), max_rows=max_rows).failure is None
    document = json.loads(fixture("nccl_json_output.json"))
    assert parse_nccl(json.dumps(document)).failure is None  # "unchecked"
    document["average_bus_bandwidth"]["okay"] = "false"
    judged = parse_nccl(json.dumps(document)).failure
    assert judged is not None and judged.reason == "BandwidthCheckFailed" and "306.244 GB/s" in judged.message


def _lone_rank_run(host: str, pid: int, bus: str) -> str:
    """One process's whole output under mpirun when nccl-tests was built without MPI (nccl-tests#107, #294): it is its
    own one-rank run, so a broadcast measures the GPU's local copy (busbw = algbw, fast) and never a link."""
    return f"""# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#  Rank  0 Group  0 Pid {pid:6d} on {host:>10} device  0 [{bus}] NVIDIA H100 80GB HBM3
#
#                                                       out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    67108864      16777216     float    none       0    95.10  705.67  705.67      0     2.10  31956.6  31956.6    N/A
   134217728      33554432     float    none       0   186.20  720.83  720.83      0     2.12  63310.2  63310.2    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 16673.3
#
"""


def test_processes_that_each_ran_nccl_tests_alone_measured_no_link() -> None:
    """A non-MPI nccl-tests build started by mpirun on two nodes prints two one-rank runs, each rank 0; they merged into
    one broadcast reading 720 GB/s of local copies, a pass over any bus bandwidth threshold. It fails RanksNotJoined."""
    text = _lone_rank_run("gpu-n01", 4101, "0000:18:00") + _lone_rank_run("gpu-n02", 5230, "0000:18:00")
    result = parse_nccl(text)
    assert result.failure is not None and result.failure.reason == "RanksNotJoined", result.failure
    assert result.failure.message.startswith("2 processes each ran nccl-tests as its own one-rank run "
                                             "(gpu-n01 device 0, gpu-n02 device 0): nothing was measured between GPUs")
    # one process alone, or the same GPU's one-rank run twice (two cycles), is what it says it is
    assert parse_nccl(_lone_rank_run("gpu-n01", 4101, "0000:18:00")).failure is None
    assert parse_nccl(_lone_rank_run("gpu-n01", 4101, "0000:18:00") * 2).failure is None
    assert parse_nccl(fixture("nccl_e1_modern.txt") * 2).failure is None  # a run of eight ranks, twice
