"""Nodes a diagnosis cleared: a test that missed the threshold blames every member of its group, and the diagnosis
then clears the healthy ones (the report: "cleared by the diagnosis (healthy)"). The drill-down's group rows and the
node screen's Job rows mark them with that verdict, never suspect or failed; the Job itself still failed.

Reads finished diagnoses saved once per session (conftest's finished_diagnose, finished_link_faults)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.views.failures import JobIndex
from nvcre_tui.engine.views.nodes import node_history
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.node import NodeScreen

from .harness import LINK_FAULTS, reopen


def member_rows(tree: Tree[Any]) -> dict[tuple[str, str], tuple[str, bool]]:
    """(group, node) -> (label, failed) of every group member the tree shows that its Job blamed."""
    members = [(n.data or {}, str(n.label)) for n in DrilldownScreen._walk(tree.root)]
    return {(data["group"]["name"], data["node"]): (label, data["failed"]) for data, label in members
            if data.get("kind") == "node" and label.split()[-1].endswith("Violation")}


async def test_the_drilldown_marks_cleared_members_with_their_verdict_beside_a_faulty_one(finished_diagnose: Path,
                                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    app = NvcreApp(session=await reopen(finished_diagnose), live=False)
    # The category's Jobs are indexed once per drawing, not once per verdict row and cleared node: scanned for each, a
    # diagnosis of 1024 nodes (235 rows) took a second per redraw, twice a second while it ran.
    indexed: list[object] = []
    of = JobIndex.of

    def counted(jobs: Any) -> JobIndex:
        indexed.append(jobs)
        return of(jobs)

    monkeypatch.setattr(JobIndex, "of", counted)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        indexed.clear()
        app.screen._shown = None  # drawn again from the read model
        app.screen.refresh_now()
        assert len(indexed) == 1, len(indexed)  # one diagnosed category
        rows = member_rows(app.screen.query_one(Tree))
        faulty = {key: row for key, row in rows.items() if key[1] in ("gpu-node-07", "gpu-node-12")}
        cleared = {key: row for key, row in rows.items() if key[1] not in ("gpu-node-07", "gpu-node-12")}
        assert faulty and cleared, rows  # screening groups blamed a faulty node and its healthy partners together
        # Marked faulty in every test, yet no stop of `f`: the verdict rows are (a review counted 45 stops for 8 failures).
        assert all(label.startswith(f"✗ {node}  faulty · ThresholdViolation") and not failed for (_, node), (label, failed) in faulty.items()), faulty
        stops = [n.data or {} for n in DrilldownScreen._walk(app.screen.query_one(Tree).root) if (n.data or {}).get("failed")]
        assert sorted(data["node"] for data in stops if data.get("kind") == "verdict") == ["gpu-node-07", "gpu-node-12"], stops
        assert not any(data.get("kind") == "node" for data in stops), stops
        assert all(label.startswith(f"✓ {node}  cleared · ThresholdViolation") and not failed for (_, node), (label, failed) in cleared.items()), cleared
        assert not any(label.startswith(("!", "✗")) for label, _ in cleared.values())
        # Its detail says the verdict above the Job's own failure.
        (group, node), _ = next(iter(sorted(cleared.items())))
        [leaf] = [n for n in DrilldownScreen._walk(app.screen.query_one(Tree).root)
                  if (n.data or {}).get("kind") == "node" and (n.data or {})["node"] == node and (n.data or {})["group"]["name"] == group]
        app.screen._show_detail(leaf)
        detail = str(app.screen.query_one("#detail", Static).render())
        assert detail.startswith("Diagnosis         ✓ cleared (healthy)") and "ThresholdViolation" in detail, detail


async def test_the_node_screen_marks_the_job_row_with_the_verdict_that_cleared_the_node(finished_link_faults: Path) -> None:
    session = await reopen(finished_link_faults, scenario=LINK_FAULTS)
    history = {name: node_history(await Snapshot.read(session.store), name) for name in (f"gpu-node-{i:02d}" for i in range(1, 33))}
    # A node that tests across cliques blamed (a degraded link between its clique and another) and the diagnosis cleared.
    node, row = next((name, row) for name, rows in sorted(history.items()) for row in rows if row["failures"])
    assert row["blamedState"] == "suspect" and row["verdict"] == "healthy" and row["phase"] == "Succeeded" and row["validationFailed"]
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("colon", *f"node {node}", "enter")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen)
        table = app.screen.query_one("#results", DataTable)
        cells = dict(zip((str(c.label) for c in table.columns.values()), (str(c) for c in table.get_row(row["job"])), strict=True))
        assert cells["Result"] == "✓ cleared", cells
        assert cells["Reason"].startswith("ThresholdViolation") and "the diagnosis cleared the node" in cells["Reason"]
        assert not any(str(c).startswith(("! suspect", "✗")) for r in range(table.row_count) for c in table.get_row_at(r))
        assert "✓ passed" in str(app.screen.query_one("#summary", Static).render())  # the top agrees with the rows
        table.move_cursor(row=table.get_row_index(row["job"]))
        await pilot.pause()
        evidence = str(app.screen.query_one("#evidence", Static).render())
        assert evidence.startswith("Diagnosis: ✓ cleared (healthy)") and "ThresholdViolation" in evidence, evidence


async def test_members_a_failed_test_did_not_blame_show_the_verdict_that_cleared_them(tmp_path: Path) -> None:
    """A screening test failed on one member's Xid crash, blaming it alone: its partners, cleared by the diagnosis,
    read `? gpu-node-06` in the drill-down while the verdicts said every other node was healthy (a review found
    it). They carry their verdict as blamed members do."""
    from nvcre_tui.engine.sim.scenario import load_scenario

    from .harness import DIAGNOSE, session_with
    from .test_diagnose_view import MID_ROUND_FLEET

    (tmp_path / "fleet.yaml").write_text(MID_ROUND_FLEET)
    app = NvcreApp(session=await session_with(DIAGNOSE, scenario=load_scenario(tmp_path / "fleet.yaml")), live=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        members = [(n.data or {}, str(n.label)) for n in DrilldownScreen._walk(app.screen.query_one(Tree).root)]
        crashed = [data["group"] for data, label in members if data.get("kind") == "node" and data["node"] == "gpu-node-05"
                   and "WorkloadFailed" in label]
        assert crashed, [label for _, label in members]
        partners = [(data["node"], label) for data, label in members if data.get("kind") == "node"
                    and data["group"]["name"] == crashed[0]["name"] and data["node"] != "gpu-node-05"]
        assert partners and all(label == f"✓ {node}  cleared" for node, label in partners), partners
