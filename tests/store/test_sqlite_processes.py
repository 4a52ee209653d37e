"""Several real processes on one SqliteStore: watches cross processes, a killed writer loses nothing that
returned, concurrent writers never lose an object or share a resourceVersion, and a Lease serialises them."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.store import LEASE, WORKFLOW
from nvcre_tui.engine.store.sqlite import SqliteStore
from tests.hangup import default_hangup

from .fixtures import obj, take

WORKER = Path(__file__).with_name("sqlite_worker.py")
GUARD_SECONDS = 60  # a worker that hangs fails the test instead of the suite


def start(*args: str) -> subprocess.Popen[str]:
    """A worker process (see sqlite_worker.py); returns once it printed `ready`, before it starts."""
    worker = subprocess.Popen([sys.executable, str(WORKER), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, preexec_fn=default_hangup)
    assert worker.stdout is not None and worker.stdout.readline() == "ready\n"
    return worker


def go(worker: subprocess.Popen[str]) -> None:
    assert worker.stdin is not None
    worker.stdin.write("go\n")
    worker.stdin.flush()


def finish(worker: subprocess.Popen[str]) -> list[list[str]]:
    """Wait for the worker to end well; its output lines, split into words."""
    out, _ = worker.communicate(timeout=GUARD_SECONDS)
    assert worker.returncode == 0
    return [line.split() for line in out.splitlines()]


async def test_another_process_s_writes_reach_a_watch_here_and_ours_reach_its_watch(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(path, ManualClock(), poll_seconds=0.02)
    await store.create(WORKFLOW, obj("before"))
    watch = store.watch(WORKFLOW)
    assert await take(watch, 1) == [("ADDED", "before")]
    watcher = start("watch", str(path), "4")  # the other process watches from now
    writer = start("create", str(path), "theirs", "2")
    go(watcher)
    go(writer)
    assert await take(watch, 2) == [("ADDED", "theirs-0"), ("ADDED", "theirs-1")]
    assert finish(writer) == [["theirs-0", "2"], ["theirs-1", "3"]]
    mine = await store.create(WORKFLOW, obj("mine"))
    await store.patch_status(WORKFLOW, "mine", "default", {"phase": "Running"})
    assert [line[:2] for line in await asyncio.to_thread(finish, watcher)] == [
        ["ADDED", "theirs-0"], ["ADDED", "theirs-1"], ["ADDED", "mine"], ["MODIFIED", "mine"]]
    assert mine["metadata"]["resourceVersion"] == "4"
    await store.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
async def test_a_writer_killed_mid_stream_loses_no_write_that_returned(tmp_path: Path, sig: signal.Signals) -> None:
    path = tmp_path / "store.db"
    writer = start("create", str(path), "w", "100000")
    go(writer)
    assert writer.stdout is not None
    returned = [writer.stdout.readline().split() for _ in range(300)]
    writer.send_signal(sig)
    writer.wait(timeout=GUARD_SECONDS)
    # Read the rest through the same buffered stream readline() filled: communicate() reads the descriptor
    # itself and would skip lines already read ahead into that buffer (writes that returned, then uncounted).
    rest = writer.stdout.read()
    assert writer.returncode == -sig
    returned += [line.split() for line in rest.split("\n")[:-1]]  # whole lines only: a half-printed one is no proof
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    store = SqliteStore(path, ManualClock())
    stored = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in (await store.list(WORKFLOW)).items}
    assert all(stored.get(name) == rv for name, rv in returned), "a write that returned is missing"
    assert len(stored) - len(returned) in (0, 1)  # at most the write in flight (committed, not yet printed)
    later = await store.create(WORKFLOW, obj("after-restart"))
    assert int(later["metadata"]["resourceVersion"]) == len(stored) + 1
    await store.close()


def test_concurrent_writers_never_lose_an_object_or_share_a_resource_version(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    SqliteStore(path, ManualClock())  # created before the race, as the console would
    count = 300
    workers = [start("create", str(path), prefix, str(count)) for prefix in ("left", "right")]
    for worker in workers:
        go(worker)
    outputs = [finish(worker) for worker in workers]
    versions = [int(rv) for output in outputs for _, rv in output]
    assert sorted(versions) == list(range(1, 2 * count + 1))  # every rv once, none lost, none shared
    left, right = ([int(rv) for _, rv in output] for output in outputs)
    assert left == sorted(left) and right == sorted(right)  # each process's writes in its own order
    assert right[0] < left[-1] and left[0] < right[-1], "the writers never overlapped"
    store = SqliteStore(path, ManualClock())
    listed = asyncio.run(store.list(WORKFLOW)).items
    assert {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"]) for o in listed} == {
        name: int(rv) for output in outputs for name, rv in output}
    assert len({o["metadata"]["uid"] for o in listed}) == 2 * count
    asyncio.run(store.close())


def test_a_lease_is_one_object_that_processes_take_in_turn(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    rounds = 150
    workers = [start("lease", str(path), holder, str(rounds)) for holder in ("console", "runner")]
    for worker in workers:
        go(worker)
    results = {line[1]: (int(line[2]), int(line[3])) for worker in workers for line in finish(worker)}
    assert sorted(created for created, _ in results.values()) == [0, 1]  # one process created it, once
    store = SqliteStore(path, ManualClock())
    leases = asyncio.run(store.list(LEASE)).items
    assert len(leases) == 1
    # every take counted exactly once: an update based on a stale read was refused (Conflict) and retried
    assert leases[0]["spec"]["leaseTransitions"] == 2 * rounds
    assert sum(conflicts for _, conflicts in results.values()) > 0, "the processes never raced for the Lease"
    asyncio.run(store.close())
