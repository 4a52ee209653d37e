"""The wall's failures list says a diagnosis's verdict and reads a suspect's wait as a wait. A node the diagnosis
convicted faulty showed its threshold value alone ("ThresholdViolation: busBandwidthGBps 241.16 (value >= 300)") where
the report says "diagnose: faulty"; a suspect whose test's pods were not placed yet (seconds on the simulator) took
three lines on 80 columns ending "it fails after 5m00s of this", which read as stuck."""

from __future__ import annotations

from nvcre_tui.app import NvcreApp
from nvcre_tui.widgets.fitted_list import FittedList

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, FLAKY_AND_FABRIC, session_with


async def test_a_convicted_node_says_its_verdict_beside_its_value() -> None:
    session = await session_with(DIAGNOSE, settle=False, scenario=FABRIC_AND_SLOW_GPU)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=300)
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        entries = {entry.subject: entry.text for entry in app.screen.query_one("#failures", FittedList).entries}
    assert entries["gpu-node-03"].startswith("ThresholdViolation: faulty, busBandwidthGBps "), entries


async def test_a_suspect_waiting_for_its_pods_is_one_line_that_waits() -> None:
    session = await session_with(DIAGNOSE, settle=False, scenario=FLAKY_AND_FABRIC)
    assert session.engine is not None
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(40):  # 3 s of simulated time a step: the pods of a diagnosis's first tests are scheduled at 54 s
            await session.engine.run_until_settled(max_seconds=3)
            await app.refresh_snapshot()
            await pilot.pause()
            pane = app.screen.query_one("#failures", FittedList)
            waiting = [entry for entry in pane.entries if entry.glyph == "!" and "pods" in entry.text]
            if waiting:
                break
        assert waiting, pane.entries
        lines = str(pane.render()).split("\n")
        for entry in waiting:
            assert entry.text == "waits for pods", entry
            assert f"! {entry.subject}  waits for pods" in lines, lines  # one line each
        assert not any("fails after" in line for line in lines), lines
