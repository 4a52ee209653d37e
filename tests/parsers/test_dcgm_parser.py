"""dcgmi diag parsing: verdict rules across DCGM 3.x, 4.x, the hybrid, --iterations and the text table."""

from __future__ import annotations

import json
import random

import pytest

from nvcre_tui.engine.judging.measure import measure
from nvcre_tui.engine.parsers import ParseError, parse_dcgm
from tests.parsers.golden import fixture_text as fixture


def document(results: list[dict[str, object]], summary: str | None = None) -> str:
    test: dict[str, object] = {"name": "memory", "results": results}
    if summary is not None:
        test["test_summary"] = {"status": summary}
    return json.dumps({"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [test]}]}})


def gpu(index: int, status: str, warning: str | None = None) -> dict[str, object]:
    entry: dict[str, object] = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": index, "status": status}
    if warning:
        entry["warnings"] = [{"warning": warning, "error_id": 7, "error_category": 1, "error_severity": 2}]
    return entry


def test_failure_names_test_gpu_and_warning() -> None:
    result = parse_dcgm(fixture("dcgm_4x_memory_fail.json"))
    assert result.failure is not None
    assert result.failure.message == "memory failed on GPU 1: Synthetic: uncorrectable ECC error on GPU 1"
    assert result.failure.gpus == (1,) and result.format == "4.x" and result.gpus == (0, 1)


def test_the_warning_naming_the_failed_gpu_is_chosen() -> None:
    text = document([gpu(0, "Pass", "GPU 0 is fine but slow"), gpu(2, "Fail", "GPU 2 has 3 retired pages")])
    result = parse_dcgm(text)
    assert result.failure is not None and result.failure.message.endswith("GPU 2 has 3 retired pages")


def test_warn_passes_but_keeps_the_warning() -> None:
    result = parse_dcgm(fixture("dcgm_3x_warn_pass.json"))
    power = next(test for test in result.tests if test.name == "targeted_power")
    assert result.passed and power.status == "Warn"
    assert power.results[2].warnings[0].message.startswith("GPU 2 Max power")


def test_3x_names_map_to_4x_plugin_names_and_gpu_ids_expand() -> None:
    result = parse_dcgm(fixture("dcgm_3x_warn_pass.json"))
    names = {test.name for test in result.tests}
    assert {"memory", "pcie", "targeted_power", "memtest", "denylist"} <= names
    assert result.tests[0].results[0].gpus == (0, 1, 2, 3) and result.version == "3.3.9"


def test_summary_failure_without_a_failing_gpu_still_fails_the_node() -> None:
    for name in ("dcgm_hybrid_pcie_summary_fail.json", "dcgm_table_4x_pcie_fail.txt"):
        result = parse_dcgm(fixture(name))
        assert result.failure is not None and result.failure.gpus == ()
        assert result.failure.message.startswith("pcie failed: There was an internal error")


def test_runtime_error_is_its_own_reason() -> None:
    for name in ("dcgm_runtime_error.json", "dcgm_text_runtime_error.txt"):
        result = parse_dcgm(fixture(name))
        assert result.failure is not None and result.failure.reason == "DcgmRuntimeError"
        assert "Host engine connection" in result.failure.message


def test_iterations_keep_every_run() -> None:
    result = parse_dcgm(fixture("dcgm_iterations_pass.json"))
    assert result.iterations == 3 and result.overall == "Pass" and result.passed
    assert sorted({test.iteration for test in result.tests}) == [0, 1, 2]


def test_overall_fail_without_results_fails() -> None:
    result = parse_dcgm(json.dumps({"iterations": [], "Overall Result": "Fail", "warning": "the NVVS reported an error"}))
    assert result.failure is not None and "the NVVS reported an error" in result.failure.message


def test_everything_skipped_is_not_a_pass() -> None:
    result = parse_dcgm(fixture("dcgm_all_skipped.json"))
    assert result.failure is not None and result.failure.reason == "DcgmNothingRan"


@pytest.mark.parametrize("status", ["Exploded", "", None, 3])
def test_an_unknown_status_never_passes(status: object) -> None:
    result = parse_dcgm(document([gpu(0, "Pass"), {**gpu(1, "Pass"), "status": status}]))
    assert result.failure is not None and result.failure.gpus == (1,)


def test_table_warning_chunks_rejoin_without_losing_spaces() -> None:
    result = parse_dcgm(fixture("dcgm_table_3x_power_fail.txt"))
    assert result.failure is not None and result.failure.gpus == (1,)
    assert "did not reach desired power minimum target_power_min_ratio of 224.2 for GPU 1 Verify that the clock speeds" \
        in result.failure.message


def test_leading_text_before_the_json_is_skipped() -> None:
    result = parse_dcgm("WARNING: THIS SHOULD NOT HAPPEN\n" + document([gpu(0, "Pass")], "Pass"))
    assert result.passed and result.tests[0].results[0].gpus == (0,)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "WrongFormat"),
        ("hello\nworld\n", "WrongFormat"),
        ('{"DCGM Diagnostic": {"version": "4.2.3"}}', "NoDataCollected"),
        ('{"something": "else"}', "WrongFormat"),
        ('{"DCGM Diagnostic": [1, 2]}', "WrongFormat"),
        ("{ not json", "WrongFormat"),
        ("+-----+\n| Diagnostic | Result |\n+-----+\n", "NoDataCollected"),
    ],
)
def test_garbage_raises_parse_error(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_dcgm(text)
    assert caught.value.reason == reason


# --- issue 12, points 7-8 --------------------------------------------------------------------------------

def test_a_table_row_without_frame_and_header_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        parse_dcgm(fixture("dcgm_table_row_without_frame.txt"))
    assert caught.value.reason == "WrongFormat" and "Diagnostic | Result" in caught.value.message


def test_random_bytes_invent_no_tests() -> None:
    noise = random.Random(12).randbytes(1 << 20).decode("utf-8", errors="replace")
    noise = noise.replace("\x00", "")
    for text in (noise, "\n".join("| " + line[:40] + " | Fail |" for line in noise.splitlines()[:2000])):
        with pytest.raises(ParseError) as caught:
            parse_dcgm(text)
        assert caught.value.reason == "WrongFormat"


def test_a_pass_with_skipped_tests_is_marked() -> None:
    result = parse_dcgm(fixture("dcgm_mostly_skipped.json"))
    assert result.passed and result.verdict == "passed, 7 of 8 tests skipped"
    assert result.skipped_tests == ("pcie", "memory", "diagnostic", "nvbandwidth", "targeted_stress",
                                    "targeted_power", "memory_bandwidth")
    clean = parse_dcgm(fixture("dcgm_iterations_pass.json"))
    assert clean.verdict == "passed" and clean.skipped_tests == ()


def test_an_xid_named_in_a_message_maps_to_its_gpu() -> None:
    """The result groups GPUs 0-3; only the Xid message names GPU 3."""
    result = parse_dcgm(fixture("dcgm_xid_in_message.json"))
    assert result.failure is not None and result.failure.gpus == (3,)
    assert result.failure.message.startswith("diagnostic failed on GPU 3: Detected Xid 79")


def test_invalid_json_is_reported_as_invalid_json() -> None:
    """A truncated document holds nested objects that decode: it is still invalid JSON, not other JSON."""
    with pytest.raises(ParseError) as caught:
        parse_dcgm(fixture("dcgm_truncated_json.json"))
    assert caught.value.reason == "WrongFormat" and caught.value.message.startswith("not valid JSON (line 20")
    assert "not dcgmi diag output" not in caught.value.message


def test_a_table_cut_off_before_its_closing_frame_never_passes() -> None:
    whole = fixture("dcgm_table_4x_pcie_fail.txt")
    cut = whole[: whole.index("+-----  Integration")]  # the memory test's rows, no rule after them
    result = parse_dcgm(cut)
    assert result.failure is None and result.incomplete is not None and "stops after memory" in result.incomplete
    finished = measure("dcgm", cut.splitlines(keepends=True), 4).finished_failure()
    assert finished is not None and finished.reason == "RunIncomplete"
    assert parse_dcgm(whole).incomplete is None  # the whole table is closed


def test_every_document_counts_and_text_after_them_is_read() -> None:
    passed, failed = document([gpu(0, "Pass"), gpu(1, "Pass")], "Pass"), document([gpu(0, "Pass"), gpu(1, "Fail", "ECC")], "Fail")
    two = parse_dcgm(f"{passed}\n{failed}\n")
    assert two.failure is not None and "GPU 1 (iteration 2)" in two.failure.message
    error = parse_dcgm(f"{passed}\nError: unable to complete diagnostic for group 2. Return: (-3)\n")
    assert error.failure is not None and "unable to complete diagnostic" in error.failure.message
    chatter = parse_dcgm(f"{passed}\ndone\n")
    assert chatter.failure is None and chatter.notes() == ("text after the dcgmi diag results, not read as results: 'done'",)
    assert parse_dcgm(passed).notes() == ()


def test_a_wrappers_json_log_line_after_the_results_is_a_note_and_a_cut_second_document_no_pass() -> None:
    passed = document([gpu(0, "Pass"), gpu(1, "Pass")], "Pass")
    logged = parse_dcgm(f"{passed}\n" + '{"level": "info", "msg": "dcgmi diag finished"}\n')
    assert logged.failure is None and logged.incomplete is None and "dcgmi diag finished" in logged.notes()[0]
    cut = parse_dcgm(f"{passed}\n" + json.dumps(json.loads(passed), indent=2)[:60])
    assert cut.failure is None and cut.incomplete is not None and "does not decode" in cut.incomplete
