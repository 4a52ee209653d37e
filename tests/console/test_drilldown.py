"""The drill-down's cursor and details: where it opens and stays, and what a category without a Workflow says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from textual.widgets import Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.screens.drilldown import DrilldownScreen

from .harness import DIAGNOSE, open_drilldown, reopen, session_run_for, session_with


async def test_the_cursor_the_user_moved_stays_when_the_first_failure_comes() -> None:
    """The drill-down opens on the first failed node; opened before any failure and moved by the user, it jumped to
    the first failure when one came (a review found it). Once moved, the cursor is the user's."""
    from nvcre_tui.engine.views.snapshot import Snapshot

    session = await session_run_for(DIAGNOSE, 30)  # screening under way, nothing failed yet
    assert session.engine is not None
    assert not any(state == "failed" for state, _ in node_states(await Snapshot.read(session.store, "default"), "isolate").values())
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        tree = (await open_drilldown(app, pilot, "isolate")).query_one(Tree)
        tree.focus()
        await pilot.press("down")  # onto the category
        await pilot.pause()
        chosen = tree.cursor_node
        assert chosen is not None and tree.cursor_line == 1
        for _ in range(60):
            await session.engine.run_until_settled(max_seconds=60)
            await app.refresh_snapshot()
            await pilot.pause()
            snapshot = app.snapshot
            assert snapshot is not None
            if any((n.data or {}).get("failed") for n in DrilldownScreen._walk(tree.root)):
                break
        else:
            raise AssertionError("no failure came")
        await pilot.pause()
        assert tree.cursor_node is not None, chosen.label
        assert DrilldownScreen._key_of(tree.cursor_node.data) == DrilldownScreen._key_of(chosen.data), (tree.cursor_node.label, chosen.label)


async def test_a_category_waiting_for_the_ones_before_it_says_so_in_its_detail() -> None:
    """The detail of a category with no Workflow yet read "Select a category, group or node." (a review found it)."""
    from .harness import INTRA_NODE

    app = NvcreApp(session=await session_run_for(INTRA_NODE, 30), live=False)  # the first category runs, the second waits
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "burn-in")
        [waiting] = [n for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "pending"]
        screen._show_detail(waiting)
        detail = str(screen.query_one("#detail").render())
        assert detail.startswith("Category          communication/nccl-loopback\nStatus            · Pending"), detail
        assert "Why               " in detail and "Select a category" not in detail
        # `b` and `l` on it say that nothing of it ran: `b` said "select a category, group or node" of a selected category.
        screen.query_one(Tree).move_cursor(waiting)
        await pilot.pause()
        for key, what in (("b", "bandwidth"), ("l", "log")):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, DrilldownScreen), key
            said = str(list(app._notifications)[-1].message)
            assert said == f"communication/nccl-loopback has no Workflow (WaitingForNodes): nothing of it ran, no {what} yet", said


def test_a_verdicts_tests_say_a_crash_its_reason_and_a_link_fault_its_own() -> None:
    """"Tests that decided it": a crashed test says why (its fine bandwidth is no evidence), a failure across a named
    link fault says so, a value is shown as measured (never rounded across the threshold)."""
    state = {"domains": {"a": ["n1", "n2"], "b": ["n3", "n4"]}, "infrastructureFaults": [{"cliques": ["a", "b"]}],
             "tests": [{"group": "r0-screen-0", "stage": "screening", "nodes": ["n1", "n2"], "passed": False, "value": 401.2, "reason": "WorkloadFailed"},
                       {"group": "r1-inter-0", "stage": "inter", "nodes": ["n1", "n3"], "passed": False, "value": 184.65},
                       {"group": "r2-confirm-0", "stage": "confirmation", "nodes": ["n1", "n2"], "passed": False, "value": 299.996}]}
    row = {"node": "n1", "verdict": "intermittent", "record": "failed 3 of 3 tests"}
    lines = DrilldownScreen._verdict_detail(row, state, "value >= 300").plain.splitlines()
    assert "  ✗ r0-screen-0 (screening) with n2  WorkloadFailed" in lines
    assert "  ✗ r1-inter-0 (inter) with n3  184.65 GB/s (link fault)" in lines
    assert "  ✗ r2-confirm-0 (confirmation) with n2  299.996 GB/s" in lines


def test_an_inconclusive_verdict_says_why() -> None:
    """The report's note ("no healthy node left to confirm it against") was in no console screen."""
    state = {"domains": {"a": ["n1", "n2"]},
             "tests": [{"group": "r0-screen-0", "stage": "screening", "nodes": ["n1", "n2"], "passed": False, "value": 401.2}],
             "notes": [{"kind": "inconclusive", "nodes": ["n1"], "message": "n1: no healthy node left to confirm it against"},
                       {"kind": "inconclusive", "nodes": ["n2"], "message": "n2: no healthy node left to confirm it against"}]}
    row = {"node": "n1", "verdict": "inconclusive", "record": "failed 1 of 1 tests"}
    lines = DrilldownScreen._verdict_detail(row, state).plain.splitlines()
    assert [line for line in lines if line.startswith("Why")] == ["Why               no healthy node left to confirm it against"], lines


async def test_a_diagnosing_category_says_where_its_diagnosis_stands() -> None:
    """Its line read `GroupsPartitioned` (the Workflow's reason since it began) for the whole diagnosis."""
    import re

    session = await session_run_for(DIAGNOSE, 150)  # screening done, suspects weighed in a later round
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "isolate")
        lines = [str(n.label) for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "workflow"]
        assert len(lines) == 1 and (found := re.search(r"diagnosing: \d+ under suspicion · round ([1-9]\d*) \(\w+\), \d+ tests so far$", lines[0])), lines
        # and its verdicts are those of the rounds weighed so far, the current one's tests not yet
        [verdicts] = [str(n.label) for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "verdicts"]
        assert verdicts.startswith(f"verdicts as of round {int(found.group(1)) - 1} ("), verdicts


async def test_an_on_failure_diagnosis_weighs_the_iterations_first() -> None:
    """While its round 1 runs, its verdicts are those of the iterations it started from: there is no "round 0" heading
    to point at (its records read iteration 1, iteration 2, round 1)."""
    text = DIAGNOSE.replace("testScale: diagnose", "testScale: intra-rack, onFailure: diagnose, repeatCount: 2")
    assert text != DIAGNOSE
    session = await session_with(text, settle=False)
    assert session.engine is not None
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        for _ in range(400):  # until the diagnosis's first round runs
            await session.engine.run_until_settled(max_seconds=10)
            await app.refresh_snapshot()
            assert app.snapshot is not None
            timeline = app.snapshot.views["isolate"].categories[0].timeline
            if timeline and timeline[-1].current and timeline[-1].round == 1:
                break
        screen = await open_drilldown(app, pilot, "isolate")
        labels = [str(n.label) for n in DrilldownScreen._walk(screen.query_one(Tree).root) if not str(n.label).startswith(("✓", "✗", "!", "?", "⋯", "◦"))]
        assert "iteration 2" in labels and any(label.startswith("round 1 (current)") for label in labels), labels
        assert any(label.startswith("verdicts as of the iterations (") for label in labels), labels


async def test_m_in_the_drilldown_opens_this_certifications_rack_map(finished_intra_node_and_example: Path) -> None:
    """`m` here opened the dashboard's map, merged across certifications: a node this certification's diagnosis cleared
    showed another's `!` or `?`. The drill-down is one certification's, and so is its map (the dashboard's `m` stays
    the fleet's: test_map_scope_and_reasons)."""
    from textual.widgets import Static

    from nvcre_tui.screens.topology import TopologyScreen
    from nvcre_tui.widgets.rack_map import RackMap

    app = NvcreApp(session=await reopen(finished_intra_node_and_example), live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_drilldown(app, pilot, "burn-in")
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, TopologyScreen) and app.screen.certification == "burn-in"
        assert str(app.screen.query_one("#scope", Static).render()) == "certification burn-in"  # the map's top bar says whose
        assert app.snapshot is not None
        own, merged = node_states(app.snapshot, "burn-in"), node_states(app.snapshot)
        assert own != merged  # else this test could not tell the two maps apart
        rack_map = app.screen.query_one(RackMap)
        shown = {name: (cell.state.value, cell.detail) for name in own if (cell := rack_map.cell(name)) is not None}
        assert shown == own

async def test_a_group_blamed_together_is_weighed_once_not_once_per_member(finished_diagnose_and_train: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The training's one group of 32, blamed together: each member's word (suspect) was weighed apart, scanning the
    group's blames each time (a group of 1024 took 0.3 s of every redraw); now once per group and reason."""
    from nvcre_tui.engine.judging.blame import blamed_together
    from nvcre_tui.engine.report import nodestates

    weighed: list[int] = []

    def counted(members: Any, blamed: Any, reason: str) -> bool:
        weighed.append(len(members))
        return blamed_together(members, blamed, reason)

    app = NvcreApp(session=await reopen(finished_diagnose_and_train), live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_drilldown(app, pilot, "diagnose-and-train")
        monkeypatch.setattr(nodestates, "blamed_together", counted)
        screen._shown = None  # drawn again from the read model
        screen.refresh_now()
        members = [n for n in DrilldownScreen._walk(screen.query_one(Tree).root) if (n.data or {}).get("kind") == "node"
                   and (n.data or {})["workflow"]["metadata"]["name"].endswith("nemotron5-8b")]
        assert len(members) == 32 and all(str(n.label).startswith("! ") for n in members), [str(n.label) for n in members]
        assert weighed.count(32) <= 2, weighed  # its members' rows and its blames' detail, once each


TWICE = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: twice}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node, thresholds: {busBandwidthGBps: "value >= 400"}}}
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node, thresholds: {busBandwidthGBps: "value >= 300"}}}
"""


async def test_a_category_run_twice_is_numbered_in_the_tree_as_in_the_failures_pane() -> None:
    """The failures pane and the wall said `communication/nccl-all-reduce #1`; enter opened a drill-down whose two
    category lines both read `communication/nccl-all-reduce`, the one waiting indistinguishable from the one that failed."""
    session = await session_run_for(TWICE, 60)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_drilldown(app, pilot, "twice")
        tree = screen.query_one(Tree)
        lines = [str(node.label) for node in tree.root.children]
        assert lines[0].startswith("⋯ communication/nccl-all-reduce #1  "), lines
        assert lines[1].startswith("· communication/nccl-all-reduce #2  WaitingForNodes"), lines
        tree.move_cursor(tree.root.children[0])  # the one running: its category, not its Workflow's name (twice-communication-...)
        await pilot.pause()
        assert str(screen.query_one("#detail").render()).startswith("Category          communication/nccl-all-reduce #1\n")
        tree.move_cursor(tree.root.children[1])
        await pilot.pause()
        assert "Category          communication/nccl-all-reduce #2" in str(screen.query_one("#detail").render())
        await pilot.press("l")  # nothing of it ran: said of #2, not of the one that runs
        await pilot.pause()
        assert [str(n.message) for n in app._notifications][-1].startswith("communication/nccl-all-reduce #2 has no Workflow"), \
            [str(n.message) for n in app._notifications]
        assert session.engine is not None
        await session.engine.run_until_settled()
        await app.refresh_snapshot()
        await pilot.pause()
        lines = [str(node.label) for node in tree.root.children]
        assert lines[0].startswith("✗ communication/nccl-all-reduce #1  ") and lines[1].startswith("✗ communication/nccl-all-reduce #2  "), lines
