"""The console on a diagnose run: the map's suspects narrow round by round; the drill-down shows each verdict with
the tests that decided it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.bodies import group_nodes
from nvcre_tui.engine.report.readmodel import CategoryView
from nvcre_tui.engine.session import Session
from nvcre_tui.engine.units import count
from nvcre_tui.engine.views.diagnosis import diagnose_state
from nvcre_tui.engine.views.failures import convicting_job
from nvcre_tui.engine.views.nodes import node_history, node_states
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.widgets.item_line import ItemLine

from .harness import DIAGNOSE, FABRIC_AND_SLOW_GPU, certification_body, open_drilldown, session_with


async def test_suspects_narrow_round_by_round_and_verdicts_show_their_tests() -> None:
    session = await session_with(settle=False)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        assert await app.submit(certification_body(DIAGNOSE))
        suspects: list[int] = []
        seen_weighed = 0
        assert session.engine is not None
        for _ in range(40):  # a few simulated minutes at a time: one diagnose round is about one Job long
            await session.engine.run_until_settled(max_seconds=60)
            await app.refresh_snapshot()
            assert app.snapshot is not None
            states = node_states(app.snapshot, "isolate")
            # A suspect the current round tests shows running, its detail saying it is under suspicion, tested now.
            suspects.append(sum(1 for state, detail in states.values() if state == "suspect" or ": under suspicion" in detail))
            # A suspect's round is the drill-down's current one, numbered as its tests are (r2-... in round 2).
            rounds = {int(m.group(1)) for _, detail in states.values() if (m := re.search(r"diagnose round (\d+)", detail))}
            current = app.snapshot.views["isolate"].categories[0].timeline[-1]
            assert rounds <= {current.round} and all(g["name"].startswith(f"r{current.round}-") for g in current.groups), rounds
            # and why each is a suspect: the tests it failed, with their values
            weighed = [d for _, d in states.values() if "diagnose round" in d]
            assert all(re.search(r"; failed \d+ of \d+ tests \(r0-screen-\d+ at \d", d) for d in weighed), weighed
            # in the words of the dashboard's and the wall's tally (their "suspect" is a node blamed with its whole group)
            assert all(re.search(r"diagnose round \d+: under suspicion(, tested now)?; ", d) for d in weighed), weighed
            seen_weighed += len(weighed)
            if any(state == "failed" for state, _ in states.values()) and suspects[-1] == 0:
                break
        assert seen_weighed, "no suspect's line was seen in a round after screening"
        peak = suspects.index(max(suspects))
        assert max(suspects) >= 2 and suspects[-1] == 0
        assert all(a >= b for a, b in zip(suspects[peak:], suspects[peak + 1 :], strict=False)), suspects  # narrowing
        assert app.snapshot is not None
        failed = sorted(n for n, (state, _) in node_states(app.snapshot, "isolate").items() if state == "failed")
        assert failed == ["gpu-node-07", "gpu-node-12"]  # the slow GPU and the degraded NIC of the default fleet
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        leaves = [n for n in DrilldownScreen._walk(tree.root) if (n.data or {}).get("kind") == "verdict"]
        assert [str(n.label).split()[1] for n in leaves] == ["gpu-node-07", "gpu-node-12"]
        assert "faulty" in str(leaves[0].label)
        app.screen._show_detail(leaves[0])
        detail = str(app.screen.query_one("#detail").render())
        # Every failed test the verdict names is listed with its stage, partners and measured value, screening first.
        decided = re.search(r"failed \d+ of \d+ tests \(([^)]+)\)", detail)
        assert decided and "Tests that decided it" in detail, detail
        names = [test.split(" at ")[0] for test in decided.group(1).split(", ")]  # each failed test with its value
        assert names[0].startswith("r0-screen-") and f"✗ {names[0]} (screening) with gpu-node-" in detail
        assert all(re.search(rf"✗ {re.escape(name)} \(\w+\) with [\w, -]+  \d+(\.\d+)? GB/s", detail) for name in names), detail
        await pilot.press("escape")
        await pilot.pause()
        # The dashboard's failures pane: both convicted nodes, each with its evidence and log one key apart.
        from nvcre_tui.screens.logs import LogsScreen
        from nvcre_tui.widgets.failures_pane import FailuresPane

        pane = app.screen.query_one(FailuresPane)
        assert [r.node for r in pane.failures] == ["gpu-node-07", "gpu-node-12"]
        assert all(r.job for r in pane.failures) and "busBandwidthGBps" in pane.failures[0].measured
        await pilot.press("f", "down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        cursor = app.screen.query_one(Tree).cursor_node
        assert cursor is not None and cursor.data is not None and cursor.data["node"] == "gpu-node-12" and cursor.data["failed"]
        await pilot.press("escape", "l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen) and app.screen.job_name == pane.failures[1].job


async def test_the_verdicts_say_when_the_links_between_cliques_were_not_tested() -> None:
    """GB200 cliques with MNNVL on: diagnose stays inside them, and the drill-down's verdicts say so."""
    from pathlib import Path

    from nvcre_tui.engine.session import SimSession
    from nvcre_tui.engine.sim.scenario import load_scenario

    case = Path(__file__).resolve().parents[1] / "cases" / "scenarios" / "gb200-diagnose-within-cliques"
    session = await SimSession.open(load_scenario(case / "scenario.yaml"), None)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        assert await app.submit(certification_body((case / "cert.yaml").read_text()))
        assert session.engine is not None
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        [verdicts] = [n for n in DrilldownScreen._walk(tree.root) if str(n.label).startswith("verdicts")]
        labels = [str(n.label) for n in verdicts.children]
        assert labels[0].startswith("✗ gpu-node-12  faulty")
        assert any(label.startswith("? every test stayed inside one of the 2 cliques") and "links between cliques were not tested" in label
                   for label in labels), labels


async def test_a_threshold_out_of_reach_is_said_in_the_drill_down_as_in_the_report() -> None:
    """Every test failed, the best far below the threshold: the threshold is wrong for this fleet, not its nodes, and
    the drill-down says so first (it listed only inconclusive verdicts) with the report's words."""
    from pathlib import Path

    from nvcre_tui.engine.report.model import category_report
    from nvcre_tui.engine.sim.scenario import load_scenario

    case = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-threshold-out-of-reach"
    session = await session_with((case / "cert.yaml").read_text(), scenario=load_scenario(case / "scenario.yaml"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        await app.push_screen(DrilldownScreen("diagnose-threshold-out-of-reach"))
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        [leaf] = [n for n in DrilldownScreen._walk(tree.root) if str(n.label).startswith("! threshold")]
        [view] = app.snapshot.views["diagnose-threshold-out-of-reach"].categories
        category = category_report(view)
        assert str(leaf.label) == f"! {category['thresholdOutOfReach']}"
        assert "above anything measured on this fleet: best " in str(leaf.label)
        assert isinstance(app.screen, DrilldownScreen)
        app.screen._show_detail(leaf)
        detail = str(app.screen.query_one("#detail").render())
        assert re.search(rf"Out of reach +{re.escape(category['thresholdOutOfReach'])}\n", detail)
        # said right under the status, where an 80x24 screen still shows it (it came after the long reason, unseen)
        assert detail.index("Out of reach") < detail.index("Reason")
        # a diagnosis's tests, of the sizes they ran at (it said "groups of 4", the largest screening group)
        sizes = sorted({len(t["nodes"]) for t in category["diagnose"]["tests"]})
        shown = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        assert re.search(rf"Scale +diagnose  {len(category['diagnose']['tests'])} tests of {shown} nodes\n", detail), detail


async def test_verdicts_read_whole_in_an_80_column_drill_down() -> None:
    """A verdict sits three levels down the tree: on 80 columns it read "✗ gpu-node-06  int" (a review found it);
    with two-digit counts too."""
    from pathlib import Path

    from nvcre_tui.engine.sim.scenario import load_scenario

    case = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-flaky-and-fabric"
    session = await session_with((case / "cert.yaml").read_text(), scenario=load_scenario(case / "scenario.yaml"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        await app.push_screen(DrilldownScreen("diagnose-flaky-and-fabric"))
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        [leaf] = [n for n in DrilldownScreen._walk(tree.root) if (n.data or {}).get("kind") == "verdict"]
        tree.move_cursor(leaf)
        await pilot.pause()
        lines = [tree.render_line(y).text for y in range(tree.size.height)]
        assert any(str(leaf.label) in line for line in lines), (str(leaf.label), lines)
        assert re.fullmatch(r"✗ gpu-node-06  intermittent  \d/\d failed", str(leaf.label))
        assert tree.size.width - 9 >= len(str(leaf.label)) + 2  # room for 12/15 at depth three
        # guides of two columns a level below 100 columns (the tree's labels were cut), Textual's three above
        assert tree.guide_depth == 2
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert tree.guide_depth == DrilldownScreen.GUIDE_DEPTH == 3


async def _on_failure_diagnosis(*, wall: bool) -> NvcreApp:
    """A console (or wall) on an intra-rack category whose failure starts `onFailure: diagnose`, not run yet."""
    from nvcre_tui.engine.sim.scenario import load_scenario

    case = Path(__file__).resolve().parents[1] / "cases" / "scenarios" / "intra-rack-on-failure-diagnose"
    session = await session_with((case / "cert.yaml").read_text(), settle=False, scenario=load_scenario(case / "scenario.yaml"))
    return NvcreApp(session=session, live=False, wall=wall)


async def _steps(app: NvcreApp) -> AsyncIterator[tuple[Snapshot, CategoryView]]:
    """Run the app's engine step by step, the screen refreshed after each, until the certification ends."""
    session = app.session
    assert session is not None and session.engine is not None
    for _ in range(200):
        await session.engine.run_until_settled(max_seconds=30)
        await app.refresh_snapshot()
        snapshot = app.snapshot
        assert snapshot is not None
        yield snapshot, snapshot.views["intra-rack-on-failure-diagnose"].categories[0]
        if snapshot.certifications[0]["status"].get("summary", {}).get("result") not in (None, "RUNNING"):
            return
    raise AssertionError("the certification did not end in 200 steps")


async def test_on_failure_diagnose_shows_which_suspects_each_round_tests() -> None:
    """`onFailure: diagnose`: the map showed clique-0 as 8 frozen `!` for half an hour while rounds ran (a suspect
    outranked running). A suspect the current round tests shows running, so the map and the header counts move
    round by round; the others stay suspect. The reference partners beside it show passed (they read as suspects)."""
    from nvcre_tui.engine.diagnose import stored_partners
    from nvcre_tui.engine.views.suspicion import fleet_summary

    app = await _on_failure_diagnosis(wall=False)
    async with app.run_test(size=(120, 40)):
        tallies: list[tuple[int, int]] = []  # (suspect, running) while the diagnosis runs
        under_test = partnered = 0
        async for snapshot, category in _steps(app):
            diagnose = category.orchestration.get("diagnose")
            if diagnose is not None and diagnose.get("suspectNodes"):
                states = node_states(snapshot)
                testing = {n for g in category.groups if g.get("phase") == "Running" for n in g["nodes"]}
                for node in diagnose["suspectNodes"]:  # each suspect: running while tested, else suspect
                    assert states[node][0] == ("running" if node in testing else "suspect"), (node, states[node], testing)
                # a running test's reference partners are drawn passed: the running nodes are those the round tests
                running = {g["name"] for g in category.groups if g.get("phase") == "Running"}
                for node, test in stored_partners(diagnose).items():
                    if test in running:
                        partnered += 1
                        state, detail = states[node]
                        assert state == "passed" and detail.endswith(f"healthy: reference partner in diagnose test {test}"), (node, state, detail)
                tested_now = sum(1 for node in diagnose["suspectNodes"] if node in testing)
                under_test += tested_now
                counts = fleet_summary(snapshot, states)
                tallies.append((counts["under suspicion"], counts["running"]))
                # The counters name the suspects under test apart: under suspicion + under test = the drill-down's
                # suspects; none of them is SUSPECT, a node blamed with its whole group (the wall's words).
                assert counts["under test"] == tested_now and counts["under suspicion"] + tested_now == len(diagnose["suspectNodes"]), counts
                assert counts["suspect"] == 0, counts
                fleet = str(app.screen.query_one("#fleet", ItemLine).render())
                tested = f" (+{tested_now} tested now)" if tested_now else ""
                assert f"! {counts['under suspicion']} under suspicion{tested}" in fleet and "! 0 suspect" in fleet, fleet
                assert "under test" not in fleet, fleet
                # The failures pane's title says them: "none" read as a clean run while the wall listed them.
                title = str(app.screen.query_one("#failures-title", Static).render())
                assert f"{count(len(diagnose['suspectNodes']), 'node')} under suspicion" in title and not title.endswith("none"), title
        assert under_test > 0 and partnered > 0 and len(set(tallies)) >= 3, (tallies, partnered)


async def test_the_wall_names_the_suspects_a_round_tests() -> None:
    """A suspect the current round tests is drawn running: the wall's SUSPECT counter left it out and its failures
    list dropped it, so the wall could read 0 suspects while the drill-down said 4. Its tally line counts them and
    the failures list names them as suspects."""
    from nvcre_tui.screens.wall import WallScreen
    from nvcre_tui.widgets.fitted_list import FittedList

    app = await _on_failure_diagnosis(wall=True)
    async with app.run_test(size=(200, 60)):
        assert isinstance(app.screen, WallScreen)
        seen = 0
        async for _, category in _steps(app):
            testing = {n for g in category.groups if g.get("phase") == "Running" for n in g["nodes"]}
            tested = sorted(set((category.orchestration.get("diagnose") or {}).get("suspectNodes") or []) & testing)
            tally = str(app.screen.query_one("#tally", Static).render())
            assert ("tested now" in tally) == bool(tested), (tested, tally)
            if tested:
                seen += 1
                assert tally.startswith(f"{len(tested)} running {'are' if len(tested) > 1 else 'is'} under suspicion, tested now; of "), tally
                named = {entry.subject: entry.glyph for entry in app.screen.query_one("#failures", FittedList).entries}
                assert all(named.get(node) == "!" for node in tested), (tested, named)
        assert seen > 0


async def test_a_verdict_row_opens_the_log_of_the_test_that_decided_it_and_the_header_counts_by_verdict(finished_diagnose: Path) -> None:
    """`l` on a verdict said "select a group or node with a job"; the header said "2 others" for two faulty nodes."""
    from nvcre_tui.screens.logs import LogsScreen

    from .harness import reopen

    app = NvcreApp(session=await reopen(finished_diagnose), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        header = next(n for n in DrilldownScreen._walk(tree.root) if str(n.label).startswith("verdicts ("))
        assert re.fullmatch(r"verdicts \(2 faulty, \d+ nodes healthy\)", str(header.label)), header.label  # the healthy last (a cut line keeps the rest)
        cursor = tree.cursor_node
        assert cursor is not None and (cursor.data or {}).get("kind") == "verdict" and (cursor.data or {})["node"] == "gpu-node-07"
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen), [n.message for n in app._notifications]
        assert app.snapshot is not None
        jobs = app.snapshot.views["isolate"].categories[0].jobs
        decided = next(j for j in jobs if j["metadata"]["name"] == app.screen.job_name)
        assert "gpu-node-07" in group_nodes(decided) and app.screen.job_name == convicting_job(jobs, "gpu-node-07")


MID_ROUND_FLEET = """name: mid-round
seed: 3
nodes: [{count: 16, cliques: 2}]
faults:
  - {type: xid, node: gpu-node-05, xid: 79}
  - {type: hang, node: gpu-node-12}
"""


async def _isolate_steps(session: Session, seconds: float, steps: int) -> AsyncIterator[tuple[Snapshot, CategoryView]]:
    """Run the `isolate` certification's engine step by step (`seconds` of simulated time each), reading the store after
    each, until the certification ends; an error if it has not ended after `steps`."""
    assert session.engine is not None
    for _ in range(steps):
        await session.engine.run_until_settled(max_seconds=seconds)
        snapshot = await Snapshot.read(session.store, "default")
        yield snapshot, snapshot.views["isolate"].categories[0]
        if snapshot.certifications[0]["status"].get("summary", {}).get("result") not in (None, "RUNNING"):
            return
    raise AssertionError(f"the diagnosis did not finish in {steps} steps")


async def test_a_failed_test_shows_its_members_suspect_before_its_round_is_weighed(tmp_path: Path) -> None:
    """A review watched a diagnosis whose screening round waited for a hung test: the members of a test that had
    already failed (an Xid crash) read untested on the map, the wall and the counters until the round ended, while the
    drill-down showed the failure. They are suspects from the moment their test fails; a node the diagnosis proved
    healthy before (a reference partner) is never made one by a failed test beside it."""
    from nvcre_tui.engine.api.vocabulary import FAILED, NOT_RUN
    from nvcre_tui.engine.sim.scenario import load_scenario
    from nvcre_tui.engine.views.snapshot import Snapshot

    (tmp_path / "fleet.yaml").write_text(MID_ROUND_FLEET)
    session = await session_with(DIAGNOSE, settle=False, scenario=load_scenario(tmp_path / "fleet.yaml"))
    mid_round = beside_healthy = 0
    try:
        async for snapshot, category in _isolate_steps(session, 60, 300):
            diagnose = category.orchestration.get("diagnose")
            if diagnose is not None:
                states = node_states(snapshot, "isolate")
                healthy = set(diagnose.get("healthyNodes") or [])
                assert all(states[node][0] != "suspect" for node in healthy), {n: states[n] for n in healthy}
                failed = [g for g in category.groups if g.get("phase") == FAILED and g.get("reason") not in NOT_RUN]
                for group in failed if not diagnose.get("complete") else []:
                    beside_healthy += sum(1 for node in group["nodes"] if node in healthy)
                    for node in (n for n in group["nodes"] if n not in healthy):
                        assert states[node][0] in ("suspect", "failed", "running", "waiting"), (group["name"], node, states[node])
                        mid_round += 1
                        # the node screen's row for that test (and the drill-down's, the same member_state) agrees
                        [row] = [r for r in node_history(snapshot, node) if r["job"] == group.get("jobRef")]
                        assert row["state"] in ("suspect", "failed"), (group["name"], node, row["state"])
        assert mid_round and beside_healthy, (mid_round, beside_healthy)
        assert sorted(n for n, (state, _) in node_states(snapshot, "isolate").items() if state == "failed") == ["gpu-node-05", "gpu-node-12"]
    finally:
        await session.close()



def test_suspects_under_test_include_those_whose_test_waits_for_its_pods() -> None:
    """A round's test whose pods are not placed yet draws its members waiting (which outranks running): they are
    under test all the same, or the counters read 0 suspects beside the drill-down's."""
    from types import SimpleNamespace
    from typing import Any, cast

    from nvcre_tui.engine.views.suspicion import suspects_under_test

    category = SimpleNamespace(orchestration={"diagnose": {"suspectNodes": ["n1", "n2", "n3", "n4"]}})
    snapshot = cast(Any, SimpleNamespace(views={"c": SimpleNamespace(name="c", categories=[category])}))
    states = {"n1": ("running", ""), "n2": ("waiting", ""), "n3": ("suspect", ""), "n4": ("failed", ""), "n5": ("running", "")}
    assert suspects_under_test(snapshot, states) == ["n1", "n2"]
    assert suspects_under_test(snapshot, states, "other") == []


async def test_the_failures_pane_and_the_wall_say_a_threshold_is_out_of_reach() -> None:
    """Every test failed, far below the threshold: the dashboard and the wall said only "DiagnosisUnresolved: ... nodes
    inconclusive", the drill-down and the report that the threshold is out of reach of the fleet."""
    from nvcre_tui.engine.sim.scenario import load_scenario
    from nvcre_tui.screens.wall import WallScreen
    from nvcre_tui.widgets.failures_pane import FailuresPane
    from nvcre_tui.widgets.fitted_list import FittedList

    case = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-threshold-out-of-reach"
    session = await session_with((case / "cert.yaml").read_text(), scenario=load_scenario(case / "scenario.yaml"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        await pilot.pause()
        (row,) = app.screen.query_one(FailuresPane).failures
        assert row.reason == "no node blamed: threshold out of reach"
        assert row.message.startswith("threshold value >= 900 is above anything measured on this fleet: best ")
        await app.push_screen(WallScreen())
        await pilot.pause()
        lines = [f"{entry.subject} {entry.text}" for entry in app.screen.query_one("#failures", FittedList).entries]
        # The reach, not the diagnosis's list of the nodes it left inconclusive after it.
        assert [line.split(" GB/s")[0].rsplit(" ", 1)[0] for line in lines] == [
            "communication/nccl-all-reduce no node blamed: threshold out of reach: threshold value >= 900 is above anything measured on "
            "this fleet: best"], lines
        assert not any("inconclusive" in line for line in lines), lines


async def test_a_diagnosed_nodes_jobs_are_told_apart_by_their_test() -> None:
    """The node screen's Jobs of a diagnosed node read alike ("✗ faulty ... ThresholdViolation" four times): its Group
    column names each test and its size, as the drill-down does."""
    from nvcre_tui.widgets.fitted_table import FittedTable

    from .harness import open_node_screen

    session = await session_with(DIAGNOSE)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_node_screen(app, pilot, "gpu-node-07")
        table = screen.query_one("#results", FittedTable)
        labels = [column.label.plain for column in table.ordered_columns]
        groups = [str(table.get_row_at(index)[labels.index("Group")]) for index in range(table.row_count)]
        assert len(groups) > 2 and len(set(groups)) == len(groups), groups
        assert all(re.fullmatch(r"r\d+-[a-z]+-\d+ \(\d+ nodes?\)", group) for group in groups), groups


async def test_the_drill_down_counts_a_diagnosis_tests_as_the_diagnosis_does() -> None:
    """`onFailure: diagnose` after iterations: the Scale line counted the Workflow's groups (4) beside the
    diagnosis's "8 tests"."""
    from nvcre_tui.engine.report.model import category_report
    from nvcre_tui.engine.sim.scenario import load_scenario

    name = "on-failure-decided-by-iterations"
    case = Path(__file__).parents[1] / "cases" / "scenarios" / name
    session = await session_with((case / "cert.yaml").read_text(), scenario=load_scenario(case / "scenario.yaml"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        await app.push_screen(DrilldownScreen(name))
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        [view] = app.snapshot.views[name].categories
        tests = category_report(view)["diagnose"]["tests"]
        assert len(tests) != view.orchestration.get("totalGroups")  # the two counts this test tells apart
        [branch] = [n for n in DrilldownScreen._walk(app.screen.query_one(Tree).root) if (n.data or {}).get("kind") == "workflow"]
        app.screen._show_detail(branch)
        detail = str(app.screen.query_one("#detail").render())
        assert re.search(rf"Scale +\S+  {len(tests)} tests of \d+( to \d+)? nodes?\n", detail), detail


async def test_a_node_a_failed_test_named_is_a_suspect_not_failed_until_the_diagnosis_convicts_it(tmp_path: Path) -> None:
    """A walkthrough saw the node screen's Jobs and the drill-down's members mark ✗ failed a node NCCL named in a
    failed test (WorkloadFailed) while the diagnosis held it suspect only, and later cleared it: it reads `! suspect`
    there, as a member of a test that missed the threshold does."""
    from nvcre_tui.engine.sim.scenario import load_scenario

    (tmp_path / "fleet.yaml").write_text(MID_ROUND_FLEET)
    session = await session_with(DIAGNOSE, settle=False, scenario=load_scenario(tmp_path / "fleet.yaml"))
    try:
        rows: list[dict[str, Any]] = []
        async for snapshot, category in _isolate_steps(session, 30, 100):
            diagnose = category.orchestration.get("diagnose") or {}
            rows = [r for r in node_history(snapshot, "gpu-node-05") if r["failures"]]
            if "gpu-node-05" in (diagnose.get("suspectNodes") or []) and rows:
                break
        assert rows, "gpu-node-05 was never a suspect with a failed test naming it"
        app = NvcreApp(session=session, live=False)
        async with app.run_test(size=(160, 45)) as pilot:
            app.run_command("node gpu-node-05")
            await pilot.pause()
            lines = [strip.text for strip in app.screen._compositor.render_strips()]
            job_rows = [line for line in lines if f"{rows[0]['group']} (" in line]
            assert job_rows, "\n".join(lines)
            assert any("! under suspicion" in line for line in job_rows), "\n".join(lines)
            assert not any("✗ failed" in line for line in job_rows), "\n".join(lines)
            assert any("Diagnosis: ! under suspicion: under test" in line for line in lines), "\n".join(lines)
    finally:
        await session.close()


async def test_healthy_members_of_a_link_test_are_not_drawn_under_test(tmp_path: Path) -> None:
    """A walkthrough watched the map while link tests ran: nodes the diagnosis had cleared turned back into ⋯ running
    (25 running for one suspect), so the map did not narrow. A link test is about the links between cliques: its
    healthy members are drawn passed, as a confirmation's reference partners are, and only the suspects run."""
    from nvcre_tui.engine.diagnose import LINK_STAGES, stored_partners
    from nvcre_tui.engine.diagnose.state import readable

    session = await session_with(DIAGNOSE, settle=False, scenario=FABRIC_AND_SLOW_GPU)
    seen = 0
    try:
        async for snapshot, category in _isolate_steps(session, 20, 200):
            diagnose = category.orchestration.get("diagnose")
            if diagnose is not None and not diagnose.get("complete"):
                states, healthy = node_states(snapshot, "isolate"), set(diagnose.get("healthyNodes") or [])
                running = {g["name"] for g in category.groups if g.get("phase") == "Running"}
                partners = stored_partners(diagnose)
                for test in readable(diagnose).get("plan") or []:
                    if test["stage"] in LINK_STAGES and test["group"] in running:
                        for node in (n for n in test["nodes"] if n in healthy):
                            seen += 1
                            assert partners[node] == test["group"] and states[node][0] == "passed", (node, states[node])
        assert seen, "no healthy member of a running link test was seen"
    finally:
        await session.close()


async def test_a_drill_down_opened_on_a_failed_category_shows_what_it_holds() -> None:
    """A diagnosis that left every node inconclusive (its threshold out of reach) failed blaming nobody: the drill-down
    opened on its category collapsed at 80x24, the "threshold out of reach" line and the inconclusive verdicts hidden
    under it. It opens that category."""
    from pathlib import Path

    from nvcre_tui.engine.sim.scenario import load_scenario

    case = Path(__file__).parents[1] / "cases" / "scenarios" / "diagnose-threshold-out-of-reach"
    session = await session_with((case / "cert.yaml").read_text(), scenario=load_scenario(case / "scenario.yaml"))
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.refresh_snapshot()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        cursor = tree.cursor_node
        assert cursor is not None and (cursor.data or {}).get("kind") == "workflow" and cursor.is_expanded
        lines = [strip.text for strip in app.screen._compositor.render_strips()][tree.region.y : tree.region.bottom]
        assert any("! threshold value >= 900 is above anything measured" in line for line in lines), lines
        assert any(re.search(r"verdicts \(\d+ inconclusive, 0 nodes healthy\)", line) for line in lines), lines


async def test_each_round_heading_says_what_it_tested_and_how_many_failed(finished_diagnose: Path) -> None:
    """The drill-down's rounds read "round 0", "round 1" ... alone: how the suspects narrowed showed only once each was
    opened. Each heading says its stages, its tests and how many failed, as the diagnosis recorded them."""
    from .harness import reopen

    app = NvcreApp(session=await reopen(finished_diagnose), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        assert app.snapshot is not None
        [category] = app.snapshot.views["isolate"].categories
        state = diagnose_state(category)
        assert state is not None
        headings = {(n.data or {})["iteration"]: str(n.label) for n in DrilldownScreen._walk(screen.query_one(Tree).root)
                    if (n.data or {}).get("kind") == "iteration"}
        records = [record for record in category.timeline if record.round is not None]
        assert len(records) >= 3 and len(headings) == len(records), headings
        for record in records:
            tests = [t for t in state["tests"] if t["group"] in {g["name"] for g in record.groups}]
            stages = ", ".join(dict.fromkeys(t["stage"] for t in tests))
            failed = sum(1 for t in tests if t["passed"] is False)
            expected = f"round {record.round} · {stages}: {count(len(tests), 'test')}" + (f", {failed} failed" if failed else "")
            assert headings[record.number] == expected, (headings[record.number], expected)
        assert headings[records[0].number].startswith("round 0 · screening: ")
