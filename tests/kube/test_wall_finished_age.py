"""The wall's "finished ... ago" counts on the clock the dashboard's Age and `list`'s AGE count on. Under --sim-runner
the engine stamps a certification's completionTime on the fleet's simulated clock, which runs ahead of the API server's:
the wall said "finished 59m ago" beside a dashboard Age of 30m for the same certification (ended before it began)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from nvcre_tui.app import IDLE_TICK_SECONDS, NvcreApp
from nvcre_tui.engine.clock import SystemClock, format_time
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.wall import WallScreen
from tests.console.harness import certification_body, intra_all_reduce
from tests.kube.cluster import installed, store_on
from tests.kube.test_console_on_cluster import args_for, opened, opener


async def test_the_wall_says_finished_on_the_api_servers_clock_not_the_simulated_one(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        admin = await store_on(kubeconfig, SystemClock(), "nvcre-engine")
        await admin.create(CERTIFICATION, certification_body(intra_all_reduce("played")))
        now = SystemClock().now()
        # as a --sim-runner engine at 60x stamps a run of an hour: a minute of the server's time after its creation
        await admin.patch_status(CERTIFICATION, "played", "default", {
            "conditions": [{"type": "Failed", "status": "True", "reason": "IterationsFailed", "message": "1 node failed",
                            "lastTransitionTime": format_time(now + timedelta(hours=2))}],
            "summary": {"result": "FAILED", "passedCategories": "0/1", "failedNodes": 1},
            "startTime": format_time(now + timedelta(hours=1)), "completionTime": format_time(now + timedelta(hours=2)),
            "categoryStatuses": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Failed"}]})
        await admin.close()
        app = NvcreApp(opener=opener(args_for(kubeconfig, sim_runner=True), read_only=True), read_only=True, wall=True, live=True)
        async with app.run_test(size=(120, 30)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and isinstance(app.screen, WallScreen)
            # the simulated clock of the console that played it: 59 minutes past the run's end
            app.session.clock.jump_to(now + timedelta(hours=2, minutes=59))  # type: ignore[attr-defined]
            app._shown_at -= IDLE_TICK_SECONDS  # as if that long went by on the screen
            await app.refresh_snapshot()
            await pilot.pause()
            title = app.screen._compositor.render_strips()[0].text
            assert title.lstrip().startswith("played  FAILED"), title
            assert re.search(r"finished [0-9]s ago", title), title  # the server's seconds since the engine wrote its verdict
