"""The drill-down of a diagnosis under way, before any failure: a walkthrough (FABRIC_AND_SLOW_GPU at 120x40) saw the
category line cut before its suspect count ("diagnosing: stage confirmation, round"), the tree open collapsed on the
root ("Select a category, group or node.") and `f` stop nowhere, while the dashboard said "2 suspects under diagnosis
(the drill-down shows them)". The count now comes first, the screen opens on the suspects and `f` stops at them; the
first failure still takes the cursor when it comes."""

from __future__ import annotations

from typing import Any

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.diagnosis import diagnose_state
from nvcre_tui.engine.views.suspicion import UNDER_SUSPICION
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, certification_body, session_with


def _cursor(tree: Tree[Any]) -> dict[str, Any]:
    assert tree.cursor_node is not None
    return tree.cursor_node.data or {}


async def test_a_diagnosis_under_way_opens_on_its_suspects_and_f_stops_at_them() -> None:
    session = await session_with(settle=False, scenario=FABRIC_AND_SLOW_GPU)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await app.submit(certification_body(DIAGNOSE))
        assert session.engine is not None
        for _ in range(40):  # until the diagnosis holds suspects
            await session.engine.run_until_settled(max_seconds=30)
            await app.refresh_snapshot()
            assert app.snapshot is not None
            state = diagnose_state(app.snapshot.views["isolate"].categories[0]) or {}
            suspects = list(state.get("suspectNodes") or [])
            if suspects:
                break
        assert len(suspects) >= 2 and not state.get("faultyNodes"), state.get("suspectNodes")
        await pilot.pause()
        await pilot.press("f")  # the dashboard's failures pane is empty: f opens the drill-down on the suspects
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        assert _cursor(tree).get("kind") == "verdict" and _cursor(tree)["node"] == suspects[0], _cursor(tree)
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        row = next(line for line in lines if "nccl-all-reduce  " in line)  # its shorter wording where the whole is too long
        assert f"{len(suspects)} {UNDER_SUSPICION} · round " in row, row  # the count, within 120 columns, in the dashboard's words
        assert any(f"! {suspects[1]}  {UNDER_SUSPICION}" in line for line in lines), "\n".join(lines)  # opened, not collapsed
        assert not any("Select a category, group or node" in line for line in lines), "\n".join(lines)
        stops = []
        for _ in suspects:
            await pilot.press("f")
            await pilot.pause()
            await pilot.pause()
            stops.append(_cursor(tree).get("node"))
        assert stops == [*suspects[1:], suspects[0]], stops  # each suspect in turn, then round again
        # The cursor on a suspect the screen chose is not the user's: the first failure takes it when it comes.
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        await pilot.pause()
        assert _cursor(tree).get("failed") is True, _cursor(tree)


async def test_a_suspect_cleared_while_highlighted_keeps_the_cursor_on_its_new_line() -> None:
    """The on-call engineer reads a suspect's evidence while the diagnosis runs on; it ends and clears that node. Its
    verdict row went, and the detail pane kept the gone row's words ("under suspicion, failed 2 of 2 tests") for a node
    the diagnosis had cleared. The cursor follows the node to its `cleared` row, whose detail says why."""
    from textual.widgets import Static

    session = await session_with(settle=False, scenario=FABRIC_AND_SLOW_GPU)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await app.submit(certification_body(DIAGNOSE))
        assert session.engine is not None
        for _ in range(40):  # until a node the diagnosis will clear is under suspicion (gpu-node-03 is the faulty one)
            await session.engine.run_until_settled(max_seconds=30)
            await app.refresh_snapshot()
            assert app.snapshot is not None
            state = diagnose_state(app.snapshot.views["isolate"].categories[0]) or {}
            innocent = next((node for node in state.get("suspectNodes") or [] if node != "gpu-node-03"), None)
            if innocent is not None:
                break
        assert innocent is not None
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        for _ in range(10):  # f, as the engineer does, to that suspect
            if _cursor(tree).get("node") == innocent and _cursor(tree).get("kind") == "verdict":
                break
            await pilot.press("f")
            await pilot.pause()
            await pilot.pause()
        detail = app.screen.query_one("#detail", Static)
        assert _cursor(tree).get("node") == innocent and f"{UNDER_SUSPICION}, failed" in str(detail.render())
        await session.engine.run_until_settled()  # the diagnosis ends: gpu-node-03 faulty, the others cleared
        await app.refresh_snapshot()
        await pilot.pause()
        await pilot.pause()
        assert (_cursor(tree).get("kind"), _cursor(tree).get("node")) == ("cleared", innocent), _cursor(tree)
        said = str(detail.render())
        assert UNDER_SUSPICION not in said and f"Node              {innocent}" in said and "healthy, failed" in said, said
