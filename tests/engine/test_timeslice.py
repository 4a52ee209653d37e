"""The engine shares the console's event loop (`nvcre` on the simulator runs it there): work that grows with the fleet
lets the loop run once a slice of it has gone by (engine/controllers/timeslice.py), and never when no slice is set (a ManualClock
run, whose interleaving stays as it was)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nvcre_tui.engine.controllers import job
from nvcre_tui.engine.judging import nodehealth
from nvcre_tui.engine.runners.simulated import SimulatedRunner
from nvcre_tui.engine.controllers.timeslice import TimeSlice
from tests.engine.test_large_group_work import NODES, finished_full_scale


async def _map_watched(seconds: float | None) -> tuple[list[int], list[int]]:
    """TimeSlice.map over six items, each taking 10 ms of a fake timer, while another task notes how many items were
    done each time it runs: (the results, those notes)."""
    now = [0.0]
    done: list[int] = []
    seen: list[int] = []

    def work(item: int) -> int:
        now[0] += 0.01
        done.append(item)
        return item * 2

    async def other() -> None:
        while True:
            seen.append(len(done))
            await asyncio.sleep(0)

    task = asyncio.create_task(other())
    await asyncio.sleep(0)
    results = await TimeSlice(seconds, timer=lambda: now[0]).map(work, range(6))
    task.cancel()
    return results, seen


async def test_map_lets_the_loop_run_each_time_a_slice_went_by() -> None:
    results, seen = await _map_watched(0.02)
    assert results == [0, 2, 4, 6, 8, 10]
    assert seen == [0, 2, 4, 6]  # after every second item: each slice of 20 ms of work


async def test_map_without_a_slice_never_lets_the_loop_run() -> None:
    results, seen = await _map_watched(None)
    assert results == [0, 2, 4, 6, 8, 10]
    assert seen == [0]


async def test_a_jobs_node_health_check_lets_the_loop_run_between_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full-scale Job's node-health CEL over its group (0.3-0.5 s at 1,024 nodes) is no longer one piece: with a
    slice of 0 s the loop runs between every two nodes."""
    beats = [0]
    seen: list[int] = []  # the heartbeat's count at each node assessed
    assess = nodehealth.NodeHealthCheck.assess

    def watched(self: nodehealth.NodeHealthCheck, node: Any) -> nodehealth.NodeVerdict:
        seen.append(beats[0])
        return assess(self, node)

    async def heartbeat() -> None:
        while True:
            beats[0] += 1
            await asyncio.sleep(0)

    monkeypatch.setattr(nodehealth.NodeHealthCheck, "assess", watched)
    monkeypatch.setattr(nodehealth, "_VERDICTS", {})  # every Node assessed here, none remembered from another test
    task = asyncio.create_task(heartbeat())
    try:
        session, _ = await finished_full_scale(slice_seconds=0.0)
        await session.close()
    finally:
        task.cancel()
    assert len(seen) >= NODES
    together = sum(1 for before, after in zip(seen, seen[1:]) if before == after)
    assert together == 0, f"{together} of {len(seen)} nodes were assessed with no turn of the loop since the one before"


async def test_a_jobs_output_is_read_in_another_slice_than_the_one_it_was_fetched_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full-scale run's output at 1,024 nodes (the simulator makes 8,500 lines) and reading it are two slices."""
    beats = [0]
    fetched: list[int] = []  # the heartbeat's count as each Job's output was fetched, and as it was read
    read: list[int] = []
    measure = job.measure

    def watched(*args: Any) -> Any:
        read.append(beats[0])
        return measure(*args)

    async def heartbeat() -> None:
        while True:
            beats[0] += 1
            await asyncio.sleep(0)

    async def fetched_logs(self: SimulatedRunner, run: Any, *, required: bool = True) -> list[str]:
        lines = await logs(self, run, required=required)
        fetched.append(beats[0])
        return lines

    logs = SimulatedRunner.logs
    monkeypatch.setattr(SimulatedRunner, "logs", fetched_logs)
    monkeypatch.setattr(job, "measure", watched)
    task = asyncio.create_task(heartbeat())
    try:
        session, _ = await finished_full_scale(slice_seconds=0.0)
        await session.close()
    finally:
        task.cancel()
    assert read and all(later > before for before, later in zip(fetched, read)), (fetched, read)
