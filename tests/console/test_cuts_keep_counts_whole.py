"""A line cut to fit never ends on a count whose noun it cut off, and the drill-down's diagnosing category line keeps
its progress whole. The failures title at 80 columns ended "…, 3 …" (of "3 nodes blamed"); at 80 and 120 columns
the category line mid-diagnosis read "diagnosing: 2 suspects · round 2 …", its "(confirmation), N tests" cut off."""

from __future__ import annotations

import re

import pytest
from rich.text import Text

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.dashboard import failures_title
from nvcre_tui.widgets.fitted_list import ELLIPSIS, cut_at_word
from nvcre_tui.widgets.fitted_tree import fitted_label

from .harness import DIAGNOSE, open_drilldown, session_run_for
from .test_wall_keys_and_counters import screen_lines

# A count opening a phrase (after a clause's punctuation or a tie word) left without its noun.
BARE = re.compile(rf"(?:[,;:·] |\bof |\band )[(\[]?\d+[,;:]? {ELLIPSIS}$|\b(?:of|and) {ELLIPSIS}$")


def test_a_cut_never_ends_on_a_bare_count() -> None:
    said = ["2 suspects under diagnosis", "1 infrastructure fault, 3 nodes blamed"]
    for width in range(20, 120):
        title = failures_title("isolate", said, True, True, width)
        assert not BARE.search(title), (width, title)
    assert failures_title("isolate", said, True, True, 78) == "Failures · isolate: 2 suspects under diagnosis; 1 infrastructure fault, …"
    text = "gpu-node-11 intermittent, failed 3 of 5 tests (r0-screen-5 WorkloadFailed)"
    for width in range(12, len(text)):
        for lines in (1, 2):
            cut = cut_at_word(text, width, lines)
            assert not BARE.search(cut[-1]) and not cut[-1].endswith(f"failed 3 {ELLIPSIS}"), (width, cut)
    assert cut_at_word("GPU 2 (slow), 3 nodes blamed", 17, 1) == [f"GPU 2 (slow), {ELLIPSIS}"]
    assert cut_at_word("round 2 (confirmation), 21 tests", 12, 1) == [f"round 2 {ELLIPSIS}"]  # a number ending its phrase stays
    line = "⋯ communication/nccl-all-reduce  diagnosing: 2 suspects · round 2 (confirmation), 21 tests"
    for room in range(12, len(line)):
        fitted = fitted_label(Text(line), room).plain
        assert fitted.endswith(ELLIPSIS) and not BARE.search(fitted), (room, fitted)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_diagnosing_category_line_keeps_its_progress(size: tuple[int, int]) -> None:
    app = NvcreApp(session=await session_run_for(DIAGNOSE, 120), live=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await open_drilldown(app, pilot, "isolate")
        await pilot.pause()
        lines = [line for line in screen_lines(app) if "nccl-all-reduce  " in line]
        assert lines, screen_lines(app)
        # the narrowing set in the dashboard's and the wall's words ("2 suspects" said what the report calls a node
        # blamed with its whole group); the stage goes before the count or the round where the line has no room
        assert re.search(r"2 under suspicion · round 2( \(confirmation\))?, \d+ tests so far$", lines[0].split("│")[0].rstrip()), lines[0]
