"""The dashboard's failures-pane title on 80 columns: the suspects under diagnosis first, and the title whole (what
does not fit left out whole). It was cut mid-phrase at the screen's edge ("7 suspects under diagnosis (the
drill-down"), and with failures found beside a diagnosis its suspect count came last and was cut off altogether
(found watching DIAGNOSE_AND_TRAIN run at 80x24)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import Static

from nvcre_tui.app import NvcreApp

from .harness import DIAGNOSE_AND_TRAIN, reopen, session_run_for


def test_the_suspects_come_first_and_only_whole_parts_are_added() -> None:
    from nvcre_tui.screens.dashboard import failures_title

    said = ["2 suspects under diagnosis", "1 infrastructure fault, 3 nodes blamed"]
    wide = failures_title("isolate", said, True, True, 200)
    assert wide == ("Failures · isolate: 2 suspects under diagnosis; 1 infrastructure fault, 3 nodes blamed (the drill-down shows them)"
                    " · f then enter evidence, l log")
    for width in range(20, 200):
        title = failures_title("isolate", said, True, True, width)
        assert cell_len(title) <= width, (width, title)
        assert title.startswith("Failures · isolate: 2 suspects") or width < 40, (width, title)
    # 80 columns: the parts that do not fit left out whole, a title too long even bare ends at a word with "…"
    assert failures_title("isolate", ["2 suspects under diagnosis"], True, False, 78) == "Failures · isolate: 2 suspects under diagnosis (the drill-down shows them)"
    assert failures_title("diagnose-and-train", ["7 suspects under diagnosis"], True, False, 78) == "Failures · diagnose-and-train: 7 suspects under diagnosis"
    # never on a count without its noun ("3 …" of "3 nodes blamed": tests/console/test_cuts_keep_counts_whole.py)
    assert failures_title("isolate", said, True, True, 78) == "Failures · isolate: 2 suspects under diagnosis; 1 infrastructure fault, …"


async def test_the_title_of_a_running_diagnosis_is_whole_at_80_columns() -> None:
    app = NvcreApp(session=await session_run_for(DIAGNOSE_AND_TRAIN, 60), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        title = app.screen.query_one("#failures-title", Static)
        said = str(title.render())
        assert "nodes under suspicion" in said, said
        assert cell_len(said) <= title.content_size.width, f"cut at the edge: {said!r}"


async def test_a_node_blamed_and_suspected_again_is_counted_once_among_the_blamed(finished_intra_node: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Convicted by one category, suspected again by a later category's diagnosis: the title counted it among both
    ("32 nodes under suspicion; 1 infrastructure fault, 2 nodes blamed" of a 32-node fleet whose line and wall said 30)."""
    monkeypatch.setattr("nvcre_tui.screens.dashboard.diagnosis_suspects", lambda snapshot, name: {"gpu-node-07", "gpu-node-12", "gpu-node-01"})
    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        said = str(app.screen.query_one("#failures-title", Static).render())
        assert said.startswith("Failures · burn-in: 1 node under suspicion; 2 nodes blamed"), said
