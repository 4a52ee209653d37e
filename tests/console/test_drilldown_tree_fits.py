"""The drill-down's tree on 80 columns: a label too long for its line ends with "…" after a whole word, and the
tree never scrolls sideways. A running diagnosis's category line was cut at the edge mid-word ("diagnosing: 2
suspects · round 3 (confirmat") and a waiting category's reason too ("waits for an earlier category on the"), found
watching DIAGNOSE_AND_TRAIN run at 80x24."""

from __future__ import annotations

import re

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.widgets.fitted_tree import fitted_label

from .harness import DIAGNOSE, DIAGNOSE_AND_TRAIN, FLAKY_AND_FABRIC, open_drilldown, session_run_for, session_with


def test_a_label_is_cut_after_its_last_whole_word() -> None:
    from rich.text import Text

    text = Text("⋯ communication/nccl-all-reduce  diagnosing: 2 suspects · round 3 (confirmation), 18 tests")
    assert fitted_label(text, 200).plain == text.plain
    assert fitted_label(text, 72).plain == "⋯ communication/nccl-all-reduce  diagnosing: 2 suspects · round 3 …"
    assert all(fitted_label(text, room).cell_len <= room for room in range(12, 100))


async def test_the_tree_fits_80_columns_while_a_diagnosis_runs() -> None:
    app = NvcreApp(session=await session_run_for(DIAGNOSE_AND_TRAIN, 200), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_drilldown(app, pilot, "diagnose-and-train")
        await pilot.pause()
        tree = screen.query_one(Tree)
        assert tree.max_scroll_x == 0, f"{tree.virtual_size.width} columns in {tree.scrollable_content_region.width}"
        lines = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()][tree.region.y : tree.region.bottom]
        # its shorter wording (test_cuts_keep_counts_whole.py): the progress whole, the domain left out
        category = next(line for line in lines if "nccl-all-reduce  " in line)
        assert re.search(r"⋯ nccl-all-reduce  2 under suspicion · round \d+( \(\w+\))?, \d+ tests so far$", category), category
        waiting = next(line for line in lines if "training/nemotron5-8b" in line)
        assert waiting.endswith(" …") or waiting.endswith("nodes"), waiting


async def test_a_cut_verdicts_line_keeps_its_faults_and_suspects_and_drops_the_healthy_count() -> None:
    """A review watched a diagnosis at 120x40: its verdicts line read "(29 nodes healthy, 1 intermittent, 2 …", the
    suspects and the link fault cut off (mid-run it counts a link fault, a convicted node, suspects and the healthy,
    more than a 120-column tree's line holds). The healthy come last now."""
    session = await session_with(DIAGNOSE, settle=False, scenario=FLAKY_AND_FABRIC)
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=300)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        await pilot.pause()
        tree = screen.query_one(Tree)
        [header] = [n for n in screen._walk(tree.root) if str(n.label).startswith("verdicts")]
        assert re.fullmatch(r"verdicts as of round \d+ \(1 link fault, 1 intermittent, \d+ under suspicion, \d+ nodes healthy\)", str(header.label)), header.label
        lines = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()][tree.region.y : tree.region.bottom]
        shown = next(line for line in lines if "verdicts " in line)  # its round goes where "under suspicion" needs the room
        assert re.search(r"verdicts( as of round \d+)? \(1 link fault, 1 intermittent, \d+ under suspicion, …\)", shown), shown
