"""The bandwidth screen's chooser on 80x24: every prompt fits the list, a value and its ▾ on one line. Its labels'
column was 19 wide whatever the labels: "✗ gpu-node-07  ...  264.81 ▾" took 30 columns of the list's 28 and its ▾
wrapped onto a line of its own, and a diagnosis's "r0-screen-15 (2 nodes)" pushed its value under it at the list's
left edge (found opening b on a drill-down at 80x24)."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.widgets import OptionList

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.bandwidth import BandwidthScreen

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, INTRA_NODE, session_with


@pytest.mark.parametrize(("text", "name"), [(INTRA_NODE, "burn-in"), (DIAGNOSE, "isolate")])
async def test_every_prompt_fits_the_chooser_at_80_columns(text: str, name: str) -> None:
    session = await session_with(text, scenario=FABRIC_AND_SLOW_GPU if text is DIAGNOSE else None)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        workflow = next(w["metadata"]["name"] for w in app.snapshot.workflows_of(name) if "all-reduce" in w["metadata"]["name"])
        await app.push_screen(BandwidthScreen(workflow))
        await pilot.pause()
        await pilot.pause()
        chooser = app.screen.query_one(OptionList)
        room = chooser.scrollable_content_region.width
        prompts = [str(chooser.get_option_at_index(index).prompt) for index in range(chooser.option_count)]
        flagged = [prompt for prompt in prompts if prompt.endswith("▾")]
        assert flagged, prompts
        for prompt in prompts:
            lines = prompt.splitlines()
            assert all(cell_len(line) <= room for line in lines), (room, prompt)
            assert not lines[-1].strip().startswith("▾"), prompt  # the ▾ beside its value
