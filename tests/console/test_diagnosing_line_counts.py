"""The drill-down's diagnosing line counts every round's tests and says so: "round 1 (confirmation), 16 tests" read as
round 1's, while the round rows under it count each round's own ("round 1 · confirmation: 3 tests")."""

from __future__ import annotations

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.diagnosis import diagnose_state
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, certification_body, open_drilldown, session_with


async def test_the_diagnosing_line_says_its_tests_are_all_rounds_so_far() -> None:
    session = await session_with(settle=False, scenario=FABRIC_AND_SLOW_GPU)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        assert await app.submit(certification_body(DIAGNOSE))
        assert session.engine is not None
        for _ in range(40):  # until a round after the screening runs
            await session.engine.run_until_settled(max_seconds=30)
            await app.refresh_snapshot()
            assert app.snapshot is not None
            state = diagnose_state(app.snapshot.views["isolate"].categories[0]) or {}
            if int(state.get("round") or 0) >= 1 and state.get("stage") != "complete":
                break
        else:
            raise AssertionError("no round after the screening")
        screen = await open_drilldown(app, pilot, "isolate")
        tree = screen.query_one(Tree)
        category = tree.root.children[0]
        tests = len(state.get("tests") or [])
        said = f"round {state['round']} ({state['stage']}), {tests} tests so far"
        assert said in str(category.label), category.label
        rounds = [n for n in DrilldownScreen._walk(tree.root) if (n.data or {}).get("kind") == "iteration"]
        assert rounds and all(": " in str(n.label) and " test" in str(n.label) for n in rounds), [str(n.label) for n in rounds]
