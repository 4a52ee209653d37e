"""A verdict said once and short. The drill-down's verdict detail named the node twice ("Node gpu-node-11 / Verdict
gpu-node-11 intermittent, ..."); the node screen's Why line for a node convicted for crashing its tests went on after
the verdict with the raw NCCL output ("NCCL WARN NET/IB : Got completion from peer 10.0.162.191<37194> ..."), which
its log pane shows."""

from __future__ import annotations

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.widgets.hanging import HangingStatic
from nvcre_tui.widgets.verdict_mark import verdict_only

from .harness import DIAGNOSE, FLAKY_AND_FABRIC, open_drilldown, open_node_screen, session_with


async def test_the_verdict_detail_and_the_why_line_say_the_verdict_once_and_short() -> None:
    session = await session_with(DIAGNOSE, scenario=FLAKY_AND_FABRIC)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        leaf = next(n for n in DrilldownScreen._walk(screen.query_one(Tree).root)
                    if (n.data or {}).get("kind") == "verdict" and (n.data or {}).get("node") == "gpu-node-11")
        screen._show_detail(leaf)
        await pilot.pause()
        detail = " ".join(str(screen.query_one("#detail", Static).render()).split())
        assert detail.startswith("Node gpu-node-11 Verdict intermittent, failed 3 of 5 tests"), detail
        await pilot.press("escape")
        await pilot.pause()
        node = await open_node_screen(app, pilot, "gpu-node-11")
        summary = " ".join(str(node.query_one("#summary", HangingStatic).render()).split())
        why = summary.split("Why ", 1)[1]
        assert "intermittent, failed 3 of 5 tests" in why, why
        assert "NCCL" not in why and "10.0." not in why and "exited with code" not in why, why


def test_verdict_only_keeps_the_record_and_the_other_categories() -> None:
    record = ("communication/nccl-all-reduce: WorkloadFailed: diagnose: intermittent, failed 3 of 5 tests (r0-screen-5 WorkloadFailed, "
              "r1-inter-0 at 185.78 (link fault)); passed at 408.20, 402.59")
    raw = "; nccl output unreadable: NCCL failed: 'gpu-node-11:27313 NCCL WARN ...'; a container exited with code 1 (Error)"
    assert verdict_only(record + raw) == record
    assert verdict_only(record + raw + " (also communication/nccl-loopback)") == record + " (also communication/nccl-loopback)"
    assert verdict_only(record) == record
    plain = "communication/nccl-loopback: ThresholdViolation: busBandwidthGBps 160.59 (value >= 300)"
    assert verdict_only(plain) == plain
    threshold = ("communication/nccl-all-reduce: ThresholdViolation: diagnose: faulty, failed 3 of 3 tests (r0-screen-1 at 240.45); "
                 'Threshold "busBandwidthGBps" violated: measured 240.45, expression: value >= 300')
    assert verdict_only(threshold) == threshold  # the threshold said, no tool output
