"""The drill-down's tree on 80 columns: a label too long for its line ends with "…" after a whole word, and the
tree never scrolls sideways. A running diagnosis's category line was cut at the edge mid-word ("diagnosing: 2
suspects · round 3 (confirmat") and a waiting category's reason too ("waits for an earlier category on the"), found
watching DIAGNOSE_AND_TRAIN run at 80x24."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.widgets.fitted_tree import fitted_label

from .harness import DIAGNOSE_AND_TRAIN, open_drilldown, session_run_for


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
        category = next(line for line in lines if "communication/nccl-all-reduce  diagnosing:" in line)
        assert "diagnosing: 2 suspects" in category and category.endswith(" …"), category
        waiting = next(line for line in lines if "training/nemotron5-8b" in line)
        assert waiting.endswith(" …") or waiting.endswith("nodes"), waiting
