"""Never a silent drop: evidence that cannot be read fails the verdict or is named in a note, and odd text (lone
surrogates, a byte order mark, terminal colours) is read, never a crash or a pass by omission."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.inputs.json_safe import parse_json
from nvcre_tui.engine.parsers import parse_dcgm, parse_nccl, parse_training
from tests.parsers.golden import fixture_text as fixture

MEMORY_FAIL = fixture("dcgm_4x_memory_fail.json")
E1 = fixture("nccl_e1_modern.txt")
NCCL_JSON = fixture("nccl_json_output.json")
MEGATRON = fixture("training_megatron_8b.log")


def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, text: str, *options: str) -> tuple[int, str]:
    path = tmp_path / "input.log"
    path.write_text(text, encoding="utf-8")
    code = main(["parse", kind, str(path), *options])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def _dcgm_with(change: dict[str, object]) -> str:
    """The failing 4.x fixture with its failing test's fields (`name`, or the category's `tests`) replaced."""
    document = json.loads(MEMORY_FAIL)
    categories = document["DCGM Diagnostic"]["test_categories"]
    index = next(i for i, category in enumerate(categories) if any(test.get("name") == "memory" for test in category["tests"]))
    if "tests" in change:
        categories[index]["tests"] = change["tests"]
    else:
        next(test for test in categories[index]["tests"] if test.get("name") == "memory").update(change)
    return json.dumps(document)


def _memory_category() -> int:
    categories = json.loads(MEMORY_FAIL)["DCGM Diagnostic"]["test_categories"]
    return next(i for i, category in enumerate(categories) if any(test.get("name") == "memory" for test in category["tests"]))


# --- dcgm: a failing test whose name, or whose category's tests list, cannot be read ------------------------


@pytest.mark.parametrize(("name", "shown"), [(None, "null"), (123, "123"), (["memory"], '["memory"]')])
def test_a_test_whose_name_is_no_text_is_wrong_format(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      name: object, shown: str) -> None:
    text = _dcgm_with({"name": name})
    result = parse_dcgm(text)
    assert result.failure is not None and result.failure.reason == "WrongFormat"
    assert f"test_categories[{_memory_category()}].tests[0]: name {shown} is no test name" in result.failure.message
    code, out = cli(capsys, tmp_path, "dcgm", text)
    assert code == 1 and "verdict FAILED WrongFormat" in out


def test_a_category_whose_tests_are_a_mapping_is_wrong_format() -> None:
    tests = json.loads(MEMORY_FAIL)["DCGM Diagnostic"]["test_categories"][_memory_category()]["tests"]
    result = parse_dcgm(_dcgm_with({"tests": {str(i): test for i, test in enumerate(tests)}}))
    assert result.failure is not None and result.failure.reason == "WrongFormat"
    assert f"test_categories[{_memory_category()}]: tests {{" in result.failure.message
    assert "is no list of tests" in result.failure.message


def test_results_that_are_no_list_or_hold_no_object_are_wrong_format() -> None:
    """A 3.x test has no summary: results it cannot read left it with none, and it vanished."""
    document = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "Diagnostic", "results": [{"gpu_id": "0", "status": "Pass"}]},
        {"name": "GPU Memory", "results": {"0": {"gpu_id": "1", "status": "Fail"}}}]}]}}
    result = parse_dcgm(json.dumps(document))
    assert result.failure is not None and result.failure.reason == "WrongFormat"
    assert "memory: results {" in result.failure.message and "is no list of results" in result.failure.message
    document["DCGM GPU Diagnostic"]["test_categories"][0]["tests"][1]["results"] = ["GPU 1 Fail"]  # type: ignore[index]
    result = parse_dcgm(json.dumps(document))
    assert result.failure is not None and 'memory results[0]: "GPU 1 Fail" is no result object' in result.failure.message
    assert parse_dcgm(fixture("dcgm_3x_warn_pass.json")).passed  # its null entries between tests are still no tests


# --- lone surrogates and a byte order mark ------------------------------------------------------------------


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_lone_surrogate_in_dcgm_json_is_replaced_not_a_crash(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               output: str) -> None:
    text = MEMORY_FAIL.replace("Synthetic: uncorrectable", "\\ud83dSynthetic: \\udc80uncorrectable", 1)
    assert text != MEMORY_FAIL
    result = parse_dcgm(text)
    assert result.failure is not None and "\ufffdSynthetic: \ufffduncorrectable" in result.failure.message
    code, out = cli(capsys, tmp_path, "dcgm", text, "-o", output)
    assert code == 1 and "internal error" not in out and "\ufffdSynthetic" in out


def test_a_lone_surrogate_in_nccl_json_is_replaced(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = re.sub(r'"hostname": ?"', '"hostname": "\\\\udc80', NCCL_JSON, count=1)
    assert text != NCCL_JSON
    result = parse_nccl(text)
    assert any(device.host.startswith("\ufffd") for device in result.ranks.values())
    for output in ("table", "json"):
        code, out = cli(capsys, tmp_path, "nccl", text, "-o", output)
        assert code == 0 and "internal error" not in out and "\ufffd" in out


def test_a_paired_surrogate_escape_stays_its_character() -> None:
    assert parse_json("x.json", '{"a": ["\\ud83d\\ude00", "\\udc80"]}') == {"a": ["\U0001F600", "\ufffd"]}
    assert parse_json("x.json", '"\\ud800"') == "\ufffd"


def test_dcgm_json_with_a_byte_order_mark_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = parse_dcgm("\ufeff" + MEMORY_FAIL)
    assert result.failure is not None and result.failure.reason == "DcgmTestFailed"
    code, out = cli(capsys, tmp_path, "dcgm", "\ufeff" + MEMORY_FAIL)
    assert code == 1 and "verdict FAILED DcgmTestFailed" in out


def test_nccl_json_with_a_byte_order_mark_is_read() -> None:
    assert parse_nccl("\ufeff" + NCCL_JSON).row_count == parse_nccl(NCCL_JSON).row_count


# --- nccl tables: coloured rows, negative and overlong sizes, a huge out-of-bounds count --------------------

_ROW = next(line for line in E1.splitlines(keepends=True) if line.lstrip().startswith("1048576 "))
_WRONG = _ROW[: _ROW.rstrip().rindex(" ") + 1] + "7\n"  # the in-place #wrong cell counts 7


@pytest.mark.parametrize("prefix", ["\x1b[0m", "\x1b[31m", "\x1b[2K"])
@pytest.mark.parametrize("max_rows", [2048, 0])
def test_a_row_behind_a_terminal_sequence_is_read(prefix: str, max_rows: int) -> None:
    result = parse_nccl(E1.replace(_ROW, prefix + _WRONG, 1), max_rows=max_rows)
    assert result.failure is not None and result.failure.message == "7 wrong elements at size 1048576 B"
    coloured = _ROW.replace("1048576", "\x1b[31m1048576\x1b[0m", 1)
    assert parse_nccl(E1.replace(_ROW, coloured, 1), max_rows=max_rows).row_count == parse_nccl(E1).row_count


@pytest.mark.parametrize(("size", "shown"), [("-1048576", "size -1048576"), ("9" * 38, "size " + "9" * 21 + "...")])
@pytest.mark.parametrize("max_rows", [2048, 0])
def test_a_row_with_a_negative_or_overlong_size_is_named(size: str, shown: str, max_rows: int) -> None:
    result = parse_nccl(E1.replace(_ROW, _ROW.replace("1048576", size, 1), 1), max_rows=max_rows)
    assert result.skipped_count == 1 and result.notes()[0].startswith(f"nccl: 1 row skipped: {shown} (line ")
    assert result.failure is None


@pytest.mark.parametrize("max_rows", [2048, 0])
def test_a_refused_row_counting_wrong_elements_still_convicts(max_rows: int) -> None:
    result = parse_nccl(E1.replace(_ROW, _WRONG.replace("1048576", "-1048576", 1), 1), max_rows=max_rows)
    assert result.failure is not None and result.failure.reason == "DataCorruption"
    assert result.failure.message.startswith("7 wrong elements in a row left out as unreadable (line ")


@pytest.mark.parametrize(("count", "shown"), [("99999999999999999999999999999", "at least 10^28"),
                                              ("1" + "0" * 5000, "at least 10^1000")], ids=["29 digits", "5001 digits"])
def test_an_out_of_bounds_count_is_never_cut_smaller(count: str, shown: str) -> None:
    footer = next(line for line in E1.splitlines() if "Out of bounds values" in line)
    result = parse_nccl(E1.replace(footer, f"# Out of bounds values : {count} FAILED"))
    assert result.failure is not None and result.failure.message.startswith(f"{shown} out-of-bounds values reported")


# --- nccl -J: entries that are no result, errors, an out_of_bounds count not read ---------------------------


def _nccl_json(change: dict[str, object] | None = None, entry: object = "keep", drop: str | None = None) -> str:
    document = json.loads(NCCL_JSON)
    if entry != "keep":
        document["results"][0] = entry
    document.update(change or {})
    if drop:
        del document[drop]
    return json.dumps(document)


@pytest.mark.parametrize(("size", "shown"), [(True, "size true"), (-1, "size -1"), (None, "size null")])
def test_a_json_entry_whose_size_is_no_size_is_named(size: object, shown: str) -> None:
    entry = json.loads(NCCL_JSON)["results"][0]
    entry["size"] = size
    result = parse_nccl(_nccl_json(entry=entry))
    assert result.notes() == (f"nccl: 1 row skipped: {shown} (results[0])",) and result.failure is None


def test_a_json_entry_of_no_size_counting_wrong_elements_fails() -> None:
    entry = json.loads(NCCL_JSON)["results"][0]
    entry["size"], entry["in_place"]["nwrong"] = True, 9
    result = parse_nccl(_nccl_json(entry=entry))
    assert result.failure is not None and result.failure.reason == "DataCorruption"
    assert result.failure.message == "9 wrong elements in a row left out as unreadable (results[0])"


@pytest.mark.parametrize(("entry", "shown"), [(None, "entry null"), (5, "entry 5")])
def test_a_json_entry_that_is_no_object_is_named(entry: object, shown: str) -> None:
    assert parse_nccl(_nccl_json(entry=entry)).notes() == (f"nccl: 1 row skipped: {shown}: no result object (results[0])",)


@pytest.mark.parametrize(("errors", "shown"), [(["boom"], "'boom'"), ("boom", "'boom'"), ([{"x": 1}, "b"], """'{"x": 1}' (and 1 more)""")])
def test_json_errors_of_a_run_without_summary_make_it_incomplete(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                 errors: object, shown: str) -> None:
    text = _nccl_json({"errors": errors}, drop="average_bus_bandwidth")
    assert parse_nccl(text).incomplete == f"nccl-tests reported errors: {shown}"
    code, out = cli(capsys, tmp_path, "nccl", text)
    assert code == 1 and f"verdict FAILED RunIncomplete: nccl-tests reported errors: {shown}" in out
    assert parse_nccl(_nccl_json({"errors": []})).incomplete is None


@pytest.mark.parametrize("errors", [[""], [], ""])
def test_json_errors_of_a_clean_run_are_no_error(errors: object) -> None:
    """nccl-tests writes `errors: [ncclGetLastError()]` whatever the outcome (src/util.cu writeErrors), and NCCL's
    ncclGetLastError returns its last-error buffer, empty when nothing went wrong: every clean -J run wrote [""],
    read as "nccl-tests reported errors" and failed RunIncomplete."""
    result = parse_nccl(_nccl_json({"errors": errors}))
    assert (result.incomplete, result.failure, result.notes()) == (None, None, ())


def test_json_errors_of_a_run_that_concluded_are_a_note() -> None:
    """The buffer holds the last WARN NCCL printed, benign ones too ("Failed to open libibverbs.so"): after the run's
    summary it is said, never a failure; the summary, the rows and the out-of-bounds count decide."""
    result = parse_nccl(_nccl_json({"errors": ["NET/IB : Got async event : port error"]}))
    assert (result.incomplete, result.failure) == (None, None)
    assert result.notes() == ("nccl: NCCL's last warning (nccl-tests' errors), in a run that concluded: "
                              "'NET/IB : Got async event : port error'",)


@pytest.mark.parametrize(("change", "drop", "note"), [
    (None, "out_of_bounds", "nccl: no out_of_bounds count: nccl-tests' own data check not read"),
    ({"out_of_bounds": None}, None, "nccl: no out_of_bounds count: nccl-tests' own data check not read"),
    ({"out_of_bounds": {"count": "x"}}, None, 'nccl: out_of_bounds count "x" unreadable: nccl-tests\' own data check not read'),
    ({"out_of_bounds": {"count": -3}}, None, "nccl: out_of_bounds count -3 unreadable: nccl-tests' own data check not read"),
])
def test_an_out_of_bounds_count_not_read_is_a_note(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   change: dict[str, object] | None, drop: str | None, note: str) -> None:
    text = _nccl_json(change, drop=drop)
    assert parse_nccl(text).notes() == (note,)
    code, out = cli(capsys, tmp_path, "nccl", text)
    assert code == 0 and note in out
    assert main(["parse", "nccl", str(tmp_path / "input.log"), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == [note]


# --- training: a step line whose step number is none ---------------------------------------------------------


@pytest.mark.parametrize(("step", "shown"), [("-30", "-30"), ("\uff13\uff10", "\uff13\uff10"), ("3O", "3O")])
def test_a_step_line_whose_step_is_no_number_is_named(step: str, shown: str) -> None:
    text = MEGATRON.replace("iteration       30/", f"iteration       {step}/", 1)
    assert text != MEGATRON
    result = parse_training(text)
    assert result.notes() == (f"training: 1 step skipped: iteration {shown}/50 (no step number) (line 8)",)


def test_a_nemo_step_line_whose_total_is_no_number_is_named() -> None:
    text = fixture("training_nemo.log")
    line = next(line for line in text.splitlines(keepends=True) if "Training epoch" in line and "iteration" in line)
    bad = re.sub(r"iteration (\d+)/(\d+)", r"iteration \1/-\2", line, count=1)
    assert bad != line
    assert parse_training(text.replace(line, bad, 1)).skipped_count == 1
