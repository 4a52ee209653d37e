"""A simulator store whose objects are damaged (a field of the wrong type, a row that is not an object) or
that is no store at all: the report names the broken object and reports the rest; another certification
is untouched; `report` never writes the file; a damaged database is one line naming it, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.planning.merge import deep_merge

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")
DAMAGES = sorted((Path(__file__).parent / "corpus" / "objects").glob("*.yaml"))


def _quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


@pytest.fixture(scope="module")
def finished_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """burn-in run to its end, and burn-in-2 created beside it."""
    state = tmp_path_factory.mktemp("damaged") / "state.db"
    assert _quiet(["certification", "run", "--cert-file", BURN_IN, "--wait", "--state", str(state)]) == 1
    assert _quiet(["certification", "run", "--cert-file", BURN_IN, "--name", "burn-in-2", "--state", str(state)]) == 0
    return state


def _damaged_copy(state: Path, damage: dict[str, Any], into: Path) -> Path:
    """A copy of the store with the damage merged into one object's row (as a hand edit would leave it)."""
    target = into / "state.db"
    shutil.copy(state, target)
    name = damage["metadata"]["name"]
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        row = db.execute("SELECT rowid, body FROM objects WHERE kind LIKE ? AND name = ?",
                         (f"%/{damage['kind'].lower()}s", name)).fetchone()
        assert row is not None, f"no {damage['kind']} {name} in the store"
        item = deep_merge(json.loads(row[1]), damage)
        for key, value in damage.get("spec", {}).items():  # null deletes (deep_merge keeps None)
            if value is None:
                item["spec"].pop(key, None)
        db.execute("UPDATE objects SET body = ? WHERE rowid = ?", (json.dumps(item), row[0]))
    return target


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.mark.parametrize("path", DAMAGES, ids=lambda p: p.stem)
def test_the_broken_object_is_named_and_the_rest_reported(path: Path, finished_state: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    damage = yaml.safe_load(path.read_text())
    expected = damage.pop("expected")
    failed_nodes = damage.pop("failedNodes", ["gpu-node-07", "gpu-node-12"])
    state = _damaged_copy(finished_state, damage, tmp_path)
    before = _snapshot(tmp_path)
    code = main(["certification", "report", "burn-in", "-o", "json", "--state", str(state)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if damage["kind"] == "Certification":
        assert code == 2 and out == ""
        assert err.splitlines() == [f"{state}: certification default/burn-in is damaged: {expected}; "
                                    "delete it from the store (or the store file) and run it again"]
    else:
        assert code == 1  # the rest of burn-in still reports its faulty nodes
        assert json.loads(out)["failedNodes"] == failed_nodes
        if damage["kind"] == "WorkloadRun":  # the report does not read runs: nothing to leave out
            assert err == ""
        else:
            assert err.splitlines() == [f"{state}: {damage['kind']} {damage['metadata']['name']} is damaged and "
                                        f"left out of the report: {expected}"]
    # One damaged object does not hide the other certification, asked alone or beside it.
    code = main(["certification", "report", "burn-in-2", "--state", str(state)])
    out, err = capsys.readouterr()  # RUNNING or, once the wall clock moved it on, FAILED like burn-in
    assert "Name:           burn-in-2" in out
    # RUNNING: no process runs the store's engine, which the one line says
    assert (code, err) == (1, "") or (code == 3 and err.startswith("nvcre: burn-in-2 is RUNNING, but no nvcre process")), err
    if damage["kind"] == "Certification":  # the other reported, then the one line: exit 2
        code = main(["certification", "report", "burn-in", "burn-in-2", "--state", str(state)])
        out, err = capsys.readouterr()
        assert code == 2 and out.count("Certification Report") == 1 and "Name:           burn-in-2" in out, out
        assert err.splitlines() == [f"{state}: certification default/burn-in is damaged: {expected}; "
                                    "delete it from the store (or the store file) and run it again"]
    assert _snapshot(tmp_path) == before  # report only reads


def test_report_reads_a_read_only_state_file(finished_state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    shutil.copy(finished_state, state)
    state.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        before = _snapshot(tmp_path)
        assert main(["certification", "report", "burn-in", "--state", str(state)]) == 1
        assert "Result:         FAILED" in capsys.readouterr().out
        assert _snapshot(tmp_path) == before
    finally:
        tmp_path.chmod(0o755)


def test_run_refuses_a_read_only_history_named_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --history file made read-only is refused as a read-only --state is (root too: mode bits count), before any
    store is made; it used to be written anyway."""
    history = tmp_path / "h.db"
    history.write_bytes(b"")  # an empty file becomes a history when written
    history.chmod(0o444)
    capsys.readouterr()
    assert main(["certification", "run", "--cert-file", BURN_IN, "--state", str(tmp_path / "s.db"), "--history", str(history), "--wait"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"--history: {history}: is read-only; not written"]
    assert history.read_bytes() == b"" and not (tmp_path / "s.db").exists()


def test_run_refuses_a_read_only_state_before_any_work(finished_state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    shutil.copy(finished_state, state)
    state.chmod(0o444)
    before = _snapshot(tmp_path)
    assert main(["certification", "run", "--cert-file", BURN_IN, "--name", "again", "--state", str(state), "--wait"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"--state: {state}: is read-only; not written"]
    assert main(["--state", str(state)]) == 2  # the console's engine would write: refused before it starts
    assert capsys.readouterr().err.splitlines() == [f"--state: {state}: is read-only; not written"]
    assert _snapshot(tmp_path) == before


def test_run_refuses_a_state_in_a_read_only_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    try:
        assert main(["certification", "run", "--cert-file", BURN_IN, "--state", str(folder / "s.db")]) == 2
        assert capsys.readouterr().err.splitlines() == [f"--state: {folder / 's.db'}: cannot write: folder {folder} is not writable"]
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize(("state", "message"), [
    ("/proc/version", "--state: /proc/version: is read-only; not written"),
    ("/dev/full", "/dev/full: not a regular file; pass --state PATH of a file (it need not exist yet)"),
])
def test_run_on_special_state_paths(state: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists(state):
        pytest.skip(f"{state} does not exist here")
    assert main(["certification", "run", "--cert-file", BURN_IN, "--state", state]) == 2
    assert capsys.readouterr().err.splitlines() == [message]


def test_a_named_pipe_as_the_state_is_one_line_not_a_wait_for_a_writer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Opening a named pipe to look at its first bytes waits for a writer, forever: run, report and the console
    refuse it at once."""
    fifo = tmp_path / "state.db"
    os.mkfifo(fifo)
    for argv in (["certification", "run", "--cert-file", BURN_IN], ["certification", "report", "burn-in"], ["--sim"]):
        codes: list[int] = []
        worker = threading.Thread(target=lambda argv=argv: codes.append(main([*argv, "--state", str(fifo)])), daemon=True)
        worker.start()
        worker.join(20)
        if worker.is_alive():  # give it a writer that goes away at once (end of file), so the thread ends
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            worker.join(20)
            pytest.fail(f"{argv}: waited for a writer on the named pipe --state")
        assert codes == [2], argv
        assert capsys.readouterr().err.splitlines() == [f"{fifo}: not a regular file; pass --state PATH of a file (it need not exist yet)"]


def _row_damaged(state: Path, into: Path, body: str) -> Path:
    target = into / "state.db"
    shutil.copy(state, target)
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        assert db.execute("UPDATE objects SET body = ? WHERE kind LIKE '%/jobs' AND name = "
                          "'burn-in-communication-nccl-loopback-group-7-iter-1'", (body,)).rowcount == 1
    return target


@pytest.mark.parametrize("body", ["{not json", "[1, 2]", '{"metadata": {"name": "another-name"}}',
                                  '{"metadata": {"name": "burn-in-communication-nccl-loopback-group-7-iter-1", "labels": ["a"]}}'])
def test_a_damaged_row_is_named_in_one_line_and_the_rest_reported(body: str, finished_state: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    state = _row_damaged(finished_state, tmp_path, body)
    before = _snapshot(tmp_path)
    code = main(["certification", "report", "burn-in", "-o", "json", "--state", str(state)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert json.loads(out)["failedNodes"] == ["gpu-node-07", "gpu-node-12"]  # the other objects still report
    [line] = err.splitlines()
    assert line.startswith(f"{state}: Job default/burn-in-communication-nccl-loopback-group-7-iter-1: ")
    assert line.endswith("; left out of what was read")
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(("number", "why"), [("NaN", "NaN is not a number JSON has"), ("-Infinity", "-Infinity is not a number JSON has"),
                                            ("1e999", "1e999 is beyond a float's range")])
def test_a_row_holding_a_number_json_has_not_is_named_and_the_report_stays_json(number: str, why: str, finished_state: Path,
                                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Python's json reads NaN, Infinity and 1e999 (inf); printed as a measurement they made the JSON report invalid.
    source = tmp_path / "source.db"
    shutil.copy(finished_state, source)
    with contextlib.closing(sqlite3.connect(source)) as db:
        [body] = db.execute("SELECT body FROM objects WHERE kind LIKE '%/jobs' AND name = "
                            "'burn-in-communication-nccl-loopback-group-7-iter-1'").fetchone()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    state = _row_damaged(source, damaged, body.rstrip()[:-1] + f',"busBandwidthGBps":{number}}}')
    code = main(["certification", "report", "burn-in", "-o", "json", "--state", str(state)])
    out, err = capsys.readouterr()
    assert code == 2 and json.loads(out, parse_constant=pytest.fail)["failedNodes"] == ["gpu-node-07", "gpu-node-12"]
    assert err.splitlines() == [f"{state}: Job default/burn-in-communication-nccl-loopback-group-7-iter-1: body is not JSON ({why}); "
                                "left out of what was read"]


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"\x00garbage" * 100)


def _foreign_sqlite(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (text TEXT)")


def _wrong_columns(path: Path, state: Path) -> None:
    shutil.copy(state, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("ALTER TABLE objects RENAME COLUMN body TO payload")


def _schema_not_utf8(path: Path, state: Path, table: str) -> None:
    """A copy of `state` whose stored schema of `table` ends in a byte that is not UTF-8 (a byte flipped on disk)."""
    shutil.copy(state, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA writable_schema = ON")
        assert db.execute("UPDATE sqlite_master SET sql = CAST(sql || X'd5' AS TEXT) WHERE name = ?", (table,)).rowcount == 1


def _meta(statement: str) -> Any:
    """A copy of the finished store with its meta table edited by `statement`."""
    def make(path: Path, state: Path) -> None:
        shutil.copy(state, path)
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute(statement)
    return make


@pytest.mark.parametrize(("make", "problem"), [
    (lambda path, state: _not_sqlite(path), "not a usable nvcre store (file is not a database)"),
    (_meta("UPDATE meta SET value = 'abc' WHERE key = 'rv'"), "damaged nvcre store: meta rv is 'abc', not a whole number >= 0"),
    (_meta("UPDATE meta SET value = -100 WHERE key = 'rv'"), "damaged nvcre store: meta rv is -100, not a whole number >= 0"),
    (_meta("DELETE FROM meta WHERE key = 'floor'"), "damaged nvcre store: meta floor is None, not a whole number >= 0"),
    (_meta("UPDATE meta SET value = 5 WHERE key = 'clock'"), "damaged nvcre store: meta clock is 5, not a time of this era"),
    (_meta("UPDATE meta SET value = '9999-12-31T23:59:59+00:00' WHERE key = 'clock'"),
     "damaged nvcre store: meta clock is '9999-12-31T23:59:59+00:00', not a time of this era"),
    (lambda path, state: _foreign_sqlite(path), "an SQLite database but not an nvcre store (no meta table)"),
    (_wrong_columns, "table objects has columns (kind, namespace, name, uid, rv, payload), expected "
                     "(kind, namespace, name, uid, rv, body); not a store of this nvcre version"),
    # SQLite quotes the damaged schema in its message, which Python could not decode: exit 70, "a bug in nvcre"
    (lambda path, state: _schema_not_utf8(path, state, "meta"), "not a usable nvcre store (malformed database schema: not UTF-8 text)"),
], ids=["not-sqlite", "rv-text", "rv-negative", "floor-missing", "clock-number", "clock-far", "foreign-sqlite", "wrong-columns", "schema-not-utf8"])
@pytest.mark.parametrize("command", ["report", "run", "console"])
def test_a_damaged_database_is_one_line_naming_it(make: Any, problem: str, command: str, finished_state: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    make(state, finished_state)
    before = _snapshot(tmp_path)
    argv = {"report": ["certification", "report", "burn-in", "--state", str(state)],
            "run": ["certification", "run", "--cert-file", BURN_IN, "--name", "again", "--state", str(state), "--wait"],
            "console": ["--state", str(state)]}[command]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"{state}: {problem}"]
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("clock", '{"simulated": "yesterday", "wall": "2026-01-01T00:00:00Z"}',
     "damaged simulator state: property clock.simulated: must be an RFC 3339 time such as 2026-01-01T00:00:00Z, got "
     "'yesterday'; move it aside (or delete it) to start afresh"),
    ("clock", '{"simulated": "2026-01-01T00:00:00Z", "wall": "8000-01-01T00:00:00Z"}',
     "damaged simulator state: property clock.wall: '8000-01-01T00:00:00Z' is in the future; move it aside (or delete it) to start afresh"),
    ("scenario", "{not json", "damaged row: property 'scenario' is not JSON"),
    ("scenario", '{"name": "x", "nodes": "many"}',  # once "holds the simulated fleet of scenario 'x', not 'default ...'"
     "damaged simulator state: property scenario: nodes: must be a list, got 'many'; move it aside (or delete it) to start afresh"),
], ids=["clock-not-a-time", "clock-in-the-future", "scenario-not-json", "scenario-not-a-scenario"])
@pytest.mark.parametrize("command", ["report", "run"])
def test_a_damaged_property_is_one_line_naming_the_file(key: str, value: str, problem: str, command: str, finished_state: Path,
                                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    shutil.copy(finished_state, state)
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        db.execute("UPDATE properties SET value = ? WHERE key = ?", (value, key))
    before = _snapshot(tmp_path)
    argv = {"report": ["certification", "report", "burn-in", "--state", str(state)],
            "run": ["certification", "run", "--cert-file", BURN_IN, "--name", "again", "--state", str(state), "--wait"]}[command]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"{state}: {problem}"]
    assert _snapshot(tmp_path) == before


def test_a_node_row_with_damaged_labels_is_one_line_not_an_internal_error(finished_state: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    shutil.copy(finished_state, state)
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        [(text,)] = db.execute("SELECT body FROM objects WHERE kind = 'v1/nodes' AND name = 'gpu-node-03'").fetchall()
        body = json.loads(text)
        body["metadata"]["labels"] = ["a"]
        db.execute("UPDATE objects SET body = ? WHERE kind = 'v1/nodes' AND name = 'gpu-node-03'", (json.dumps(body),))
    code = main(["certification", "run", "--category", "communication/nccl-all-reduce", "--name", "again", "--state", str(state), "--wait"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "internal error" not in err
    assert "gpu-node-03" in err and "metadata.labels is not a mapping of text to text" in err


def test_run_on_a_store_whose_node_row_is_damaged_names_it_without_a_class_name(finished_state: Path, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`nvcre: StoreError: Node gpu-node-01: damaged row in ...`: the row names its file and what is wrong; the
    class name said nothing more."""
    state = tmp_path / "state.db"
    shutil.copy(finished_state, state)
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        assert db.execute("UPDATE objects SET body = '[1]' WHERE kind LIKE '%/nodes' AND name = 'gpu-node-01'").rowcount == 1
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--name", "again", "--state", str(state)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"nvcre: Node gpu-node-01: damaged row in {state}: "), line


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_certification_whose_row_is_damaged_is_one_line_and_the_others_still_report(output: str, finished_state: Path, tmp_path: Path,
                                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`report burn-in-2 burn-in`, burn-in's own row not JSON: the store's error stopped the command before anything
    printed (burn-in-2's report lost to the other name), as a name not found used to. Now burn-in-2 is reported and
    burn-in is one line (not two: the damaged row's own line is not said again), exit 2."""
    target = tmp_path / "state.db"
    shutil.copy(finished_state, target)
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        assert db.execute("UPDATE objects SET body = '{not json' WHERE kind LIKE '%/certifications' AND name = 'burn-in'").rowcount == 1
    code = main(["certification", "report", "burn-in-2", "burn-in", "-o", output, "--state", str(target)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    if output == "json":
        assert [report["name"] for report in json.loads(out)] == ["burn-in-2"]
    else:
        assert out.count("Certification Report") == 1 and "Name:           burn-in-2" in out
    assert err.splitlines() == [f"certification 'burn-in': Certification default/burn-in: damaged row in {target}: body is not JSON "
                                "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"]


def _objects_of(state: Path, prefix: str) -> list[tuple[str, str]]:
    """(kind, name) of every object but Events whose name starts with `prefix`."""
    with contextlib.closing(sqlite3.connect(state)) as db:
        return db.execute("SELECT kind, name FROM objects WHERE name LIKE ? AND kind != 'v1/events' ORDER BY kind, name",
                          (f"{prefix}%",)).fetchall()


@pytest.mark.parametrize("workflow_damaged", [False, True])
def test_delete_of_a_certification_whose_row_is_damaged_deletes_it_and_what_it_owns(workflow_damaged: bool, finished_state: Path,
                                                                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its body unreadable, it is deleted by its key (the row keeps its uid, through which its Workflows, Jobs and
    runs are found), a damaged child too; the other certification is untouched."""
    target = tmp_path / "state.db"
    shutil.copy(finished_state, target)
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        assert db.execute("UPDATE objects SET body = '{not json' WHERE kind LIKE '%/certifications' AND name = 'burn-in'").rowcount == 1
        if workflow_damaged:
            assert db.execute("UPDATE objects SET body = '[1]' WHERE kind LIKE '%/workflows' "
                              "AND name = 'burn-in-communication-nccl-loopback'").rowcount == 1
    others = _objects_of(target, "burn-in-2")
    assert len(_objects_of(target, "burn-in-communication-")) > 10
    history = tmp_path / "h.db"
    code = main(["certification", "delete", "burn-in", "--state", str(target), "--history", str(history)])
    out, err = capsys.readouterr()
    assert (code, out) == (0, "")
    assert err.splitlines() == ["certification burn-in deleted from namespace default; not archived: its stored row is damaged "
                                "(body is not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))), "
                                "so its report goes with it"]
    assert _objects_of(target, "burn-in-communication-") == []
    assert [name for _, name in _objects_of(target, "burn-in") if not name.startswith("burn-in-2")] == []
    assert _objects_of(target, "burn-in-2") == others
    assert main(["certification", "report", "burn-in", "--state", str(target), "--history", str(history)]) == 2
    assert "not found" in capsys.readouterr().err
