"""The archive: terminal certifications copied once, with per-node results and baselines; nothing lost on delete."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.engine import engine_cache
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history import Archiver, HistoryQuery, default_history_path, open_history
from nvcre_tui.engine.history.record import category_results
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.sim.scenario import Scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, NODE, WORKFLOW
from tests.history.helpers import NAMESPACE, certify, fleet

Obj = dict[str, Any]


async def test_a_finished_certification_is_archived_with_its_report_results_and_baselines(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    session = await SimSession.open(fleet(), None, history=history)
    try:
        await certify(session, "first")
        assert session.archiver is not None and session.archiver.archived == [f"{NAMESPACE}/first"]
        assert session.archiver.errors == []
        certs = HistoryQuery(history).certifications()
        assert [(c["name"], c["result"], c["nodes"], c["failedNodes"]) for c in certs] == [("first", "FAILED", 4, 1)]
        report = HistoryQuery(history).report("first")
        assert report is not None and report["failedNodes"] == ["gpu-node-02"]
        slow = HistoryQuery(history).node("gpu-node-02")
        assert len(slow) == 1 and slow[0]["result"] == "failed" and not slow[0]["passed"]
        category = slow[0]["categories"][0]
        assert category["category"] == "communication/nccl-loopback"
        assert category["reason"] == "ThresholdViolation" and category["busBW"] < 300
        assert category["evidence"] and category["evidence"][0]["metric"] == "busBandwidthGBps"
        assert slow[0]["baseline"] == {"containerRuntime": "containerd://1.7.24", "cuda": "12.8", "driver": "570.124.06",
                                       "gpuProduct": "NVIDIA-H100-80GB-HBM3", "kernel": "6.8.0-1021-aws", "kubelet": "v1.31.4",
                                       "migStrategy": "single", "osImage": "Ubuntu 22.04.5 LTS"}
        healthy = HistoryQuery(history).node("gpu-node-01")
        assert healthy[0]["result"] == "passed" and healthy[0]["categories"][0]["busBW"] > 300
    finally:
        await session.close()


async def test_deleting_the_certification_loses_nothing(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    session = await SimSession.open(fleet(), None, history=history)
    try:
        await certify(session, "gone")
        await session.store.delete(CERTIFICATION, "gone", NAMESPACE)
        assert session.engine is not None
        await session.engine.settle()
        assert session.cache.get(CERTIFICATION, "gone", NAMESPACE) is None
        assert not session.cache.list(WORKFLOW)
    finally:
        await session.close()
    query = HistoryQuery(history)
    assert [c["name"] for c in query.certifications()] == ["gone"]
    assert query.report("gone")["categories"][0]["failedNodes"][0]["name"] == "gpu-node-02"  # type: ignore[index]
    assert query.node("gpu-node-02")[0]["categories"][0]["state"] == "failed"


async def test_reopening_and_a_second_archiver_archive_nothing_twice(tmp_path: Path) -> None:
    history, state = tmp_path / "history.db", tmp_path / "state.json"
    session = await SimSession.open(fleet(), state, history=history)
    await certify(session, "once")
    assert session.save()
    await session.close()
    # Restart on the same simulated cluster: the first list announces the finished certification again.
    again = await SimSession.open(fleet(), state, history=history)
    second = Archiver(history, again.cache, again.archiver.source).attach()  # type: ignore[union-attr]
    try:
        assert again.engine is not None
        await again.engine.settle()
        assert again.archiver is not None and again.archiver.archived == [] and second.archived == []
    finally:
        second.close()
        await again.close()
    rows = sqlite3.connect(history).execute("SELECT COUNT(*) FROM certifications").fetchone()[0]
    assert rows == 1


async def test_two_separate_simulators_are_separate_sources(tmp_path: Path) -> None:
    """Fresh simulator stores give the same uids to the same objects: they must not collapse into one."""
    history = tmp_path / "history.db"
    for _ in range(2):
        session = await SimSession.open(fleet(), None, history=history)
        await certify(session, "same-name")
        await session.close()
    assert [c["name"] for c in HistoryQuery(history).certifications()] == ["same-name", "same-name"]


async def test_a_terminal_certification_waits_for_its_workflows(tmp_path: Path) -> None:
    clock = ManualClock()
    store = MemoryStore(clock)
    cache = engine_cache(store)
    await cache.start()
    archiver = Archiver(tmp_path / "history.db", cache, "test").attach()
    try:
        cert = await store.create(CERTIFICATION, {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
                                                  "metadata": {"name": "c", "namespace": "default"},
                                                  "spec": {"target": {}, "categories": [{"domain": "communication", "variant": "nccl-loopback"}]}})
        workflow = await store.create(WORKFLOW, {
            "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "c-wf", "namespace": "default", "labels": {"nvcre.nvidia.com/certification": "c"},
                         "ownerReferences": [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "name": "c", "uid": cert["metadata"]["uid"],
                                                 "controller": True}]},
            "spec": {}})
        cache.observe(WORKFLOW, workflow)
        done = [{"type": "Failed", "status": "True", "reason": "X", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        cert["status"] = {"conditions": done, "summary": {"result": "FAILED"}}
        cache.observe(CERTIFICATION, await store.update_status(CERTIFICATION, cert))
        assert archiver.archived == []  # its Workflow has not finished in the cache yet
        workflow["status"] = {"conditions": done}
        cache.observe(WORKFLOW, await store.update_status(WORKFLOW, workflow))
        assert archiver.archived == ["default/c"]
    finally:
        archiver.close()
        await cache.stop()


def test_the_default_history_path_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_history_path() == tmp_path / "xdg" / "nvcre" / "history.db"
    monkeypatch.setenv("NVCRE_HISTORY", str(tmp_path / "mine.db"))
    assert default_history_path() == tmp_path / "mine.db"


def test_a_relative_xdg_state_home_is_ignored_as_the_spec_says(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """It made ./rel/nvcre/ in each working directory: the store `nvcre --sim` found depended on where it ran."""
    from nvcre_tui.engine.sim_state import default_state_path

    monkeypatch.delenv("NVCRE_HISTORY", raising=False)
    monkeypatch.delenv("NVCRE_STATE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", "rel")
    assert default_history_path() == tmp_path / "home" / ".local" / "state" / "nvcre" / "history.db"
    assert default_state_path() == tmp_path / "home" / ".local" / "state" / "nvcre" / "sim.db"


async def test_a_session_by_default_archives_under_xdg_state_home(tmp_path: Path) -> None:
    session = await SimSession.open(fleet(), None)
    try:
        await certify(session, "default-place")
    finally:
        await session.close()
    assert HistoryQuery(default_history_path()).certifications()[0]["name"] == "default-place"
    assert str(default_history_path()).startswith(str(Path(__import__("os").environ["XDG_STATE_HOME"])))


def test_a_file_that_is_not_a_history_is_refused_in_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "history.db"
    bogus.write_text("not sqlite at all, just text" * 100)
    with pytest.raises(InputError) as error:
        open_history(bogus)
    assert str(bogus) in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(InputError):
        HistoryQuery(bogus).certifications()
    with pytest.raises(InputError, match="no history database"):
        open_history(tmp_path / "absent.db", create=False)


def test_another_programs_database_is_never_made_a_history(tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(InputError, match=r"other.db: an SQLite database but not an nvcre history \(it holds tables notes\)"):
        open_history(other)
    with sqlite3.connect(other) as db:
        assert [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["notes"]


async def test_a_named_history_that_is_not_one_refuses_the_session_the_default_place_only_disables_it(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("not a database" * 200)
    with pytest.raises(InputError, match="bogus.db"):
        await SimSession.open(fleet(), None, history=bogus)
    default_history_path().parent.mkdir(parents=True, exist_ok=True)
    default_history_path().write_text("not a database" * 200)
    session = await SimSession.open(fleet(), None)
    try:
        assert session.history is None and session.archiver is None
        assert session.notices == [f"history off: {default_history_path()}: not a readable history database (file is not a database) "
                                   "(give --history PATH)"]
    finally:
        await session.close()


async def test_a_read_only_console_reads_the_history_but_writes_no_file(tmp_path: Path) -> None:
    """`nvcre --read-only` and the wall write nothing anywhere (design property 7): the archive is only read."""
    history, state = tmp_path / "history.db", tmp_path / "state.db"
    engine = await SimSession.open(fleet(), state, history=None)
    await certify(engine, "seen-by-the-wall")
    await engine.close()
    wall = await SimSession.open(fleet(), state, history=history, readonly=True, want_engine=False, archive_writes=False)
    try:
        assert wall.archiver is None and wall.history is None
    finally:
        await wall.close()
    assert not history.exists()

    writer = await SimSession.open(fleet(), state, history=history)  # the same store: the wall shows its archive
    await certify(writer, "archived-earlier")
    await writer.close()
    before = history.stat().st_mtime_ns, sqlite3.connect(history).execute("SELECT COUNT(*) FROM certifications").fetchone()
    wall = await SimSession.open(fleet(), state, history=history, readonly=True, want_engine=False, archive_writes=False)
    try:
        assert wall.archiver is None and wall.history is not None
        # the writer archived what the store held, the certification finished before it too
        assert [c["name"] for c in wall.history.certifications()] == ["seen-by-the-wall", "archived-earlier"]
    finally:
        await wall.close()
    assert (history.stat().st_mtime_ns, sqlite3.connect(history).execute("SELECT COUNT(*) FROM certifications").fetchone()) == before


async def test_a_read_only_session_still_refuses_a_named_file_that_is_not_a_history(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("not a database\n")
    with pytest.raises(InputError, match="not a readable history database"):
        await SimSession.open(fleet(), None, history=bogus, readonly=True, want_engine=False, archive_writes=False)
    missing = tmp_path / "typo.db"
    session = await SimSession.open(fleet(), None, history=missing, readonly=True, want_engine=False, archive_writes=False)
    try:
        assert session.history is None and session.notices == [f"history off: {missing}: no such file (a read-only session creates none)"]
    finally:
        await session.close()
    assert not missing.exists()


async def test_a_read_only_session_says_when_the_default_history_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = tmp_path / "history.db"
    default.write_text("damaged\n")
    monkeypatch.setenv("NVCRE_HISTORY", str(default))
    session = await SimSession.open(fleet(), None, readonly=True, want_engine=False, archive_writes=False)
    try:
        assert session.history is None and session.notices == [f"history off: {default}: not a readable history database"]
    finally:
        await session.close()


async def diagnosed(case_name: str) -> tuple[Obj, Obj, list[Obj], list[Obj]]:
    """A case's certification run to its end on the simulator: the stored Certification, its one Workflow, its Jobs
    and the Nodes."""
    case = Path(__file__).parents[1] / "cases" / "scenarios" / case_name
    session = await SimSession.open(Scenario.model_validate(yaml.safe_load((case / "scenario.yaml").read_text())), None, history=None)
    cert = certification_from_text("cert.yaml", (case / "cert.yaml").read_text(), default_catalog()).to_wire()
    cert["metadata"]["namespace"] = NAMESPACE
    cert.pop("status", None)
    await session.store.create(CERTIFICATION, cert)
    try:
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=12 * 3600)
        [workflow] = (await session.store.list(WORKFLOW, NAMESPACE)).items
        jobs = (await session.store.list(JOB, NAMESPACE)).items
        stored = await session.store.get(CERTIFICATION, cert["metadata"]["name"], NAMESPACE)
        return stored, workflow, jobs, (await session.store.list(NODE)).items
    finally:
        await session.close()


async def test_a_node_a_diagnosis_cleared_is_archived_passed_without_its_screening_groups_blame() -> None:
    """A failed screening group blames every member on its Job; the diagnosis clears the healthy ones, and so does
    the archive: no reason, no other node's evidence."""
    stored, workflow, jobs, nodes = await diagnosed("diagnose-slow-gpu")
    results = {r.node: r for r in category_results(stored, workflow, jobs, nodes)}
    screened_with_it = {n for job in jobs if "gpu-node-06" in group_nodes(job) for n in group_nodes(job)} - {"gpu-node-06"}
    assert screened_with_it, "gpu-node-06 was tested alone"
    assert (results["gpu-node-06"].state, results["gpu-node-06"].reason) == ("failed", "ThresholdViolation")
    for name in screened_with_it:
        assert (results[name].state, results[name].reason) == ("passed", ""), name
        assert all(e.get("passed", True) for e in results[name].evidence), name


async def test_an_intermittent_nodes_verdict_stored_shortened_is_archived_with_its_convicting_jobs_evidence() -> None:
    """A verdict stored without its evidence (judging.results.within_room) is not shown beside the measurements of
    a test the node passed."""
    stored, workflow, jobs, nodes = await diagnosed("diagnose-flaky-and-fabric")
    [verdict] = [f for f in workflow["status"]["failedNodes"] if "intermittent" in f["message"]]
    mine = [job for job in jobs if verdict["name"] in group_nodes(job)]
    assert any(not (job.get("status") or {}).get("failedNodes") for job in mine), "the intermittent node never passed a test"
    bare = [{key: value for key, value in f.items() if key != "evidence"} for f in workflow["status"]["failedNodes"]]
    shortened = {**workflow, "status": {**workflow["status"], "failedNodes": bare}}
    result = {r.node: r for r in category_results(stored, shortened, jobs, nodes)}[verdict["name"]]
    assert result.reason == verdict["reason"]
    assert not any(e.get("passed") for e in result.evidence)


async def test_a_damaged_certification_is_named_and_holds_up_none_of_the_others(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    session = await SimSession.open(fleet(), state, history=tmp_path / "first.db")
    try:
        for name in ("broken", "fine"):
            await certify(session, name)
        await session.store.patch_status(CERTIFICATION, "broken", NAMESPACE, {"categoryStatuses": "x"})  # an edited store file
        assert session.save()
    finally:
        await session.close()
    history = tmp_path / "history.db"
    again = await SimSession.open(fleet(), state, history=history)  # the first list meets both, finished
    try:
        assert again.engine is not None
        await again.engine.settle()
        assert again.archiver is not None and again.archiver.archived == [f"{NAMESPACE}/fine"]
        assert again.archiver.notices == []  # its damage is for the commands that read it to name
        assert again.archiver.errors == [f"{history}: archiving {NAMESPACE}/broken: it is damaged: "
                                         "status.categoryStatuses: must be a list, got 'x'"]
    finally:
        await again.close()
    assert [c["name"] for c in HistoryQuery(history).certifications()] == ["fine"]


@pytest.mark.parametrize("history", ["not-a-history.txt", "a-folder"])
async def test_a_named_history_that_is_not_one_is_refused_before_the_store_file_is_made(tmp_path: Path, history: str) -> None:
    import argparse

    from nvcre_tui.cli.session import open_session

    (tmp_path / "a-folder").mkdir()
    (tmp_path / "not-a-history.txt").write_text("notes\n")
    state = tmp_path / "state.db"
    args = argparse.Namespace(sim=True, scenario=None, state=str(state), sim_runner=False, history=str(tmp_path / history))
    with pytest.raises(InputError, match=f"{tmp_path / history}: "):
        await open_session(args, default_catalog(), live=True, want_engine=True, role="console")
    assert not state.exists()


async def test_nodes_of_a_failed_group_the_evidence_does_not_narrow_down_are_counted_suspect(tmp_path: Path) -> None:
    history = tmp_path / "history.db"
    session = await SimSession.open(fleet(), None, history=history)
    try:
        await session.store.create(CERTIFICATION, {
            "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "whole", "namespace": NAMESPACE},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                     "options": {"testScale": "full-scale", "thresholds": {"busBandwidthGBps": "value >= 900"}}}]}})
        assert session.engine is not None
        assert await session.engine.run_until_settled(until=lambda: _terminal(session, "whole"), max_seconds=6 * 3600)
    finally:
        await session.close()
    [row] = HistoryQuery(history).certifications()
    # every node blamed is failed, as the report and the Certification count them; all four only with their group
    assert (row["result"], row["nodes"], row["failedNodes"], row["suspectNodes"]) == ("FAILED", 4, 4, 4)


async def _terminal(session: Any, name: str) -> bool:
    from nvcre_tui.engine.controllers import conditions as cond

    cert = session.cache.get(CERTIFICATION, name, NAMESPACE)
    return cert is not None and cond.is_terminal(cert)


async def test_a_sessions_history_holds_its_own_stores_certifications(tmp_path: Path) -> None:
    """The console's node screen and map read the session's query: another store's gpu-node-02 is another machine."""
    history = tmp_path / "history.db"
    for state, name in ((tmp_path / "a.db", "in-a"), (tmp_path / "b.db", "in-b")):
        session = await SimSession.open(fleet(), state, history=history)
        try:
            await certify(session, name)
        finally:
            await session.close()
    session = await SimSession.open(fleet(), tmp_path / "a.db", history=history, readonly=True, want_engine=False, archive_writes=False)
    try:
        assert session.history is not None and [c["name"] for c in session.history.certifications()] == ["in-a"]
        assert {e["certification"] for e in session.history.node("gpu-node-02")} == {"in-a"}
    finally:
        await session.close()


def test_a_history_whose_schema_is_not_utf8_is_refused_by_every_reader(tmp_path: Path) -> None:
    """SQLite quotes a damaged schema in its message, which Python could not decode: every history command exited 70
    ("a bug in nvcre"), and `run` took the file as its --history and failed to archive only at the end."""
    import sqlite3

    from nvcre_tui.engine.history.db import check_history

    history = tmp_path / "h.db"
    open_history(history).close()
    with sqlite3.connect(history) as db:
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = CAST(sql || X'd5' AS TEXT) WHERE name = 'certifications'")
    said = f"{history}: not a readable history database (malformed database schema: not UTF-8 text)"
    for read in (lambda: check_history(history), lambda: open_history(history, create=False), lambda: HistoryQuery(history).certifications()):
        with pytest.raises(InputError) as error:
            read()
        assert str(error.value) == said
