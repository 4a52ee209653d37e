"""One meaning of suspect on the wall, as the report and `certification list` count it: a node blamed only with its
whole group, among the failed nodes. While a diagnosis narrows, the members of its failed tests it has not cleared
are under suspicion: the map draws them ! round by round, the wall's line counts them apart. The wall read SUSPECT 2
where `certification list` said FAILED NODES 0 and the report 'Failed Nodes: none'."""

from __future__ import annotations

import re

from textual.pilot import Pilot
from textual.widgets import Digits, Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli.listing import row
from nvcre_tui.engine.report.html import render_html
from nvcre_tui.engine.report.junit import render_junit
from nvcre_tui.engine.report.model import build_report
from nvcre_tui.engine.report.text import render_text
from nvcre_tui.engine.store import CERTIFICATION, JOB, WORKFLOW
from nvcre_tui.engine.views.failures import failure_rows
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.suspicion import UNDER_SUSPICION, suspects_under_test, under_suspicion
from nvcre_tui.screens.node import NodeScreen
from nvcre_tui.screens.topology import TopologyScreen
from nvcre_tui.screens.wall import WallScreen
from nvcre_tui.widgets.fitted_list import FittedList
from nvcre_tui.widgets.legend import Legend
from nvcre_tui.widgets.rack_map import RackMap

from .harness import DIAGNOSE, session_with


async def hovered(pilot: Pilot[None], node: str) -> str:
    """The state its tooltip says for `node` with the mouse over its cell ("! suspect" beside a legend reading
    "! under suspicion")."""
    rack_map = pilot.app.screen.query_one(RackMap)
    x, y = rack_map._layout.positions[node]
    await pilot.hover(rack_map, offset=(x + 1 - rack_map.scroll_offset.x, y - rack_map.scroll_offset.y))
    tooltip = str(rack_map.tooltip or "")
    assert tooltip.startswith(f"{node} · "), tooltip
    return tooltip.split("\n")[0].split(" · ")[2]


async def test_the_wall_counts_suspects_as_the_list_does_and_the_narrowing_set_apart() -> None:
    session = await session_with(DIAGNOSE, settle=False)
    assert session.engine is not None

    async def narrowing() -> bool:
        snapshot = await Snapshot.read(session.store)
        return bool(under_suspicion(node_states(snapshot, "isolate"), {r.node for r in failure_rows(snapshot, "isolate")}))

    assert await session.engine.run_until_settled(until=narrowing, max_seconds=3600)
    await session.engine.run_until_settled(max_seconds=0)  # the certification's summary catches up
    snapshot = await Snapshot.read(session.store)
    states = node_states(snapshot, "isolate")
    suspicion = under_suspicion(states, {r.node for r in failure_rows(snapshot, "isolate")})
    cert = await session.store.get(CERTIFICATION, "isolate", "default")
    report = build_report(cert, (await session.store.list(WORKFLOW, "default")).items, (await session.store.list(JOB, "default")).items)
    listed = row(cert, session.clock.now())["failedNodes"]
    app = NvcreApp(session=session, live=False, wall=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        failed, suspect = (int(app.screen.query_one(f"#count-{s}", Digits).value) for s in ("failed", "suspect"))
        tally = str(app.screen.query_one("#tally", Static).render())
        # The legend and the failures list say the narrowing set in the tally's words: "! suspect" and a line
        # "diagnose round 2: suspect" named what the SUSPECT counter above does not count.
        legend = str(app.screen.query_one(Legend).render())
        entries = {entry.subject: entry.text for entry in app.screen.query_one("#failures", FittedList).entries}
        assert f"! {UNDER_SUSPICION}" in legend and "! suspect " not in f"{legend} ", legend
        assert suspicion and not any(re.search(r"\bsuspect\b", entries[node]) for node in suspicion), entries
        assert await hovered(pilot, suspicion[0]) == f"! {UNDER_SUSPICION}"  # the map's tooltip, in the legend's words
        await app.push_screen(TopologyScreen())
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen)
        assert f"! {UNDER_SUSPICION}" in str(app.screen.query_one(Legend).render())
        app.screen.query_one(RackMap).highlighted = suspicion[0]  # its line under the map, in the legend's words
        await pilot.pause()
        explained = str(app.screen.query_one("#explain", Static).render())
        assert explained.startswith(f"{suspicion[0]}: ! {UNDER_SUSPICION}"), explained
        assert await hovered(pilot, suspicion[0]) == f"! {UNDER_SUSPICION}"
        # The node screen's Node line too: it read "! suspect" above a Why and a Result saying under suspicion.
        await app.push_screen(NodeScreen(suspicion[0]))
        await pilot.pause()
        summary = str(app.screen.query_one("#summary", Static).render())
        assert f"{suspicion[0]}   ! {UNDER_SUSPICION}" in summary and "! suspect" not in summary, summary
    assert failed + suspect == listed == len(report["failedNodes"]), (failed, suspect, listed, report["failedNodes"])
    assert suspect == len(report["suspectNodes"])
    said = re.search(r"the counters above \+ (\d+) ! under suspicion \+ ", tally)
    assert said is not None and int(said.group(1)) == len(suspicion), tally
    # the report made meanwhile says them apart from its failed nodes (it said "Failed Nodes: none" alone), every format
    tested = suspects_under_test(snapshot, states, "isolate")  # drawn running: the wall names them on its line too
    assert report["underSuspicion"] == sorted({*suspicion, *tested}) and not set(report["underSuspicion"]) & set(report["failedNodes"])
    summary = render_text(report).split("─ Summary ─", 1)[1]
    assert re.search(rf"│ Suspicion: +{len(report['underSuspicion'])} \(", summary), summary
    assert re.search(rf"<td>Under suspicion</td><td>{len(report['underSuspicion'])} \(", render_html(report))
    assert f'name="underSuspicionNodes" value="{", ".join(report["underSuspicion"])}"' in render_junit([report])
    # the map still draws them suspect: it narrows round by round
    assert all(states[node][0] == "suspect" for node in suspicion)

    # a round tests some of them (drawn running): still under suspicion in the report, as on the wall's line
    async def tested_now() -> bool:
        snapshot = await Snapshot.read(session.store)
        return bool(suspects_under_test(snapshot, node_states(snapshot, "isolate"), "isolate"))

    assert await session.engine.run_until_settled(until=tested_now, max_seconds=3600)
    snapshot = await Snapshot.read(session.store)
    tested = suspects_under_test(snapshot, node_states(snapshot, "isolate"), "isolate")
    cert = await session.store.get(CERTIFICATION, "isolate", "default")
    report = build_report(cert, (await session.store.list(WORKFLOW, "default")).items, (await session.store.list(JOB, "default")).items)
    assert tested and set(tested) <= set(report["underSuspicion"]), (tested, report["underSuspicion"])
    await session.close()
