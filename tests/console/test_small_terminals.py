"""Screens on small terminals (40x12, 60x20) keep what they exist to show in sight, and a failed Job's log says
it failed (found by a review driving every screen at five sizes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.help import HelpScreen
from nvcre_tui.screens.logs import LogsScreen

from .harness import INTRA_NODE, open_node_screen, reopen, save_finished, session_with


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_finished(tmp_path_factory.mktemp("finished") / "burn-in.json", INTRA_NODE)


def screen_lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def test_the_dashboard_on_12_lines_shows_the_certification(finished: Path) -> None:
    """The fleet line wraps to four lines and the failures pane took the rest: the table's one row was its
    scrollbar, and the screen scrolled the fleet line's top away."""
    app = NvcreApp(session=await reopen(finished), live=False)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        lines = screen_lines(app)
        assert any("burn-in" in line and "FAILED" in line for line in lines), "\n".join(lines)
        assert any(line.lstrip().startswith("Fleet") for line in lines), "\n".join(lines)


async def test_the_node_screen_on_12_lines_shows_the_node_and_its_state(finished: Path) -> None:
    app = NvcreApp(session=await reopen(finished), live=False)
    async with app.run_test(size=(40, 12)) as pilot:
        await open_node_screen(app, pilot, "gpu-node-07")
        top = "\n".join(screen_lines(app)[1:4])
        assert "gpu-node-07" in top and "✗" in top, top


async def test_the_help_fits_a_60_column_terminal(finished: Path) -> None:
    app = NvcreApp(session=await reopen(finished), live=False)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        lines = screen_lines(app)
        assert lines[1].startswith("╭") and lines[1].endswith("╮"), lines[1]  # both corners: nothing cut at the right


async def test_the_compose_status_reads_on_one_line_at_60_columns() -> None:
    """The buttons took their default width and the status wrapped a word a line ("to" / "submit" / ...)."""
    app = NvcreApp(session=await session_with(settle=False), live=False)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()
        assert any("ready to submit" in line for line in screen_lines(app)), "\n".join(screen_lines(app))


async def test_a_log_of_a_job_that_missed_its_threshold_says_so_beside_the_runs_success(finished: Path) -> None:
    """The workload ran to the end (its run Succeeded, exit 0) and measured too little: the header showed only
    the run's green tick on the log that convicted the node."""
    app = NvcreApp(session=await reopen(finished), live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        app.run_command("node gpu-node-07")
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)
        header = "\n".join(screen_lines(app)[1:3])
        assert "✗ ValidationFailed" in header and "Succeeded" in header, header


async def test_the_running_category_reads_whole_on_80_columns() -> None:
    """A running certification with a long name: its Running cell was cut to `communication/n` (a console review)."""
    session = await session_with(INTRA_NODE.replace("name: burn-in", "name: burn-in-diagnose"), settle=False)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=120)  # part-way: its first category runs
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        row = next(line for line in screen_lines(app) if "burn-in-diagnose" in line)
        assert "RUNNING" in row and row.rstrip().endswith("nccl-all-reduce"), row
