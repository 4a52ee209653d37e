"""A damaged object in the store (a status of the wrong type: a hand edit, another client, an older nvcre) never
crashes the console, the read-only console or the wall: it is left out of what the screens show, and named once, in
one line, with its first problem; the drill-down, the log screen and the wall keep working around it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import Session
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKFLOW, ResourceKind
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.screens.wall import WallScreen

from .harness import reopen

ALL_REDUCE = "burn-in-communication-nccl-all-reduce"
SLOW_JOB = f"{ALL_REDUCE}-group-6-iter-1"  # gpu-node-07's Job: it failed, so the map reads its failedNodes
# (kind, name, status written over the stored one, the line the console says)
DAMAGES = {
    "job": (JOB, SLOW_JOB, {"failedNodes": [5]},
            f"Job default/{SLOW_JOB} is damaged and left out of the console: status.failedNodes[0]: must be a mapping, got 5"),
    "workflow": (WORKFLOW, ALL_REDUCE, "x",
                 f"Workflow default/{ALL_REDUCE} is damaged and left out of the console: status: must be a mapping, got 'x'"),
    "certification": (CERTIFICATION, "burn-in", {"categoryStatuses": 5},
                      "Certification default/burn-in is damaged and left out of the console: "
                      "status.categoryStatuses: must be a list, got 5"),
}


async def damage(session: Session, kind: ResourceKind, name: str, status: Any) -> None:
    """What another client writing a status of the wrong type does (the store checks no status)."""
    stored = await session.store.get(kind, name, "default")
    await session.store.update_status(kind, {**stored, "status": status})


def said(app: NvcreApp, line: str) -> int:
    return [str(n.message) for n in app._notifications].count(line)


async def press(pilot: Pilot[None], *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause()


async def visit_drilldown_logs_and_wall(app: NvcreApp, pilot: Pilot[None]) -> list[type]:
    """Enter the first certification's drill-down, open the logs of each failure in turn, then the wall: the screens seen."""
    seen: list[type] = []
    await press(pilot, "enter")
    seen.append(type(app.screen))
    if isinstance(app.screen, DrilldownScreen):
        for _ in range(3):
            await press(pilot, "f", "l")
            await app.workers.wait_for_complete()
            await pilot.pause()
            seen.append(type(app.screen))
            if isinstance(app.screen, LogsScreen):
                await press(pilot, "escape")
        await press(pilot, "escape")
    await press(pilot, "w", "right", "right")
    seen.append(type(app.screen))
    return seen


@pytest.mark.parametrize("read_only", [False, True], ids=["console", "read-only"])
@pytest.mark.parametrize("what", ["job", "workflow"])
async def test_a_damaged_object_is_left_out_and_named_once(what: str, read_only: bool, finished_intra_node: Path) -> None:
    kind, name, status, line = DAMAGES[what]
    session = await reopen(finished_intra_node)
    await damage(session, kind, name, status)
    app = NvcreApp(session=session, live=False, read_only=read_only)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert app.snapshot is not None and [found.name for found in app.snapshot.damaged] == [name]
        seen = await visit_drilldown_logs_and_wall(app, pilot)
        assert DrilldownScreen in seen and LogsScreen in seen and seen[-1] is WallScreen
        await app.refresh_snapshot()
        assert said(app, line) == 1  # once, however often the snapshot is read again


async def test_the_wall_with_a_damaged_job_rotates_and_names_it(finished_intra_node: Path) -> None:
    kind, name, status, line = DAMAGES["job"]
    session = await reopen(finished_intra_node)
    await damage(session, kind, name, status)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await press(pilot, "right", "right", "space")
        assert isinstance(app.screen, WallScreen)
        assert said(app, line) == 1


@pytest.mark.parametrize("what", ["job", "workflow", "certification"])
async def test_damage_written_while_the_log_screen_is_open_leaves_the_console_running(what: str, finished_intra_node: Path) -> None:
    kind, name, status, line = DAMAGES[what]
    session = await reopen(finished_intra_node)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await press(pilot, "enter", "l")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)
        await damage(session, kind, name, status)
        await app.refresh_snapshot()
        await pilot.pause()
        await press(pilot, "escape")  # back to the drill-down, its object now left out
        assert not isinstance(app.screen, LogsScreen)
        await press(pilot, "escape", "m", "escape", "w", "right")
        assert isinstance(app.screen, WallScreen)
        await app.refresh_snapshot()
        assert said(app, line) == 1


async def test_a_damaged_object_repaired_and_damaged_again_is_named_again(finished_intra_node: Path) -> None:
    kind, name, status, line = DAMAGES["job"]
    session = await reopen(finished_intra_node)
    good = (await session.store.get(kind, name, "default"))["status"]
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        for written in (status, good, status):
            await damage(session, kind, name, written)
            await app.refresh_snapshot()
            await pilot.pause()
        assert said(app, line) == 2
        assert app.snapshot is not None and app.snapshot.damaged
