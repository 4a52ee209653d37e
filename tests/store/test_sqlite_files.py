"""SqliteStore's file handling: bad or foreign files give one line naming the file; the old JSON state is
imported once."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.store import WORKFLOW, Gone, MemoryStore
from nvcre_tui.engine.store.sqlite import IMPORTED_SUFFIX, SESSION_PROPERTY, SqliteStore, StoreFileError, import_json_state, open_store

from .fixtures import names, next_event, obj, take


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def _other_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE songs (title TEXT)")
    db.close()


def _no_format(path: Path) -> None:
    """A store whose meta table was emptied: it said `store format None, expected ...`."""
    SqliteStore(path, ManualClock())
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM meta")
    db.close()


def _other_format(path: Path) -> None:
    SqliteStore(path, ManualClock())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'nvcre-sqlite-store/v0' WHERE key = 'format'")
    db.close()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_bytes(b"\x00garbage that is not a database" * 200), "not a usable nvcre store"),
        (lambda p: p.write_text('{"version": 1, "store": {}}'), "JSON state file of an older nvcre"),
        (_other_sqlite, "an SQLite database but not an nvcre store"),
        (_other_format, "store format 'nvcre-sqlite-store/v0', expected 'nvcre-sqlite-store/v2'"),
        (_no_format, r"not an nvcre store, or a damaged one: its meta table holds no format \(an nvcre store says "
                     r"'nvcre-sqlite-store/v2'\); move it away or name another --state$"),
        (lambda p: p.mkdir(), "is a directory"),
    ],
)
@pytest.mark.parametrize("readonly", [False, True])
def test_a_bad_store_file_is_refused_in_one_line_naming_it(tmp_path: Path, clock: ManualClock, make: object,
                                                           message: str, readonly: bool) -> None:
    path = tmp_path / "store.db"
    make(path)  # type: ignore[operator]
    with pytest.raises(StoreFileError, match=message) as caught:
        SqliteStore(path, clock, readonly=readonly)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    assert isinstance(caught.value, InputError) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("make", [_other_sqlite, _other_format])
def test_a_refused_database_is_left_untouched(tmp_path: Path, clock: ManualClock, make: object) -> None:
    path = tmp_path / "other.db"
    make(path)  # type: ignore[operator]
    with sqlite3.connect(path) as db:
        before = (db.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall(),
                  db.execute("PRAGMA journal_mode").fetchone())
    db.close()
    with pytest.raises(StoreFileError):
        SqliteStore(path, clock)
    with sqlite3.connect(path) as db:
        after = (db.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall(),
                 db.execute("PRAGMA journal_mode").fetchone())
    db.close()
    assert after == before


def test_an_empty_file_becomes_a_store_but_not_in_read_only_mode(tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(StoreFileError, match="an empty file, not an nvcre store yet"):
        SqliteStore(path, clock, readonly=True)
    assert SqliteStore(path, clock).resource_version == "0"


def test_read_only_mode_needs_an_existing_store(tmp_path: Path, clock: ManualClock) -> None:
    with pytest.raises(StoreFileError, match="no such store"):
        SqliteStore(tmp_path / "absent.db", clock, readonly=True)
    assert not (tmp_path / "absent.db").exists()


def test_an_uncreatable_folder_is_named(tmp_path: Path, clock: ManualClock) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreFileError, match=rf"^{tmp_path / 'file' / 'sub'}: cannot create the store's folder"):
        SqliteStore(tmp_path / "file" / "sub" / "store.db", clock)


async def _memory_with_objects(clock: ManualClock) -> MemoryStore:
    memory = MemoryStore(clock)
    owner = await memory.create(WORKFLOW, obj("owner", labels={"k": "v"}))
    await memory.patch_status(WORKFLOW, "owner", "default", {"phase": "Running"})
    await memory.create(WORKFLOW, obj("child", owners=[owner]))
    return memory


def _session_file(path: Path, memory: MemoryStore) -> None:
    """The old simulator state file, as engine/session.py wrote it."""
    path.write_text(json.dumps({"version": 1, "saveId": "abc", "scenario": {"name": "small"},
                                "clock": "2026-01-01T01:00:00Z", "savedAt": "2026-11-30T10:00:00Z",
                                "store": memory.snapshot()}))


async def test_an_old_session_file_is_imported_once(tmp_path: Path, clock: ManualClock) -> None:
    memory = await _memory_with_objects(clock)
    json_path, db_path = tmp_path / "sim-state.json", tmp_path / "state" / "sim-state.db"
    _session_file(json_path, memory)
    store = import_json_state(json_path, db_path, clock)
    assert store.snapshot() == memory.snapshot()
    assert store.get_property(SESSION_PROPERTY) == {"scenario": {"name": "small"}, "clock": "2026-01-01T01:00:00Z",
                                                    "savedAt": "2026-11-30T10:00:00Z", "importedFrom": str(json_path)}
    assert not json_path.exists() and (tmp_path / f"sim-state.json{IMPORTED_SUFFIX}").exists()
    # the counter goes on from the file's; history before the import is Gone, after it is replayed
    with pytest.raises(Gone):
        await next_event(store.watch(WORKFLOW, resource_version="1"))
    later = await store.create(WORKFLOW, obj("later"))
    assert int(later["metadata"]["resourceVersion"]) == int(memory.resource_version) + 1
    assert await take(store.watch(WORKFLOW, resource_version=memory.resource_version), 1) == [("ADDED", "later")]
    # owners were imported: deleting the owner collects the child
    await store.delete(WORKFLOW, "owner", "default")
    assert names((await store.list(WORKFLOW)).items) == ["later"]
    await store.close()
    # importing again into the same store is refused, and the store is unchanged
    _session_file(json_path, memory)
    with pytest.raises(StoreFileError, match=rf"^{db_path}: already holds a store \(resourceVersion 6\); {json_path}"):
        import_json_state(json_path, db_path, clock)
    assert json_path.exists()
    reopened = SqliteStore(db_path, clock)
    assert names((await reopened.list(WORKFLOW)).items) == ["later"]
    await reopened.close()


async def test_a_bare_store_snapshot_is_imported_too(tmp_path: Path, clock: ManualClock) -> None:
    memory = await _memory_with_objects(clock)
    memory.save(tmp_path / "store.json")
    store = import_json_state(tmp_path / "store.json", tmp_path / "store.db", clock, retire=False)
    assert store.snapshot() == memory.snapshot() and store.get_property(SESSION_PROPERTY) is None
    assert (tmp_path / "store.json").exists()
    await store.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such state file"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not an nvcre state file"),
        (json.dumps({"version": 7, "store": {}}), "simulator state of version 7"),
        (json.dumps({"version": 1, "store": {"format": "other"}}), "format must be 'nvcre-store/v1'"),
        (json.dumps({"format": "nvcre-store/v1", "resourceVersion": "3", "kinds": [
            {"group": "", "version": "v1", "kind": "Node", "plural": "nodes", "namespaced": False,
             "items": [{"metadata": {"name": "n1"}}]}]}), "metadata.uid is missing"),
        (json.dumps({"format": "nvcre-store/v1", "resourceVersion": "3", "kinds": [
            {"group": "", "version": "v1", "kind": "Node", "plural": "nodes", "namespaced": False,
             "items": [{"metadata": {"name": "n1", "uid": "u"}}, {"metadata": {"name": "n1", "uid": "v"}}]}]}),
         "two objects share a name or uid"),
        (json.dumps({"format": "nvcre-store/v1", "resourceVersion": "3", "kinds": [
            {"group": "", "version": "v1", "kind": "Node", "plural": "nodes", "namespaced": False,
             "items": [{"metadata": {"name": "n1", "uid": "u", "resourceVersion": "x"}}]}]}),
         "metadata.resourceVersion 'x' is not an integer"),
    ],
)
def test_a_bad_state_file_is_refused_in_one_line(tmp_path: Path, clock: ManualClock, content: str | None,
                                                 message: str) -> None:
    json_path = tmp_path / "sim-state.json"
    if content is not None:
        json_path.write_text(content)
    with pytest.raises(StoreFileError, match=message) as caught:
        import_json_state(json_path, tmp_path / "sim-state.db", clock)
    assert str(caught.value).startswith(f"{json_path}") and "\n" not in str(caught.value)
    if content is not None:
        assert json_path.exists()  # a refused file is never renamed
    assert sorted(p.name for p in tmp_path.iterdir()) == (["sim-state.json"] if content else [])  # no store left


async def test_open_store_imports_an_old_file_once_then_refuses_a_second_one(tmp_path: Path,
                                                                            clock: ManualClock) -> None:
    memory = await _memory_with_objects(clock)
    legacy, db_path = tmp_path / "sim-state.json", tmp_path / "sim-state.db"
    fresh = open_store(tmp_path / "other.db", clock, legacy_json=tmp_path / "absent.json")  # nothing to import
    assert fresh.resource_version == "0"
    await fresh.close()
    _session_file(legacy, memory)
    with pytest.raises(StoreFileError, match=rf"^{legacy}: an old JSON state file; start once without read-only"):
        open_store(db_path, clock, legacy_json=legacy, readonly=True)
    imported = open_store(db_path, clock, legacy_json=legacy)
    assert imported.snapshot() == memory.snapshot()
    await imported.close()
    reopened = open_store(db_path, clock, legacy_json=legacy)  # the file was renamed: no second import
    assert reopened.snapshot() == memory.snapshot()
    await reopened.close()
    _session_file(legacy, memory)  # an old file turns up again beside the store
    with pytest.raises(StoreFileError, match=rf"^{legacy}: an old JSON state file beside the store {db_path}"):
        open_store(db_path, clock, legacy_json=legacy)


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc/version (a file sized 0 with content)")
@pytest.mark.parametrize("readonly", [False, True])
def test_a_kernel_file_sized_zero_is_not_taken_for_an_empty_store(clock: ManualClock, readonly: bool) -> None:
    """/proc/version reads as text but stat says 0 bytes: it was called "an empty file, not an nvcre store yet"."""
    with pytest.raises(StoreFileError, match=r"^/proc/version: not a usable nvcre store \(a file the kernel makes"):
        SqliteStore("/proc/version", clock, readonly=readonly)
