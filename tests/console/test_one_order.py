"""The dashboard, the wall and `certification list` show certifications in one order (report.shown_order): the most
urgent result first, newest first within one. The wall rotated by name and `list` went oldest first, while the
dashboard put the running one first: three orders of the same certifications."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli import main
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.wall import WallScreen

from .harness import certification_body
from .test_wall_keeps_failures import on_one_node


async def _shown(state: Path) -> tuple[list[str], list[str]]:
    """The dashboard's rows and the wall's rotation, from the one shown first, of a store holding a failed, a passed
    and a running certification."""
    session = await SimSession.open(default_scenario(), state, history=None)
    try:
        assert session.engine is not None
        # alpha fails (gpu-node-07 misses 400 GB/s), zulu passes after it on other nodes: both stay on the wall
        for text in (on_one_node("alpha", "gpu-node-07").replace("value >= 100", "value >= 400"), on_one_node("zulu", "gpu-node-01")):
            await session.store.create(CERTIFICATION, certification_body(text))
            await session.engine.run_until_settled()
        await session.store.create(CERTIFICATION, certification_body(on_one_node("beta", "gpu-node-02")))  # running
        app = NvcreApp(session=session, live=False)
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, DashboardScreen)
            table = app.screen.query_one("#certs")
            dashboard = [str(key.value) for key in table.rows]  # type: ignore[attr-defined]
            app.run_command("wall")
            await pilot.pause()
            assert isinstance(app.screen, WallScreen)
            assert app.screen.current == dashboard[0]  # the most urgent first
            wall = [str(app.screen.current)]
            for _ in range(len(dashboard)):
                await pilot.press("right")
                await pilot.pause()
                if app.screen.current == wall[0]:
                    break
                wall.append(str(app.screen.current))
        return dashboard, wall
    finally:
        await session.close()


def test_the_dashboard_the_wall_and_list_show_one_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "sim.db"
    dashboard, wall = asyncio.run(_shown(state))
    assert dashboard == ["beta", "alpha", "zulu"]  # running, failed, passed
    assert wall == dashboard
    capsys.readouterr()
    assert main(["certification", "list", "--sim", "--state", str(state), "--history", str(tmp_path / "h.db"), "-o", "json"]) == 0
    assert [row["name"] for row in json.loads(capsys.readouterr().out)] == dashboard
