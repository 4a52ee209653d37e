"""A run's runtime is one rule in every view (report.runtime): the drill-down's Job detail and the logs pane's header
say the same. A run a --sim-runner engine stamped on its simulated clock, ahead of a reader without --sim-runner, read
`0s (running)` in the drill-down while the dashboard counted the server's minutes since it was made."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.clock import format_time
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.widgets.detail import job_detail

from .harness import reopen

SERVER_NOW = datetime(2026, 3, 2, 10, 0, 0, tzinfo=timezone.utc)


def _runtime_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("Runtime"))


def test_a_run_stamped_ahead_of_the_readers_clock_has_run_the_servers_time_since_its_job_was_made() -> None:
    job = {"metadata": {"name": "j", "creationTimestamp": format_time(SERVER_NOW - timedelta(minutes=2)),
                        "annotations": {"nvcre.nvidia.com/group-nodes": "gpu-node-01"}},
           "spec": {"workload": {"workloadRun": {}}},
           "status": {"workloadStartTime": format_time(SERVER_NOW + timedelta(hours=3)),  # the simulated clock's, ahead
                      "conditions": [{"type": "InProgress", "status": "True", "reason": "WorkloadRunning", "message": ""}]}}
    said = job_detail(job, now=SERVER_NOW, whole=True).plain  # the reader's now is the server's (no --sim-runner)
    assert re.fullmatch(r"Runtime\s+2m00s \(running\)", _runtime_line(said)), said


async def test_the_drilldown_and_the_logs_pane_say_one_runtime(finished_intra_node: Path) -> None:
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        detail = _runtime_line(str(app.screen.query_one("#detail", Static).render()))
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)
        header = str(app.screen.query_one("#logs-header", Static).render())
        found = re.search(r"Runtime (\S+)", header)
        assert found is not None, header
        assert detail.split()[1] == found.group(1) != "-", (detail, header)
