"""The one loader for YAML and JSON input (nvcre_tui/engine/inputs): bounded reads, duplicate keys,
aliases, nesting, sizes; and the neutralisation of what reaches a terminal."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import stat
import threading
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.api.serialize import to_json
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.inputs import MAX_DEPTH, MAX_YAML_BYTES, load_json, load_yaml_documents, parse_json, parse_yaml_documents
from nvcre_tui.engine.outfiles import check_writable, followed, write_atomically
from nvcre_tui.engine.printable import json_printable, printable
from nvcre_tui.engine.units import format_duration, parse_duration, parse_max_bytes
from tests.parsers.golden import FIXTURES


def _message(call: object, *args: object) -> str:
    with pytest.raises(InputError) as caught:
        call(*args)  # type: ignore[operator]
    assert len(caught.value.messages) == 1
    return caught.value.messages[0]


# ----------------------------------------------------------------------------------------- YAML

def test_a_duplicate_key_names_the_key_and_both_lines() -> None:
    text = "spec:\n  a: 1\n  b: 2\n  a: 3\n"
    assert _message(parse_yaml_documents, "f.yaml", text) == "f.yaml:4:3: invalid YAML: duplicate key 'a' (first on line 2)"


def test_the_same_key_in_different_mappings_is_fine() -> None:
    assert parse_yaml_documents("f", "a: {x: 1}\nb: {x: 2}\n") == [{"a": {"x": 1}, "b": {"x": 2}}]


def test_keys_compare_by_value_not_by_spelling() -> None:
    assert "duplicate key 'a'" in _message(parse_yaml_documents, "f", "a: 1\n'a': 2\n")
    assert _message(parse_yaml_documents, "f", "1: a\n'1': b\n") == "f:1:1: invalid YAML: key '1' is read as a number, not text: put it in quotes"


def test_aliases_are_refused_at_once() -> None:
    laughs = 'a: &a ["lol"]\n' + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9))
    assert _message(parse_yaml_documents, "f", laughs) == "f:2:8: invalid YAML: aliases (*a) are not accepted; write the value out"


def test_nesting_is_capped_in_flow_and_block_style() -> None:
    assert parse_yaml_documents("f", "[" * MAX_DEPTH + "]" * MAX_DEPTH)  # exactly at the cap
    assert "nested deeper than 64 levels" in _message(parse_yaml_documents, "f", "[" * 100_000)
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 1)) + f"{'  ' * (MAX_DEPTH + 1)}v\n"
    assert "nested deeper than 64 levels" in _message(parse_yaml_documents, "f", block)


@pytest.mark.parametrize(("text", "expected"), [
    ("a: 2026-13-45\n", "f:1:4: invalid YAML: invalid value '2026-13-45': month must be in 1..12"),
    ("a: !!python/object:os.system x\n", "f:1:4: invalid YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'"),
    ("a: \x1b[31m\n", "f:1:4: invalid YAML: character 0x001b is not allowed; remove it (or write it escaped in a double-quoted string)"),
    ("{[a]: 1}\n", "f:1:2: invalid YAML: a key must be text, not a list or mapping"),
    # pydantic said "spec.None: Keys should be strings": YAML 1.1 reads these keys as no text
    ("spec:\n  null: 1\n", "f:2:3: invalid YAML: key 'null' is read as null, not text: put it in quotes"),
    ("{on: b}\n", "f:1:2: invalid YAML: key 'on' is read as the boolean true, not text: put it in quotes"),
    ("{2020-01-01: b}\n", "f:1:2: invalid YAML: key '2020-01-01' is read as a date, not text: put it in quotes"),
])
def test_odd_values_are_one_line(text: str, expected: str) -> None:
    assert _message(parse_yaml_documents, "f", text) == expected


# ------------------------------------------------------------------------------------------ JSON

def test_json_duplicate_keys_and_depth() -> None:
    assert _message(parse_json, "s.json", '{"a": 1, "a": 2}') == "s.json: invalid JSON: duplicate key 'a'"
    deep = _message(parse_json, "s.json", '{"a": ' + "[" * 70 + "]" * 70 + "}")
    assert deep.startswith("s.json: a[0][0][0]") and deep.endswith("...: nested deeper than 64 levels")
    assert "nested deeper than 64 levels" in _message(parse_json, "s.json", "[" * 200_000 + "]" * 200_000)
    assert _message(parse_json, "s.json", "{\n  1}") == "s.json:2:3: invalid JSON: Expecting property name enclosed in double quotes"


# ----------------------------------------------------------------------------------------- reads

def test_a_file_past_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as out:  # sparse: no time spent writing it
        out.truncate(MAX_YAML_BYTES + 1)
    assert _message(load_yaml_documents, str(big)) == f"{big}: larger than the 2 MiB limit for this input; not read"
    exact = tmp_path / "exact.yaml"
    exact.write_bytes(b"a: 1\n" + b" " * (MAX_YAML_BYTES - 5))
    assert load_yaml_documents(str(exact)) == (str(exact), [{"a": 1}])


def test_a_lone_surrogate_is_no_text(tmp_path: Path) -> None:
    # "\ud800" in double quotes loads as a Python str that UTF-8 cannot encode: the run crashed at its first write.
    text = 'metadata:\n  annotations: {note: "x\\ud800y"}\n'
    assert _message(parse_yaml_documents, "c.yaml", text) == "c.yaml:2:23: invalid YAML: a lone surrogate \\ud800 is not text"
    assert parse_yaml_documents("c.yaml", 'note: "\\u00e9 \\U0001F600"\n') == [{"note": "\u00e9 \U0001F600"}]
    # JSON's escape of a character outside the BMP is a surrogate pair (json.dumps writes one): joined, taken.
    assert parse_yaml_documents("c.json", json.dumps({"note": "\U0001F600 ok"})) == [{"note": "\U0001F600 ok"}]


def test_devices_directories_and_missing_files(tmp_path: Path) -> None:
    assert _message(load_yaml_documents, "/dev/zero") == "/dev/zero: larger than the 2 MiB limit for this input; not read"
    assert _message(load_yaml_documents, str(tmp_path)) == f"{tmp_path}: is a directory, not a file"
    assert _message(load_yaml_documents, str(tmp_path / "nope")) == f"{tmp_path / 'nope'}: no such file"
    assert _message(load_json, str(tmp_path / "x"), 10) == f"{tmp_path / 'x'}: no such file"


def test_pipes_keep_working_like_process_substitution() -> None:
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as stream:
            stream.write(b"a: 1\n")

    threading.Thread(target=feed).start()
    try:
        assert load_yaml_documents(f"/dev/fd/{read}")[1] == [{"a": 1}]
    finally:
        os.close(read)


def test_stdin_closed_unreadable_or_not_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", None)
    assert _message(load_yaml_documents, "-") == "<stdin>: standard input is closed; pass a file instead of -"
    closed = io.StringIO("a: 1")
    closed.close()
    monkeypatch.setattr("sys.stdin", closed)
    assert _message(load_yaml_documents, "-") == "<stdin>: standard input is closed; pass a file instead of -"

    class Directory(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer: object) -> int:
            raise IsADirectoryError(21, "Is a directory")

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Directory())))
    assert _message(load_yaml_documents, "-") == "<stdin>: cannot read: Is a directory"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a: \xff\n")))
    assert _message(load_yaml_documents, "-") == "<stdin>: not UTF-8 text (invalid byte at offset 3)"


def test_cli_closed_stdin_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", None)
    assert main(["certification", "render", "-"]) == 2
    assert main(["parse", "nccl", "-"]) == 2
    assert capsys.readouterr().err.splitlines() == ["<stdin>: standard input is closed; pass a file instead of -",
                                                    "stdin: standard input is closed; pass a file instead of -"]


def test_parse_refuses_a_stream_without_lines_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "nccl", "/dev/zero"]) == 2
    assert capsys.readouterr().err == "/dev/zero: line 1 is longer than 1 MiB; not a tool's text output\n"


@pytest.mark.parametrize("kind", ["nccl", "training"])
def test_parse_refuses_binary_data_at_its_start(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # nccl and training output stream, of any length: /dev/urandom (short "lines", never an end) was read forever.
    # A NUL byte in the first 8 KiB is binary data, as git judges it; here fed through a pipe, 4 MiB of it.
    garbage = b"\x8f\xc3garbage\n" * 300 + b"\x00\x01\n"
    read, write = os.pipe()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write, "wb") as stream:
            for _ in range(4 * 2**20 // len(garbage)):
                stream.write(garbage)

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        assert main(["parse", kind, f"/dev/fd/{read}"]) == 2
    finally:
        os.close(read)
        feeder.join()
    assert capsys.readouterr().err == f"/dev/fd/{read}: binary data (a NUL byte on line 301), not a tool's text output\n"
    binary = tmp_path / "binary.log"
    binary.write_bytes(b"# nccl-tests\n" + garbage)
    assert main(["parse", kind, str(binary)]) == 2
    assert capsys.readouterr().err == f"{binary}: binary data (a NUL byte on line 302), not a tool's text output\n"


def test_parse_refuses_a_file_with_a_long_line_after_a_whole_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A regular file goes to the parser unwrapped: only its first line was checked, and a 2 MiB line after a whole
    # run (or a 10 GiB one, all in memory) passed.
    run = (Path(__file__).parent / "parsers" / "fixtures" / "nccl_e1_modern.txt").read_text()
    log = tmp_path / "nccl.txt"
    log.write_text(run + "x" * (2 * 2**20) + "\n")
    assert main(["parse", "nccl", str(log)]) == 2
    assert capsys.readouterr().err == f"{log}: line {run.count(chr(10)) + 1} is longer than 1 MiB; not a tool's text output\n"


@pytest.mark.parametrize(("text", "long_line"), [(b"a\nbb\n" + b"c" * 9 + b"\nd", 3), (b"a\n" + b"c" * 5 + b"\n" + b"d" * 4 + b"e" * 5, 3),
                                               (b"a\n" + b"b" * 8 + b"\n" + b"c" * 8, None)])
def test_a_long_line_is_found_across_chunks(text: bytes, long_line: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.cli import parse

    monkeypatch.setattr(parse, "MAX_LOG_LINE_CHARS", 8)
    stream = io.TextIOWrapper(io.BytesIO(text))
    if long_line is None:
        parse._check_line_lengths(stream, "f", chunk_size=3)
        return
    with pytest.raises(InputError) as caught:
        parse._check_line_lengths(stream, "f", chunk_size=3)
    assert caught.value.messages == [f"f: line {long_line} is longer than 0 MiB; not a tool's text output"]


def test_parse_dcgm_stops_at_64_mib_of_one_runs_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # dcgmi's output is parsed whole: /dev/urandom (never a 1 MiB line, never an end) filled memory. nccl and
    # training output stream, of any length.
    big = tmp_path / "big.log"
    with open(big, "wb") as handle:
        handle.truncate(65 * 2**20)  # sparse: 65 MiB in no time
    assert main(["parse", "dcgm", str(big)]) == 2
    assert capsys.readouterr().err == f"{big}: 65 MiB, more than the 64 MiB of one dcgmi run's output\n"
    read, write = os.pipe()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write, "wb") as stream:
            for _ in range(70 * 1024):
                stream.write(b"x" * 1023 + b"\n")

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        assert main(["parse", "dcgm", f"/dev/fd/{read}"]) == 2
    finally:
        os.close(read)
        feeder.join()
    assert capsys.readouterr().err.endswith(": more than 64 Mi characters by line 65537; not one dcgmi run's output\n")
    assert main(["parse", "nccl", str(big)]) == 2  # read through, as a stream of any size (here: no result rows)
    assert "more than" not in capsys.readouterr().err


# ---------------------------------------------------------------------------------------- ranges

def test_durations_and_sizes_are_bounded() -> None:
    assert parse_duration("8784h") == 8784 * 3600
    assert parse_duration("0") == 0.0  # as Go's time.ParseDuration: `run --timeout 0` (0 to 8784h) is taken
    for text in ("00", "0x", "-0", ""):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(text)
    for text in ("8784h1s", "99999999999h", "100000000000000000000s"):
        with pytest.raises(ValueError, match="longer than the maximum of 8784h"):
            parse_duration(text)
    assert parse_max_bytes("16T") == 2**44
    with pytest.raises(ValueError, match="larger than the maximum of 16T"):
        parse_max_bytes("17T")
    assert format_duration(float("inf")) == "∞"


def test_cli_timeout_out_of_range_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    assert main(["certification", "run", "--cert-file", burn_in, "--wait", "--timeout", "99999999999h", "--state", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err == "--timeout: duration '99999999999h' is longer than the maximum of 8784h (366 days)\n"
    assert not (tmp_path / "s").exists()


# ---------------------------------------------------------------------------------------- writes

def test_a_failed_write_keeps_the_old_content_and_leaves_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    target.write_text("old\n")

    def full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    assert _message(write_atomically, target, "new\n") == f"{target}: cannot write: No space left on device"
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_a_symbolic_link_is_written_through_not_replaced(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "results.json"
    shared.parent.mkdir()
    shared.write_text("old\n")
    link = tmp_path / "results.json"
    link.symlink_to(shared)
    write_atomically(link, "new\n")
    assert link.is_symlink() and shared.read_text() == "new\n"
    assert sorted(p.name for p in shared.parent.iterdir()) == ["results.json"]  # no temporary left beside it
    ahead = tmp_path / "later.json"  # a link to a file not written yet, in a folder that exists
    (tmp_path / "out").mkdir()
    ahead.symlink_to(tmp_path / "out" / "later.json")
    check_writable(ahead)
    write_atomically(ahead, "first\n")
    assert ahead.is_symlink() and (tmp_path / "out" / "later.json").read_text() == "first\n"
    nowhere = tmp_path / "nowhere.json"  # a dangling link never makes folders where it points
    nowhere.symlink_to(tmp_path / "made" / "by" / "link.json")
    assert _message(check_writable, nowhere) == f"{nowhere}: cannot write: symbolic link to {tmp_path}/made/by/link.json, whose folder does not exist"
    with pytest.raises(InputError):
        write_atomically(nowhere, "x\n")
    assert not (tmp_path / "made").exists()


def test_a_link_someone_else_planted_in_a_shared_sticky_folder_is_not_followed(tmp_path: Path) -> None:
    """/tmp/report.json -> ~victim/.ssh/authorized_keys: the kernel's protected_symlinks rule, on write-through."""
    secret = tmp_path / "home" / "authorized_keys"
    secret.parent.mkdir()
    secret.write_text("ssh-ed25519 AAAA me\n")
    if os.geteuid() == 0:  # root makes a shared sticky folder and plants a link as someone else
        shared, asker = tmp_path / "tmp", None
        shared.mkdir()
        shared.chmod(0o1777)
        planted = shared / "report.json"
        planted.symlink_to(secret)
        os.lchown(planted, 65534, 65534)
    else:  # anyone else plants a link in /tmp and asks as another user
        shared, asker = Path("/tmp"), os.geteuid() + 1
        folder = shared.stat()
        if not (folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH and folder.st_uid != os.geteuid()):
            pytest.skip("/tmp is not a shared sticky folder here")
        planted = shared / f"nvcre-test-{os.getpid()}.json"
        planted.symlink_to(secret)
    try:
        with pytest.raises(PermissionError, match="belongs to someone else"):
            followed(planted, euid=asker)
        if asker is None:
            assert _message(check_writable, planted) == f"{planted}: cannot write: symbolic link in shared folder {shared} belongs to someone else; not followed"
            with pytest.raises(InputError):
                write_atomically(planted, "{}\n")
        assert secret.read_text() == "ssh-ed25519 AAAA me\n"
        assert followed(planted, euid=planted.lstat().st_uid) == secret  # the link's own owner follows it
    finally:
        planted.unlink()


def test_writable_checks(tmp_path: Path) -> None:
    check_writable(tmp_path / "new" / "deeper" / "x.json")  # missing folders are created on write
    assert _message(check_writable, tmp_path, "--results-file") == f"--results-file: {tmp_path}: is a directory, not a file"
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0o444)
    assert _message(check_writable, locked) == f"{locked}: is read-only; not written"
    check_writable("/dev/null")  # a device is written in place


@pytest.mark.parametrize(("target", "message"), [
    ("/dev/full", "--results-file: /dev/full: cannot write: No space left on device"),
    ("/proc/version", "--results-file: /proc/version: is read-only; not written"),
])
def test_results_file_errors_are_one_line_and_the_state_is_kept(target: str, message: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists(target):
        pytest.skip(f"no {target} here")
    burn_in = str(Path(__file__).resolve().parents[1] / "examples" / "burn-in.yaml")
    state = tmp_path / "state.db"
    code = main(["certification", "run", "--cert-file", burn_in, "--wait", "--state", str(state), "--results-file", target])
    out, err = capsys.readouterr()
    assert code == 2 and err.splitlines()[-1] == message and "Traceback" not in err
    assert out == "" and not state.exists()  # found before any work: an empty write tells a full device


# ------------------------------------------------------------------------------ neutralised output

def test_printable_replaces_control_characters() -> None:
    assert printable("a\x1b[31mb\x9bc\x07\td\ne") == "a\ufffd[31mb\ufffdc\ufffd\td\ne"
    assert printable("a\nb", newlines=False) == "a\ufffdb"
    assert json.loads(json_printable(json.dumps({"k": "x\x9by\x1b"}, ensure_ascii=False))) == {"k": "x\x9by\x1b"}
    assert "\x9b" not in json_printable(json.dumps("x\x9b", ensure_ascii=False))


@pytest.mark.parametrize("output", ["table", "json"])
def test_parse_output_carries_no_escape_sequences(output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = (FIXTURES / "nccl_e1_modern.txt").read_text().replace("gpu-n01", "gpu\x1b]0;owned\x07n01\x1b[2J\x9b31m", 1)
    path = tmp_path / "evil.log"
    path.write_text(log)
    assert main(["parse", "nccl", str(path), "-o", output]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\x9b")
    if output == "json":  # JSON output escapes every control character, keeping the value (see to_json below)
        json.loads(out)
        assert json.loads(to_json({"host": "a\x1b\x9b"})) == {"host": "a\x1b\x9b"} and "\x9b" not in to_json("\x9b")
    else:
        assert "gpu\ufffd]0;owned\ufffdn01\ufffd[2J\ufffd31m" in out


def test_a_catalog_override_goes_through_the_same_loader(tmp_path: Path) -> None:
    import shutil

    from nvcre_tui.engine.planning.catalog_load import load_catalog

    root = tmp_path / "catalog"
    shutil.copytree(Path(__file__).resolve().parents[1] / "catalog", root)
    entry = root / "communication" / "nccl-all-reduce.yaml"
    entry.write_text(entry.read_text() + "title: again\ntitle: twice\n")
    message = _message(load_catalog, root)
    assert message.startswith(f"{root}/communication/nccl-all-reduce.yaml:") and "duplicate key 'title'" in message
    entry.write_text("a: &x 1\nb: *x\n")
    assert "aliases (*x) are not accepted" in _message(load_catalog, root)


def test_a_named_pipe_nothing_writes_to_is_refused_not_waited_on_forever(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from nvcre_tui.engine.inputs import read

    monkeypatch.setattr(read, "FIFO_WAIT_SECONDS", 0.2)
    fifo = tmp_path / "cert.yaml"
    os.mkfifo(fifo)
    assert main(["certification", "render", str(fifo)]) == 2
    assert capsys.readouterr().err == f"{fifo}: a named pipe that nothing wrote to within 0.2 s; not read\n"


@pytest.mark.parametrize("kind", ["nccl", "dcgm", "training"])
def test_parse_refuses_a_named_pipe_nothing_writes_to(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`parse` streams a tool's output of any length, yet a named pipe with no writer is refused as the YAML
    inputs refuse it, not waited on forever; a pipe whose writer comes is parsed."""
    from nvcre_tui.engine.inputs import read

    monkeypatch.setattr(read, "FIFO_WAIT_SECONDS", 0.2)
    fifo = tmp_path / "tool.log"
    os.mkfifo(fifo)
    assert main(["parse", kind, str(fifo)]) == 2
    assert capsys.readouterr().err == f"{fifo}: a named pipe that nothing wrote to within 0.2 s; not read\n"
    monkeypatch.setattr(read, "FIFO_WAIT_SECONDS", 5.0)

    def write() -> None:
        with open(fifo, "w") as pipe:
            pipe.write("no tool output here\n")

    writer = threading.Timer(0.1, write)
    writer.start()
    try:
        assert main(["parse", kind, str(fifo)]) in (1, 2)  # read and judged (no data: not a pass)
    finally:
        writer.join()
    assert "named pipe" not in capsys.readouterr().err


def test_a_named_pipe_is_read_once_its_writer_comes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.engine.inputs import read

    monkeypatch.setattr(read, "FIFO_WAIT_SECONDS", 5.0)
    fifo = tmp_path / "cert.yaml"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as pipe:  # opens once the reader has: the reader waits in poll, not in open
            pipe.write("kind: Certification\n")

    writer = threading.Timer(0.1, write)
    writer.start()
    try:
        assert read.read_text(str(fifo), 1024) == (str(fifo), "kind: Certification\n")
    finally:
        writer.join()


def test_a_shells_pipe_is_waited_on_as_stdin_is_however_slow_its_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    # `<(slow command)` and /dev/stdin are pipes with a writer: read as they come, never refused as a named pipe.
    from nvcre_tui.engine.inputs import read

    monkeypatch.setattr(read, "FIFO_WAIT_SECONDS", 0.1)
    out, inn = os.pipe()

    def write() -> None:
        with os.fdopen(inn, "w") as pipe:
            pipe.write("kind: Certification\n")

    writer = threading.Timer(0.5, write)
    writer.start()
    try:
        assert read.read_text(f"/dev/fd/{out}", 1024)[1] == "kind: Certification\n"
    finally:
        writer.join()
        os.close(out)


def test_exponents_are_numbers_as_in_yaml_1_2_and_kubernetes() -> None:
    # PyYAML's YAML 1.1 floats need a dot and a signed exponent: 1e10 and 1.5e3 were text, and a numeric field said
    # "must be a number, got '1e10'" to someone who wrote one.
    assert parse_yaml_documents("s.yaml", "a: 1e10\nb: -2E-3\nc: 1.5e3\nd: 1.0e+3\ne: '1e10'\nf: 1e\ng: e10\nh: .inf\n") == [
        {"a": 1e10, "b": -0.002, "c": 1500.0, "d": 1000.0, "e": "1e10", "f": "1e", "g": "e10", "h": math.inf}]
    with pytest.raises(InputError) as caught:
        parse_yaml_documents("s.yaml", "speed: 1\nnoise: 1e400\n")
    assert caught.value.messages == ["s.yaml:2:8: invalid YAML: 1e400 is beyond a float's range"]


@pytest.mark.parametrize(("text", "where"), [("name: a\x00b\n", "1:8"), ("a: 1\nb: x\x07y\n", "2:5")])
def test_a_character_yaml_refuses_is_named_with_its_line(text: str, where: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_yaml_documents("s.yaml", text)
    [message] = caught.value.messages
    assert message.startswith(f"s.yaml:{where}: invalid YAML: character 0x00")


@pytest.mark.parametrize(("text", "message"), [
    ("maxConcurrent: 1:30", "cert.yaml:1:16: invalid YAML: 1:30 is 90 in YAML 1.1 (base 60, text to kubectl)"),
    ("maxConcurrent: 017", "cert.yaml:1:16: invalid YAML: 017 is 15 in YAML 1.1 (octal, a decimal number in YAML 1.2)"),
    ("ratio: -1:30.5", "cert.yaml:1:8: invalid YAML: -1:30.5 is -90.5 in YAML 1.1"),
    ("nodesPerJob: 0" + "7" * 400, "cert.yaml:1:14: invalid YAML: 0777777777777777777777777777777777777... is a number of "
                                   "362 digits in YAML 1.1 (octal"),  # once an OverflowError out of the form's field
])
def test_numbers_yaml_versions_read_apart_are_refused(text: str, message: str) -> None:
    """PyYAML (YAML 1.1) reads 1:30 as 90 and 017 as 15; kubectl reads the first as text and YAML 1.2 the second as
    17: nvcre would silently run with a value the file's author did not see. 0x10, 1_000 and quoted text stay."""
    with pytest.raises(InputError) as caught:
        parse_yaml_documents("cert.yaml", text)
    assert caught.value.messages[0].startswith(message)
    assert parse_yaml_documents("cert.yaml", "a: 0x10\nb: 1_000\nc: '017'\nd: 0\ne: 10.50\nf: '1:30'\n") == [
        {"a": 16, "b": 1000, "c": "017", "d": 0, "e": 10.5, "f": "1:30"}]


def test_a_number_too_long_for_python_is_said_in_our_words() -> None:
    """Python refuses int strings of more than 4,300 digits with advice about sys.set_int_max_str_digits: not ours."""
    with pytest.raises(InputError) as caught:
        parse_yaml_documents("cert.yaml", "maxConcurrent: 1" + "0" * 5000)
    assert caught.value.messages == ["cert.yaml:1:16: invalid YAML: number too long: 5001 digits"]


def test_a_date_yaml_read_unquoted_is_named_as_a_date_not_in_python(tmp_path: Path) -> None:
    """`at: 2020-01-01` said `must be a string, got datetime.date(2020, 1, 1)`."""
    from nvcre_tui.engine.errors import InputError
    from nvcre_tui.engine.sim.scenario import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("name: s\nnodes: [{count: 2}]\nfaults:\n  - {type: cordon, node: gpu-node-01, at: 2020-01-01}\n")
    with pytest.raises(InputError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}: faults[0].at: must be a string, got the date 2020-01-01 (YAML reads it so unquoted: put it in quotes)"


@pytest.mark.parametrize(("seconds", "said"), [
    (9, "9s"), (2538, "42m18s"), (47 * 3600 + 59 * 60, "47h59m"),  # below two days: as format_duration says it
    (48 * 3600, "2d"), (51 * 3600 + 59 * 60, "2d3h"), (7 * 86400 + 23 * 3600, "7d23h"), (216 * 3600, "9d"),
    (729 * 86400, "729d"), (730 * 86400 + 30 * 86400, "2y30d"), (9 * 365 * 86400 + 5 * 86400, "9y"), (float("inf"), "∞"),
])
def test_a_display_age_past_two_days_is_said_in_days_as_kubectl_says_it(seconds: float, said: str) -> None:
    """The wall's title and `list`'s AGE read "216h00m" for nine days."""
    from nvcre_tui.engine.units import format_age

    assert format_age(seconds) == said


def test_a_go_duration_a_user_may_copy_keeps_its_hours() -> None:
    """format_duration stays what a timeoutPerJob or --timeout accepts: Go durations have no day unit."""
    assert format_duration(216 * 3600) == "216h00m" and parse_duration(format_duration(216 * 3600)) == 216 * 3600


def test_list_says_a_nine_day_old_certification_is_9d_old() -> None:
    from datetime import datetime, timezone

    from nvcre_tui.cli.listing import row

    now = datetime(2026, 1, 10, tzinfo=timezone.utc)
    cert = {"metadata": {"name": "burn-in", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    assert row(cert, now)["age"] == "9d"
