"""A diagnosis read on 80 columns (a walkthrough, FABRIC_AND_SLOW_GPU at 80x24): the failures pane cut the link
fault's threshold ("... in 3 tests (value …"), the drill-down's tree rows ended "FaultyNodesCo" and "3 tes" and its
detail broke "communication/nccl-all-re" / "duce", the node screen cut its Why after "diagnose: faulty,", the wall's
tally line lost its counts. Each now wraps at words where there is room, and keeps the threshold and the counts."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.diagnosis import diagnose_state
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.suspicion import suspects_under_test
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.failures_pane import FailuresPane

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, open_drilldown, open_node_screen, reopen, session_with


def _lines(app: NvcreApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_the_failures_pane_keeps_a_link_faults_threshold_on_80_columns(finished_fabric_and_slow_gpu: Path) -> None:
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        pane = app.screen.query_one(FailuresPane)
        assert [row.node for row in pane.failures] == ["fabric clique-0 ↔ clique-1 degraded", "gpu-node-03"]
        cells = [" ".join(str(pane.get_row_at(index)[column]).split()) for index in range(pane.row_count) for column in range(len(pane.columns))]
        assert not any("…" in cell for cell in cells), cells  # nothing cut
        assert any(cell.endswith("in 3 tests (value >= 300)") for cell in cells), cells
        # the fault's subject wraps at words; a node's glyph never leaves its name
        assert "✗ fabric clique-0 ↔ clique-1 degraded" in cells and "✗ gpu-node-03" in cells, cells
        assert all(line.rstrip() != " ✗" for line in _lines(app))


async def test_the_drill_down_puts_its_detail_under_the_tree_on_80_columns(finished_fabric_and_slow_gpu: Path) -> None:
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        await pilot.pause()
        lines = _lines(app)
        assert any(line.rstrip().endswith("communication/nccl-all-reduce  FaultyNodesConfirmed") for line in lines), "\n".join(lines)
        assert any(line.rstrip().endswith("fabric clique-0 ↔ clique-1 degraded  3 tests failed") for line in lines), "\n".join(lines)
        # the detail (the link fault the screen opens on) below, as wide as the screen: a category's name whole
        assert any(line.split() == ["Category", "communication/nccl-all-reduce"] for line in lines), "\n".join(lines)
        assert screen.query_one("#detail-box").region.y > screen.query_one(Tree).region.y
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert screen.query_one("#detail-box").region.x > screen.query_one(Tree).region.x  # side by side where there is room


async def test_the_node_screen_reads_its_why_whole_on_80x24(finished_fabric_and_slow_gpu: Path) -> None:
    app = NvcreApp(session=await reopen(finished_fabric_and_slow_gpu, scenario=FABRIC_AND_SLOW_GPU), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_node_screen(app, pilot, "gpu-node-03")
        assert app.snapshot is not None
        _, why = node_states(app.snapshot)["gpu-node-03"]
        assert "faulty, failed 3 of 3 tests" in why and why.endswith("value >= 300"), why
        top = app.screen.query_one("#top").region
        shown = " ".join(" ".join(line[:-1].split()) for line in _lines(app)[top.y : top.bottom])  # its scrollbar's column left out
        assert f"Why {why}" in shown, shown


async def test_the_walls_tally_keeps_its_counts_on_80_columns() -> None:
    session = await session_with(DIAGNOSE, settle=False, scenario=FABRIC_AND_SLOW_GPU)
    app = NvcreApp(session=session, live=False, wall=True)  # a wall is read-only: the certification is submitted first
    async with app.run_test(size=(80, 24)) as pilot:
        assert session.engine is not None
        for _ in range(40):  # until the diagnosis tests a suspect (the tally's note comes first)
            await session.engine.run_until_settled(max_seconds=30)
            await app.refresh_snapshot()
            assert app.snapshot is not None
            if (diagnose_state(app.snapshot.views["isolate"].categories[0]) or {}).get("suspectNodes") and \
                    suspects_under_test(app.snapshot, node_states(app.snapshot, "isolate"), "isolate"):
                break
        else:
            raise AssertionError("no suspect was under test")
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        tally = app.screen.query_one("#tally", Static)
        assert "tested now" in str(tally.render()) and tally.size.height == 2
        said = " ".join(line.strip() for line in _lines(app)[tally.region.y : tally.region.bottom])
        assert "…" not in said and said.endswith("0 ⊘ excluded"), said
