"""A certification that failed on no node's account (a measurement missing, a run cut short) has a failure the
operator can reach on every screen, and the members of a failed group the run did not blame show one state,
inconclusive, wherever the console shows them (found by a console review)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Digits, Static, Tree

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.api.vocabulary import NodeState
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario, load_scenario
from nvcre_tui.engine.store import CERTIFICATION
from nvcre_tui.engine.views.failures import unblamed_failures
from nvcre_tui.engine.views.nodes import node_states
from nvcre_tui.screens.dashboard import DashboardScreen
from nvcre_tui.screens.drilldown import DrilldownScreen
from nvcre_tui.screens.wall import COUNTERS, TALLIED, WallScreen
from nvcre_tui.widgets.failures_pane import FailuresPane
from nvcre_tui.widgets.fitted_list import FittedList

from .harness import certification_body, open_node_screen

MISSING = Path(__file__).resolve().parents[1] / "cases" / "scenarios" / "missing-measurement-short-training"
GROUP = "training/nemotron5-8b group-0"  # how the failures pane, the drill-down and the wall name the failed group

# 16 nodes in two cliques; an Xid on gpu-node-03 crashes clique-0's run: it alone is blamed, its 7 peers are not.
XID = Scenario.model_validate({"name": "xid-intra-rack", "seed": 7, "nodes": [{"count": 16, "cliques": 2}],
                               "faults": [{"type": "xid", "node": "gpu-node-03", "xid": 79}]})
RACK_XID = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: rack-xid}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-rack, thresholds: {busBandwidthGBps: "value >= 300"}}
"""


async def _finished(text: str, scenario: Scenario) -> SimSession:
    session = await SimSession.open(scenario, None, history=None)
    await session.store.create(CERTIFICATION, certification_body(text))
    assert session.engine is not None
    await session.engine.run_until_settled()
    return session


@pytest.fixture
async def missing_measurement() -> SimSession:
    return await _finished((MISSING / "cert.yaml").read_text(), load_scenario(MISSING / "scenario.yaml"))


@pytest.fixture
async def rack_xid() -> SimSession:
    return await _finished(RACK_XID, XID)


def lines(app: NvcreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def test_a_failure_that_blamed_nobody_is_reachable_from_every_screen(missing_measurement: SimSession) -> None:
    app = NvcreApp(session=missing_measurement, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.snapshot is not None
        # The failures pane lists the failed group with its reason; `f` moves there (it said "no failed nodes").
        pane = app.screen.query_one(FailuresPane)
        assert [(r.node, r.reason) for r in pane.failures] == [(GROUP, "no node blamed: MeasurementUnavailable")]
        await pilot.press("f")
        await pilot.pause()
        assert app.focused is pane
        # Its nodes ran and proved nothing: inconclusive on the map, never untested.
        states = node_states(app.snapshot)
        assert {state for state, _ in states.values()} == {"inconclusive"}, states
        assert all("no node blamed: MeasurementUnavailable" in detail for _, detail in states.values()), states
        # enter (from the certification row) lands on the failed group, its evidence led by the validation failure.
        app.screen.query_one("#certs").focus()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, DrilldownScreen)
        tree = app.screen.query_one(Tree)
        cursor = tree.cursor_node
        assert cursor is not None and (cursor.data or {}).get("subject") == GROUP, cursor and cursor.label
        assert "no node blamed: MeasurementUnavailable" in str(cursor.label)
        detail = str(app.screen.query_one("#detail", Static).render())
        assert detail.index("✗ ValidationFailed") < detail.index("MeasurementUnavailable") < detail.index("WorkloadCompleted"), detail
        members = [str(n.label) for n in cursor.children]
        assert members and all(label.startswith(f"{NodeState.INCONCLUSIVE.glyph} gpu-node-") for label in members), members
        await pilot.press("up", "f")  # `f` comes back to it
        await pilot.pause()
        await pilot.pause()
        assert tree.cursor_node is cursor
        await pilot.press("escape")
        await pilot.pause()
        # The wall: the failure in its list with its reason, the four nodes in the INCONCLUSIVE counter.
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        failures = app.screen.query_one("#failures", FittedList).entries
        # As the failures pane says it (reason, Measured): the engine's message ('Threshold "avgStepTimeSec" not
        # evaluated: ... expression: ... (training: the only logged step is warm-up ...') ran on across the pane.
        assert [(f.glyph, f.subject, f.text) for f in failures] == [
            ("✗", GROUP, "no node blamed: MeasurementUnavailable: avgStepTimeSec unavailable (value <= 30); "
             "goodputRatio unavailable (value >= 0.9)")], failures
        assert app.screen.query_one("#count-inconclusive", Digits).value == "4"


async def test_a_category_that_failed_with_no_group_to_show_is_its_own_failure() -> None:
    """No node matched the target: the category failed before any group ran; the certification's failure is it."""
    text = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: nowhere}
spec:
  target: {nodeSelector: {no-such-label: "x"}}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node}
"""
    session = await _finished(text, default_scenario())
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.snapshot is not None
        assert app.snapshot.certifications[0]["status"]["summary"]["result"] == "FAILED"
        rows = unblamed_failures(app.snapshot, "nowhere")
        assert [r.node for r in rows] == ["communication/nccl-all-reduce"] and rows[0].reason.startswith("no node blamed: ")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        cursor = app.screen.query_one(Tree).cursor_node
        assert cursor is not None and (cursor.data or {}).get("subject") == "communication/nccl-all-reduce"


async def test_the_unblamed_members_of_a_failed_group_show_one_state_everywhere(rack_xid: SimSession) -> None:
    app = NvcreApp(session=rack_xid, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.snapshot is not None
        states = node_states(app.snapshot)
        assert states["gpu-node-03"][0] == "failed" and states["gpu-node-02"][0] == "inconclusive"
        # The drill-down: `?` beside the peers (it drew the untested glyph), `✗` beside the node blamed.
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        labels = [str(n.label) for n in DrilldownScreen._walk(app.screen.query_one(Tree).root)]
        member = {label.split()[1]: label.split()[0] for label in labels if len(label.split()) > 1 and label.split()[1].startswith("gpu-node-0")}
        assert member["gpu-node-03"] == "✗" and member["gpu-node-02"] == "?", labels
        await pilot.press("escape")
        await pilot.pause()
        # The node screen: `? inconclusive` (it said `⋯ Failed`, the running glyph).
        await open_node_screen(app, pilot, "gpu-node-02")
        row = next(line for line in lines(app) if line.lstrip().startswith("rack-xid "))
        assert "? inconclusive" in row and "⋯" not in row, row


async def test_the_wall_counters_add_up_to_the_fleet(rack_xid: SimSession) -> None:
    """8 passed + 1 failed were shown of 16 nodes: the 7 inconclusive peers were in no counter."""
    assert {state for state, _ in COUNTERS} | set(TALLIED) == {state.value for state in NodeState}
    app = NvcreApp(session=rack_xid, live=False, wall=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WallScreen)
        counted = {state: int(app.screen.query_one(f"#count-{state}", Digits).value) for state, _ in COUNTERS}
        assert counted["passed"] == 8 and counted["failed"] == 1 and counted["inconclusive"] == 7
        tally = str(app.screen.query_one("#tally", Static).render())
        assert "of 16 nodes" in tally and "0 ◦ untested" in tally and "0 ⊘ excluded" in tally, tally
        assert sum(counted.values()) + 0 + 0 == 16
        top = "\n".join(lines(app)[:8])
        assert all(title in top for _, title in COUNTERS), top  # every title whole on 80 columns


async def test_the_dashboard_fleet_line_wraps_between_items_on_80_columns(rack_xid: SimSession) -> None:
    app = NvcreApp(session=rack_xid, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        fleet = app.screen.query_one("#fleet")
        shown = lines(app)[fleet.region.y : fleet.region.bottom]
        assert len(shown) >= 2, shown  # it does wrap on 80 columns
        assert app.snapshot is not None
        states = [state for state, _ in node_states(app.snapshot).values()]
        for state in NodeState:
            count = states.count(state.value)
            assert any(f"{state.glyph} {count} {state.value}" in line for line in shown), (state, shown)
