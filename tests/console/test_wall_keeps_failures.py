"""A certification that failed stays on the wall until a newer one replaces it or someone deletes it (report.wall_subjects;
a review saw a failed burn-in leave the wall 30 simulated minutes after it finished, while nothing newer had looked at
its nodes). With the session's fixed clock moved days on, nothing changes on its own."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.report.wall_subjects import wall_subjects
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.fitted_list import FittedList

from .harness import DIAGNOSE_AND_TRAIN, certification_body, intra_all_reduce, session_with

DAY = 24 * 3600.0


def on_one_node(name: str, node: str) -> str:
    """One category on one node, against a threshold every node meets: it passes."""
    return f"""apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}}}
spec:
  target: {{nodeNames: [{node}]}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {{testScale: intra-node}}
  options: {{thresholds: {{busBandwidthGBps: "value >= 100"}}}}
"""


async def run(session: SimSession, text: str) -> None:
    """Create the certification and run the engine until it settles."""
    assert session.engine is not None
    await session.store.create(CERTIFICATION, certification_body(text))
    await session.engine.run_until_settled()


async def rotation(app: NvcreApp, pilot: Pilot[None]) -> list[str]:
    """The certifications the wall shows in turn, one `right` each, from the one shown now."""
    assert isinstance(app.screen, WallScreen)
    await app.refresh_snapshot()
    app.screen.refresh_now()  # the session clock moved: the rotation is read again at the time it is now
    seen = [str(app.screen.current)]
    for _ in range(4):
        await pilot.press("right")
        await pilot.pause()
        if app.screen.current == seen[0]:
            break
        seen.append(str(app.screen.current))
    return sorted(seen)


async def test_a_failure_stays_on_the_wall_until_a_newer_certification_of_its_nodes_replaces_it() -> None:
    session = await session_with(intra_all_reduce("alpha"))  # fails: gpu-node-07 below 400 GB/s
    clock = session.clock
    assert isinstance(clock, ManualClock)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        clock.advance(2 * DAY)  # a weekend: a burn-in that failed on Friday night is still there on Monday
        assert await rotation(app, pilot) == ["alpha"]
        title = str(app.screen.query_one("#title", Static).render())
        assert title.lstrip().startswith("alpha  FAILED") and "finished 2d ago" in title, title  # not 48h00m: days, as kubectl says an AGE
        assert app.screen.query_one("#count-failed", Digits).value != "0"
        assert "gpu-node-07" in [entry.subject for entry in app.screen.query_one("#failures", FittedList).entries]

        # A newer certification of one node passes: the latest finished shows, and the failure beside it (it was
        # 30 minutes until the failure left, and then only the pass showed).
        await run(session, on_one_node("spot-check", "gpu-node-01"))
        clock.advance(DAY)
        assert await rotation(app, pilot) == ["alpha", "spot-check"]

        # A newer certification of every node alpha held finishes (failed too, by its own verdicts): it replaces alpha.
        await run(session, DIAGNOSE_AND_TRAIN)
        clock.advance(DAY)
        assert await rotation(app, pilot) == ["diagnose-and-train"]
        await session.close()


async def test_a_failure_leaves_the_wall_when_it_is_deleted_and_a_pass_when_a_newer_one_finishes() -> None:
    session = await session_with(intra_all_reduce("alpha"), on_one_node("spot-check", "gpu-node-01"))
    clock = session.clock
    assert isinstance(clock, ManualClock)
    clock.advance(7 * DAY)
    snapshot = await Snapshot.read(session.store, "default")
    assert wall_subjects(snapshot.views) == ["alpha", "spot-check"]
    await run(session, on_one_node("spot-check-2", "gpu-node-02"))
    assert wall_subjects((await Snapshot.read(session.store, "default")).views) == ["alpha", "spot-check-2"]  # the older pass left, the failure stays
    await session.store.delete(CERTIFICATION, "alpha", "default")
    assert wall_subjects((await Snapshot.read(session.store, "default")).views) == ["spot-check-2"]
    assert wall_subjects(Snapshot().views) == []
    await session.close()
