"""A viewer console on a simulator store takes the engine Lease over when its holder exits, and runs the engine."""

from __future__ import annotations

import time
from pathlib import Path

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION
from tests.console.harness import certification_body, intra_all_reduce

WAIT_SECONDS = 15.0  # real time: the console looks at the Lease once a second


async def test_a_viewer_console_takes_the_lease_over_when_the_holder_exits(tmp_path: Path) -> None:
    path = tmp_path / "sim.db"
    holder = await SimSession.open(default_scenario(), path, live=True, history=None)
    viewer = await SimSession.open(default_scenario(), path, live=True, history=None)
    assert holder.engine is not None and viewer.engine is None and viewer.viewer_reason
    app = NvcreApp(session=viewer, live=True)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            assert "viewer" in app.sub_title
            await pilot.pause(1.5)
            assert viewer.engine is None, "took the lease while its holder still held it"
            await holder.close()
            deadline = time.monotonic() + WAIT_SECONDS
            while viewer.engine is None and time.monotonic() < deadline:
                await pilot.pause(0.05)
            assert viewer.engine is not None, "never took the lease over"
            assert "viewer" not in app.sub_title
            # ... and it reconciles: a certification submitted now gets its Workflow from this console's engine
            await viewer.store.create(CERTIFICATION, certification_body(intra_all_reduce("after-take-over")))
            while time.monotonic() < deadline + WAIT_SECONDS:
                cert = await viewer.store.get(CERTIFICATION, "after-take-over", "default")
                if (cert.get("status") or {}).get("categoryStatuses"):
                    break
                await pilot.pause(0.05)
            assert (cert.get("status") or {}).get("categoryStatuses"), "the taken-over engine never reconciled"
    finally:
        await holder.close()
        await viewer.close()
