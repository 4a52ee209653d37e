"""A certification none of whose categories started (no node matches its target, or every one is cordoned) is counted
on the nodes it targets, waiting and then ended, with why it waits: the wall counted the whole fleet after it failed
("of 4 nodes: ... + 4 ◦ untested" for one that matched none) and said nothing of why it waited."""

from __future__ import annotations

from pathlib import Path

import yaml
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import load_scenario
from nvcre_tui.engine.store import CERTIFICATION

CASES = Path(__file__).parents[1] / "cases" / "scenarios"


async def _tally(session: SimSession) -> tuple[str, list[str], str]:
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        return (str(app.screen.query_one("#tally", Static).render()),
                [app.screen.query_one(f"#count-{state}", Digits).value for state in ("passed", "failed", "suspect", "inconclusive", "running")],
                str(app.screen.query_one("#title", Static).render()))


async def test_a_certification_that_matched_no_node_is_counted_on_none() -> None:
    case = CASES / "no-matching-nodes-waits-then-fails"
    session = await SimSession.open(load_scenario(case / "scenario.yaml"), None, history=None)
    assert session.engine is not None
    body = yaml.safe_load((case / "cert.yaml").read_text())
    body["metadata"]["namespace"] = "default"
    await session.store.create(CERTIFICATION, body)
    name = body["metadata"]["name"]
    start = session.clock.now()

    async def half_a_minute() -> bool:
        return (session.clock.now() - start).total_seconds() >= 30

    assert await session.engine.run_until_settled(until=half_a_minute, max_seconds=60)
    tally, counters, title = await _tally(session)
    assert tally == ("nothing runs yet; of 0 nodes targeted: the counters above + 0 ◷ waiting + 0 ◦ untested + 0 ⊘ excluded; "
                     "4 other nodes not in it; communication/nccl-all-reduce waits: no eligible nodes match (none of the 4 Nodes "
                     "matches the target)"), tally
    assert counters == ["0"] * 5
    assert title.startswith(f"{name}  WAITING for nodes to match its target  0/1"), title  # not RUNNING

    async def ended() -> bool:
        return cond.is_terminal(await session.store.get(CERTIFICATION, name, "default"))

    assert await session.engine.run_until_settled(until=ended, max_seconds=3600)
    tally, counters, title = await _tally(session)
    assert tally.startswith("nothing ran; of 0 nodes targeted: the counters above + 0 ◷ waiting + 0 ◦ untested + 0 ⊘ excluded; "
                            "4 other nodes not in it"), tally
    assert title.startswith(f"{name}  FAILED  0/1"), title
