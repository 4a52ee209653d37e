"""A node too small for a category (node-short-of-memory: gpu-node-05 allocates 60Gi, below Nemotron's least) is left
out of it before it runs: the console says so where it shows the node, with what it has and what a pod asks, as the
report does, and the certification reads INCOMPLETE, never a clean PASSED, blaming nobody."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.vocabulary import NodeState
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import open_node_screen, session_with

CASE = Path(__file__).resolve().parents[1] / "cases" / "scenarios" / "node-short-of-memory"
WHY = "60Gi memory allocatable, 1200Gi requested"


def lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def test_the_node_left_out_is_excluded_with_its_shortfall_on_every_screen() -> None:
    session = await session_with((CASE / "cert.yaml").read_text(), scenario=load_scenario(CASE / "scenario.yaml"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert app.snapshot is not None
        summary = app.snapshot.certifications[0]["status"]["summary"]
        assert (summary["result"], summary["failedNodes"], summary["excludedNodes"]) == ("INCOMPLETE", 0, 1)
        states = node_states(app.snapshot)
        assert states["gpu-node-05"][0] == NodeState.EXCLUDED.value and WHY in states["gpu-node-05"][1], states["gpu-node-05"]
        assert {states[f"gpu-node-0{i}"][0] for i in range(1, 5)} == {NodeState.PASSED.value}
        # The drill-down: the category's detail names it with its shortfall.
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        await pilot.press("down")
        await pilot.pause()
        detail = str(app.screen.query_one("#detail", Static).render())
        assert f"gpu-node-05: {WHY}" in detail, detail
        await pilot.press("escape")
        await pilot.pause()
        # The node screen: excluded, and why (its category first), as the map and the report say.
        await open_node_screen(app, pilot, "gpu-node-05")
        shown = lines(app)
        assert f"gpu-node-05   {NodeState.EXCLUDED.glyph} excluded" in shown[1], shown
        assert "Why               training/nemotron5-8b: 60Gi memory allocatable," in shown[2], shown
        assert any(line.strip().startswith("1200Gi requested") for line in shown[3:4]), shown
