"""Every failed status in the drill-down's detail carries its glyph: a WorkloadFailed Job's read a bare "Failed"
while a ValidationFailed one read "✗ ValidationFailed" (a walkthrough found it)."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.bodies import conditions_of
from nvcre_tui.engine.api.vocabulary import VALIDATION_FAILED
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import DIAGNOSE, FLAKY_AND_FABRIC, open_drilldown, session_with


async def test_a_workload_failed_jobs_status_has_its_glyph() -> None:
    app = NvcreApp(session=await session_with(DIAGNOSE, scenario=FLAKY_AND_FABRIC), live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        groups = [n for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "group"]
        crashed = [(n, job) for n in groups if (job := (n.data or {}).get("job")) is not None
                   and cond.phase(job) == "Failed" and not cond.is_true(job, VALIDATION_FAILED)]
        assert crashed, "no WorkloadFailed group"
        node, job = crashed[0]
        screen._show_detail(node)
        lines = str(screen.query_one("#detail").render()).splitlines()
        assert lines[1].split(None, 1) == ["Status", "✗ Failed"], (lines, conditions_of(job))
